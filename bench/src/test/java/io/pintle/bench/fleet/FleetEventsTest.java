package io.pintle.bench.fleet;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** How fleetagents' request lines become runs, failures, retries and a generation's propagation. */
class FleetEventsTest {
    private static String line(double sched, double end, int node, String kind, int status, int newEtag,
            String error) {
        return sched + "\t" + sched + "\t" + (sched + 1) + "\t" + (sched + 2) + "\t" + end + "\t" + node + "\t" + kind
                + "\t" + status + "\t10\t" + newEtag + "\t" + error + "\n";
    }

    @Test
    void aRunFailsWhenOneOfItsRequestsDoesAndTheNextRunRecovers(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("events.tsv");
        Files.writeString(file, line(1000, 1010, 0, "common", 304, 0, "-")
                + line(1000, 1020, 0, "policies", 304, 0, "-")
                + line(1000, 1030, 0, "report", 0, 0, "connect refused")
                + line(301000, 301010, 0, "common", 304, 0, "-")
                + line(301000, 301020, 0, "policies", 200, 1, "-")
                + line(301000, 301030, 0, "report", 201, 0, "-")
                + line(301000, 301040, 0, "report", 201, 0, "-")
                + line(2000, 2010, 1, "common", 304, 0, "-")
                + line(2000, 2015, 1, "policies", 404, 0, "-")
                + line(2000, 2025, 1, "report", 201, 0, "-")
                + "5000\t5000\t0\t0"); // a line cut by the end of the run
        FleetEvents events = FleetEvents.read(file);

        assertThat(events.runs).hasSize(3);
        assertThat(events.runs).extracting(FleetEvents.Task::ok).containsExactly(false, false, true);
        assertThat(events.runs.get(0).firstError()).isEqualTo("report connect refused");
        assertThat(events.runs.get(1).firstError()).isEqualTo("policies HTTP 404");
        assertThat(events.runs.get(2).requests()).isEqualTo(4);
        assertThat(events.retriedByNextRun()).containsExactly(2, 1, 1);
        FleetEvents.Figures runs = FleetEvents.tasks(events.runs, 0, Double.MAX_VALUE);
        assertThat(runs.count()).isEqualTo(3);
        assertThat(runs.failed()).isEqualTo(2);
        assertThat(runs.p50()).isEqualTo(40);
        assertThat(FleetEvents.failures(events.runs, 0, Double.MAX_VALUE)).containsOnlyKeys("report connect refused",
                "policies HTTP 404");

        double[] propagation = events.propagation(2, 100_000);
        assertThat(propagation[0]).isEqualTo(201_020);
        assertThat(propagation[1]).isNaN();
    }

    @Test
    void aRunWithoutItsReportWasCutShortAndAWindowHoldsTheRunsUnderWayInIt(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("events.tsv");
        Files.writeString(file, line(1000, 1010, 0, "common", 304, 0, "-")
                + line(1000, 65_000, 0, "policies", 200, 0, "-")
                + line(2000, 2010, 1, "common", 304, 0, "-")
                + line(2000, 2020, 1, "policies", 0, 0, "timeout read")
                + line(2000, 2030, 1, "report", 201, 0, "-"));
        FleetEvents events = FleetEvents.read(file);

        assertThat(events.runs).extracting(FleetEvents.Task::firstError)
                .containsExactly("cut short (no report sent)", "policies timeout read");
        // Scheduled before the window, still running in it.
        assertThat(FleetEvents.tasks(events.runs, 60_000, 120_000).count()).isEqualTo(1);
        assertThat(FleetEvents.tasks(events.runs, 3_000, 60_000).count()).isEqualTo(1);
        assertThat(FleetEvents.tasks(events.runs, 0, 1_000).count()).isZero();
    }

    @Test
    void percentilesAreNearestRank() {
        double[] sorted = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
        assertThat(FleetEvents.percentile(sorted, 0.5)).isEqualTo(5);
        assertThat(FleetEvents.percentile(sorted, 0.99)).isEqualTo(10);
        assertThat(FleetEvents.percentile(new double[0], 0.5)).isNaN();
        assertThat(List.of(FleetEvents.percentile(new double[] {7}, 0.01))).containsExactly(7.0);
    }
}
