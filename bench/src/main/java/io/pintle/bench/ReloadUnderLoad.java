package io.pintle.bench;

import io.pintle.api.Routes;
import io.pintle.bench.harness.DemoConfig;
import io.pintle.client.ClientTls;
import io.pintle.server.Bootstrap;
import io.pintle.server.PintleServer;
import io.pintle.server.config.ConfigLoader;
import io.pintle.server.config.ServerConfig;
import io.pintle.server.demo.DemoLayout;
import io.pintle.server.reload.InputWatcher;
import io.pintle.server.reload.ReloadListener;
import io.pintle.server.reload.ReloadOutcome;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import javax.net.ssl.SSLContext;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.http.HttpHeader;

/**
 * Reloads of the real server under load: Pintle runs in-process on the large registry, with the file watch on,
 * while a {@link SteadyLoad} holds keep-alive connections open and sends a light request rate over them. Each
 * reload adds one node to both registry files (temporary files renamed into place) and is triggered either by the
 * admin API ({@code POST /rudder/relay-api/1/system/reload}, synchronous) or by the file watch alone; the two
 * alternate. Trigger-to-effective is the time from the trigger until a request authenticated as the new node gets
 * 200 for its own policy file, on a connection opened before the trigger (where it got 403).
 */
final class ReloadUnderLoad {
    /** relayd's reload endpoint on the admin listener. */
    private static final String RELOAD_PATH = "/rudder/relay-api/1/system/reload";
    /** Steady load before the first reload: connections used at least once more, request path compiled. */
    private static final Duration LOAD_WARMUP = Duration.ofSeconds(5);
    /**
     * Reloads of each kind before the measured ones, reported apart: the JIT compiles the reload path during the
     * first ones after start (a server reloads many times a day; its steady state is what the measured ones show).
     */
    private static final int WARMUP_RELOADS_PER_TRIGGER = 10;
    /**
     * Pause between two polls of the new node's policy file. Back-to-back polling would take CPU from the reload
     * being measured (a 403 costs the server about as much as a steady-load request); this pause bounds what the
     * polling adds to a measurement to about itself plus one request, half of that on average.
     */
    static final long POLL_PAUSE_MILLIS = 5;
    /** A reload not effective after this long is a failure: the watch's own bound is {@link InputWatcher#MAX_DELAY}. */
    private static final Duration EFFECTIVE_TIMEOUT = Duration.ofSeconds(10);
    /** Bound on waiting for a reload outcome the server must report. */
    private static final Duration OUTCOME_TIMEOUT = Duration.ofSeconds(10);
    /** Timeout of the admin API call; the server's own bound is 60 s. */
    private static final Duration ADMIN_TIMEOUT = Duration.ofSeconds(70);
    /** Timeout of one probe request. */
    private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(5);
    /** The trigger of the file watch's reloads starts with this. */
    private static final String WATCH_TRIGGER = "file watch";
    /** The trigger of the admin API's reloads. */
    private static final String API_TRIGGER = "api";
    /** After a change's reloads, how long no further outcome must come before the next change. */
    private static final Duration QUIET = Duration.ofMillis(200);

    private final LargeRegistry registry;
    private final ReloadOptions options;
    private final PrintStream progress;
    private final BlockingQueue<Observed> outcomes = new LinkedBlockingQueue<>();
    private final List<String> anomalies = new ArrayList<>();
    /** CPU time of the server's reload thread at the end of the last attempt seen, or -1 before the first. */
    private long reloadThreadCpu = -1;

    private ReloadUnderLoad(LargeRegistry registry, ReloadOptions options, PrintStream progress) {
        this.registry = registry;
        this.options = options;
        this.progress = progress;
    }

    /** How a reload is asked for. */
    enum Trigger {
        /** {@code POST /rudder/relay-api/1/system/reload} on the admin listener; answers once the reload ended. */
        ADMIN_API,
        /** Nothing but the renames: the server's file watch notices them. */
        FILE_WATCH
    }

