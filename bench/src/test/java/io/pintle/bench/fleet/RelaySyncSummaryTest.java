package io.pintle.bench.fleet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.List;
import org.junit.jupiter.api.Test;

/** bench/relaysync's arithmetic: a generation's times, rates and CPU per node, and the medians and ratios of A and B. */
class RelaySyncSummaryTest {
    private static RelaySyncGeneration.Relay relay(String name, int nodes, long synced, double cpu) {
        return new RelaySyncGeneration.Relay(name, nodes, synced, cpu, new double[0]);
    }

    /** Begun at 10 s, written at 40 s; two relays of 5,000 nodes synced at 100 s and 130 s. */
    private static RelaySyncGeneration generation(int round, String variant, long secondSynced, double rootCpu) {
        return new RelaySyncGeneration(round, variant, round + 1, 10_000, 40_000, 130_000, rootCpu,
                List.of(relay("relay-1", 5_000, 100_000, 20), relay("relay-2", 5_000, secondSynced, 30)), 0.9, 0.25,
                0.1);
    }

    @Test
    void aGenerationsTimesRatesAndCpuPerNodeComeFromItsMoments() {
        RelaySyncGeneration g = generation(1, "A", 130_000, 12);
        RelaySyncGeneration.Relay first = g.relays().get(0);
        RelaySyncGeneration.Relay second = g.relays().get(1);

        assertThat(g.writeSeconds()).isEqualTo(30);
        assertThat(g.syncedAfterWritten(first)).isEqualTo(60);
        assertThat(g.syncedAfterBegin(first)).isEqualTo(90);
        assertThat(g.maxSyncedAfterWritten()).isEqualTo(90);
        assertThat(g.maxSyncedAfterBegin()).isEqualTo(120);
        assertThat(g.nodesPerSecond(first)).isCloseTo(55.56, within(0.01));
        assertThat(g.nodesPerSecond(second)).isCloseTo(41.67, within(0.01));
        assertThat(g.relayNodes()).isEqualTo(10_000);
        assertThat(g.relaysCpuSeconds()).isEqualTo(50);
        // The root's CPU is over every relay node; each relay's over its own.
        assertThat(g.rootCpuMillisPerNode()).isCloseTo(1.2, within(1e-9));
        assertThat(g.relayCpuMillisPerNode()).isCloseTo(5.0, within(1e-9));
        assertThat(g.relayCpuMillisPerNode(first)).isCloseTo(4.0, within(1e-9));
        assertThat(g.relayCpuMillisPerNode(second)).isCloseTo(6.0, within(1e-9));
        assertThat(g.synced()).isTrue();
    }

    @Test
    void aRelayNotSyncedWithinTheLimitHasNoTimeNoRateAndNoSlowestRelay() {
        RelaySyncGeneration g = generation(1, "B", 0, 12);
        RelaySyncGeneration.Relay second = g.relays().get(1);

        assertThat(g.synced()).isFalse();
        assertThat(g.syncedAfterWritten(second)).isNaN();
        assertThat(g.nodesPerSecond(second)).isNaN();
        assertThat(g.maxSyncedAfterWritten()).isNaN();
        assertThat(g.maxSyncedAfterBegin()).isNaN();
        // The other relay's figures stand.
        assertThat(g.syncedAfterWritten(g.relays().get(0))).isEqualTo(60);
    }

    @Test
    void aMedianOfAnEvenCountIsTheMeanOfTheMiddleTwoAndNanCountsAsSlowest() {
        assertThat(RelaySyncSummary.median(new double[] {3, 1, 2})).isEqualTo(2);
        assertThat(RelaySyncSummary.median(new double[] {4, 1, 3, 2})).isEqualTo(2.5);
        assertThat(RelaySyncSummary.median(new double[] {Double.NaN, 1, 2})).isEqualTo(2);
        assertThat(RelaySyncSummary.median(new double[] {Double.NaN, Double.NaN, 1})).isNaN();
        assertThat(RelaySyncSummary.median(new double[0])).isNaN();
    }

    @Test
    void theSummaryTakesEachVariantsOwnRoundsAndBOverA() {
        // Rounds alternate A B, B A, A B; A's relay-2 synced at 130, 160, 100 s; B's at 190, 220, 250 s.
        List<RelaySyncGeneration> all = List.of(generation(1, "A", 130_000, 10), generation(1, "B", 190_000, 20),
                generation(2, "B", 220_000, 30), generation(2, "A", 160_000, 12), generation(3, "A", 100_000, 14),
                generation(3, "B", 250_000, 40));

        RelaySyncSummary a = RelaySyncSummary.of("A", all);
        RelaySyncSummary b = RelaySyncSummary.of("B", all);

        assertThat(a.generations()).isEqualTo(3);
        assertThat(a.writeSeconds()).isEqualTo(30);
        // A's slowest relay after written: 90, 120, 60 s; B's: 150, 180, 210 s.
        assertThat(a.maxSyncedAfterWritten()).isEqualTo(90);
        assertThat(b.maxSyncedAfterWritten()).isEqualTo(180);
        assertThat(a.rootCpuSeconds()).isEqualTo(12);
        assertThat(b.rootCpuSeconds()).isEqualTo(30);
        assertThat(b.rootCpuMillisPerNode()).isCloseTo(3.0, within(1e-9));
        // Nodes/s pooled over every relay of every round: A's 5,000 / {90, 120, 90, 150, 90, 90} s.
        assertThat(a.nodesPerSecond()).isCloseTo(5_000 / 90.0, within(1e-9));
        assertThat(a.harnessWatchPercent()).isEqualTo(25);
        assertThat(RelaySyncSummary.ratio(b.maxSyncedAfterWritten(), a.maxSyncedAfterWritten())).isEqualTo(2);
        assertThat(RelaySyncSummary.ratio(1, 0)).isNaN();
        assertThat(RelaySyncSummary.ratio(Double.NaN, 1)).isNaN();
    }
}
