package io.pintle.bench.perf;

import io.pintle.bench.handshakes.CoreCpu;
import io.pintle.bench.harness.CommandLine;
import io.pintle.bench.harness.HarnessMain;
import io.pintle.bench.harness.ReportOutput;
import io.pintle.bench.sync.Nginx;
import io.pintle.bench.sync.ProcessCpu;
import io.pintle.client.ClientTls;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Stream;
import javax.net.ssl.SSLContext;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpMethod;

/**
 * Entry point of {@code bench/perf} (issue 23's method): every server pinned to the server CPU (Pintle, one JVM per
 * server key type; nginx with one worker and no access log), every load generator pinned to the other CPU, C
 * generators ({@code ab}, {@code h2load} and the harness's own {@code tlsconn}, whose herd mode plays the herd)
 * for every row. Each row runs its contenders in interleaved rounds (A, B, A, B…, the order
 * rotated every round) and reports the median rate of each, the ratio Pintle/nginx, the server CPU per 1000
 * requests and whether the generator was the limit (its process busy ≥ 90 % of its core).
 *
 * <p>Exit status: 0 when every exchange went as expected, 1 when some did not (the report counts them), 2 when the
 * benchmark could not run.
 */
public final class PerCoreBench {
    static final String PINTLE = "Pintle";
    static final String NGINX = "nginx";
    /**
     * nginx as the independent measurement of issue 39 ran it: everything as {@link #NGINX} but {@code
     * ssl_verify_client optional_no_ca} (the client certificate is asked for, its signature checked, its chain not
     * verified). Runs in the {@code abmethod} rows only.
     */
    static final String NGINX_NO_CA = "nginx optional_no_ca";
    static final String PINTLE_B = "pintle-b";
    static final String PINTLE_LOG = "Pintle, access log on";
    /**
     * The access log row's other side: a JVM like {@link #PINTLE_LOG} with the log off, started and warmed with it.
     * Comparing with {@link #PINTLE}'s RSA-2048 JVM, which has served every earlier row by then, measured the JVMs'
     * age (a new-connection JVM's rate climbs for about two minutes of load as the JIT catches up) more than the
     * log: 12.7–15.7 % then, within ±4.5 % between JVMs of the same age
     * (bench/results/accesslog-newconn-profile-2026-12-04.md).
     */
    static final String PINTLE_LOG_OFF = "Pintle, access log off";
    /** A generator busy this share of its core or more limited the row. */
    static final double GENERATOR_LIMIT = 0.90;
    static final Duration HERD_SPREAD = Duration.ofSeconds(10);
    private static final int KEEP_ALIVE_CONNECTIONS = 16;
    private static final int H2_STREAMS = 16;
    /**
     * Other processes' CPU during a window (the machine's busy time less the server's, the generator's and this
     * harness's), in cores, above which it is measured again, up to {@link #ATTEMPTS} times: the machine is shared.
     */
    static final double DISTURBED = 0.20;
    static final int ATTEMPTS = 2;

    private final PerCoreOptions options;
    private final PrintStream progress;
    private final List<PerCoreRow> rows = new ArrayList<>();
    private final Map<String, String> etags = new LinkedHashMap<>();
    private final Map<String, Contender> contenders = new LinkedHashMap<>();
    private final List<AutoCloseable> running = new ArrayList<>();
    private final Map<ServerKey, Integer> nginxPorts = new EnumMap<>(ServerKey.class);
    private PerfLayout layout;
    private Path work;
    private Path tlsconn;
    private final Map<Client, Path> pems = new EnumMap<>(Client.class);
    private String nginxVersion = "?";
    private boolean failed;

    private PerCoreBench(PerCoreOptions options, PrintStream progress) {
        this.options = options;
        this.progress = progress;
    }

    /** @param args see {@link PerCoreOptions#USAGE} */
    public static void main(String[] args) {
        HarnessMain.quietClientLogging();
        System.exit(HarnessMain.run(args, a -> PerCoreOptions.parse(System.getenv(), a), "benchmark",
                options -> new PerCoreBench(options, System.err).run()));
    }

    /**
     * A server under test as the rows see it.
     *
     * @param name as the report names it
     * @param ports its port by server key
     * @param processes its processes by server key (whose CPU is the server's)
     */
    record Contender(String name, Map<ServerKey, Integer> ports, Function<ServerKey, List<ProcessHandle>> processes) {}

