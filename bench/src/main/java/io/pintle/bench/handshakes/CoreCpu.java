package io.pintle.bench.handshakes;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

/**
 * Per-core busy time from {@code /proc/stat}'s {@code cpuN} lines: whether the generator's core (and the server's)
 * was saturated, kernel time (loopback TCP, softirq) included, which a process's own CPU time does not show all of.
 *
 * @param busy busy ticks per core (user, nice, system, irq, softirq, steal)
 * @param total all ticks per core
 */
public record CoreCpu(long[] busy, long[] total) {
    /** @return every core's ticks now (none if /proc/stat cannot be read) */
    public static CoreCpu read() {
        try {
            List<String> lines = Files.readAllLines(Path.of("/proc/stat"));
            int cores = (int) lines.stream().filter(l -> l.matches("^cpu\\d+ .*")).count();
            long[] busy = new long[cores];
            long[] total = new long[cores];
            for (String line : lines) {
                if (!line.matches("^cpu\\d+ .*")) {
                    continue;
                }
                String[] fields = line.split("\\s+");
                int core = Integer.parseInt(fields[0].substring(3));
                long[] ticks = Arrays.stream(fields, 1, Math.min(fields.length, 9)).mapToLong(Long::parseLong)
                        .toArray();
                long all = Arrays.stream(ticks).sum();
                if (core < cores) {
                    total[core] = all;
                    busy[core] = all - ticks[3] - ticks[4];
                }
            }
            return new CoreCpu(busy, total);
        } catch (IOException | RuntimeException e) {
            return new CoreCpu(new long[0], new long[0]);
        }
    }

    /**
     * @param cpus a taskset CPU list of one CPU (e.g. "1"), or null
     * @return the share of that core busy between {@code earlier} and this, or NaN
     */
    public double busySince(CoreCpu earlier, String cpus) {
        if (cpus == null || !cpus.matches("\\d+")) {
            return Double.NaN;
        }
        int core = Integer.parseInt(cpus);
        if (core >= busy.length || core >= earlier.busy.length) {
            return Double.NaN;
        }
        long all = total[core] - earlier.total[core];
        return all <= 0 ? Double.NaN : (double) (busy[core] - earlier.busy[core]) / all;
    }
}
