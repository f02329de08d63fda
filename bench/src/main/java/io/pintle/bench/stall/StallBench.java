package io.pintle.bench.stall;

import io.pintle.bench.harness.HarnessMain;
import io.pintle.bench.harness.ReportOutput;
import io.pintle.bench.perf.Load;
import io.pintle.bench.sync.PintleProcess;
import io.pintle.client.ClientTls;
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
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import javax.net.ssl.SSLContext;
import org.eclipse.jetty.client.BytesRequestContent;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.http.HttpVersion;

/**
 * Entry point of {@code bench/stall} (issue 17): lays out {@code pintle demo}'s files plus a shared folder and a
 * shared file, starts the real server ({@code java -jar pintle.jar serve}, its log to a file), then for each route
 * family a node calls sends N requests over one HTTP/2 connection, 16 streams at a time, with the node's client
 * certificate, and counts what never came back, what came back wrong, what the server counted, and the
 * {@code NullPointerException}s and WARN/ERROR events in its log. Prints a Markdown report (also written to
 * {@code --output}, with a plot in {@code --plot}).
 *
 * <p>Exit status: 0 when the run is clean (no stuck request, no error, no {@code NullPointerException} logged,
 * every request counted by the server), 1 when it is not (the work directory, with the server log, is then kept),
 * 2 when the harness could not run.
 */
public final class StallBench {
    /** How long the server's counters may take to catch up with the last answers the client received. */
    private static final Duration COUNTERS_SETTLE = Duration.ofSeconds(5);
    private static final Duration SETUP_TIMEOUT = Duration.ofSeconds(30);

    private final StallOptions options;
    private final PrintStream progress;

    private StallBench(StallOptions options, PrintStream progress) {
        this.options = options;
        this.progress = progress;
    }

    /** @param args see {@link StallOptions#USAGE} */
    public static void main(String[] args) {
        HarnessMain.quietClientLogging();
        System.exit(HarnessMain.run(args, StallOptions::parse, "stall harness",
                options -> new StallBench(options, System.err).run()));
    }

    private int run() throws Exception {
        Instant date = Instant.now().truncatedTo(ChronoUnit.SECONDS);
        long start = System.nanoTime();
        Path work = Files.createTempDirectory("pintle-stall-");
        boolean keep = options.keep();
        progress.println("work directory: " + work);
        try {
            StallLayout layout = StallLayout.create(work.resolve("layout"));
            Path log = work.resolve("pintle.log");
            SSLContext tls = ClientTls.context(layout.nodeHome().resolve("agent.cert"),
                    layout.nodeHome().resolve("localhost.priv"), Set.of(layout.demo().serverPin()));
            java.net.http.HttpClient admin = java.net.http.HttpClient.newBuilder()
                    .connectTimeout(Duration.ofSeconds(5)).build();
            List<StallReport.FamilyRun> runs = new ArrayList<>();
            String serverCommand;
            String serverCpus;
            try (PintleProcess server = PintleProcess.start(options.serverLauncher(), options.pintleJar(),
                    layout.demo().config(), layout.port(), log)) {
                // bench/stall's time bound ends this JVM with SIGTERM: the server must not outlive it.
                Thread stopServer = new Thread(server::close, "stop-pintle");
                Runtime.getRuntime().addShutdownHook(stopServer);
                serverCommand = String.join(" ", server.command()).replace(layout.demo().config().toString(),
                        "<work>/pintle.toml");
                serverCpus = cpus(Path.of("/proc", Long.toString(server.pid()), "status"));
                progress.println("Pintle started (pid " + server.pid() + ", CPUs " + serverCpus + "), log: " + log);
                URI base = URI.create("https://127.0.0.1:" + layout.port());
                Map<Family, String> etags = prepare(layout, tls, base);
                for (Family family : options.families()) {
                    if (!server.isAlive()) {
                        progress.println("the server exited; the remaining families are not run");
                        break;
                    }
                    runs.add(runFamily(family, layout, tls, base, etags.get(family), admin, log, server));
                }
                Runtime.getRuntime().removeShutdownHook(stopServer);
            }
            ServerLog.Counts whole = ServerLog.scan(log, 0, Long.MAX_VALUE);
            boolean clean = StallReport.clean(runs, whole) && runs.size() == options.families().size();
            keep |= !clean;
            double minutes = (System.nanoTime() - start) / 6e10;
            String markdown = StallReport.render(new StallReport.Context(date, minutes, options, serverCommand,
                    machineCpus(), serverCpus, cpus(Path.of("/proc/self/status")), layout.node(), whole,
                    keep ? work.toString() : null), runs);
            ReportOutput.publish(markdown, options.output(), progress);
            if (!runs.isEmpty()) {
                ReportOutput.plot(options.plot(), file -> StallPlot.write(runs, options, date, file), progress);
            }
            return clean ? 0 : 1;
        } catch (Exception e) {
            keep = true;
            throw e;
        } finally {
            if (keep) {
                progress.println("kept the work directory (layout, configuration, pintle.log): " + work);
            } else {
                deleteTree(work);
            }
        }
    }

