package io.pintle.bench;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * CPU time of this JVM's native threads from {@code /proc/self/task/<tid>/stat}, grouped by the names HotSpot gives
 * them: the JIT compilers ({@code C1/C2 CompilerThread}) and the garbage collector ({@code GC Thread#n}, {@code G1
 * ...}). {@link java.lang.management.ThreadMXBean} does not list these threads; the kernel does.
 *
 * @param jitTicks CPU time of the compiler threads, in clock ticks
 * @param gcTicks CPU time of the GC threads, in clock ticks
 * @param allTicks CPU time of every thread of the JVM, in clock ticks; 0 when {@code /proc} cannot be read
 */
record JvmThreadTicks(long jitTicks, long gcTicks, long allTicks) {
    private static final Path TASKS = Path.of("/proc/self/task");
    /** Fields after the {@code (comm)} of a stat line: utime and stime are the 12th and 13th. */
    private static final int UTIME = 11;
    private static final int STIME = 12;

    /** @return the counters now, or zeros where {@code /proc} is not available */
    static JvmThreadTicks read() {
        long jit = 0;
        long gc = 0;
        long all = 0;
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(TASKS)) {
            for (Path task : tasks) {
                String stat = stat(task);
                if (stat == null) {
                    continue; // the thread ended meanwhile
                }
                String name = stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
                String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                long ticks = Long.parseLong(fields[UTIME]) + Long.parseLong(fields[STIME]);
                all += ticks;
                if (name.startsWith("C1 ") || name.startsWith("C2 ")) {
                    jit += ticks;
                } else if (name.startsWith("GC ") || name.startsWith("G1 ")) {
                    gc += ticks;
                }
            }
        } catch (IOException | RuntimeException e) {
            return new JvmThreadTicks(0, 0, 0);
        }
        return new JvmThreadTicks(jit, gc, all);
    }

    /**
     * @param later a later reading
     * @return the compilers' share of the JVM's CPU time in between, or NaN if unknown
     */
    double jitShareUntil(JvmThreadTicks later) {
        return share(later.jitTicks - jitTicks, later);
    }

    /**
     * @param later a later reading
     * @return the garbage collector's share of the JVM's CPU time in between, or NaN if unknown
     */
    double gcShareUntil(JvmThreadTicks later) {
        return share(later.gcTicks - gcTicks, later);
    }

    private double share(long ticks, JvmThreadTicks later) {
        long all = later.allTicks - allTicks;
        return allTicks == 0 || all <= 0 ? Double.NaN : (double) ticks / all;
    }

    private static String stat(Path task) {
        try {
            return Files.readString(task.resolve("stat"));
        } catch (IOException e) {
            return null;
        }
    }
}
