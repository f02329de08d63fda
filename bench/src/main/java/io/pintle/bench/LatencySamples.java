package io.pintle.bench;

import java.util.Arrays;

/**
 * Latencies of one virtual user, in nanoseconds. A user has one request in flight at a time, so its samples are
 * added one after the other; the methods are synchronized anyway (uncontended, so cheap) to make the hand-over
 * between Jetty's threads explicit.
 */
final class LatencySamples {
    /** Initial capacity; doubles as needed, bounded by the run's request cap. */
    private static final int INITIAL_CAPACITY = 1024;

    private long[] values = new long[INITIAL_CAPACITY];
    private int size;

    /** @param nanos one request's latency */
    synchronized void add(long nanos) {
        if (size == values.length) {
            values = Arrays.copyOf(values, size * 2);
        }
        values[size++] = nanos;
    }

    /** @return a copy of the samples */
    synchronized long[] toArray() {
        return Arrays.copyOf(values, size);
    }

    /**
     * Merges users' samples and sorts them.
     *
     * @param users every user of a run
     * @return all samples, ascending
     */
    static long[] sorted(Iterable<LatencySamples> users) {
        long[] all = new long[0];
        for (LatencySamples user : users) {
            long[] mine = user.toArray();
            int offset = all.length;
            all = Arrays.copyOf(all, offset + mine.length);
            System.arraycopy(mine, 0, all, offset, mine.length);
        }
        Arrays.sort(all);
        return all;
    }

    /**
     * Nearest-rank percentile.
     *
     * @param sorted ascending samples
     * @param percentile in (0, 100]
     * @return the sample at that rank in milliseconds, or NaN without samples
     */
    static double percentileMillis(long[] sorted, double percentile) {
        if (sorted.length == 0) {
            return Double.NaN;
        }
        int rank = (int) Math.ceil(percentile / 100.0 * sorted.length);
        return sorted[Math.max(0, rank - 1)] / 1e6;
    }
}
