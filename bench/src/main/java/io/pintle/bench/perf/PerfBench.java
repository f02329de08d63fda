package io.pintle.bench.perf;

import io.pintle.bench.harness.HarnessMain;
import io.pintle.bench.harness.ReportOutput;
import io.pintle.bench.sync.CfEngine;
import io.pintle.bench.sync.Contestant;
import io.pintle.bench.sync.Ports;
import io.pintle.client.ClientTls;
import io.pintle.server.PintleServer;
import io.pintle.server.config.ServerConfig;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import javax.net.ssl.SSLContext;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.http.HttpVersion;

/**
 * Entry point of {@code bench/perf}: generates the layout, starts Pintle (one JVM per server key type), nginx and
 * cf-serverd on 127.0.0.1, runs every row against Pintle then nginx, and prints a Markdown report (also written to
 * {@code --output}, with a plot in {@code --plot}).
 *
 * <p>Exit status: 0 when every exchange succeeded, 1 when some failed (the report counts them), 2 when the
 * benchmark could not run.
 */
public final class PerfBench {
    static final String PINTLE = "Pintle";
    static final String NGINX = "nginx";
    private static final int IDLE_PROBES = 50;
    private static final Duration LARGE_WINDOW = Duration.ofSeconds(8);

    private final PerfOptions options;
    private final PrintStream progress;
    private final List<PerfRow> rows = new ArrayList<>();
    private final List<String> notes = new ArrayList<>();
    private PerfLayout layout;
    private Map<ServerKey, Contenders.PintleServer> pintle;
    private Contenders.NginxServer nginx;
    /** Each server's ETag of each probed path: "Pintle:/path" or "nginx:/path". */
    private final Map<String, String> etags = new LinkedHashMap<>();
    private SSLContext agentTls;
    private SSLContext ecTls;

    private PerfBench(PerfOptions options, PrintStream progress) {
        this.options = options;
        this.progress = progress;
    }

    /** @param args see {@link PerfOptions#USAGE} */
    public static void main(String[] args) {
        HarnessMain.quietClientLogging();
        System.exit(HarnessMain.run(args, a -> PerfOptions.parse(System.getenv(), a), "benchmark",
                options -> new PerfBench(options, System.err).run()));
    }

    private int run() throws Exception {
        Instant date = Instant.now().truncatedTo(ChronoUnit.SECONDS);
        long start = System.nanoTime();
        Path work = Files.createTempDirectory("pintle-perf-");
        progress.println("work directory: " + work);
        try {
            progress.println("generating keys and files");
            layout = PerfLayout.create(work.resolve("layout"));
            agentTls = ClientTls.context(layout.agentHome().resolve("agent.cert"),
                    layout.agentHome().resolve("localhost.priv"), layout.pins());
            ecTls = ClientTls.context(layout.ecNodeHome().resolve("agent.cert"),
                    layout.ecNodeHome().resolve("localhost.priv"), layout.pins());
            progress.println("starting Pintle (" + options.pintleJava() + " " + String.join(" ",
                    options.pintleJvmOptions()) + ") and nginx");
            pintle = Contenders.startPintle(layout, options, work);
            String cfVersion;
            try (Contenders.NginxServer nginxServer = Contenders.startNginx(layout, work, "nginx",
                    Contenders.NginxSetup.ALL_CORES, List.of())) {
                nginx = nginxServer;
                probeEtags();
                warmUp();
                cfVersion = "not run";
                if (options.rows().contains("small")) {
                    smallFiles();
                }
                if (options.rows().contains("large")) {
                    cfVersion = largeFile(work);
                }
                if (options.rows().contains("handshake")) {
                    handshakes();
                }
                if (options.rows().contains("herd")) {
                    for (int agents : options.herdAgents()) {
                        herd(agents);
                    }
                }
                if (options.rows().contains("idle")) {
                    idle();
                }
            } finally {
                pintle.values().forEach(Contenders.PintleServer::close);
            }
            double minutes = (System.nanoTime() - start) / 6e10;
            PerfReport.Context context = new PerfReport.Context(date, minutes, options, nginx.nginx().version(),
                    cfVersion, Runtime.version().toString(), notes);
            String markdown = PerfReport.render(context, rows);
            ReportOutput.publish(markdown, options.output(), progress);
            ReportOutput.plot(options.plot(), file -> PerfPlot.write(rows, date, file), progress);
            boolean failed = rows.stream().anyMatch(r -> r.pintle().errors() > 0 || r.nginx().errors() > 0);
            return failed ? 1 : 0;
        } finally {
            deleteTree(work);
        }
    }