    /** The client certificate a row's generator presents. */
    enum Client {
        /** Rudder's agent key: RSA-4096; its signature per handshake costs the generator about 5 ms. */
        AGENT("RSA-4096 client certificate"),
        /**
         * An EC P-256 node key: its signature costs the generator little, so that one generator core can load a
         * server core with new connections (with the agent's key it tops out near 200 handshakes/s). The server's
         * part differs only in verifying an ECDSA instead of an RSA signature.
         */
        EC("EC P-256 client certificate"),
        /**
         * An RSA-2048 node key (Rudder's agent key on older installs): the client certificate of the independent
         * measurement of issue 39 ({@code ab -f TLS1.3 -E}); the server verifies an RSA-2048 signature per
         * handshake, the generator makes one (~1 ms).
         */
        RSA_2048("RSA-2048 client certificate");

        private final String title;

        Client(String title) {
            this.title = title;
        }

        String title() {
            return title;
        }
    }

    private int run() throws Exception {
        Instant date = Instant.now().truncatedTo(ChronoUnit.SECONDS);
        long start = System.nanoTime();
        work = Files.createTempDirectory("pintle-perf-");
        progress.println("work directory: " + work);
        try {
            pinSelf();
            tlsconn = buildTlsconn();
            progress.println("generating keys and files");
            layout = PerfLayout.create(work.resolve("layout"));
            Path commonSmall = Files.createDirectories(layout.share().resolve("common/perf")).resolve("small.bin");
            Files.copy(layout.share().resolve(layout.agent()).resolve("perf/small.bin"), commonSmall);
            for (Client client : Client.values()) {
                Path pem = work.resolve(client.name().toLowerCase(Locale.ROOT) + ".pem");
                Files.writeString(pem, Files.readString(home(client).resolve("agent.cert"))
                        + Files.readString(home(client).resolve("localhost.priv")));
                pems.put(client, pem);
            }
            startServers();
            probeEtags();
            warmUp();
            PerCoreRows plan = new PerCoreRows(this);
            for (String group : PerCoreOptions.ROWS) {
                if (options.rows().contains(group)) {
                    plan.run(group);
                }
            }
        } finally {
            for (int i = running.size() - 1; i >= 0; i--) {
                running.get(i).close();
            }
        }
        try {
            double minutes = (System.nanoTime() - start) / 6e10;
            String markdown = PerCoreReport.render(new PerCoreReport.Context(date, minutes, options, nginxVersion,
                    versions()), rows);
            ReportOutput.publish(markdown, options.output(), progress);
            ReportOutput.plot(options.plot(), file -> PerCoreReport.plot(rows, date, file), progress);
            return failed ? 1 : 0;
        } finally {
            deleteTree(work);
        }
    }

    // ---- set-up

    /** This JVM starts and reads the C generators: on the generator CPUs, all its threads. */
    private void pinSelf() throws IOException, InterruptedException {
        CommandLine.pinThisJvm(options.generatorCpus());
    }

    /** Compiles tlsconn (its C source is a resource of this jar) with gcc and OpenSSL's headers. */
    private Path buildTlsconn() throws IOException, InterruptedException {
        Path source = work.resolve("tlsconn.c");
        try (InputStream in = PerCoreBench.class.getResourceAsStream("tlsconn.c")) {
            if (in == null) {
                throw new IOException("tlsconn.c is not in the bench jar");
            }
            Files.copy(in, source);
        }
        Path binary = work.resolve("tlsconn");
        String output = run(List.of("gcc", "-O2", "-o", binary.toString(), source.toString(), "-lssl", "-lcrypto",
                "-lpthread", "-lm"), Duration.ofSeconds(60));
        if (!Files.isExecutable(binary)) {
            throw new IOException("gcc could not build tlsconn (apt-get install gcc libssl-dev): " + output);
        }
        return binary;
    }

