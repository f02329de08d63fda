package io.pintle.bench.channels;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.pintle.bench.harness.DemoConfig;
import io.pintle.bench.harness.HarnessMain;
import io.pintle.bench.harness.ReportOutput;
import io.pintle.bench.sync.Ports;
import io.pintle.server.demo.DemoLayout;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

/**
 * {@code bench/channels}: the real server in its own JVM (pinned by taskset), this JVM holding one order channel per
 * node through {@link PullClients}, and three phases: the channels parked and idle, one {@code run} order fanned to
 * all of them, and every node's policy archive changed at once (update orders at the configured rate).
 */
public final class ChannelsBench {
    private static final PrintStream PROGRESS = System.err;
    private static final Duration START_LIMIT = Duration.ofSeconds(120);
    private static final ObjectMapper JSON = new ObjectMapper();

    private ChannelsBench() {}

    public static void main(String[] args) {
        HarnessMain.quietClientLogging();
        System.exit(HarnessMain.run(args, ChannelsOptions::parse, "channels benchmark", ChannelsBench::run));
    }

    private static int run(ChannelsOptions options) throws Exception {
        Instant started = Instant.now();
        ChannelsResult result = new ChannelsResult(options, started);
        PROGRESS.printf("generating %,d node identities (EC P-256)%n", options.nodes());
        long generation = System.nanoTime();
        NodeIdentities identities = NodeIdentities.generate(options.nodes(),
                Runtime.getRuntime().availableProcessors(), PROGRESS);
        result.generationSeconds = (System.nanoTime() - generation) / 1e9;

        int port = Ports.free();
        int adminPort = Ports.free();
        DemoLayout layout = DemoLayout.create(options.work().resolve("layout"), port);
        identities.register(layout);
        String config = configure(Files.readString(layout.config()), adminPort, options);
        Files.writeString(layout.config(), config);
        result.config = config;

        X509Certificate serverCertificate;
        try (InputStream in = Files.newInputStream(layout.directory().resolve("server/agent.cert"))) {
            serverCertificate = (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
        }
        Recorder recorder = new Recorder(options.nodes());
        Path log = options.work().resolve("pintle.log");
        List<String> command = new ArrayList<>(options.serverLauncher());
        command.add(ProcessHandle.current().info().command().orElse("java"));
        command.addAll(options.pintleJvmOptions());
        command.addAll(List.of("-jar", options.pintleJar().toString(), "serve", "--config",
                layout.config().toString()));
        result.serverCommand = String.join(" ", command);
        Process server = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        HttpClient admin = HttpClient.newHttpClient();
        URI status = URI.create("http://127.0.0.1:" + adminPort + "/v1/status");
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        ProcessHandle self = ProcessHandle.current();
        try (PullClients clients = new PullClients(identities, serverCertificate, port, options.reportContentType(), recorder)) {
            Ports.awaitListening(port, START_LIMIT, server);
            Ports.awaitListening(adminPort, START_LIMIT, server);
            ProcessHandle pintle = server.toHandle();
            result.serverAtStart = ProcessSample.of(pintle);
            result.clientAtStart = ProcessSample.of(self);

            // 1. Open every channel.
            PROGRESS.printf("opening %,d channels, %d handshakes at once%n", options.nodes(), options.handshakes());
            ProcessSample serverBefore = ProcessSample.of(pintle);
            ProcessSample clientBefore = ProcessSample.of(self);
            clients.start();
            clients.open(options.nodes(), options.handshakes());
            long limit = System.nanoTime() + Duration.ofSeconds(60 + options.nodes() / 50).toNanos();
            int polling = 0;
            while (System.nanoTime() < limit && server.isAlive()) {
                Thread.sleep(1000);
                polling = polling(admin, status);
                PROGRESS.printf("  connected %,d, parked %,d (server: polling %,d), failures %d, unexpected %d%s%n",
                        clients.connected.get(), clients.parked.get(), polling, clients.failures.get(),
                        clients.unexpected.get(), clients.lastFailure == null ? "" : " (" + clients.lastFailure + ")");
                if (polling >= options.nodes()) {
                    break;
                }
                if (clients.connected.get() + clients.failures.get() + clients.closedByServer.get() >= options.nodes()
                        && clients.connected.get() == clients.parked.get() && polling == clients.parked.get()) {
                    break;
                }
            }
            result.rampServer = new ProcessSample[] {serverBefore, ProcessSample.of(pintle)};
            result.rampClient = new ProcessSample[] {clientBefore, ProcessSample.of(self)};
            result.parkedAfterRamp = polling;
            result.connectFailures = clients.failures.get();
            result.firstFailure = clients.lastFailure;

            // 2. Idle, parked.
            PROGRESS.printf("idle for %d s with %,d channels parked%n", options.idleSeconds(), polling);
            Thread.sleep(5000);
            ProcessSample idleServerBefore = ProcessSample.of(pintle);
            ProcessSample idleClientBefore = ProcessSample.of(self);
            long loopCpuBefore = threads.getThreadCpuTime(clients.threadId());
            Thread.sleep(options.idleSeconds() * 1000L);
            result.idleServer = new ProcessSample[] {idleServerBefore, ProcessSample.of(pintle)};
            result.idleClient = new ProcessSample[] {idleClientBefore, ProcessSample.of(self)};
            result.idleLoopCpuMillis = (threads.getThreadCpuTime(clients.threadId()) - loopCpuBefore) / 1e6;
            result.idleStatus = status(admin, status);
            result.idlePolling = polling(admin, status);
            result.idleHeap = heapInfo(pintle.pid());

            // 3. One order to every node.
            PROGRESS.println("remote run: POST /rudder/relay-api/1/remote-run/all {\"command\":\"run\"}");
            ProcessSample fanServerBefore = ProcessSample.of(pintle);
            ProcessSample fanClientBefore = ProcessSample.of(self);
            recorder.phase = Recorder.RUN;
            long post = System.nanoTime();
            recorder.runStart = post;
            HttpResponse<Stream<String>> answer = admin.send(HttpRequest.newBuilder(
                            URI.create("http://127.0.0.1:" + adminPort + "/rudder/relay-api/1/remote-run/all"))
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString("{\"command\":\"run\"}")).build(),
                    HttpResponse.BodyHandlers.ofLines());
            result.runHttpStatus = answer.statusCode();
            Map<String, Integer> statuses = new TreeMap<>();
            try (Stream<String> lines = answer.body()) {
                Iterator<String> it = lines.iterator();
                while (it.hasNext()) {
                    JsonNode event = JSON.readTree(it.next());
                    String type = event.path("type").asText();
                    if (type.equals("status")) {
                        statuses.merge(event.path("status").asText(), 1, Integer::sum);
                    } else if (type.equals("done")) {
                        result.doneNanos = System.nanoTime() - post;
                        result.doneEvent = event.toString();
                    }
                }
            }
            result.runStatuses = statuses;
            result.fanServer = new ProcessSample[] {fanServerBefore, ProcessSample.of(pintle)};
            result.fanClient = new ProcessSample[] {fanClientBefore, ProcessSample.of(self)};
            result.runOrders = recorder.runOrderNanos.clone();
            result.runReports = recorder.runReportNanos.clone();
            PROGRESS.printf("  done after %.2f s: %s%n", result.doneNanos / 1e9, statuses);
            // After the measured window: the histogram collects first, and shows what the reports left behind.
            result.fanHistogram = histogram(pintle.pid());

            // Everyone back to polling, and a policy scan that saw them so, before the change.
            long back = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (System.nanoTime() < back && polling(admin, status) < result.idlePolling) {
                Thread.sleep(500);
            }
            Thread.sleep(6000);

            // 4. Policies changed for every node at once.
            PROGRESS.printf("changing the policy archive of %,d nodes%n", options.nodes());
            long changeStart = System.nanoTime();
            // Time 0 is the start of the rewrite: the server's scan may see the first changes before it ends.
            recorder.updateStart = changeStart;
            recorder.phase = Recorder.UPDATE;
            for (int i = 0; i < options.nodes(); i++) {
                identities.writeArchive(layout, i, "policies of " + identities.id(i) + ", generation 2, changed\n");
            }
            long changed = System.nanoTime();
            result.changeWriteSeconds = (changed - changeStart) / 1e9;
            ProcessSample updServerBefore = ProcessSample.of(pintle);
            ProcessSample updClientBefore = ProcessSample.of(self);
            long updLimit = changeStart + Duration.ofSeconds(60 + options.splaySeconds()
                    + (long) Math.ceil(options.nodes() / (double) options.rate()) + 10).toNanos();
            while (System.nanoTime() < updLimit && recorder.updates.get() < result.idlePolling) {
                Thread.sleep(1000);
                JsonNode channels = status(admin, status).path("order_channels");
                result.statusSeries.add(new long[] {System.nanoTime() - changeStart,
                        channels.path("updates_pending").asLong(), channels.path("updates_released").asLong()});
                PROGRESS.printf("  %,d update orders received; server: pending %s, released %s%n",
                        recorder.updates.get(), channels.path("updates_pending"), channels.path("updates_released"));
            }
            Thread.sleep(2000);
            result.updServer = new ProcessSample[] {updServerBefore, ProcessSample.of(pintle)};
            result.updClient = new ProcessSample[] {updClientBefore, ProcessSample.of(self)};
            int received = recorder.updates.get();
            result.updateNanos = java.util.Arrays.copyOf(recorder.updateNanos, received);
            result.finalStatus = status(admin, status);
            result.serverAtEnd = ProcessSample.of(pintle);
            result.clientAtEnd = ProcessSample.of(self);
            result.clientTotals = new long[] {clients.orders.get(), clients.reports.get(), clients.retried.get(),
                    clients.unexpected.get(), clients.failures.get(), clients.closedByServer.get(),
                    clients.pollsAnswered204.get()};
            result.lastFailure = clients.lastFailure;
        } finally {
            Ports.stop(server, Duration.ofSeconds(20));
        }
        result.serverLogErrors = countLines(log, " ERROR ");
        result.serverLogWarnings = countLines(log, " WARN ");
        result.finished = Instant.now();
        ChannelsResult done = result;
        String markdown = ChannelsReport.markdown(done);
        ReportOutput.publish(markdown, options.output(), PROGRESS);
        ReportOutput.plot(options.plot(), file -> ChannelsPlot.write(done, file), PROGRESS);
        return done.clean() ? 0 : 1;
    }

