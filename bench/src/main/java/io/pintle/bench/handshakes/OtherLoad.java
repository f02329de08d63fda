package io.pintle.bench.handshakes;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * CPU time of every process on the machine but this harness and what it started (servers, s_time, jcmd): on a
 * shared machine a build or a test run elsewhere takes the cores the rows are measured on, and a window it
 * overlapped is repeated. Each process counts with its children already waited for, so short-lived ones (a
 * compiler, a test JVM) are caught through their parent, less what they had used before.
 *
 * @param nanos when it was read ({@link System#nanoTime()})
 * @param ticks clock ticks (10 ms) by pid
 */
record OtherLoad(long nanos, Map<Long, Long> ticks) {
    private static final double MILLIS_PER_TICK = 10;

    static OtherLoad read() {
        ProcessHandle self = ProcessHandle.current();
        Set<Long> ours = Stream.concat(Stream.of(self), self.descendants()).map(ProcessHandle::pid)
                .collect(Collectors.toSet());
        Map<Long, Long> ticks = new HashMap<>();
        try (Stream<Path> entries = Files.list(Path.of("/proc"))) {
            entries.map(p -> p.getFileName().toString()).filter(name -> name.chars().allMatch(Character::isDigit))
                    .map(Long::parseLong).filter(pid -> !ours.contains(pid)).forEach(pid -> {
                        long t = ticks(pid);
                        if (t >= 0) {
                            ticks.put(pid, t);
                        }
                    });
        } catch (IOException e) {
            // No /proc: nothing known, nothing repeated.
        }
        return new OtherLoad(System.nanoTime(), ticks);
    }

    /** @return the other processes' CPU between {@code earlier} and this, in cores (1 = one core busy) */
    double coresSince(OtherLoad earlier) {
        long delta = 0;
        for (Map.Entry<Long, Long> entry : ticks.entrySet()) {
            Long before = earlier.ticks.get(entry.getKey());
            // A process started since counts whole.
            delta += before == null ? entry.getValue() : Math.max(0, entry.getValue() - before);
        }
        for (Map.Entry<Long, Long> entry : earlier.ticks.entrySet()) {
            if (!ticks.containsKey(entry.getKey())) {
                // One that ended is in its parent's children time now, all its life: what it had used before
                // does not count.
                delta -= entry.getValue();
            }
        }
        double millis = (nanos - earlier.nanos) / 1e6;
        return millis <= 0 ? 0 : Math.max(0, delta) * MILLIS_PER_TICK / millis;
    }

    /** @return utime + stime + cutime + cstime of a process, or -1 if it is gone */
    private static long ticks(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
            String[] rest = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return Long.parseLong(rest[11]) + Long.parseLong(rest[12]) + Long.parseLong(rest[13])
                    + Long.parseLong(rest[14]);
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }
}