    private void startServers() throws IOException, InterruptedException {
        List<String> pin = CommandLine.taskset(options.serverCpus());
        progress.println("starting Pintle (" + options.pintleJava() + " " + String.join(" ",
                options.pintleJvmOptions()) + ") on CPU " + options.serverCpus());
        contenders.put(PINTLE, startPintleSet(PINTLE, "pintle", options.pintleJvmOptions(), options.pintleConfig(),
                options.pintleTlsProvider(), List.of(ServerKey.values()), pin));
        progress.println("starting nginx (1 worker) on CPU " + options.serverCpus());
        Nginx nginx = startNginx(pin);
        running.add(nginx);
        nginxVersion = nginx.version();
        contenders.put(NGINX, new Contender(NGINX, nginxPorts, key -> nginx.processes()));
        if (options.rows().contains("abmethod")) {
            progress.println("starting nginx with ssl_verify_client optional_no_ca (1 worker) on CPU "
                    + options.serverCpus());
            Contenders.NginxServer noCa = Contenders.startNginx(layout, work, "nginx-no-ca",
                    Contenders.NginxSetup.ONE_CORE_NO_CA, pin);
            running.add(noCa.nginx());
            contenders.put(NGINX_NO_CA, new Contender(NGINX_NO_CA, noCa.ports(), key -> noCa.nginx().processes()));
        }
        if (options.pintleB()) {
            List<String> jvm = options.pintleBJvmOptions() != null ? options.pintleBJvmOptions()
                    : options.pintleJvmOptions();
            String config = options.pintleConfig() + (options.pintleBConfig() != null
                    ? "\n" + options.pintleBConfig() : "");
            progress.println("starting pintle-b (" + String.join(" ", jvm) + ")");
            String provider = options.pintleBTlsProvider() != null ? options.pintleBTlsProvider()
                    : options.pintleTlsProvider();
            contenders.put(PINTLE_B, startPintleSet(PINTLE_B, "pintle-b", jvm, config, provider,
                    List.of(ServerKey.values()), pin));
        }
        if (options.rows().contains("accesslog")) {
            String logged = accessLogOn(options.pintleConfig());
            contenders.put(PINTLE_LOG_OFF, startPintleSet(PINTLE_LOG_OFF, "pintle-log-off",
                    options.pintleJvmOptions(), options.pintleConfig(), options.pintleTlsProvider(),
                    List.of(ServerKey.RSA_2048), pin));
            contenders.put(PINTLE_LOG, startPintleSet(PINTLE_LOG, "pintle-log", options.pintleJvmOptions(), logged,
                    options.pintleTlsProvider(), List.of(ServerKey.RSA_2048), pin));
        }
    }

    /** The configuration block with the access log on: its {@code access = false} line turned, or a [log] table. */
    static String accessLogOn(String block) {
        if (block.matches("(?s).*(?m:^access\\s*=\\s*false\\s*$).*")) {
            return block.replaceAll("(?m)^access\\s*=\\s*false\\s*$", "access = true");
        }
        if (block.matches("(?s).*(?m:^\\[log\\]\\s*$).*")) {
            return block.replaceAll("(?m)^\\[log\\]\\s*$", "[log]\naccess = true");
        }
        return block + "\n[log]\naccess = true";
    }

    private Contender startPintleSet(String name, String files, List<String> jvmOptions, String config,
            String tlsProvider, List<ServerKey> keys, List<String> pin) throws IOException, InterruptedException {
        Map<ServerKey, Integer> ports = new EnumMap<>(ServerKey.class);
        Map<ServerKey, List<ProcessHandle>> processes = new EnumMap<>(ServerKey.class);
        for (ServerKey key : keys) {
            List<String> launcher = new ArrayList<>(pin);
            launcher.add(options.pintleJava());
            launcher.addAll(jvmOptions);
            Contenders.PintleServer server = Contenders.startPintle(layout, launcher, options.pintleJar(), config,
                    tlsProvider, key, files + "-" + key.label(), work);
            running.add(server);
            ports.put(key, server.port());
            processes.put(key, server.processes());
        }
        return new Contender(name, java.util.Collections.unmodifiableMap(ports), processes::get);
    }

    /**
     * nginx as bench/perf's other rows run it ({@link Contenders#startNginx}), with one worker (on one core, as
     * Pintle is) and the client certificate optional, as Pintle's {@code want} ({@link
     * Contenders.NginxSetup#ONE_CORE}).
     */
    private Nginx startNginx(List<String> pin) throws IOException, InterruptedException {
        Contenders.NginxServer server = Contenders.startNginx(layout, work, "nginx", Contenders.NginxSetup.ONE_CORE,
                pin);
        nginxPorts.putAll(server.ports());
        return server.nginx();
    }

