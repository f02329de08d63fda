package io.pintle.bench.perf;

import io.pintle.bench.plot.RatioBars;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;

/**
 * The report's plot: Pintle's figure over nginx's for every throughput row, as horizontal bars, with the issue's
 * 0.8 target and parity marked ({@link RatioBars}).
 */
final class PerfPlot {
    private static final double MAX_RATIO = 1.6;

    private PerfPlot() {}

    static void write(List<PerfRow> rows, Instant date, Path file) throws IOException {
        List<RatioBars.Bar> bars = rows.stream().filter(r -> !Double.isNaN(r.targetRatio()))
                .map(r -> new RatioBars.Bar(shorten(r.label()), r.ratio(),
                        // Thin bar: nginx's server CPU per unit over Pintle's (1 = as cheap as nginx).
                        Double.isNaN(r.cpuRatio()) || r.cpuRatio() == 0 ? 0 : 1 / r.cpuRatio(), r.targetRatio()))
                .toList();
        RatioBars.write("Pintle / nginx, same job, same machine (bench/perf, " + date + ")", bars,
                List.of(new RatioBars.Mark(0.8, "target 0.8×", false), new RatioBars.Mark(1.0, "= nginx", true)),
                MAX_RATIO, List.of("Thick bars: Pintle's rate over nginx's (green: at or above the target; red: below)."
                        + " Thin grey bars: nginx's server CPU per unit over Pintle's.",
                        "Throughput rows only; memory and the herd are in the table."), file);
    }

    private static String shorten(String label) {
        return label.replace(", RSA-4096 client certificate", "").replace(" at once, 1 request each", " at once")
                .replace("New TLS connections, full handshake", "Full handshake");
    }
}
