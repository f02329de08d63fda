package io.pintle.bench.warmup;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * One measured start: requests answered per second since the JVM's spawn, and the CPU the server and ab took in
 * each second. Second {@code k} (1-based) is the interval (k-1, k] seconds after the spawn.
 *
 * @param variant the JVM variant's label
 * @param workload the workload's label
 * @param round the round, from 1
 * @param listenMillis from the spawn until the port accepted a connection
 * @param perSecond 2xx answers whose request ab started in each second
 * @param serverCpu the server's CPU time in each second, in cores
 * @param abCpu ab's CPU time in each second, in cores
 * @param otherCpu the busy time of the server's CPU in each second that was not the server's (other processes on
 *     a shared machine, the kernel's interrupts), in cores; zeros when the server is not pinned to one CPU
 * @param failed requests ab counted as failed or answered with another status than 2xx
 */
record Curve(String variant, String workload, int round, long listenMillis, long[] perSecond, double[] serverCpu,
        double[] abCpu, double[] otherCpu, long failed) {
    /** A share of the steady rate a start must reach, the target. */
    static final double TARGET_SHARE = 0.8;
    /** The seconds of the target. */
    static final int TARGET_SECONDS = 5;
    /** Seconds in a row at or above the target share that count as having reached it (one second may be a blip). */
    static final int SUSTAINED_SECONDS = 3;

    /** @return the first second of the steady window: the last third of the run (seconds 40–60 of 60) */
    int steadyFrom() {
        return perSecond.length * 2 / 3;
    }

    /** @return the median rate of the steady window, requests per second */
    double steadyRate() {
        return median(Arrays.copyOfRange(perSecond, steadyFrom() - 1, perSecond.length));
    }

    /**
     * @return the first second from which {@link #SUSTAINED_SECONDS} seconds in a row reach {@link #TARGET_SHARE} of
     *     the steady rate; NaN when none does
     */
    double secondsTo80() {
        double threshold = TARGET_SHARE * steadyRate();
        for (int s = 0; s < perSecond.length; s++) {
            int end = Math.min(perSecond.length, s + SUSTAINED_SECONDS);
            boolean all = true;
            for (int i = s; i < end; i++) {
                all &= perSecond[i] >= threshold;
            }
            if (all) {
                return s + 1;
            }
        }
        return Double.NaN;
    }

    /** @return the requests of the first {@link #TARGET_SECONDS} seconds over as many seconds at the steady rate */
    double firstSecondsShare() {
        long sum = 0;
        for (int s = 0; s < Math.min(TARGET_SECONDS, perSecond.length); s++) {
            sum += perSecond[s];
        }
        return sum / (TARGET_SECONDS * steadyRate());
    }

    /** @return ab's mean CPU share in the steady window (1 = ab kept its core busy: it was the limit) */
    double abSteadyCpu() {
        return mean(abCpu, steadyFrom() - 1);
    }

    /** @return the server's mean CPU share in the steady window */
    double serverSteadyCpu() {
        return mean(serverCpu, steadyFrom() - 1);
    }

    /** @return the mean busy share of the server's CPU that was not the server's, over the whole run */
    double otherMeanCpu() {
        return mean(otherCpu, 0);
    }

    /** @return the highest CPU share ab took in any second */
    double abPeakCpu() {
        return Arrays.stream(abCpu).max().orElse(0);
    }

    private static double mean(double[] values, int from) {
        return Arrays.stream(values, Math.min(from, values.length), values.length).average().orElse(Double.NaN);
    }

    static double median(long[] values) {
        return median(Arrays.stream(values).asDoubleStream().toArray());
    }

    static double median(double[] values) {
        double[] sorted = Arrays.stream(values).filter(v -> !Double.isNaN(v)).sorted().toArray();
        if (sorted.length == 0) {
            return Double.NaN;
        }
        int mid = sorted.length / 2;
        return sorted.length % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
    }

    /** @return one CSV line: variant, workload, round, listen ms, failed, then four space-separated series */
    String csv() {
        return String.join(",", variant, workload, Integer.toString(round), Long.toString(listenMillis),
                Long.toString(failed), Arrays.stream(perSecond).mapToObj(Long::toString)
                        .collect(Collectors.joining(" ")), series(serverCpu), series(abCpu), series(otherCpu));
    }

    private static String series(double[] values) {
        return Arrays.stream(values).mapToObj(v -> String.format(Locale.ROOT, "%.3f", v))
                .collect(Collectors.joining(" "));
    }

    /**
     * @param line a line {@link #csv()} wrote
     * @return the curve
     */
    static Curve parse(String line) {
        List<String> f = List.of(line.split(",", -1));
        if (f.size() != 9) {
            throw new IllegalArgumentException("not a warm-up CSV line: " + line);
        }
        return new Curve(f.get(0), f.get(1), Integer.parseInt(f.get(2)), Long.parseLong(f.get(3)),
                Arrays.stream(f.get(5).split(" ")).mapToLong(Long::parseLong).toArray(),
                Arrays.stream(f.get(6).split(" ")).mapToDouble(Double::parseDouble).toArray(),
                Arrays.stream(f.get(7).split(" ")).mapToDouble(Double::parseDouble).toArray(),
                Arrays.stream(f.get(8).split(" ")).mapToDouble(Double::parseDouble).toArray(),
                Long.parseLong(f.get(4)));
    }
}
