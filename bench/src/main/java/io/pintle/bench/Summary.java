package io.pintle.bench;

import java.util.Arrays;
import java.util.Locale;

/**
 * Median, 99th percentile and maximum of a set of durations (nearest rank, as {@link LatencySamples}). With fewer
 * than 100 samples the 99th percentile is the maximum.
 *
 * @param count number of samples
 * @param medianMillis median in milliseconds, NaN without samples
 * @param p99Millis 99th percentile in milliseconds, NaN without samples
 * @param maxMillis maximum in milliseconds, NaN without samples
 */
record Summary(int count, double medianMillis, double p99Millis, double maxMillis) {
    /**
     * @param nanos durations in nanoseconds, in any order (not modified)
     * @return their summary
     */
    static Summary of(long[] nanos) {
        long[] sorted = nanos.clone();
        Arrays.sort(sorted);
        return new Summary(sorted.length, LatencySamples.percentileMillis(sorted, 50),
                LatencySamples.percentileMillis(sorted, 99), LatencySamples.percentileMillis(sorted, 100));
    }

    /** @return "median / p99" in milliseconds, e.g. "41.2 / 57.9 ms" */
    String medianAndP99() {
        return millis(medianMillis) + " / " + millis(p99Millis) + " ms";
    }

    /**
     * @param value milliseconds
     * @return three significant digits at most, e.g. "0.84", "41.2", "812"
     */
    static String millis(double value) {
        if (Double.isNaN(value)) {
            return "–";
        }
        if (value >= 100) {
            return String.format(Locale.ROOT, "%,.0f", value);
        }
        return String.format(Locale.ROOT, value >= 10 ? "%.1f" : "%.2f", value);
    }
}