    /** Reads every server's ETag of the paths the rows ask for (HEAD with the key of the node that owns them). */
    private void probeEtags() throws Exception {
        Map<Client, HttpClient> clients = new EnumMap<>(Client.class);
        try {
            for (Client client : Client.values()) {
                clients.put(client, Load.client(tls(client), false, false, 4));
            }
            for (Contender contender : contenders.values()) {
                for (String path : List.of(smallPath(Client.AGENT), smallPath(Client.EC), smallPath(Client.RSA_2048),
                        commonSmallPath(), PerfLayout.commonPath(), layout.rulesPath())) {
                    // A node's own file with its own certificate; the shared paths with the agent's.
                    HttpClient http = clients.get(Stream.of(Client.values())
                            .filter(client -> path.equals(smallPath(client))).findFirst().orElse(Client.AGENT));
                    for (Map.Entry<ServerKey, Integer> port : contender.ports().entrySet()) {
                        ContentResponse response = http.newRequest(URI.create("https://127.0.0.1:" + port.getValue()
                                + path)).method(HttpMethod.HEAD).timeout(30, TimeUnit.SECONDS).send();
                        String etag = response.getHeaders().get(HttpHeader.ETAG);
                        if (response.getStatus() != 200 || etag == null) {
                            throw new IllegalStateException(contender.name() + " (" + port.getKey().title()
                                    + ") answered HEAD " + path + " with " + response.getStatus() + ", ETag " + etag);
                        }
                        String previous = etags.putIfAbsent(contender.name() + ":" + path, etag);
                        if (previous != null && !previous.equals(etag)) {
                            throw new IllegalStateException(contender.name() + " has two ETags for " + path + ": "
                                    + previous + ", " + etag);
                        }
                    }
                }
            }
        } finally {
            for (HttpClient client : clients.values()) {
                client.stop();
            }
        }
        etags.forEach((k, v) -> progress.println("ETag " + k + ": " + v));
    }

    private Path home(Client client) {
        return switch (client) {
            case AGENT -> layout.agentHome();
            case EC -> layout.ecNodeHome();
            case RSA_2048 -> layout.rsa2048Home();
        };
    }

    /** @return a client context presenting that node's certificate and pinning the servers' keys */
    private SSLContext tls(Client client) throws Exception {
        return ClientTls.context(home(client).resolve("agent.cert"), home(client).resolve("localhost.priv"),
                layout.pins());
    }

    /**
     * Unmeasured: every Pintle JVM's JIT compiles the paths the rows take (nginx needs none), with the rows' own
     * generators.
     */
    private void warmUp() throws Exception {
        int seconds = (int) options.warmup().toSeconds();
        if (seconds == 0) {
            return;
        }
        for (Contender contender : contenders.values()) {
            if (contender.name().equals(NGINX) || contender.name().equals(NGINX_NO_CA)) {
                continue;
            }
            for (ServerKey key : contender.ports().keySet()) {
                progress.printf("warm-up: %s, %s, %d s per generator%n", contender.name(), key.title(), seconds);
                generator(tlsconnCommand(contender, key, Client.EC, true, options.newConnectionConcurrency(),
                        false, seconds), GeneratorOutput::tlsconn);
                generator(tlsconnCommand(contender, key, Client.AGENT, true, options.newConnectionConcurrency(),
                        true, Math.max(1, seconds / 4)), GeneratorOutput::tlsconn);
                generator(abNewConnectionCommand(contender, key, Client.EC, Math.max(1, seconds / 4)),
                        out -> GeneratorOutput.ab(out, true));
                if (options.rows().contains("abmethod")) {
                    // The second method's client certificate: its verification (RSA) and its 304 path.
                    generator(abNewConnectionCommand(contender, key, Client.RSA_2048, true, Math.max(1, seconds / 4)),
                            out -> GeneratorOutput.ab(out, true));
                }
                if (key == ServerKey.RSA_4096 && options.rows().contains("herd")) {
                    // The herd's two requests (the common library's 304, the policies archive's 200), below the
                    // server's rate: otherwise the first herd round compiles them.
                    generator(tlsconnHerdCommand(contender, key, 20 * seconds, seconds), GeneratorOutput::tlsconn);
                }
                if (key == ServerKey.RSA_2048) {
                    generator(abKeepAliveCommand(contender, key, seconds), out -> GeneratorOutput.ab(out, false));
                    if (!contender.name().equals(PINTLE_LOG) && !contender.name().equals(PINTLE_LOG_OFF)) {
                        generator(h2loadCommand(contender, key, seconds), GeneratorOutput::h2load);
                    }
                }
            }
        }
    }

