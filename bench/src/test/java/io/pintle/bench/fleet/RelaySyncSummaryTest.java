package io.pintle.bench.fleet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.pintle.bench.sync.ProcessCpu;
import io.pintle.bench.sync.ProcessCpu.ThreadCpu;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** bench/relaysync's arithmetic: a generation's times, rates and CPU per node, and the medians and ratios of A and B. */
class RelaySyncSummaryTest {
    private static RelaySyncGeneration.Relay relay(String name, int nodes, long synced, double cpu) {
        // Of its CPU: a fifth in the sync thread, a tenth in the JIT; the rest named nowhere ("other").
        return new RelaySyncGeneration.Relay(name, nodes, synced, cpu, new double[0], RelaySyncGeneration.grouped(
                Map.of("pintle-relay-sy", 200 * cpu, "C2 CompilerThre", 100 * cpu), cpu, cpu / 4));
    }

    /** Begun at 10 s, written at 40 s; two relays of 5,000 nodes synced at 100 s and 130 s. */
    private static RelaySyncGeneration generation(int round, String variant, long secondSynced, double rootCpu) {
        return new RelaySyncGeneration(round, variant, round + 1, 10_000, 40_000, 130_000, rootCpu,
                RelaySyncGeneration.grouped(Map.of("pintle-worker-3", 500 * rootCpu), rootCpu, 0), List.of(relay("relay-1", 5_000, 100_000, 20), relay("relay-2", 5_000, secondSynced, 30)), 0.9, 0.25,
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
        // By thread group, as the totals: B's root 30 s of CPU, half in server threads, over 10,000 nodes.
        assertThat(b.rootThreadMillisPerNode().get("server threads")).isCloseTo(1.5, within(1e-9));
        assertThat(b.rootThreadMillisPerNode().get("other")).isCloseTo(1.5, within(1e-9));
        assertThat(a.relayThreadMillisPerNode().get("relay sync")).isCloseTo(1.0, within(1e-9));
        assertThat(a.relayThreadMillisPerNode().get("JIT compilers")).isCloseTo(0.5, within(1e-9));
        assertThat(a.relayThreadMillisPerNode().get(RelaySyncGeneration.KERNEL)).isCloseTo(1.25, within(1e-9));
        assertThat(a.relayThreadMillisPerNode().keySet()).containsExactlyElementsOf(RelaySyncGeneration.THREAD_ROWS);
    }

    @Test
    void threadsAreGroupedByTheirNamesAndOtherIsWhatTheNamedGroupsLeave() {
        assertThat(RelaySyncGeneration.threadGroup("C1 CompilerThre")).isEqualTo("JIT compilers");
        assertThat(RelaySyncGeneration.threadGroup("C2 CompilerThre")).isEqualTo("JIT compilers");
        assertThat(RelaySyncGeneration.threadGroup("GC Thread#1")).isEqualTo("GC and VM");
        assertThat(RelaySyncGeneration.threadGroup("G1 Conc#0")).isEqualTo("GC and VM");
        assertThat(RelaySyncGeneration.threadGroup("VM Thread")).isEqualTo("GC and VM");
        assertThat(RelaySyncGeneration.threadGroup("pintle-relay-sy")).isEqualTo("relay sync");
        assertThat(RelaySyncGeneration.threadGroup("HttpClient-3-Wo")).isEqualTo("HTTP client");
        assertThat(RelaySyncGeneration.threadGroup("pintle-access-l")).isEqualTo("server threads");
        assertThat(RelaySyncGeneration.threadGroup("java")).isEqualTo("other");
        // 2 s of CPU: 0.5 s named in the JIT, 0.25 s in two server threads; main's 0.1 s and the 1.15 s nobody
        // holds any more (threads that ended) are "other".
        Map<String, Double> groups = RelaySyncGeneration.grouped(Map.of("C2 CompilerThre", 500.0, "pintle-19", 100.0,
                "pintle-access-l", 150.0, "java", 100.0), 2, 0.5);
        assertThat(groups).containsExactly(Map.entry("JIT compilers", 0.5), Map.entry("GC and VM", 0.0),
                Map.entry("relay sync", 0.0), Map.entry("HTTP client", 0.0), Map.entry("server threads", 0.25),
                Map.entry("other", 1.25), Map.entry(RelaySyncGeneration.KERNEL, 0.5));
    }

    @Test
    void threadsSinceCountsEachLiveThreadFromItsOwnBeginning() {
        Map<Long, ThreadCpu> before = Map.of(
                1L, new ThreadCpu("pintle-19", 100),
                2L, new ThreadCpu("pintle-20", 50),
                3L, new ThreadCpu("gone", 70));
        // Thread 2's id now names another thread (reused): counted from 0. Thread 4 is new.
        Map<Long, ThreadCpu> after = Map.of(
                1L, new ThreadCpu("pintle-19", 130),
                2L, new ThreadCpu("HttpClient-1-Wo", 40),
                4L, new ThreadCpu("pintle-19", 20));
        assertThat(ProcessCpu.threadsSince(before, after)).containsOnly(
                Map.entry("pintle-19", 50.0), Map.entry("HttpClient-1-Wo", 40.0));
        // This JVM's own threads, read from /proc: several, and starting it took CPU.
        Map<Long, ThreadCpu> own = ProcessCpu.threads(ProcessHandle.current().pid());
        assertThat(own).hasSizeGreaterThan(1);
        assertThat(own.values().stream().mapToDouble(ThreadCpu::millis).sum()).isPositive();
        assertThat(ProcessCpu.threads(Long.MAX_VALUE)).isEmpty();
    }
}
