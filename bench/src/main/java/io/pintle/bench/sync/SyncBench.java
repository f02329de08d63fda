package io.pintle.bench.sync;

import io.pintle.api.Routes;
import io.pintle.bench.harness.HarnessMain;
import io.pintle.bench.harness.ReportOutput;
import io.pintle.bench.sync.Sample.Scenario;
import io.pintle.client.ClientTls;
import io.pintle.server.demo.DemoLayout;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Entry point of {@code bench/sync}: generates Rudder-like trees, starts cf-serverd, nginx and Pintle on 127.0.0.1
 * (each behind a {@link DelayProxy} too), runs every contestant through every scenario with and without the added
 * latency, checks every synced tree against the source, and prints a Markdown report (also written to
 * {@code --output}).
 *
 * <p>Exit status: 0 when every sync succeeded and matched the source, 1 when some did not (the report says
 * which), 2 when the benchmark could not run.
 */
public final class SyncBench {
    static final int EXIT_OK = 0;
    static final int EXIT_FAILURES = 1;
    /** Files changed by the "10 files changed" scenario. */
    static final int CHANGED_FILES = 10;
    private static final long SEED = 0x53796e63L;

    private final SyncOptions options;
    private final PrintStream progress;
    private final List<Sample> samples = new ArrayList<>();
    private final Map<String, DelayProxy> proxies = new LinkedHashMap<>();
    private final Map<String, Integer> ports = new LinkedHashMap<>();
    private final Map<String, Supplier<List<ProcessHandle>>> serverProcesses = new LinkedHashMap<>();
    private final List<String> notes = new ArrayList<>();
    private int round;
    /** Pintle client priming the manifest after each change, on loopback, or null without the manifest view. */
    private HttpClient primer;
    private final Map<Integer, URI> primerUris = new LinkedHashMap<>();

    private SyncBench(SyncOptions options, PrintStream progress) {
        this.options = options;
        this.progress = progress;
    }

    /** @param args see {@link SyncOptions#USAGE} */
    public static void main(String[] args) {
        HarnessMain.quietClientLogging();
        System.exit(HarnessMain.run(args, SyncOptions::parse, "benchmark",
                options -> new SyncBench(options, System.err).run()));
    }