    /**
     * Before any measured request: the shared file is uploaded, each conditional family's current ETag is read, and
     * each family's request is sent once to check that it answers what the family expects. Fails otherwise.
     */
    private Map<Family, String> prepare(StallLayout layout, SSLContext tls, URI base) throws Exception {
        HttpClient http = Load.client(tls, true, false, 1);
        Map<Family, String> etags = new EnumMap<>(Family.class);
        try {
            ContentResponse put = http.newRequest(base.resolve("/rudder/relay-api/shared-files/"
                            + layout.sharedFileUrl() + "?ttl=1d"))
                    .method(HttpMethod.PUT).body(new BytesRequestContent(layout.sharedFileUpload()))
                    .timeout(SETUP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS).send();
            if (put.getStatus() != 200) {
                throw new IllegalStateException("the shared file upload answered " + put.getStatus() + ": "
                        + put.getContentAsString());
            }
            for (Family family : options.families()) {
                String path = layout.path(family);
                if (family.conditional()) {
                    ContentResponse get = http.newRequest(base.resolve(path))
                            .timeout(SETUP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS).send();
                    String etag = get.getHeaders().get(HttpHeader.ETAG);
                    if (get.getStatus() != 200 || etag == null) {
                        throw new IllegalStateException(path + " answered " + get.getStatus() + " with ETag " + etag);
                    }
                    etags.put(family, etag);
                }
                Request check = http.newRequest(base.resolve(path)).method(family.method())
                        .version(HttpVersion.HTTP_2).timeout(SETUP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
                if (etags.containsKey(family)) {
                    check.headers(headers -> headers.put(HttpHeader.IF_NONE_MATCH, etags.get(family)));
                }
                ContentResponse answer = check.send();
                if (answer.getStatus() != family.expected()) {
                    throw new IllegalStateException(family.method() + " " + path + " answered " + answer.getStatus()
                            + ", not " + family.expected() + ": " + answer.getContentAsString());
                }
                progress.printf("%s: %s %s answers %d%s%n", family.label(), family.method(), path, answer.getStatus(),
                        etags.containsKey(family) ? " to If-None-Match: " + etags.get(family) : "");
            }
        } finally {
            http.stop();
        }
        return etags;
    }

    private StallReport.FamilyRun runFamily(Family family, StallLayout layout, SSLContext tls, URI base,
            String etag, java.net.http.HttpClient admin, Path log, PintleProcess server) throws Exception {
        String path = layout.path(family);
        progress.printf(Locale.ROOT, "%s: %,d requests, %d streams on one HTTP/2 connection%n", family.label(),
                options.requests(), options.streams());
        // One connection per family: what one family does to its connection does not spill into the next.
        HttpClient http = Load.client(tls, true, false, 1);
        ServerCounters before = ServerCounters.read(admin, layout.adminPort());
        long logFrom = ServerLog.size(log);
        StreamLoad.Outcome outcome;
        try {
            outcome = StreamLoad.run(http, base.resolve(path), family.method(), etag, family.expected(),
                    options.requests(), options.streams(), options.timeout(), server::isAlive, progress,
                    family.label());
        } finally {
            http.stop();
        }
        ServerCounters counted = settledCounters(admin, layout.adminPort(), before, outcome.sent(), server);
        ServerLog.Counts logged = ServerLog.scan(log, logFrom, ServerLog.size(log));
        progress.printf(Locale.ROOT, "%s: %,d sent, %,d completed, %,d stuck, %,d errors, %,.0f req/s; server"
                        + " counted %,d on %d connection(s); log: %,d WARN/ERROR, %,d NPE%n", family.label(),
                outcome.sent(), outcome.completed(), outcome.stuck(), outcome.errors(), outcome.perSecond(),
                counted.total(), counted.handshakes(), logged.warningsAndErrors(), logged.npes());
        return new StallReport.FamilyRun(family, path, outcome, counted, logged);
    }

    /**
     * The server counts a request once its answer is written, which can be a moment after the client has it: read
     * until the count reaches what was sent, or stops moving for a while.
     */
    private static ServerCounters settledCounters(java.net.http.HttpClient admin, int adminPort,
            ServerCounters before, long sent, PintleProcess server) throws IOException, InterruptedException {
        if (!server.isAlive()) {
            return new ServerCounters(Map.of(), 0);
        }
        ServerCounters counted = ServerCounters.read(admin, adminPort).since(before);
        long deadline = System.nanoTime() + COUNTERS_SETTLE.toNanos();
        while (counted.total() < sent && System.nanoTime() < deadline) {
            TimeUnit.MILLISECONDS.sleep(100);
            ServerCounters now = ServerCounters.read(admin, adminPort).since(before);
            if (now.total() != counted.total()) {
                deadline = System.nanoTime() + COUNTERS_SETTLE.toNanos();
            }
            counted = now;
        }
        return counted;
    }

    /** @return how many CPUs the machine has online (this JVM's own count is its affinity's), or "?" */
    private static String machineCpus() {
        try {
            int count = 0;
            for (String range : Files.readString(Path.of("/sys/devices/system/cpu/online")).strip().split(",")) {
                String[] bounds = range.split("-");
                count += bounds.length == 1 ? 1
                        : Integer.parseInt(bounds[1]) - Integer.parseInt(bounds[0]) + 1;
            }
            return Integer.toString(count);
        } catch (IOException | RuntimeException e) {
            return "?";
        }
    }

    /** @return the {@code Cpus_allowed_list} of a {@code /proc/<pid>/status} file, or "?" */
    private static String cpus(Path status) {
        try {
            for (String line : Files.readAllLines(status)) {
                if (line.startsWith("Cpus_allowed_list:")) {
                    return line.substring("Cpus_allowed_list:".length()).strip();
                }
            }
        } catch (IOException e) {
            // Not Linux, or the process is gone: the report says "?".
        }
        return "?";
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
