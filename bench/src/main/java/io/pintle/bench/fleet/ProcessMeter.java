package io.pintle.bench.fleet;

import io.pintle.bench.sync.ProcessCpu;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * CPU and resident memory of the fleet's processes every {@link #PERIOD_MILLIS}, from {@code /proc}: for each
 * process, its share of one core over the last period and its {@code VmRSS}. A server restarted meanwhile is
 * followed to its new JVM (its CPU counts from the new JVM's first sample).
 */
final class ProcessMeter implements AutoCloseable {
    static final long PERIOD_MILLIS = 5_000;

    /** One period of one process: seconds from the start, cores used, resident MiB. */
    record Point(double seconds, double cores, double rssMib) {}

    private final Map<String, Supplier<Optional<ProcessHandle>>> processes = new LinkedHashMap<>();
    private final Map<String, List<Point>> points = new LinkedHashMap<>();
    private final Map<String, long[]> last = new LinkedHashMap<>();
    private final Map<String, Double> lastCpu = new LinkedHashMap<>();
    private final long startMillis;
    private final Thread thread;
    private volatile boolean running = true;

    ProcessMeter(long startMillis) {
        this.startMillis = startMillis;
        this.thread = new Thread(this::loop, "process-meter");
        this.thread.setDaemon(true);
    }

    /** Adds a process before {@link #start()}. */
    void add(String name, Supplier<Optional<ProcessHandle>> process) {
        processes.put(name, process);
        points.put(name, new ArrayList<>());
    }

    void start() {
        thread.start();
    }

    private void loop() {
        while (running) {
            long now = System.currentTimeMillis();
            for (Map.Entry<String, Supplier<Optional<ProcessHandle>>> entry : processes.entrySet()) {
                sample(entry.getKey(), entry.getValue().get(), now);
            }
            try {
                Thread.sleep(PERIOD_MILLIS - (System.currentTimeMillis() - now) % PERIOD_MILLIS);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private void sample(String name, Optional<ProcessHandle> process, long now) {
        if (process.isEmpty()) {
            last.remove(name);
            return;
        }
        long pid = process.get().pid();
        if (!process.get().isAlive() || !Files.exists(Path.of("/proc", Long.toString(pid)))) {
            last.remove(name);
            return;
        }
        double cpu;
        try {
            cpu = ProcessCpu.millis(List.of(process.get()));
        } catch (RuntimeException gone) {
            last.remove(name);
            return;
        }
        double rss = rssMib(pid);
        long[] previous = last.get(name);
        if (previous != null && previous[0] == pid && cpu >= lastCpu.get(name)) {
            double cores = (cpu - lastCpu.get(name)) / (now - previous[1]);
            synchronized (points) {
                points.get(name).add(new Point((now - startMillis) / 1000.0, cores, rss));
            }
        }
        last.put(name, new long[] {pid, now});
        lastCpu.put(name, cpu);
    }

    private static double rssMib(long pid) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
                if (line.startsWith("VmRSS:")) {
                    return Long.parseLong(line.substring(6).strip().split("\\s+")[0]) / 1024.0;
                }
            }
        } catch (IOException | RuntimeException gone) {
            // The process ended between the two reads.
        }
        return 0;
    }

    /** @return every process's points so far, in the order they were added */
    Map<String, List<Point>> points() {
        synchronized (points) {
            Map<String, List<Point>> copy = new LinkedHashMap<>();
            points.forEach((name, list) -> copy.put(name, List.copyOf(list)));
            return copy;
        }
    }

    @Override
    public void close() {
        running = false;
        thread.interrupt();
    }
}