    /** @return {@code [remote_run] max_channels}: every node, and room */
    static int channels(ChannelsOptions options) {
        return options.nodes() + 1000;
    }

    /** @return {@code [limits] max_connections}: the channels must leave a tenth of it (the server refuses less) */
    static int connections(ChannelsOptions options) {
        return channels(options) * 10 / 9 + 10;
    }

    /** The demo's configuration with the limits this fleet needs; each edit is named in the report. */
    static String configure(String config, int adminPort, ChannelsOptions options) throws IOException {
        int channels = channels(options);
        int connections = connections(options);
        config = DemoConfig.withAdminPort(config, adminPort);
        config = DemoConfig.replaceOnce(config, "max_connections = " + DemoLayout.MAX_CONNECTIONS,
                "max_connections = " + connections);
        config = DemoConfig.replaceOnce(config, "[tls]\n", "[tls]\nprovider = \"" + options.tlsProvider() + "\"\n");
        config = DemoConfig.replaceOnce(config, "timeout = 30", "timeout = 30\nmax_channels = " + channels
                + "\ntransports = [\"pull\"]\npolicy_update_rate = " + options.rate() + "\npolicy_update_splay = "
                + options.splaySeconds());
        return config + "\n[log]\naccess = false\n";
    }

    private static JsonNode status(HttpClient admin, URI status) throws IOException, InterruptedException {
        HttpResponse<String> response = admin.send(HttpRequest.newBuilder(status).timeout(Duration.ofSeconds(10))
                .build(), HttpResponse.BodyHandlers.ofString());
        return JSON.readTree(response.body());
    }

