package io.pintle.bench.forwarding;

import io.pintle.client.ClientTls;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchEvent;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import javax.net.ssl.KeyManager;

/**
 * bench/forwarding's two watchers, run beside the servers:
 *
 * <ul>
 *   <li>{@code drain <rootReports> <relayReports> <count> <timeoutSeconds> <series.tsv>}: counts the reports
 *       ({@code *.log.gz}, not the store's hidden temporary files) in both directories every
 *       {@value #POLL_MILLIS} ms until the root holds {@code count} and the relay none; prints the wall-clock
 *       instants (epoch µs) of the first arrival, the last, and the relay's emptying, and writes the counts over
 *       time.</li>
 *   <li>{@code latency <url> <pin> <password> <rootReports> <relayReports> <reportsDir> <perSecond> <count> <warmup> <out.tsv>}:
 *       uploads {@code warmup} reports from {@code reportsDir} (in name order, after the first {@code count}), not
 *       counted, then the first {@code count} to the relay at a fixed rate (open loop: each on its own
 *       schedule, whatever the previous one does), as an agent does ({@code PUT /reports/<name>}, HTTP Basic, the
 *       relay's key pinned), and takes the instants each appears in the relay's directory (the relay's store
 *       renamed it to its final name: the 201 follows) and in the root's from inotify ({@link WatchService});
 *       prints p50/p99/max of the time from the relay's file to the root's, and from the 201 as this client saw it
 *       (later than the relay sent it when this JVM is slow to run: it can come after the file is on the root).</li>
 * </ul>
 */
public final class ForwardingProbe {
    private static final long POLL_MILLIS = 20;