    // ---- generators' command lines

    String smallPath(Client client) {
        return PerfLayout.smallPath(switch (client) {
            case AGENT -> layout.agent();
            case EC -> layout.demo().linux2();
            case RSA_2048 -> PerfLayout.RSA2048_ID;
        });
    }

    static String commonSmallPath() {
        return "/common/perf/small.bin";
    }

    String etag(Contender contender, String path) {
        return etags.get(contender.name() + ":" + path);
    }

    private static String url(Contender contender, ServerKey key, String path) {
        return "https://127.0.0.1:" + contender.ports().get(key) + path;
    }

    private List<String> generatorPrefix() {
        return new ArrayList<>(CommandLine.taskset(options.generatorCpus()));
    }

    /**
     * tlsconn: new connections, one request each, with the agent's certificate.
     *
     * @param conditional If-None-Match with the server's ETag (304 expected) or not (200 and 1 KiB)
     */
    List<String> tlsconnCommand(Contender contender, ServerKey key, Client client, boolean nodelay,
            int concurrency, boolean conditional, int seconds) {
        List<String> command = generatorPrefix();
        command.addAll(List.of(tlsconn.toString(), "-p", contender.ports().get(key).toString(), "-c",
                Integer.toString(concurrency), "-t", Integer.toString(seconds), "-C",
                home(client).resolve("agent.cert").toString(), "-K", home(client).resolve("localhost.priv").toString(),
                "-u", smallPath(client), "-s", conditional ? "304" : "200"));
        if (nodelay) {
            command.add("-n");
        }
        if (conditional) {
            command.addAll(List.of("-H", "If-None-Match: " + etag(contender, smallPath(client))));
        }
        return command;
    }

    /**
     * tlsconn's herd: {@code agents} agent updates started at an even pace over {@link #HERD_SPREAD}, each two new
     * connections with the EC node's certificate: the common library with its current ETag (304), then the node's
     * policies with the previous generation's (200 and the archive).
     */
    List<String> tlsconnHerdCommand(Contender contender, ServerKey key, int agents) {
        return tlsconnHerdCommand(contender, key, agents, (int) HERD_SPREAD.toSeconds());
    }

    private List<String> tlsconnHerdCommand(Contender contender, ServerKey key, int agents, int spreadSeconds) {
        List<String> command = generatorPrefix();
        command.addAll(List.of(tlsconn.toString(), "-p", contender.ports().get(key).toString(), "-n", "-a",
                Integer.toString(agents), "-r", Integer.toString(spreadSeconds), "-C",
                home(Client.EC).resolve("agent.cert").toString(), "-K", home(Client.EC).resolve("localhost.priv")
                        .toString(), "-u", PerfLayout.commonPath(), "-H", "If-None-Match: " + etag(contender,
                        PerfLayout.commonPath()), "-s", "304", "-U", ecRulesPath(), "-V",
                "If-None-Match: \"previous-generation\"", "-S", "200"));
        return command;
    }

    /** @return the EC node's policies archive, the second request of its update */
    String ecRulesPath() {
        return "/policies/" + layout.demo().linux2() + "/rules/rudder.tar.bz2";
    }

    /** ab without keep-alive (a new connection per request, no TCP_NODELAY), conditional GETs. */
    List<String> abNewConnectionCommand(Contender contender, ServerKey key, Client client, int seconds) {
        return abNewConnectionCommand(contender, key, client, false, seconds);
    }

    /**
     * The same; with {@code tls13}, {@code -f TLS1.3} as the independent measurement of issue 39 ran it (ab then
     * offers TLS 1.3 only; both servers accept only TLS 1.3 anyway).
     */
    List<String> abNewConnectionCommand(Contender contender, ServerKey key, Client client, boolean tls13,
            int seconds) {
        List<String> command = generatorPrefix();
        command.addAll(abNewConnectionArguments(tls13, seconds, options.newConnectionConcurrency(),
                pems.get(client).toString(), etag(contender, smallPath(client)), url(contender, key,
                        smallPath(client))));
        return command;
    }