    private static int polling(HttpClient admin, URI status) {
        try {
            return status(admin, status).path("order_channels").path("polling").asInt();
        } catch (IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    /** @return the server JVM's {@code jcmd GC.heap_info}, or why it could not be read */
    private static String heapInfo(long pid) {
        try {
            Process jcmd = new ProcessBuilder("jcmd", Long.toString(pid), "GC.heap_info").redirectErrorStream(true)
                    .start();
            String text = new String(jcmd.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            jcmd.waitFor();
            return text.strip();
        } catch (IOException e) {
            return "jcmd failed: " + e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted";
        }
    }

    /** @return the top of the server JVM's {@code jcmd GC.class_histogram}, or why it could not be read */
    private static String histogram(long pid) {
        try {
            Process jcmd = new ProcessBuilder("jcmd", Long.toString(pid), "GC.class_histogram")
                    .redirectErrorStream(true).start();
            String text = new String(jcmd.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            jcmd.waitFor();
            return text.lines().skip(1).limit(10).collect(java.util.stream.Collectors.joining("\n"));
        } catch (IOException e) {
            return "jcmd failed: " + e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted";
        }
    }

    private static int countLines(Path log, String marker) throws IOException {
        try (Stream<String> lines = Files.lines(log)) {
            return (int) lines.filter(line -> line.contains(marker)).count();
        }
    }

    /** What the nodes received, by phase; written on the generator's thread, read after its counters. */
    static final class Recorder implements PullClients.Listener {
        static final int IDLE = 0;
        static final int RUN = 1;
        static final int UPDATE = 2;
        volatile int phase = IDLE;
        volatile long runStart;
        volatile long updateStart;
        final long[] runOrderNanos;
        final long[] runReportNanos;
        final long[] updateNanos;
        final AtomicInteger updates = new AtomicInteger();
        final AtomicInteger others = new AtomicInteger();

        Recorder(int nodes) {
            runOrderNanos = new long[nodes];
            runReportNanos = new long[nodes];
            updateNanos = new long[nodes * 2];
        }

        @Override
        public void order(int node, String command, long nanos) {
            if (phase == RUN && command.equals("run")) {
                runOrderNanos[node] = nanos - runStart;
            } else if (phase == UPDATE && command.equals("update")) {
                int i = updates.get();
                if (i < updateNanos.length) {
                    updateNanos[i] = nanos - updateStart;
                    updates.incrementAndGet();
                }
            } else {
                others.incrementAndGet();
            }
        }

        @Override
        public void reported(int node, long nanos) {
            if (phase == RUN && runOrderNanos[node] > 0 && runReportNanos[node] == 0) {
                runReportNanos[node] = nanos - runStart;
            }
        }
    }
}