    /**
     * One measured reload.
     *
     * @param trigger how it was asked for
     * @param effectiveNanos trigger to the new node's first 200, or -1 if that never came
     * @param attemptNanos the server's own duration of the reload attempt that applied it
     *     ({@link ReloadOutcome#duration()}), or -1 if none did
     * @param attemptCpuNanos CPU time of the server's reload thread for that attempt, or -1 if unknown
     * @param gcNanos the collectors' time from the trigger to the end of that attempt, or -1 if unknown
     * @param apiNanos the admin API call's round trip, or -1 for the file watch
     * @param polls probe requests sent until the 200
     * @param appliedByWatch whether the first reload that applied the change was the file watch's
     * @param applies reloads that published a new snapshot for this change: 2 when the file watch saw the two
     *     renames as two bursts
     */
    record Reload(Trigger trigger, long effectiveNanos, long attemptNanos, long attemptCpuNanos, long gcNanos,
            long apiNanos, int polls, boolean appliedByWatch, int applies) {}

    /**
     * A reload outcome, with what the reload thread measured when it reported it.
     *
     * @param outcome the outcome
     * @param threadCpuNanos the reload thread's CPU time then
     * @param gcMillis the collectors' accumulated time then
     */
    private record Observed(ReloadOutcome outcome, long threadCpuNanos, long gcMillis) {}

    /**
     * @param serverStartNanos {@code Bootstrap.build} (the first snapshot) and {@code start}
     * @param nodesAtStart nodes in the registry when the server started
     * @param warmups the reloads before the measured ones, in order
     * @param reloads the measured reloads, in order
     * @param failedOutcomes reload attempts the server reported as failed (warm-up included)
     * @param probeHandshakes TLS handshakes of the probes (one per reload when the 403 keeps the connection)
     * @param load what the steady load saw
     * @param cpu how busy the JVM and the machine were during the measured reloads
     * @param anomalies anything unexpected besides the load's failures, described
     */
    record Figures(long serverStartNanos, int nodesAtStart, List<Reload> warmups, List<Reload> reloads,
            long failedOutcomes, long probeHandshakes, SteadyLoad.Figures load, CpuShare cpu,
            List<String> anomalies) {
        /** @return how many reloads ran before the measured ones */
        int warmupReloads() {
            return warmups.size();
        }

        /**
         * @param trigger a trigger
         * @return the reloads it triggered
         */
        List<Reload> of(Trigger trigger) {
            return reloads.stream().filter(reload -> reload.trigger() == trigger).toList();
        }
    }

    /**
     * Starts the server on the registry, runs the load and the reloads, and stops everything.
     *
     * @param registry the registry (nodes are added to it)
     * @param options connections, rate and number of reloads
     * @param progress where to report progress
     * @return the figures
     * @throws Exception if the server cannot start or the load cannot be set up
     */
    static Figures run(LargeRegistry registry, ReloadOptions options, PrintStream progress) throws Exception {
        return new ReloadUnderLoad(registry, options, progress).run();
    }

    /**
     * {@code [limits] max_connections} of the server under load. The demo writes 500, sized for a person with curl;
     * the load holds {@code connections} open, plus a probe and the admin client. An operator sizes this limit for the
     * fleet; twice the load keeps it out of the measurement, and within the open-files limit of the one JVM that
     * holds both ends. Every other limit, the per-address shares included, is the server's default.
     *
     * @param connections the load's connections
     * @return the limit the harness writes
     */
    static int maxConnections(int connections) {
        return Math.max(DemoLayout.MAX_CONNECTIONS, 2 * connections);
    }