    // ---- servers and paths

    private URI base(String server, ServerKey key) {
        int port = server.equals(PINTLE) ? pintle.get(key).port() : nginx.ports().get(key);
        return URI.create("https://127.0.0.1:" + port);
    }

    /**
     * The idle row's connections, fewer than asked when Pintle's open-files limit cannot hold them: with Conscrypt
     * (its start-up line says so) each TLS connection holds three descriptors, and Pintle keeps a reserve for the rest (both as PintleServer counts them).
     * Both servers then get the same, smaller number, and the report says why.
     */
    private int idleConnectionsThatFit() throws IOException {
        Contenders.PintleServer server = pintle.get(ServerKey.ECDSA);
        boolean conscrypt = Files.readString(server.log()).contains(" by Conscrypt ");
        long limit = Long.MAX_VALUE;
        for (String line : Files.readAllLines(Path.of("/proc", Long.toString(server.process().pid()), "limits"))) {
            if (line.startsWith("Max open files")) {
                String soft = line.substring("Max open files".length()).trim().split("\\s+")[0];
                limit = soft.equals("unlimited") ? Long.MAX_VALUE : Long.parseLong(soft);
            }
        }
        int perConnection = PintleServer.descriptorsPerConnection(
                conscrypt ? ServerConfig.TlsProvider.CONSCRYPT : ServerConfig.TlsProvider.JDK);
        long fit = (limit - PintleServer.DESCRIPTOR_RESERVE) / perConnection;
        if (fit >= options.idleConnections()) {
            return options.idleConnections();
        }
        int connections = (int) Math.max(1000, fit / 1000 * 1000);
        String note = String.format(Locale.ROOT, "Idle row: %,d connections, not %,d: Pintle's open-files limit is"
                + " %,d and it holds %d descriptor%s per TLS connection (%s), plus %,d for the rest.", connections,
                options.idleConnections(), limit, perConnection, perConnection > 1 ? "s" : "",
                conscrypt ? "Conscrypt: the socket and a pipe" : "the JDK's TLS", PintleServer.DESCRIPTOR_RESERVE);
        notes.add(note);
        progress.println(note);
        return connections;
    }

    private List<ProcessHandle> processes(String server, ServerKey key) {
        return server.equals(PINTLE) ? pintle.get(key).processes() : nginx.nginx().processes();
    }

    private String etag(String server, String path) {
        return etags.get(server + ":" + path);
    }

    /** Reads every server's ETag of the paths conditional rows and checks ask for (HEAD with the agent's key). */
    private void probeEtags() throws Exception {
        HttpClient http = Load.client(agentTls, false, false, 4);
        HttpClient ec = Load.client(ecTls, false, false, 4);
        try {
            for (String server : List.of(PINTLE, NGINX)) {
                for (String path : List.of(PerfLayout.smallPath(layout.agent()), layout.largePath(),
                        PerfLayout.commonPath(), layout.rulesPath())) {
                    head(http, server, path);
                }
                head(ec, server, PerfLayout.smallPath(layout.demo().linux2()));
            }
        } finally {
            http.stop();
            ec.stop();
        }
    }