    /**
     * ab's arguments for new connections with conditional GETs.
     *
     * @param tls13 add {@code -f TLS1.3}
     * @param pem the client certificate and key, concatenated
     * @param etag the If-None-Match value
     * @return ab and its arguments
     */
    static List<String> abNewConnectionArguments(boolean tls13, int seconds, int concurrency, String pem,
            String etag, String url) {
        List<String> command = new ArrayList<>(List.of("ab", "-q", "-r"));
        if (tls13) {
            command.addAll(List.of("-f", "TLS1.3"));
        }
        // -t before -n: -t sets the request count to 50,000, which -n then lifts.
        command.addAll(List.of("-t", Integer.toString(seconds), "-n", "100000000", "-c",
                Integer.toString(concurrency), "-E", pem, "-H", "If-None-Match: " + etag, url));
        return command;
    }

    /** ab -k: keep-alive HTTP/1.x, 16 connections, the agent's certificate, the 1 KiB file. */
    List<String> abKeepAliveCommand(Contender contender, ServerKey key, int seconds) {
        List<String> command = generatorPrefix();
        command.addAll(List.of("ab", "-q", "-r", "-k", "-t", Integer.toString(seconds), "-n", "100000000", "-c",
                Integer.toString(KEEP_ALIVE_CONNECTIONS), "-E", pems.get(Client.AGENT).toString(), url(contender, key,
                        smallPath(Client.AGENT))));
        return command;
    }

    /** h2load: one HTTP/2 connection, 16 streams, no client certificate (it has no option for one): /common/. */
    List<String> h2loadCommand(Contender contender, ServerKey key, int seconds) {
        List<String> command = generatorPrefix();
        command.addAll(List.of("h2load", "-t", "1", "-c", "1", "-m", Integer.toString(H2_STREAMS), "-D",
                Integer.toString(seconds), url(contender, key, commonSmallPath())));
        return command;
    }

    // ---- measuring

    /** One window of one contender: what the generator said and what the CPUs did. */
    record Sample(GeneratorOutput output, double wallSeconds, double serverCpuMillis, double generatorCpuMillis,
            double serverCoreBusy, double generatorCoreBusy, double othersCores) {
        double serverShare() {
            return serverCpuMillis / 1e3 / wallSeconds;
        }

        double generatorShare() {
            return generatorCpuMillis / 1e3 / wallSeconds;
        }

        /** @return server CPU milliseconds per 1000 exchanges that went as expected */
        double cpuPerThousand() {
            return output.expected() > 0 ? serverCpuMillis / output.expected() * 1e3 : Double.NaN;
        }
    }

    /**
     * Runs a C generator to its end and reads the server's CPU around it; the generator's CPU is this JVM's
     * children's, read around its exit (the JVM reaps it).
     */
    Sample measure(Contender contender, ServerKey key, List<String> command, Function<String, GeneratorOutput> parse)
            throws IOException, InterruptedException {
        return measure(contender, key, command, parse, generatorLimit());
    }

    /** The same with the generator's own time limit (a herd runs until its last agent is done). */
    Sample measure(Contender contender, ServerKey key, List<String> command, Function<String, GeneratorOutput> parse,
            Duration limit) throws IOException, InterruptedException {
        Sample sample = null;
        for (int attempt = 1; attempt <= ATTEMPTS; attempt++) {
            Paused paused = pauseOthers(contender, key);
            try {
                sample = measureAlone(contender, key, command, parse, limit);
            } finally {
                paused.close();
            }
            if (sample.othersCores() <= DISTURBED) {
                break;
            }
            progress.printf(Locale.ROOT, "  disturbed: other processes took %.2f cores during %s's window%s%n",
                    sample.othersCores(), contender.name(), attempt < ATTEMPTS ? "; again" : "; kept");
        }
        if (sample.output().failed() > 0) {
            failed = true;
        }
        return sample;
    }

    /** Servers stopped (SIGSTOP) for a window, continued (SIGCONT) when it closes. */
    final class Paused implements AutoCloseable {
        private final List<String> pids;

        private Paused(List<String> pids) throws IOException, InterruptedException {
            this.pids = pids;
            signal("-STOP");
        }

        private void signal(String signal) throws IOException, InterruptedException {
            if (pids.isEmpty()) {
                return;
            }
            List<String> command = new ArrayList<>(List.of("kill", signal));
            command.addAll(pids);
            Process kill = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
                throw new IOException("kill " + signal + " " + pids + " failed");
            }
        }