    private Figures run() throws Exception {
        Path file = registry.layout().config();
        Files.writeString(file, DemoConfig.replaceOnce(Files.readString(file),
                "max_connections = " + DemoLayout.MAX_CONNECTIONS,
                "max_connections = " + maxConnections(options.connections())));
        ServerConfig config = ConfigLoader.load(file);
        if (!config.reload().watch()) {
            throw new IllegalStateException("the layout's configuration has the file watch off");
        }
        int nodesAtStart = registry.nodeCount();
        long started = System.nanoTime();
        PintleServer server = Bootstrap.build(config);
        try {
            server.start();
            long serverStart = System.nanoTime() - started;
            ThreadMXBean threads = ManagementFactory.getThreadMXBean();
            server.reloader().addListener(new OutcomeRecorder(threads));
            progress.printf("Server on %s (admin %s), %,d nodes, started in %.0f ms%n", server.uri(),
                    server.adminUri(), nodesAtStart, serverStart / 1e6);
            HttpClient admin = new HttpClient();
            admin.start();
            try {
                return underLoad(server, admin, serverStart, nodesAtStart);
            } finally {
                admin.stop();
            }
        } finally {
            server.close();
        }
    }

    private Figures underLoad(PintleServer server, HttpClient admin, long serverStart, int nodesAtStart)
            throws Exception {
        DemoLayout layout = registry.layout();
        // The EC node of the demo: its handshakes cost the client less than the RSA nodes'.
        Path home = layout.directory().resolve("nodes").resolve(layout.linux2());
        SSLContext tls = ClientTls.context(home.resolve("agent.cert"), home.resolve("localhost.priv"),
                Set.of(layout.serverPin()));
        String archive = "/policies/" + layout.linux2() + "/rules/rudder.tar.bz2";
        String etag = etag(server.uri(), archive, tls);
        progress.printf("Opening %,d keep-alive connections%n", options.connections());
        SteadyLoad load = SteadyLoad.open(tls, server.uri(), archive, etag, options.connections(), progress);
        List<Reload> reloads = new ArrayList<>();
        long probeHandshakes = 0;
        List<Reload> warmups = new ArrayList<>();
        SteadyLoad.Figures loadFigures;
        CpuSampler cpu = new CpuSampler();
        CpuShare cpuShare;
        try {
            load.start(options.rate());
            TimeUnit.MILLISECONDS.sleep(LOAD_WARMUP.toMillis());
            for (int i = 0; i < WARMUP_RELOADS_PER_TRIGGER; i++) {
                for (Trigger trigger : Trigger.values()) {
                    Measured warmup = reloadOnce(server, admin, load, trigger);
                    probeHandshakes += warmup.handshakes();
                    warmups.add(warmup.reload());
                }
            }
            progress.printf("%d reloads under load (%,d connections, %d req/s)%n", options.reloads(),
                    options.connections(), options.rate());
            load.startMeasuring();
            CpuSampler.Sample before = cpu.sample();
            for (int i = 0; i < options.reloads(); i++) {
                Trigger trigger = Trigger.values()[i % Trigger.values().length];
                Measured measured = reloadOnce(server, admin, load, trigger);
                reloads.add(measured.reload());
                probeHandshakes += measured.handshakes();
                ReloadUnderLoad.Reload r = measured.reload();
                progress.printf("  reload %d %s effective %.1f attempt %.1f cpu %.1f gc %.1f%n", i + 1, trigger,
                        r.effectiveNanos() / 1e6, r.attemptNanos() / 1e6, r.attemptCpuNanos() / 1e6, r.gcNanos() / 1e6);
            }
            cpuShare = CpuSampler.between(before, cpu.sample());
        } finally {
            loadFigures = load.stop();
        }
        long failedOutcomes = server.reloader().history().failed();
        return new Figures(serverStart, nodesAtStart, List.copyOf(warmups), reloads, failedOutcomes, probeHandshakes,
                loadFigures, cpuShare, List.copyOf(anomalies));
    }

    /** A reload and the handshakes its probe needed. */
    private record Measured(Reload reload, long handshakes) {}

