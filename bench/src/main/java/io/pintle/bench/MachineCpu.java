package io.pintle.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * Machine-wide CPU time from the first line of {@code /proc/stat}, to see how much of the cores other processes
 * took during a window: the benchmark's numbers only mean something if they took little.
 *
 * @param busyTicks time spent not idle (user, nice, system, irq, softirq, steal), all cores, in clock ticks
 * @param totalTicks all time, all cores, in clock ticks; 0 when {@code /proc/stat} cannot be read
 */
record MachineCpu(long busyTicks, long totalTicks) {
    private static final Path PROC_STAT = Path.of("/proc/stat");
    /** Field positions after "cpu": user nice system idle iowait irq softirq steal (guest time is in user). */
    private static final int IDLE = 3;
    private static final int IOWAIT = 4;
    private static final int STEAL = 7;

    /** @return the counters now, or zeros where {@code /proc/stat} is not available */
    static MachineCpu read() {
        try {
            String line = Files.readAllLines(PROC_STAT).get(0);
            long[] fields = Arrays.stream(line.substring("cpu".length()).trim().split("\\s+"))
                    .limit(STEAL + 1)
                    .mapToLong(Long::parseLong)
                    .toArray();
            long total = Arrays.stream(fields).sum();
            return new MachineCpu(total - fields[IDLE] - fields[IOWAIT], total);
        } catch (IOException | RuntimeException e) {
            return new MachineCpu(0, 0);
        }
    }

    /**
     * @param later a later reading
     * @return the fraction of all cores busy in between, or NaN if unknown
     */
    double busyUntil(MachineCpu later) {
        long total = later.totalTicks - totalTicks;
        return totalTicks == 0 || total <= 0 ? Double.NaN : (double) (later.busyTicks - busyTicks) / total;
    }
}