    private ForwardingProbe() {}

    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "drain" -> drain(Path.of(args[1]), Path.of(args[2]), Integer.parseInt(args[3]),
                    Integer.parseInt(args[4]), Path.of(args[5]));
            case "latency" -> {
                // A warm-up pass in this JVM first (the servers' JIT and this client's), on other reports.
                int count = Integer.parseInt(args[8]);
                int warmup = Integer.parseInt(args[9]);
                Path out = Path.of(args[10]);
                if (warmup > 0) {
                    latency(URI.create(args[1]), args[2], args[3], Path.of(args[4]), Path.of(args[5]),
                            Path.of(args[6]), Double.parseDouble(args[7]), warmup, count,
                            out.resolveSibling("warmup-" + out.getFileName()));
                }
                latency(URI.create(args[1]), args[2], args[3], Path.of(args[4]), Path.of(args[5]), Path.of(args[6]),
                        Double.parseDouble(args[7]), count, 0, out);
            }
            default -> throw new IllegalArgumentException("drain or latency, not " + args[0]);
        }
    }

    private static long micros(Instant t) {
        return t.getEpochSecond() * 1_000_000 + t.getNano() / 1000;
    }

    private static long reports(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".log.gz") && !n.startsWith("."))
                    .count();
        }
    }

    private static void drain(Path root, Path relay, int count, int timeoutSeconds, Path series) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
        long start = micros(Instant.now());
        long first = -1;
        long all = -1;
        long empty = -1;
        long lastWrite = 0;
        try (PrintStream out = new PrintStream(Files.newOutputStream(series), false, StandardCharsets.UTF_8)) {
            out.println("ms\troot\trelay");
            while (System.nanoTime() < deadline && (all < 0 || empty < 0)) {
                long onRoot = reports(root);
                long onRelay = reports(relay);
                long now = micros(Instant.now());
                if (first < 0 && onRoot > 0) {
                    first = now;
                }
                if (all < 0 && onRoot >= count) {
                    all = now;
                }
                if (empty < 0 && onRelay == 0) {
                    empty = now;
                }
                if (now - lastWrite >= 100_000 || (all >= 0 && empty >= 0)) {
                    out.println((now - start) / 1000 + "\t" + onRoot + "\t" + onRelay);
                    lastWrite = now;
                }
                Thread.sleep(POLL_MILLIS);
            }
            System.out.println("first_arrival_us=" + first);
            System.out.println("all_arrived_us=" + all);
            System.out.println("relay_empty_us=" + empty);
            System.out.println("on_root=" + reports(root));
            System.out.println("on_relay=" + reports(relay));
        }
    }

    private static void latency(URI url, String pin, String password, Path root, Path relay, Path reportsDir,
            double perSecond, int count, int skip, Path out) throws Exception {
        List<Path> reports;
        try (Stream<Path> files = Files.list(reportsDir)) {
            reports = files.sorted().skip(skip).limit(count).toList();
        }
        Map<String, Long> arrived = new ConcurrentHashMap<>();
        Map<String, Long> kept = new ConcurrentHashMap<>();
        Set<String> wanted = ConcurrentHashMap.newKeySet();
        reports.forEach(p -> wanted.add(p.getFileName().toString()));
        WatchService watch = FileSystems.getDefault().newWatchService();
        WatchKey rootKey = root.register(watch, StandardWatchEventKinds.ENTRY_CREATE);
        relay.register(watch, StandardWatchEventKinds.ENTRY_CREATE);
        Thread watcher = new Thread(() -> {
            try {
                while (true) {
                    WatchKey key = watch.take();
                    long now = System.nanoTime();
                    Map<String, Long> seen = key == rootKey ? arrived : kept;
                    for (WatchEvent<?> event : key.pollEvents()) {
                        if (event.context() instanceof Path p && wanted.contains(p.toString())) {
                            seen.putIfAbsent(p.toString(), now);
                        }
                    }
                    key.reset();
                }
            } catch (InterruptedException | java.nio.file.ClosedWatchServiceException stopped) {
                // done
            }
        }, "root-watch");
        watcher.setDaemon(true);
        watcher.start();

        HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .sslContext(ClientTls.context((KeyManager[]) null, Set.of(pin))).connectTimeout(Duration.ofSeconds(10))
                .build();
        String basic = "Basic " + Base64.getEncoder().encodeToString(("rudder:" + password)
                .getBytes(StandardCharsets.UTF_8));
        long[] sent = new long[reports.size()];
        long[] answered = new long[reports.size()];
        int[] status = new int[reports.size()];
        List<CompletableFuture<Void>> pending = new ArrayList<>();
        long t0 = System.nanoTime();
        long period = (long) (1e9 / perSecond);
        for (int i = 0; i < reports.size(); i++) {
            long due = t0 + i * period;
            long wait = due - System.nanoTime();
            if (wait > 0) {
                TimeUnit.NANOSECONDS.sleep(wait);
            }
            Path report = reports.get(i);
            String name = report.getFileName().toString().replace(":", "%3A").replace("+", "%2B").replace("@", "%40");
            int index = i;
            sent[i] = System.nanoTime();
            pending.add(client.sendAsync(HttpRequest.newBuilder(url.resolve("/reports/" + name))
                    .header("Authorization", basic).PUT(HttpRequest.BodyPublishers.ofFile(report)).build(),
                    HttpResponse.BodyHandlers.discarding()).handle((response, failure) -> {
                        answered[index] = System.nanoTime();
                        status[index] = response == null ? 0 : response.statusCode();
                        return null;
                    }));
        }
        CompletableFuture.allOf(pending.toArray(new CompletableFuture<?>[0])).get(120, TimeUnit.SECONDS);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        long expected = Arrays.stream(status).filter(s -> s == 201 || s == 204).count();
        while (arrived.size() < expected && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        watch.close();

        List<Double> upload = new ArrayList<>();
        List<Double> forward = new ArrayList<>();
        List<Double> hops = new ArrayList<>();
        long failed = 0;
        try (PrintStream tsv = new PrintStream(Files.newOutputStream(out), false, StandardCharsets.UTF_8)) {
            tsv.println("name\tstatus\tupload_ms\tforward_ms\trelay_to_root_ms");
            for (int i = 0; i < reports.size(); i++) {
                String name = reports.get(i).getFileName().toString();
                Long at = arrived.get(name);
                Long onRelay = kept.get(name);
                double up = (answered[i] - sent[i]) / 1e6;
                double fw = at == null ? Double.NaN : (at - answered[i]) / 1e6;
                double hop = at == null || onRelay == null ? Double.NaN : (at - onRelay) / 1e6;
                tsv.println(name + "\t" + status[i] + "\t" + up + "\t" + fw + "\t" + hop);
                if (status[i] != 201 && status[i] != 204) {
                    failed++;
                    continue;
                }
                upload.add(up);
                if (at != null) {
                    forward.add(fw);
                }
                if (!Double.isNaN(hop)) {
                    hops.add(hop);
                }
            }
        }
        System.out.println("sent=" + reports.size());
        System.out.println("failed_uploads=" + failed);
        System.out.println("arrived=" + forward.size());
        System.out.println("upload_p50_ms=" + round(percentile(upload, 0.50)));
        System.out.println("upload_p99_ms=" + round(percentile(upload, 0.99)));
        System.out.println("forward_p50_ms=" + round(percentile(forward, 0.50)));
        System.out.println("forward_p99_ms=" + round(percentile(forward, 0.99)));
        System.out.println("forward_max_ms=" + round(percentile(forward, 1.0)));
        System.out.println("forward_min_ms=" + round(percentile(forward, 0.0)));
        System.out.println("hop_p50_ms=" + round(percentile(hops, 0.50)));
        System.out.println("hop_p99_ms=" + round(percentile(hops, 0.99)));
        System.out.println("hop_max_ms=" + round(percentile(hops, 1.0)));
        System.out.println("hop_min_ms=" + round(percentile(hops, 0.0)));
    }

    private static double round(double v) {
        return Math.round(v * 10) / 10.0;
    }

    /** Nearest rank. */
    static double percentile(List<Double> values, double p) {
        if (values.isEmpty()) {
            return Double.NaN;
        }
        double[] sorted = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        int rank = (int) Math.ceil(p * sorted.length);
        return sorted[Math.min(sorted.length, Math.max(rank, 1)) - 1];
    }
}