    /**
     * Adds a node, opens a connection as that node (403), triggers the reload, polls until 200, then waits until
     * the server is idle again: the attempt's outcome reported and, after an API reload, the file watch's own
     * reload of the same renames (which finds nothing new).
     */
    private Measured reloadOnce(PintleServer server, HttpClient admin, SteadyLoad load, Trigger trigger)
            throws Exception {
        LargeRegistry.Update update = registry.addNode();
        LargeRegistry.AddedNode node = update.node();
        SSLContext tls = ClientTls.context(node.certificate(), node.key(), Set.of(registry.layout().serverPin()));
        LoadClient probe = LoadClient.start(Protocol.HTTP_1_1, tls, 1);
        try {
            URI uri = server.uri().resolve(node.probePath());
            int before = status(probe, uri);
            if (before != 403) {
                throw new IllegalStateException(node.id() + " got " + before + " before its reload, expected 403");
            }
            discardOutcomes();
            long gcAtTrigger = GcTime.millis();
            load.reloading(true);
            long start;
            long apiNanos = -1;
            // The clock starts before the renames in both cases: the file watch sees them too, and with a short
            // quiet period it may apply them before the API call arrives. The API row is "rename, then ask at
            // once", as an ExecReload after an update does.
            start = System.nanoTime();
            registry.publish(update);
            if (trigger == Trigger.ADMIN_API) {
                apiNanos = callReloadApi(admin, server.adminUri());
            }
            long effective = -1;
            int polls = 0;
            while (System.nanoTime() - start < EFFECTIVE_TIMEOUT.toNanos()) {
                int status = status(probe, uri);
                polls++;
                if (status == 200) {
                    effective = System.nanoTime() - start;
                    break;
                }
                if (status != 403) {
                    anomaly(trigger + ": the new node got " + status + " while waiting for its reload");
                }
                TimeUnit.MILLISECONDS.sleep(POLL_PAUSE_MILLIS);
            }
            load.reloading(false);
            if (effective < 0) {
                anomaly(trigger + ": " + node.id() + " not served " + EFFECTIVE_TIMEOUT.toSeconds()
                        + " s after the trigger");
            }
            long cpuBefore = reloadThreadCpu;
            List<Observed> observed = awaitQuiet(trigger == Trigger.ADMIN_API);
            Observed applied = null;
            int apiOutcomes = 0;
            for (Observed one : observed) {
                if (one.outcome().trigger().startsWith(API_TRIGGER)) {
                    apiOutcomes++;
                }
                if (one.outcome().result() == ReloadOutcome.Result.FAILED) {
                    anomaly(trigger + ": a reload failed: " + one.outcome());
                } else if (applied == null && one.outcome().result() == ReloadOutcome.Result.APPLIED) {
                    applied = one;
                }
            }
            if (trigger == Trigger.ADMIN_API && apiOutcomes != 1) {
                anomaly(trigger + ": expected one outcome of the API call, got " + apiOutcomes);
            }
            long attempt = -1;
            long attemptCpu = -1;
            long gc = -1;
            boolean appliedByWatch = false;
            if (applied == null) {
                anomaly(trigger + ": expected an applied reload, the server reported " + observed);
            } else {
                attempt = applied.outcome().duration().toNanos();
                attemptCpu = cpuBefore < 0 ? -1 : applied.threadCpuNanos() - cpuBefore;
                gc = TimeUnit.MILLISECONDS.toNanos(applied.gcMillis() - gcAtTrigger);
                appliedByWatch = applied.outcome().trigger().startsWith(WATCH_TRIGGER);
            }
            int applies = (int) observed.stream()
                    .filter(one -> one.outcome().result() == ReloadOutcome.Result.APPLIED).count();
            return new Measured(new Reload(trigger, effective, attempt, attemptCpu, gc, apiNanos, polls,
                    appliedByWatch, applies),
                    probe.handshakes());
        } finally {
            load.reloading(false);
            probe.stop();
        }
    }

