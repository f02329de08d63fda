package io.pintle.bench.hostile;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Reads the server's gauges every {@value #EVERY_MILLIS} ms on a thread of its own and keeps every reading, for the
 * report (before, peak, after, time to come back) and the plot.
 */
final class GaugeSampler implements AutoCloseable {
    static final long EVERY_MILLIS = 200;
    private static final Pattern LINE = Pattern.compile("^([a-z_]+)(?:\\{([^}]*)\\})? (\\S+)$");
    private static final Pattern CLASS_LABEL = Pattern.compile("(?:^|,)class=\"([^\"]*)\"");

    /**
     * One reading.
     *
     * @param nanos when ({@link System#nanoTime})
     * @param values by {@link Gauge#ordinal}; NaN where the reading failed
     */
    record Sample(long nanos, double[] values) {
        double get(Gauge gauge) {
            return values[gauge.ordinal()];
        }
    }

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final URI metrics;
    private final long pid;
    private final List<Sample> samples = new ArrayList<>();
    private final Thread thread;
    private volatile boolean running = true;
    private volatile boolean fdsExported = true;

    GaugeSampler(int adminPort, long pid) {
        this.metrics = URI.create("http://127.0.0.1:" + adminPort + "/metrics");
        this.pid = pid;
        this.thread = new Thread(this::loop, "gauges");
        thread.setDaemon(true);
    }

    void start() throws IOException, InterruptedException {
        Sample first = read();
        fdsExported = !Double.isNaN(first.get(Gauge.DESCRIPTORS));
        synchronized (samples) {
            samples.add(first);
        }
        thread.start();
    }

    /** @return whether descriptors come from the server's own {@code process_open_fds} */
    boolean descriptorsExported() {
        return fdsExported;
    }

    private void loop() {
        long next = System.nanoTime();
        while (running) {
            try {
                Sample sample = read();
                synchronized (samples) {
                    samples.add(sample);
                }
            } catch (IOException e) {
                double[] none = new double[Gauge.values().length];
                Arrays.fill(none, Double.NaN);
                synchronized (samples) {
                    samples.add(new Sample(System.nanoTime(), none));
                }
            } catch (InterruptedException e) {
                return;
            }
            next += EVERY_MILLIS * 1_000_000;
            long sleep = (next - System.nanoTime()) / 1_000_000;
            if (sleep > 0) {
                try {
                    Thread.sleep(sleep);
                } catch (InterruptedException e) {
                    return;
                }
            } else {
                next = System.nanoTime();
            }
        }
    }

    private Sample read() throws IOException, InterruptedException {
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(metrics).timeout(Duration.ofSeconds(10))
                .build(), HttpResponse.BodyHandlers.ofString());
        long now = System.nanoTime();
        if (response.statusCode() != 200) {
            throw new IOException("/metrics answered " + response.statusCode());
        }
        double[] values = new double[Gauge.values().length];
        Arrays.fill(values, Double.NaN);
        for (String line : response.body().split("\n")) {
            Matcher m = LINE.matcher(line);
            if (!m.matches()) {
                continue;
            }
            for (Gauge gauge : Gauge.values()) {
                if (!gauge.metric().equals(m.group(1))) {
                    continue;
                }
                if (gauge.workClass() != null) {
                    Matcher label = CLASS_LABEL.matcher(m.group(2) == null ? "" : m.group(2));
                    if (!label.find() || !label.group(1).equals(gauge.workClass())) {
                        continue;
                    }
                }
                values[gauge.ordinal()] = Double.parseDouble(m.group(3));
            }
        }
        if (Double.isNaN(values[Gauge.DESCRIPTORS.ordinal()])) {
            values[Gauge.DESCRIPTORS.ordinal()] = descriptors();
        }
        return new Sample(now, values);
    }

    /** @return the server's open descriptors from /proc, or NaN */
    private double descriptors() {
        try (Stream<Path> fds = Files.list(Path.of("/proc", Long.toString(pid), "fd"))) {
            return fds.count();
        } catch (IOException | RuntimeException e) {
            return Double.NaN;
        }
    }

    /** @return the latest reading */
    Sample latest() {
        synchronized (samples) {
            return samples.get(samples.size() - 1);
        }
    }

    /** @return every reading so far */
    List<Sample> all() {
        synchronized (samples) {
            return List.copyOf(samples);
        }
    }

    /** @return the readings taken from {@code from} to {@code to} (nanoTime) */
    List<Sample> between(long from, long to) {
        return all().stream().filter(s -> s.nanos() >= from && s.nanos() <= to).toList();
    }

    @Override
    public void close() {
        running = false;
        thread.interrupt();
    }
}
