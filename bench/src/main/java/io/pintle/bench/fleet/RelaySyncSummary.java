package io.pintle.bench.fleet;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;
import java.util.function.ToDoubleFunction;

/**
 * One variant's figures over its rounds in {@code bench/relaysync}: the median of each, over the rounds (nodes/s:
 * over every relay of every round). A relay that did not sync counts as slower than every one that did (its
 * times are NaN, sorted last), so the median is NaN ("not synced") when half the rounds or more were.
 *
 * @param variant "A" or "B"
 * @param generations how many generations the medians are of
 * @param writeSeconds the root's writing
 * @param maxSyncedAfterWritten the slowest relay, from written
 * @param maxSyncedAfterBegin the slowest relay, from the beginning of the writing
 * @param nodesPerSecond per relay, its nodes over its time from the beginning
 * @param rootCpuSeconds the root's CPU, begin to the last relay synced
 * @param relaysCpuSeconds every relay's together
 * @param rootCpuMillisPerNode the root's CPU per node behind the relays
 * @param relayCpuMillisPerNode the relays' CPU per node of their own
 * @param harnessWatchPercent the harness's CPU while it watched, in % of one core
 * @param rootThreadMillisPerNode {@code rootCpuMillisPerNode} by thread group
 * @param relayThreadMillisPerNode {@code relayCpuMillisPerNode} by thread group
 */
record RelaySyncSummary(String variant, int generations, double writeSeconds, double maxSyncedAfterWritten,
        double maxSyncedAfterBegin, double nodesPerSecond, double rootCpuSeconds, double relaysCpuSeconds,
        double rootCpuMillisPerNode, double relayCpuMillisPerNode, double harnessWatchPercent,
        Map<String, Double> rootThreadMillisPerNode, Map<String, Double> relayThreadMillisPerNode) {

    /**
     * @param variant the variant to summarize
     * @param all every generation measured (both variants)
     * @return the medians of {@code variant}'s
     */
    static RelaySyncSummary of(String variant, List<RelaySyncGeneration> all) {
        List<RelaySyncGeneration> mine = all.stream().filter(g -> g.variant().equals(variant)).toList();
        double[] nodesPerSecond = mine.stream()
                .flatMapToDouble(g -> g.relays().stream().mapToDouble(g::nodesPerSecond)).toArray();
        return new RelaySyncSummary(variant, mine.size(), median(mine, RelaySyncGeneration::writeSeconds),
                median(mine, RelaySyncGeneration::maxSyncedAfterWritten),
                median(mine, RelaySyncGeneration::maxSyncedAfterBegin), median(nodesPerSecond),
                median(mine, RelaySyncGeneration::rootCpuSeconds), median(mine, RelaySyncGeneration::relaysCpuSeconds),
                median(mine, RelaySyncGeneration::rootCpuMillisPerNode),
                median(mine, RelaySyncGeneration::relayCpuMillisPerNode),
                median(mine, g -> 100 * g.harnessWatchCores()),
                byGroup(mine, RelaySyncGeneration::rootThreadMillisPerNode),
                byGroup(mine, RelaySyncGeneration::relayThreadMillisPerNode));
    }

    private static Map<String, Double> byGroup(List<RelaySyncGeneration> generations,
            BiFunction<RelaySyncGeneration, String, Double> figure) {
        Map<String, Double> medians = new LinkedHashMap<>();
        for (String group : RelaySyncGeneration.THREAD_ROWS) {
            medians.put(group, median(generations, g -> figure.apply(g, group)));
        }
        return medians;
    }

    private static double median(List<RelaySyncGeneration> generations,
            ToDoubleFunction<RelaySyncGeneration> figure) {
        return median(generations.stream().mapToDouble(figure).toArray());
    }

    /**
     * @param values the values (NaN: not had, sorted after every number)
     * @return their median (of an even count, the mean of the middle two), NaN for none
     */
    static double median(double[] values) {
        if (values.length == 0) {
            return Double.NaN;
        }
        double[] sorted = values.clone();
        Arrays.sort(sorted); // NaN last, as Double.compare orders it
        int middle = sorted.length / 2;
        return sorted.length % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
    }

    /**
     * @param b B's figure
     * @param a A's figure
     * @return B over A; NaN when either is NaN or A is 0
     */
    static double ratio(double b, double a) {
        return a == 0 ? Double.NaN : b / a;
    }
}