    /**
     * @return the admin API call's round trip; a refused reload is an anomaly ("unchanged" is not: the file watch
     *     may have applied the renames first)
     */
    private long callReloadApi(HttpClient admin, URI adminUri) throws Exception {
        long start = System.nanoTime();
        ContentResponse response = admin.POST(adminUri.resolve(RELOAD_PATH))
                .timeout(ADMIN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
                .send();
        long elapsed = System.nanoTime() - start;
        // The body is relayd's fixed string; Pintle's outcome is a header.
        String outcome = String.valueOf(response.getHeaders().get(Routes.RELOAD_OUTCOME_HEADER));
        if (response.getStatus() != 200 || !(outcome.equals("applied") || outcome.equals("unchanged"))) {
            anomaly("admin API: " + response.getStatus() + " " + response.getContentAsString());
        }
        return elapsed;
    }

    /**
     * Collects the outcomes of one change: every outcome until none came for {@link #QUIET}, and at least one (two
     * when the API was called too: its own and the file watch's), within {@link #OUTCOME_TIMEOUT}.
     */
    private List<Observed> awaitQuiet(boolean api) throws InterruptedException {
        List<Observed> observed = new ArrayList<>();
        long deadline = System.nanoTime() + OUTCOME_TIMEOUT.toNanos();
        boolean sawApi = false;
        boolean sawWatch = false;
        while (System.nanoTime() < deadline) {
            boolean enough = sawWatch && (sawApi || !api);
            long wait = enough ? QUIET.toNanos() : deadline - System.nanoTime();
            Observed one = outcomes.poll(Math.max(0, wait), TimeUnit.NANOSECONDS);
            if (one == null) {
                if (enough) {
                    break;
                }
                continue;
            }
            reloadThreadCpu = one.threadCpuNanos();
            observed.add(one);
            sawApi |= one.outcome().trigger().startsWith(API_TRIGGER);
            sawWatch |= one.outcome().trigger().startsWith(WATCH_TRIGGER);
        }
        return observed;
    }

    /** Takes outcomes nobody waited for (there should be none), keeping the reload thread's CPU time current. */
    private void discardOutcomes() {
        Observed observed;
        while ((observed = outcomes.poll()) != null) {
            reloadThreadCpu = observed.threadCpuNanos();
            anomaly("unexpected reload outcome: " + observed.outcome());
        }
    }

    /** @return the probe's status for {@code uri}, or -1 after an exception (an anomaly) */
    private int status(LoadClient probe, URI uri) throws InterruptedException {
        try {
            return probe.http().newRequest(uri).timeout(PROBE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS).send()
                    .getStatus();
        } catch (ExecutionException | TimeoutException e) {
            anomaly("probe request failed: " + e);
            return -1;
        }
    }

    private String etag(URI base, String path, SSLContext tls) throws Exception {
        LoadClient client = LoadClient.start(Protocol.HTTP_1_1, tls, 1);
        try {
            ContentResponse response = client.http().newRequest(base.resolve(path))
                    .timeout(PROBE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
                    .send();
            String etag = response.getHeaders().get(HttpHeader.ETAG);
            if (response.getStatus() != 200 || etag == null) {
                throw new IllegalStateException("GET " + path + " answered " + response.getStatus() + " with ETag "
                        + etag);
            }
            return etag;
        } finally {
            client.stop();
        }
    }

    private void anomaly(String description) {
        progress.println("  anomaly: " + description);
        anomalies.add(description);
    }

    /** Keeps each reload's outcome with the reload thread's CPU time and the GC time, right after the attempt. */
    private final class OutcomeRecorder implements ReloadListener {
        private final ThreadMXBean threads;

        OutcomeRecorder(ThreadMXBean threads) {
            this.threads = threads;
        }

        @Override
        public void finished(ReloadOutcome outcome) {
            outcomes.add(new Observed(outcome, threads.getCurrentThreadCpuTime(), GcTime.millis()));
        }
    }
}