    private void head(HttpClient http, String server, String path) throws Exception {
        for (ServerKey key : ServerKey.values()) {
            ContentResponse response = http.newRequest(base(server, key).resolve(path)).method(HttpMethod.HEAD)
                    .timeout(30, TimeUnit.SECONDS).send();
            String etag = response.getHeaders().get(HttpHeader.ETAG);
            if (response.getStatus() != 200 || etag == null) {
                throw new IllegalStateException(server + " (" + key.title() + ") answered HEAD " + path + " with "
                        + response.getStatus() + ", ETag " + etag);
            }
            String previous = etags.putIfAbsent(server + ":" + path, etag);
            if (previous != null && !previous.equals(etag)) {
                throw new IllegalStateException(server + " has two ETags for " + path + ": " + previous + ", " + etag);
            }
        }
        progress.printf("%s %s: ETag %s%n", server, path, etag(server, path));
    }

    /**
     * Unmeasured: every Pintle JVM's JIT compiles the TLS and request paths (nginx needs none). Keep-alive requests
     * over both protocols where the keep-alive rows run, new connections everywhere.
     */
    private void warmUp() throws Exception {
        String small = PerfLayout.smallPath(layout.agent());
        for (ServerKey key : ServerKey.values()) {
            progress.println("warm-up: Pintle, " + key.title());
            URI uri = base(PINTLE, key).resolve(small);
            List<ProcessHandle> processes = processes(PINTLE, key);
            boolean keepAliveRows = key == ServerKey.RSA_2048;
            for (boolean http2 : keepAliveRows ? new boolean[] {false, true} : new boolean[] {false}) {
                Load.Expect expect = new Load.Expect(200, PerfLayout.SMALL_BYTES, etag(PINTLE, small),
                        http2 ? HttpVersion.HTTP_2 : HttpVersion.HTTP_1_1);
                HttpClient http = Load.client(agentTls, http2, false, http2 ? 1 : 16);
                try {
                    if (keepAliveRows && !http2) {
                        Load.closedLoop(1, Duration.ofSeconds(1), Duration.ofSeconds(5),
                                Load.keepAlive(http, uri, expect, Load.REQUEST_TIMEOUT), processes,
                                http.getExecutor());
                    }
                    Load.closedLoop(16, Duration.ofSeconds(1), Duration.ofSeconds(keepAliveRows ? 15 : 3),
                            Load.keepAlive(http, uri, expect, Load.REQUEST_TIMEOUT), processes, http.getExecutor());
                    if (!http2) {
                        Load.closedLoop(8, Duration.ofSeconds(1), Duration.ofSeconds(8),
                                Load.newConnection(http, uri, expect), processes, http.getExecutor());
                    }
                } finally {
                    http.stop();
                }
            }
            if (key == ServerKey.RSA_4096) {
                // The resumption row's server.
                HttpClient http = Load.client(agentTls, false, true, 1);
                try {
                    Load.closedLoop(1, Duration.ofSeconds(1), Duration.ofSeconds(5), Load.newConnection(http, uri,
                            new Load.Expect(200, PerfLayout.SMALL_BYTES, etag(PINTLE, small), HttpVersion.HTTP_1_1)),
                            processes, http.getExecutor());
                } finally {
                    http.stop();
                }
            }
        }
    }

    // ---- rows

    private void smallFiles() throws Exception {
        String path = PerfLayout.smallPath(layout.agent());
        for (boolean http2 : new boolean[] {false, true}) {
            for (int concurrency : new int[] {1, 16, 64}) {
                String label = "Small file (1 KiB), keep-alive, " + (http2 ? "HTTP/2" : "HTTP/1.1") + ", "
                        + concurrency + " in flight";
                Map<String, PerfRow.Cell> cells = new LinkedHashMap<>();
                for (String server : List.of(PINTLE, NGINX)) {
                    HttpVersion version = http2 ? HttpVersion.HTTP_2 : HttpVersion.HTTP_1_1;
                    HttpClient http = Load.client(agentTls, http2, false, http2 ? 1 : concurrency);
                    try {
                        Load.Expect expect = new Load.Expect(200, PerfLayout.SMALL_BYTES, etag(server, path), version);
                        Load.Window window = Load.closedLoop(concurrency, options.warmup(), options.window(),
                                Load.keepAlive(http, base(server, ServerKey.RSA_2048).resolve(path), expect,
                                        Load.REQUEST_TIMEOUT),
                                processes(server, ServerKey.RSA_2048), http.getExecutor());
                        cells.put(server, cell(window, window.perSecond(), 1e6, "µs/req"));
                    } finally {
                        http.stop();
                    }
                    report(label, server, cells.get(server), "req/s");
                }
                rows.add(new PerfRow(label, "req/s", cells.get(PINTLE), cells.get(NGINX),
                        "n/c (a)", "≥ 0.8× nginx",
                        0.8, true));
            }
        }
    }

