package io.pintle.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Splits the JVM's CPU time between the load generator and the servers: per-thread CPU time from {@link
 * ThreadMXBean}, grouped by thread name prefix, and the whole process's CPU time from the JDK's {@code
 * com.sun.management.OperatingSystemMXBean}. Everything runs in one JVM, so the difference is GC, JIT and the
 * like; {@link JvmThreadTicks} tells the JIT compilers' and the GC's part of it. Machine-wide counters ({@link
 * MachineCpu}) show what other processes took meanwhile.
 */
final class CpuSampler {
    /**
     * Worker pool prefixes of the servers: Pintle's pool is named {@code pintle} by {@code HttpServerFactory},
     * the baseline's by {@link BaselineServer}.
     */
    private static final List<String> SERVER_THREAD_PREFIXES = List.of("pintle-", BaselineServer.THREAD_NAME + "-");
    /** The client's threads: its pool and its scheduler. */
    private static final String CLIENT_THREAD_PREFIX = LoadClient.THREAD_NAME + "-";

    private final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    private final com.sun.management.OperatingSystemMXBean os;

    /** @throws IllegalStateException if this JVM cannot measure thread or process CPU time */
    CpuSampler() {
        OperatingSystemMXBean bean = ManagementFactory.getOperatingSystemMXBean();
        if (!(bean instanceof com.sun.management.OperatingSystemMXBean sun) || !threads.isThreadCpuTimeSupported()) {
            throw new IllegalStateException("this JVM does not report thread and process CPU time");
        }
        this.os = sun;
        threads.setThreadCpuTimeEnabled(true);
    }

    /**
     * CPU time of every live thread, and of the process, now.
     *
     * @param wallNanos {@link System#nanoTime()} at the time of the sample
     * @param processNanos CPU time of the whole process
     * @param threadNanos CPU time by thread id
     * @param names thread names by id
     * @param machine machine-wide CPU counters
     * @param jvmThreads the JVM's native threads' counters (JIT, GC)
     */
    record Sample(
            long wallNanos, long processNanos, Map<Long, Long> threadNanos, Map<Long, String> names,
            MachineCpu machine, JvmThreadTicks jvmThreads) {}

    /** @return a sample of the current CPU times */
    Sample sample() {
        Map<Long, Long> cpu = new HashMap<>();
        Map<Long, String> names = new HashMap<>();
        for (ThreadInfo info : threads.getThreadInfo(threads.getAllThreadIds())) {
            if (info == null) {
                continue; // died since getAllThreadIds()
            }
            long nanos = threads.getThreadCpuTime(info.getThreadId());
            if (nanos >= 0) {
                cpu.put(info.getThreadId(), nanos);
                names.put(info.getThreadId(), info.getThreadName());
            }
        }
        return new Sample(System.nanoTime(), os.getProcessCpuTime(), cpu, names, MachineCpu.read(),
                JvmThreadTicks.read());
    }

    /**
     * The CPU used between two samples. A thread that started in between counts in full; one that ended in
     * between is lost (the pools keep their threads for the few seconds of a run, so this is small).
     *
     * @param start the earlier sample
     * @param end the later sample
     * @return the split
     */
    static CpuShare between(Sample start, Sample end) {
        long client = 0;
        long server = 0;
        for (Map.Entry<Long, Long> thread : end.threadNanos().entrySet()) {
            long used = thread.getValue() - start.threadNanos().getOrDefault(thread.getKey(), 0L);
            String name = end.names().get(thread.getKey());
            if (name.startsWith(CLIENT_THREAD_PREFIX)) {
                client += used;
            } else if (SERVER_THREAD_PREFIXES.stream().anyMatch(name::startsWith)) {
                server += used;
            }
        }
        return new CpuShare(end.wallNanos() - start.wallNanos(), end.processNanos() - start.processNanos(), client,
                server, Runtime.getRuntime().availableProcessors(), start.machine().busyUntil(end.machine()),
                start.jvmThreads().jitShareUntil(end.jvmThreads()), start.jvmThreads().gcShareUntil(end.jvmThreads()));
    }
}