    private int run() throws Exception {
        Instant date = Instant.now().truncatedTo(ChronoUnit.SECONDS);
        Path work = Files.createTempDirectory("pintle-sync-");
        progress.println("work directory: " + work);
        try {
            progress.println("checking the delaying proxy");
            ProxyCheck proxyCheck = ProxyCheck.run(options.roundTrip());
            progress.printf("proxy: ping-pong %.2f ms (direct %.3f ms), first exchange %.1f ms, %.0f MB/s"
                            + " (direct %.0f MB/s)%n", proxyCheck.proxiedMillis(), proxyCheck.directMillis(),
                    proxyCheck.firstExchangeMillis(), proxyCheck.megabytesPerSecond(),
                    proxyCheck.directMegabytesPerSecond());

            int pintlePort = Ports.free();
            DemoLayout layout = DemoLayout.create(work.resolve("layout"), pintlePort);
            String node = layout.linux1();
            Path share = layout.directory().resolve("share").resolve(node);
            Map<Integer, RudderTree> trees = new LinkedHashMap<>();
            for (int files : options.trees()) {
                progress.println("generating a tree of " + files + " files");
                trees.put(files, RudderTree.generate(share.resolve("tree-" + files), files, SEED + files));
            }
            Path nodeHome = layout.directory().resolve("nodes").resolve(node);
            TlsFactory tls = () -> ClientTls.context(nodeHome.resolve("agent.cert"),
                    nodeHome.resolve("localhost.priv"), Set.of(layout.serverPin()));

            try (PintleProcess pintle = PintleProcess.start(options.pintleJar(), layout.config(), pintlePort,
                    work.resolve("pintle.log"));
                    Nginx nginx = startNginx(work, layout);
                    CfEngine cf = startCfEngine(work, share)) {
                serverProcesses.put(Contestant.Servers.PINTLE, () -> List.of(ProcessHandle.of(pintle.pid()).orElseThrow()));
                serverProcesses.put(Contestant.Servers.NGINX, nginx::processes);
                serverProcesses.put(Contestant.Servers.CFENGINE,
                        () -> List.of(ProcessHandle.of(cf.pid()).orElseThrow()));
                ports.put(Contestant.Servers.PINTLE, pintlePort);
                for (Map.Entry<String, Integer> server : ports.entrySet()) {
                    proxies.put(server.getKey(), DelayProxy.start(new InetSocketAddress(
                            InetAddress.getLoopbackAddress(), server.getValue()), options.roundTrip()));
                }
                try {
                    Views views = probe(tls, pintlePort, "/policies/" + node + "/tree-" + options.trees().get(0));
                    double cfEmptyRun = median(List.of(cf.emptyRunMillis(), cf.emptyRunMillis(), cf.emptyRunMillis()));
                    Map<Integer, List<Contestant>> contestants = new LinkedHashMap<>();
                    for (RudderTree tree : trees.values()) {
                        contestants.put(tree.files().size() - tree.symlinks().size(),
                                contestants(tree, "/policies/" + node + "/" + tree.root().getFileName(), tls, cf,
                                        views));
                    }
                    if (views.manifest()) {
                        primer = HttpClient.newBuilder().sslContext(tls.create()).build();
                        for (Map.Entry<Integer, RudderTree> tree : trees.entrySet()) {
                            primerUris.put(tree.getKey(), URI.create("https://127.0.0.1:" + pintlePort + "/policies/"
                                    + node + "/" + tree.getValue().root().getFileName() + "/?" + Routes.VIEW + "="
                                    + Routes.VIEW_MANIFEST));
                        }
                    }
                    warmUp(work, trees, contestants);
                    for (boolean delayed : List.of(false, true)) {
                        for (Map.Entry<Integer, RudderTree> tree : trees.entrySet()) {
                            for (int repetition = 0; repetition < options.repetitions(); repetition++) {
                                repetition(work, tree.getValue(), tree.getKey(), contestants.get(tree.getKey()),
                                        delayed, repetition);
                            }
                        }
                    }
                    SyncReport.Context context = new SyncReport.Context(date, options, proxyCheck, trees, views,
                            nginx.version(), cf.version(), cfEmptyRun, notes);
                    return report(SyncReport.render(context, samples));
                } finally {
                    for (DelayProxy proxy : proxies.values()) {
                        proxy.close();
                    }
                }
            }
        } finally {
            if (options.keep()) {
                progress.println("kept " + work);
            } else {
                ArchiveSync.deleteTree(work);
            }
        }
    }

    private Nginx startNginx(Path work, DemoLayout layout) throws IOException, InterruptedException {
        int port = Ports.free();
        Path dir = layout.directory();
        Nginx nginx = Nginx.start(Files.createDirectories(work.resolve("nginx")), dir.resolve("share"),
                dir.resolve("server/agent.cert"), dir.resolve("server/localhost.priv"),
                dir.resolve("lib/nodescerts.pem"), port);
        ports.put(Contestant.Servers.NGINX, port);
        return nginx;
    }

    private CfEngine startCfEngine(Path work, Path share) throws IOException, InterruptedException {
        int port = Ports.free();
        CfEngine cf = CfEngine.start(Files.createDirectories(work.resolve("cfengine")), share, port);
        ports.put(Contestant.Servers.CFENGINE, port);
        return cf;
    }

    /**
     * Which of Pintle's directory views the server under test answers; client-lib's sync needs the manifest.
     *
     * @param manifest whether {@code ?view=manifest} answers 200 with an ETag
     * @param archive whether {@code ?view=archive} does
     * @param clientSync whether client-lib's sync can run against it
     */
    record Views(boolean manifest, boolean archive, boolean clientSync) {}