    private String largeFile(Path work) throws Exception {
        String path = layout.largePath();
        String label = "Large file (100 MB), HTTP/1.1, 1 at a time";
        Map<String, PerfRow.Cell> cells = new LinkedHashMap<>();
        for (String server : List.of(PINTLE, NGINX)) {
            HttpClient http = Load.client(agentTls, false, false, 1);
            try {
                Load.Expect expect = new Load.Expect(200, PerfLayout.LARGE_BYTES, etag(server, path),
                        HttpVersion.HTTP_1_1);
                Load.Window window = Load.closedLoop(1, Duration.ofSeconds(1), LARGE_WINDOW,
                        Load.keepAlive(http, base(server, ServerKey.RSA_2048).resolve(path), expect,
                                Load.DOWNLOAD_TIMEOUT),
                        processes(server, ServerKey.RSA_2048), http.getExecutor());
                double megabytesPerSecond = window.bytes() / 1e6 / window.seconds();
                // CPU per GB: cores / (MB/s) * 1000 = CPU seconds per 1000 MB.
                cells.put(server, cell(window, megabytesPerSecond, 1e3, "CPU s/GB"));
            } finally {
                http.stop();
            }
            report(label, server, cells.get(server), "MB/s");
        }
        String cf;
        String cfVersion = "not run";
        if (options.cfRuns() == 0) {
            cf = "not run (--cf-runs 0)";
        } else {
            int port = Ports.free();
            try (CfEngine engine = CfEngine.start(Files.createDirectories(work.resolve("cfengine")),
                    layout.largeDirectory(), port)) {
                cfVersion = engine.version().lines().findFirst().orElse("?");
                Contestant agent = engine.agent(layout.largeDirectory());
                double empty = engine.emptyRunMillis();
                List<ProcessHandle> server = List.of(ProcessHandle.of(engine.pid()).orElseThrow());
                List<Double> seconds = new ArrayList<>();
                double cpuMillis = 0;
                for (int i = 0; i < options.cfRuns(); i++) {
                    Path destination = Files.createDirectories(work.resolve("cf-destination-" + i));
                    Load.Cpu before = Load.Cpu.read(server);
                    agent.sync(destination, port);
                    Load.Cpu after = Load.Cpu.read(server);
                    Load.Usage usage = before.until(after);
                    seconds.add(usage.seconds());
                    cpuMillis += usage.server() * usage.seconds() * 1e3;
                    long size = Files.size(destination.resolve("large.bin"));
                    if (size != PerfLayout.LARGE_BYTES) {
                        throw new IOException("cf-agent copied " + size + " bytes");
                    }
                    deleteTree(destination);
                }
                seconds.sort(Comparator.naturalOrder());
                double median = seconds.get(seconds.size() / 2);
                double gigabytes = options.cfRuns() * PerfLayout.LARGE_BYTES / 1e9;
                cf = String.format(Locale.ROOT, "%.0f MB/s (cf-agent copy_from, median of %d, each run %.0f ms"
                                + " incl. %.0f ms cf-agent start-up), %.2f CPU s/GB", PerfLayout.LARGE_BYTES / 1e6
                                / median, options.cfRuns(), median * 1e3, empty, cpuMillis / 1e3 / gigabytes);
                progress.println(label + ", cf-serverd: " + cf);
            }
        }
        rows.add(new PerfRow(label, "MB/s", cells.get(PINTLE), cells.get(NGINX), cf, "≥ 0.8× nginx", 0.8, true));
        return cfVersion;
    }

