package io.pintle.bench.sync;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;

/**
 * CPU time of processes from {@code /proc/<pid>/stat} (user + system, in clock ticks of 10 ms): the servers' and
 * the client's, to tell whether the client (the load generator) or a server limited a run.
 */
public final class ProcessCpu {
    /** {@code getconf CLK_TCK} on Linux: the unit of the times in /proc/<pid>/stat. */
    private static final double MILLIS_PER_TICK = 10;

    private ProcessCpu() {}

    /**
     * @param processes processes still running
     * @return their CPU time so far, in milliseconds
     */
    public static double millis(Collection<ProcessHandle> processes) {
        double total = 0;
        for (ProcessHandle process : processes) {
            long[] fields = fields(process.pid());
            total += (fields[0] + fields[1]) * MILLIS_PER_TICK;
        }
        return total;
    }

    /**
     * @param processes processes still running
     * @return of their CPU time so far, the part spent in the kernel (system time), in milliseconds
     */
    public static double systemMillis(Collection<ProcessHandle> processes) {
        double total = 0;
        for (ProcessHandle process : processes) {
            total += fields(process.pid())[1] * MILLIS_PER_TICK;
        }
        return total;
    }

    /**
     * @return this JVM's CPU time plus that of its children already waited for (cf-agent), in milliseconds
     */
    public static double selfAndChildrenMillis() {
        long[] fields = fields(ProcessHandle.current().pid());
        return (fields[0] + fields[1] + fields[2] + fields[3]) * MILLIS_PER_TICK;
    }

    /**
     * @return the machine's busy time so far, all cores together (user, nice, system, irq, softirq and steal from
     *     the first line of /proc/stat), in milliseconds; 0 if it cannot be read
     */
    public static double machineBusyMillis() {
        try {
            String first = Files.readAllLines(Path.of("/proc/stat")).get(0);
            String[] fields = first.trim().split("\\s+");
            // cpu user nice system idle iowait irq softirq steal ...
            long busy = 0;
            for (int i : new int[] {1, 2, 3, 6, 7, 8}) {
                busy += Long.parseLong(fields[i]);
            }
            return busy * MILLIS_PER_TICK;
        } catch (IOException | RuntimeException e) {
            return 0;
        }
    }

    /**
     * @return the CPU time of this JVM's children (and theirs) that have ended and been waited for, in
     *     milliseconds: what an external load generator (ab, curl, a shell loop of curls) used, read as a
     *     difference around its run
     */
    public static double childrenMillis() {
        long[] fields = fields(ProcessHandle.current().pid());
        return (fields[2] + fields[3]) * MILLIS_PER_TICK;
    }

    /**
     * One thread's CPU time at a moment.
     *
     * @param name its name as /proc has it (comm: the first 15 characters of the JVM's thread name)
     * @param millis user + system so far
     */
    public record ThreadCpu(String name, double millis) {}

    /**
     * @param pid a process
     * @return its threads' CPU time so far, by thread id; empty if the process is gone
     */
    public static Map<Long, ThreadCpu> threads(long pid) {
        Map<Long, ThreadCpu> threads = new HashMap<>();
        try (var tasks = Files.newDirectoryStream(Path.of("/proc/" + pid + "/task"))) {
            for (Path task : tasks) {
                try {
                    String stat = Files.readString(task.resolve("stat"));
                    int open = stat.indexOf('(');
                    int close = stat.lastIndexOf(')');
                    String[] rest = stat.substring(close + 2).split(" ");
                    threads.put(Long.parseLong(task.getFileName().toString()), new ThreadCpu(
                            stat.substring(open + 1, close),
                            (Long.parseLong(rest[11]) + Long.parseLong(rest[12])) * MILLIS_PER_TICK));
                } catch (IOException | RuntimeException e) {
                    // the thread ended while being read
                }
            }
        } catch (IOException | RuntimeException e) {
            return Map.of();
        }
        return threads;
    }

    /**
     * @param before {@link #threads} at the beginning
     * @param after at the end
     * @return the CPU each thread alive at the end used since the beginning, by name (threads of one name summed),
     *     in milliseconds; what threads that ended meanwhile used is in none
     */
    public static Map<String, Double> threadsSince(Map<Long, ThreadCpu> before, Map<Long, ThreadCpu> after) {
        Map<String, Double> used = new HashMap<>();
        after.forEach((tid, now) -> {
            ThreadCpu then = before.get(tid);
            double millis = now.millis() - (then != null && then.name().equals(now.name()) ? then.millis() : 0);
            used.merge(now.name(), millis, Double::sum);
        });
        return used;
    }

    /** @return utime, stime, cutime, cstime; zeros if the process is gone */
    private static long[] fields(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
            // The command name (field 2) is in parentheses and may contain spaces: split after it.
            String[] rest = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            // rest[0] is field 3 (state); utime is field 14.
            return new long[] {
                Long.parseLong(rest[11]), Long.parseLong(rest[12]), Long.parseLong(rest[13]), Long.parseLong(rest[14])
            };
        } catch (IOException | RuntimeException e) {
            return new long[4];
        }
    }
}