    private Views probe(TlsFactory tls, int port, String directory) throws Exception {
        HttpClient http = HttpClient.newBuilder().sslContext(tls.create()).build();
        boolean[] answered = new boolean[2];
        String[] views = {Routes.VIEW_MANIFEST, Routes.VIEW_ARCHIVE};
        for (int i = 0; i < views.length; i++) {
            HttpResponse<byte[]> response = http.send(HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + port
                    + directory + "/?" + Routes.VIEW + "=" + views[i])).GET().build(),
                    HttpResponse.BodyHandlers.ofByteArray());
            answered[i] = response.statusCode() == 200 && response.headers().firstValue("ETag").isPresent();
            progress.printf("Pintle ?view=%s: HTTP %d%n", views[i], response.statusCode());
            if (!answered[i]) {
                notes.add("Pintle's ?view=" + views[i] + " answered HTTP " + response.statusCode()
                        + " on this build: not measured.");
            }
        }
        return new Views(answered[0], answered[1], answered[0]);
    }

    private List<Contestant> contestants(RudderTree tree, String path, TlsFactory tls, CfEngine cf, Views views) {
        List<Contestant> list = new ArrayList<>();
        list.add(cf.agent(tree.root()));
        list.add(new PerFileSync("nginx, per file", Contestant.Servers.NGINX, path, tree.files(), tls));
        list.add(new PerFileSync("Pintle, per file", Contestant.Servers.PINTLE, path, tree.files(), tls));
        if (views.archive()) {
            list.add(new ArchiveSync(path, tls));
        }
        if (views.clientSync()) {
            list.add(ClientSyncs.contestant(path, tls));
        }
        return list;
    }

    /** Two unmeasured syncs per Java contestant on the first tree, so that the JIT has compiled both sides. */
    private void warmUp(Path work, Map<Integer, RudderTree> trees, Map<Integer, List<Contestant>> contestants)
            throws Exception {
        int files = trees.keySet().iterator().next();
        Map<String, String> expected = TreeCheck.digests(trees.get(files).root());
        for (Contestant contestant : contestants.get(files)) {
            if (contestant.server().equals(Contestant.Servers.CFENGINE)) {
                continue;
            }
            progress.println("warm-up: " + contestant.name());
            for (int i = 0; i < 3; i++) {
                Path destination = freshDestination(work, contestant, files);
                contestant.forget();
                contestant.sync(destination, ports.get(contestant.server()));
                contestant.sync(destination, ports.get(contestant.server()));
                List<String> differences = TreeCheck.differences(expected, destination);
                if (!differences.isEmpty()) {
                    throw new IllegalStateException("warm-up of " + contestant.name() + ": " + differences);
                }
            }
        }
    }

    private void repetition(Path work, RudderTree tree, int files, List<Contestant> contestants, boolean delayed,
            int repetition) throws Exception {
        Map<String, String> expected = TreeCheck.digests(tree.root());
        List<Contestant> running = new ArrayList<>();
        for (Contestant contestant : contestants) {
            boolean cf = contestant.server().equals(Contestant.Servers.CFENGINE);
            if (cf && delayed && (files > options.cfLatencyMaxFiles() || repetition >= options.cfLatencyRepetitions())) {
                continue;
            }
            running.add(contestant);
        }
        Map<Contestant, Path> destinations = new LinkedHashMap<>();
        for (Contestant contestant : running) {
            Path destination = freshDestination(work, contestant, files);
            destinations.put(contestant, destination);
            contestant.forget();
            measure(contestant, files, delayed, Scenario.COLD, destination, expected, repetition);
            measure(contestant, files, delayed, Scenario.NO_CHANGE, destination, expected, repetition);
        }
        tree.change(CHANGED_FILES, round++);
        Map<String, String> changed = TreeCheck.digests(tree.root());
        if (primer != null) {
            primeAfterChange(files, delayed);
        }
        for (Contestant contestant : running) {
            measure(contestant, files, delayed, Scenario.CHANGED, destinations.get(contestant), changed, repetition);
        }
    }

    private void measure(Contestant contestant, int files, boolean delayed, Scenario scenario, Path destination,
            Map<String, String> expected, int repetition) throws IOException {
        DelayProxy proxy = delayed ? proxies.get(contestant.server()) : null;
        int port = delayed ? proxy.port() : ports.get(contestant.server());
        List<ProcessHandle> server = serverProcesses.get(contestant.server()).get();
        if (proxy != null) {
            proxy.reset();
        }
        String failure = null;
        Contestant.Outcome outcome = Contestant.Outcome.UNKNOWN;
        double serverCpu = ProcessCpu.millis(server);
        double clientCpu = ProcessCpu.selfAndChildrenMillis();
        double machineBusy = ProcessCpu.machineBusyMillis();
        long start = System.nanoTime();
        try {
            outcome = contestant.sync(destination, port);
        } catch (Exception e) {
            failure = e.toString();
        }
        double millis = (System.nanoTime() - start) / 1e6;
        clientCpu = ProcessCpu.selfAndChildrenMillis() - clientCpu;
        serverCpu = ProcessCpu.millis(server) - serverCpu;
        double otherCpu = ProcessCpu.machineBusyMillis() - machineBusy - clientCpu - serverCpu;
        DelayProxy.Counts counts = proxy != null ? proxy.counts() : null;
        if (failure == null) {
            List<String> differences = TreeCheck.differences(expected, destination);
            if (!differences.isEmpty()) {
                failure = "synced tree differs from the source: " + differences;
            }
        }
        long requests = outcome.requests();
        Sample sample = new Sample(contestant.name(), files, delayed, scenario, millis, requests,
                counts == null ? -1 : counts.connections(), counts == null ? -1 : counts.roundTrips(), clientCpu,
                serverCpu, otherCpu, failure);
        samples.add(sample);
        progress.printf("%s, %d files, %s, %s, #%d: %.0f ms, %s requests, %s round trips, others %.0f%%%s%s%n",
                contestant.name(),
                files, delayed ? "+" + options.roundTrip().toMillis() + " ms" : "loopback", scenario.label(),
                repetition + 1, millis, requests < 0 ? "?" : requests, counts == null ? "-" : counts.roundTrips(),
                sample.otherShare() * 100, outcome.detail() == null ? "" : " (" + outcome.detail() + ")",
                failure == null ? "" : " FAILED: " + failure);
    }

    /**
     * An empty destination directory, with nothing left beside it from earlier syncs: staging directories, and
     * client-lib's sidecar ({@code .<name>.pintle-sync.json}, the ETag it last applied) and lock.
     */
    /**
     * Pintle's first manifest request after a change pays for bringing the server's manifest up to date, once for
     * every client (in the first full run the archive contestant, first in line, took 790 ms of server CPU for
     * 10 changed files of 3,000, the client sync after it 130 ms). Made here, timed on its own and reported apart,
     * so that the contestants after it are compared on the same footing whatever their order.
     */
    private void primeAfterChange(int files, boolean delayed) {
        long start = System.nanoTime();
        String failure = null;
        try {
            HttpResponse<byte[]> response = primer.send(HttpRequest.newBuilder(primerUris.get(files)).GET().build(),
                    HttpResponse.BodyHandlers.ofByteArray());
            if (response.statusCode() != 200) {
                failure = "HTTP " + response.statusCode();
            }
        } catch (IOException e) {
            failure = e.toString();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            failure = e.toString();
        }
        double millis = (System.nanoTime() - start) / 1e6;
        samples.add(new Sample(SyncReport.FIRST_MANIFEST, files, delayed, Scenario.CHANGED, millis, 1, -1, -1, 0, 0, 0,
                failure));
        progress.printf("first manifest after the change, %d files: %.0f ms%s%n", files, millis,
                failure == null ? "" : " FAILED: " + failure);
    }

    private static Path freshDestination(Path work, Contestant contestant, int files) throws IOException {
        String name = contestant.name().replaceAll("[^A-Za-z0-9]+", "-") + "-" + files;
        Path parent = Files.createDirectories(work.resolve("destinations"));
        try (DirectoryStream<Path> siblings = Files.newDirectoryStream(parent)) {
            for (Path sibling : siblings) {
                String siblingName = sibling.getFileName().toString();
                if (siblingName.equals(name) || siblingName.startsWith(name + ".")
                        || siblingName.startsWith("." + name + ".")) {
                    ArchiveSync.deleteTree(sibling);
                }
            }
        }
        return Files.createDirectories(parent.resolve(name));
    }

    private int report(String markdown) throws IOException {
        ReportOutput.publish(markdown, options.output(), progress);
        return samples.stream().allMatch(Sample::ok) ? EXIT_OK : EXIT_FAILURES;
    }

    static double median(List<Double> values) {
        return ProxyCheck.median(values);
    }
}