    private void handshakes() throws Exception {
        String path = PerfLayout.smallPath(layout.agent());
        List<Object[]> variants = new ArrayList<>();
        for (ServerKey key : ServerKey.values()) {
            variants.add(new Object[] {key, false});
        }
        variants.add(new Object[] {ServerKey.RSA_4096, true});
        for (Object[] variant : variants) {
            ServerKey key = (ServerKey) variant[0];
            boolean resume = (Boolean) variant[1];
            // The JDK's client keeps one ticket per server and uses it once (RFC 8446 §C.4): one connection at a
            // time, so that every connection after the first can resume.
            int concurrency = resume ? 1 : options.handshakeConcurrency();
            String label = (resume ? "TLS session resumption" : "New TLS connections, full handshake") + ", "
                    + key.title() + " server key, RSA-4096 client certificate, " + concurrency
                    + " at once, 1 request each";
            Map<String, PerfRow.Cell> cells = new LinkedHashMap<>();
            for (String server : List.of(PINTLE, NGINX)) {
                HttpClient http = Load.client(agentTls, false, resume, concurrency);
                try {
                    Load.Expect expect = new Load.Expect(200, PerfLayout.SMALL_BYTES, etag(server, path),
                            HttpVersion.HTTP_1_1);
                    Load.Window window = Load.closedLoop(concurrency, options.warmup(),
                            options.window(), Load.newConnection(http, base(server, key).resolve(path), expect),
                            processes(server, key), http.getExecutor());
                    cells.put(server, cell(window, window.perSecond(), 1e3, "ms/conn"));
                } finally {
                    http.stop();
                }
                report(label, server, cells.get(server), "conn/s");
            }
            rows.add(new PerfRow(label, "conn/s", cells.get(PINTLE), cells.get(NGINX),
                    "n/c (b)", "≥ 0.8× nginx", 0.8, true));
        }
    }

    private void herd(int agents) throws Exception {
        String label = String.format(Locale.ROOT, "Herd: %,d agent updates started over %d s (new connection,"
                + " RSA-4096 both sides, 2 conditional GETs)", agents, options.herdSpread().toSeconds());
        Map<String, PerfRow.Cell> cells = new LinkedHashMap<>();
        String common = PerfLayout.commonPath();
        String rules = layout.rulesPath();
        long rulesBytes = Files.size(layout.share().resolve(layout.agent()).resolve("rules/rudder.tar.bz2"));
        for (String server : List.of(PINTLE, NGINX)) {
            HttpClient http = Load.client(agentTls, false, false, agents);
            try {
                URI base = base(server, ServerKey.RSA_4096);
                Load.Herd herd = Load.herd(http, base.resolve(common),
                        new Load.Expect(304, 0, etag(server, common), HttpVersion.HTTP_1_1), base.resolve(rules),
                        new Load.Expect(200, rulesBytes, etag(server, rules), HttpVersion.HTTP_1_1),
                        agents, options.herdSpread(), processes(server, ServerKey.RSA_4096));
                double cpuPerAgent = herd.cpu().server() * herd.cpu().seconds() * 1e3 / herd.agents();
                double noJit = (herd.cpu().server() - herd.cpu().serverJit()) * herd.cpu().seconds() * 1e3
                        / herd.agents();
                PerfRow.Cell cell = new PerfRow.Cell(herd.completionSeconds(), cpuPerAgent, noJit, "ms/agent",
                        herd.cpu(),
                        Load.percentileMillis(herd.latencies(), 50), Load.percentileMillis(herd.latencies(), 99),
                        herd.errors(), herd.errorKinds());
                cells.put(server, cell);
            } finally {
                http.stop();
            }
            report(label, server, cells.get(server), "s to complete");
        }
        rows.add(new PerfRow(label, "s to complete", cells.get(PINTLE), cells.get(NGINX),
                "not run (c)",
                "0 errors", Double.NaN, false));
    }