        @Override
        public void close() throws IOException {
            try {
                signal("-CONT");
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted while continuing " + pids, e);
            }
        }
    }

    /**
     * Every other server this harness started shares the server CPU: stopped during a window, none of them (a JVM
     * finishing its compilations, its GC, its timers) takes the measured server's core. Only processes this
     * harness started, by their ids.
     */
    Paused pauseOthers(Contender measured, ServerKey key) throws IOException, InterruptedException {
        List<Long> mine = measured.processes().apply(key).stream().map(ProcessHandle::pid).toList();
        List<String> others = new ArrayList<>();
        for (Contender contender : contenders.values()) {
            for (ServerKey other : contender.ports().keySet()) {
                for (ProcessHandle process : contender.processes().apply(other)) {
                    String pid = Long.toString(process.pid());
                    if (!mine.contains(process.pid()) && !others.contains(pid) && process.isAlive()) {
                        others.add(pid);
                    }
                }
            }
        }
        return new Paused(others);
    }

    private Sample measureAlone(Contender contender, ServerKey key, List<String> command,
            Function<String, GeneratorOutput> parse, Duration limit) throws IOException, InterruptedException {
        List<ProcessHandle> server = contender.processes().apply(key);
        double serverBefore = ProcessCpu.millis(server);
        double generatorBefore = ProcessCpu.childrenMillis();
        double harnessBefore = ProcessCpu.selfAndChildrenMillis();
        double machineBefore = ProcessCpu.machineBusyMillis();
        CoreCpu coresBefore = CoreCpu.read();
        long start = System.nanoTime();
        GeneratorOutput output = parse.apply(run(command, limit));
        long end = System.nanoTime();
        CoreCpu cores = CoreCpu.read();
        double generator = ProcessCpu.childrenMillis() - generatorBefore;
        double harness = ProcessCpu.selfAndChildrenMillis() - harnessBefore;
        double machine = ProcessCpu.machineBusyMillis() - machineBefore;
        double serverCpu = ProcessCpu.millis(contender.processes().apply(key)) - serverBefore;
        double wall = (end - start) / 1e9;
        return new Sample(output, wall, serverCpu, generator, cores.busySince(coresBefore, options.serverCpus()),
                cores.busySince(coresBefore, options.generatorCpus()),
                Math.max(0, machine - serverCpu - harness) / 1e3 / wall);
    }

    private GeneratorOutput generator(List<String> command, Function<String, GeneratorOutput> parse)
            throws IOException, InterruptedException {
        return parse.apply(run(command, generatorLimit()));
    }

    private Duration generatorLimit() {
        return options.window().plus(options.warmup()).plusSeconds(60);
    }

    private String run(List<String> command, Duration limit) throws IOException, InterruptedException {
        Path output = Files.createTempFile(work, "generator-", ".out");
        Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile())
                .start();
        try {
            if (!process.waitFor(limit.toSeconds(), TimeUnit.SECONDS)) {
                throw new IOException(String.join(" ", command) + " still running after " + limit.toSeconds()
                        + " s");
            }
            return Files.readString(output, StandardCharsets.ISO_8859_1);
        } finally {
            if (process.isAlive()) {
                process.destroyForcibly();
            }
            Files.deleteIfExists(output);
        }
    }

    // ---- for the rows

    PerCoreOptions options() {
        return options;
    }

    PerfLayout layout() {
        return layout;
    }

    Map<String, Contender> contenders() {
        return contenders;
    }

    PrintStream progress() {
        return progress;
    }

    void add(PerCoreRow row) {
        rows.add(row);
        progress.println(PerCoreReport.summary(row));
    }

    void failed() {
        failed = true;
    }

    private List<String> versions() {
        List<String> versions = new ArrayList<>();
        for (List<String> command : List.of(List.of("ab", "-V"), List.of("h2load", "--version"),
                List.of("openssl", "version"), List.of(options.pintleJava(), "-version"))) {
            try {
                versions.add(run(command, Duration.ofSeconds(20)).lines().filter(l -> !l.isBlank()).findFirst()
                        .orElse("?").strip());
            } catch (IOException | InterruptedException e) {
                versions.add(command.get(0) + ": " + e.getMessage());
            }
        }
        return versions;
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
