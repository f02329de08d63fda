package io.pintle.bench.perf;

import java.util.List;
import java.util.Map;

/**
 * One row of {@code bench/perf}'s per-core report.
 *
 * @param group the {@code --rows} group it belongs to
 * @param label what it measures
 * @param generator the load generator and how it ran
 * @param kind how its figures read
 * @param unit the unit of {@link Figures#value()}
 * @param figures each contender's figures, in the order measured (Pintle first)
 * @param comment a remark printed under the tables, or empty
 */
record PerCoreRow(String group, String label, String generator, Kind kind, String unit, Map<String, Figures> figures,
        String comment) {
    /** How a row's figures read. */
    enum Kind {
        /** A rate: more is better; the ratio is Pintle over nginx. */
        RATE,
        /** A latency (p50 and p99): less is better; the ratio is Pintle's p50 over nginx's. */
        LATENCY,
        /** A rate with the access log off and on, for Pintle only: the cost is the rate lost. */
        ACCESS_LOG,
        /** Measured by another harness: a pointer only. */
        ELSEWHERE
    }

    /**
     * One contender's figures over the row's rounds.
     *
     * @param value the median over the rounds (the rate, or the p50 latency in milliseconds)
     * @param rounds every round's value, in order
     * @param p99Millis the median of the rounds' 99th percentile latency, or NaN
     * @param cpuPerThousand the server's CPU milliseconds per 1000 exchanges (median)
     * @param serverShare the server processes' CPU over the window, as a share of one core (median)
     * @param generatorShare the generator process's CPU over the window, as a share of one core (median)
     * @param serverCoreBusy the server CPU's busy share over the window, kernel work included (median; NaN when the
     *     servers are not pinned to one CPU)
     * @param generatorCoreBusy the generator CPU's busy share likewise
     * @param othersCores other processes' CPU over the window, in cores (median): the machine is shared
     * @param failed exchanges that failed or were answered otherwise, all rounds
     * @param firstError the first failure a generator named, or empty
     */
    record Figures(double value, List<Double> rounds, double p99Millis, double cpuPerThousand, double serverShare,
            double generatorShare, double serverCoreBusy, double generatorCoreBusy, double othersCores, long failed,
            String firstError) {
        boolean generatorLimited() {
            return generatorShare >= PerCoreBench.GENERATOR_LIMIT;
        }
    }

    /** @return the first contender's value over the second's (Pintle over nginx; log on over log off) */
    double ratio(String numerator, String denominator) {
        Figures a = figures.get(numerator);
        Figures b = figures.get(denominator);
        return a == null || b == null || b.value() == 0 ? Double.NaN : a.value() / b.value();
    }

    /** @return the contenders whose generator was the limit, or empty */
    List<String> generatorLimited() {
        return figures.entrySet().stream().filter(e -> e.getValue().generatorLimited()).map(Map.Entry::getKey)
                .toList();
    }
}