    private void idle() throws Exception {
        String path = PerfLayout.smallPath(layout.demo().linux2());
        int connections = idleConnectionsThatFit();
        String label = String.format(Locale.ROOT, "%,d idle TLS connections (ECDSA server key, EC client key):"
                + " server RSS", connections);
        Map<String, PerfRow.Cell> cells = new LinkedHashMap<>();
        for (String server : List.of(PINTLE, NGINX)) {
            HttpClient idle = Load.client(ecTls, false, true, connections + 100);
            HttpClient probe = Load.client(ecTls, false, false, 4);
            try {
                Load.Expect expect = new Load.Expect(200, PerfLayout.SMALL_BYTES, etag(server, path),
                        HttpVersion.HTTP_1_1);
                List<ProcessHandle> processes = processes(server, ServerKey.ECDSA);
                Load.Cpu before = Load.Cpu.read(processes);
                Load.Idle result = Load.idle(idle, probe, base(server, ServerKey.ECDSA).resolve(path), expect,
                        connections, IDLE_PROBES, processes);
                Load.Usage usage = before.until(Load.Cpu.read(processes));
                double mib = result.rssIdleBytes() / 1048576.0;
                String detail = String.format(Locale.ROOT, "%,d held (opened in %.1f s); RSS %.0f → %.0f MiB;"
                                + " new-connection request p50/p99 %.1f/%.1f ms before, %.1f/%.1f ms while open;"
                                + " %d idle ones asked again", result.connections(), result.openSeconds(),
                        result.rssBeforeBytes() / 1048576.0, mib, Load.percentileMillis(result.before(), 50),
                        Load.percentileMillis(result.before(), 99), Load.percentileMillis(result.during(), 50),
                        Load.percentileMillis(result.during(), 99), result.checked());
                notes.add(server + ", idle connections: " + detail + ".");
                progress.println(label + ", " + server + ": " + detail + ", errors " + result.errors() + " "
                        + result.errorKinds());
                double perConnection = (result.rssIdleBytes() - result.rssBeforeBytes()) / 1024.0
                        / Math.max(1, result.connections());
                cells.put(server, new PerfRow.Cell(mib, perConnection, perConnection, "KiB RSS/conn", usage,
                        Load.percentileMillis(result.during(), 50),
                        Load.percentileMillis(result.during(), 99), result.errors(), result.errorKinds()));
            } finally {
                idle.stop();
                probe.stop();
            }
        }
        rows.add(new PerfRow(label, "MiB", cells.get(PINTLE), cells.get(NGINX),
                "not run (d)", "< 1 GiB", Double.NaN, false));
    }

    // ---- helpers

    /**
     * @param scale per-unit CPU = server cores / value × scale
     */
    private static PerfRow.Cell cell(Load.Window window, double value, double scale, String cpuUnit) {
        Load.Usage cpu = window.cpu();
        double perUnit = value > 0 ? cpu.server() / value * scale : Double.NaN;
        double noJit = value > 0 ? (cpu.server() - cpu.serverJit()) / value * scale : Double.NaN;
        return new PerfRow.Cell(value, perUnit, noJit, cpuUnit, cpu, window.p50Millis(), window.p99Millis(),
                window.errors(), window.errorKinds());
    }

    private void report(String label, String server, PerfRow.Cell cell, String unit) {
        progress.printf(Locale.ROOT, "%s, %s: %.1f %s, p50 %.2f ms, p99 %.2f ms, server %.2f cores (%s; JIT %.2f,"
                        + " GC %.2f), load generator %.2f, others %.2f, errors %d %s%n", label, server, cell.value(),
                unit, cell.p50Millis(), cell.p99Millis(), cell.cpu().server(), cell.serverCpuPerUnit(),
                cell.cpu().serverJit(), cell.cpu().serverGc(), cell.cpu().client(), cell.cpu().others(),
                cell.errors(), cell.errorKinds().isEmpty() ? "" : cell.errorKinds());
    }

    private static void deleteTree(Path root) throws IOException {
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(root)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        }
    }

}
