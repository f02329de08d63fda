package io.pintle.bench.handshakes;

import io.pintle.bench.harness.HarnessMain;
import io.pintle.bench.harness.ReportOutput;
import io.pintle.bench.sync.Ports;
import io.pintle.bench.sync.ProcessCpu;
import io.pintle.server.tls.SelfSigned;
import java.io.IOException;
import java.io.PrintStream;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code bench/handshakes}: for each server key type, one server per trust mode (each its own JVM, all pinned to
 * the server CPU, one loaded at a time), checked first (curl and s_time get 200; a CA-chain client that leaves
 * out its intermediate gets 403), warmed up, then measured in rounds, each round running every mode once in a
 * rotated order. Then, on the first server key, a JFR recording of each mode's server under the same load, and an
 * in-process timing of the chain verification the CA modes add.
 */
public final class HandshakesBench {
    private static final PrintStream PROGRESS = System.err;
    private static final Duration START_LIMIT = Duration.ofSeconds(120);
    /** Other processes' CPU, in cores, above which the machine is not quiet enough to measure on. */
    static final double QUIET = 0.05;
    /** Other processes' CPU during a window, in cores, above which it is run again. */
    static final double DISTURBED = 0.10;
    private static final int ATTEMPTS = 3;

    private final HandshakesOptions options;
    private final HandshakesResult result;
    private final HttpClient admin = HttpClient.newHttpClient();
    private HandshakesLayout layout;

    private HandshakesBench(HandshakesOptions options) {
        this.options = options;
        this.result = new HandshakesResult(options, Instant.now());
    }

    public static void main(String[] args) {
        HarnessMain.quietClientLogging();
        System.exit(HarnessMain.run(args, HandshakesOptions::parse, "handshakes benchmark",
                options -> new HandshakesBench(options).run()));
    }

    /** One server: a mode, a server key, its process and ports. */
    private record Server(Mode mode, SelfSigned.KeyType key, int port, int adminPort, Process process, Path log) {}

    private int run() throws Exception {
        PROGRESS.println("generating certificates (client and CA keys: " + HandshakesLayout.title(options.clientKey())
                + ")");
        layout = HandshakesLayout.create(options.work().resolve("layout"), options.clientKey(), options.serverKeys());
        result.opensslVersion = output(List.of("openssl", "version")).strip();
        boolean first = true;
        for (SelfSigned.KeyType key : options.serverKeys()) {
            Map<Mode, Server> servers = new EnumMap<>(Mode.class);
            try {
                for (Mode mode : options.modes()) {
                    servers.put(mode, start(mode, key));
                }
                for (Server server : servers.values()) {
                    check(server);
                }
                for (Server server : servers.values()) {
                    PROGRESS.printf("warm-up: %s, %s server key, %d s%n", server.mode().label(),
                            HandshakesLayout.title(key), options.warmupSeconds());
                    if (options.warmupSeconds() > 0) {
                        window(server, 0, options.warmupSeconds(), 1);
                    }
                }
                List<Mode> modes = options.modes();
                for (int round = 1; round <= options.rounds(); round++) {
                    for (int i = 0; i < modes.size(); i++) {
                        // Rotated: no mode always runs first, or always right after another.
                        Mode mode = modes.get((i + round - 1) % modes.size());
                        Window window = measured(servers.get(mode), round, options.windowSeconds());
                        result.windows.add(window);
                        PROGRESS.printf(Locale.ROOT, "  round %d %-8s %-11s %7.1f handshakes/s, server %3.0f %% "
                                        + "(core %3.0f %%), s_time %3.0f %% (core %3.0f %%), 200: %d of %d%s%n",
                                round, mode.label(), HandshakesLayout.title(key), window.rate(),
                                window.serverCores() * 100, window.serverCoreBusy() * 100,
                                window.generatorCores() * 100, window.generatorCoreBusy() * 100, window.ok(),
                                window.connections(), window.others().isEmpty() && window.failures().isEmpty() ? ""
                                        : ", others " + window.others() + " " + window.failures());
                        if (window.otherCores() > DISTURBED) {
                            PROGRESS.printf(Locale.ROOT, "  kept, disturbed: other processes took %.2f cores%n",
                                    window.otherCores());
                        }
                    }
                }
                if (first && options.profileSeconds() > 0) {
                    for (Server server : servers.values()) {
                        profile(server);
                    }
                }
            } finally {
                for (Server server : servers.values()) {
                    Ports.stop(server.process(), Duration.ofSeconds(20));
                    result.serverLogErrors += count(server.log(), " ERROR ");
                }
            }
            first = false;
        }
        if (options.modes().stream().anyMatch(Mode::chainClient)) {
            PROGRESS.println("timing the chain verification in process");
            result.costs = VerificationCosts.measure(layout);
        }
        result.finished = Instant.now();
        String markdown = HandshakesReport.markdown(result);
        ReportOutput.publish(markdown, options.output(), PROGRESS);
        ReportOutput.plot(options.plot(), file -> HandshakesPlot.write(result, file), PROGRESS);
        return result.clean() ? 0 : 1;
    }

    private Server start(Mode mode, SelfSigned.KeyType key) throws IOException, InterruptedException {
        int port = Ports.free();
        int adminPort = Ports.free();
        Path config = layout.config(mode, key, port, adminPort);
        Path log = options.work().resolve("pintle-" + mode.label() + "-" + HandshakesLayout.label(key) + ".log");
        List<String> command = new ArrayList<>(options.serverLauncher());
        command.add(ProcessHandle.current().info().command().orElse("java"));
        command.addAll(options.pintleJvmOptions());
        command.addAll(List.of("-jar", options.pintleJar().toString(), "serve", "--config", config.toString()));
        result.serverCommand = String.join(" ", command);
        PROGRESS.println("starting " + mode.label() + " server, " + HandshakesLayout.title(key) + " key: "
                + String.join(" ", command));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            Ports.awaitListening(port, START_LIMIT, process);
            Ports.awaitListening(adminPort, START_LIMIT, process);
        } catch (IOException e) {
            process.destroy();
            throw new IOException(e.getMessage() + "; the server said: " + Files.readString(log), e);
        }
        if (result.configs.putIfAbsent(mode, Files.readString(config)) == null) {
            result.configFiles.put(mode, config.getFileName().toString());
        }
        return new Server(mode, key, port, adminPort, process, log);
    }

    /**
     * Before measuring: curl with the mode's client gets 200 (curl sends the whole chain file), s_time's
     * connections all get 200, and, for the CA modes, s_time without the intermediate gets 403 only: the
     * intermediate is what makes the chain, so it is sent.
     */
    private void check(Server server) throws IOException, InterruptedException {
        Mode mode = server.mode();
        String url = "https://127.0.0.1:" + server.port() + HandshakesLayout.path(mode);
        Path certificate = mode.chainClient() ? layout.caDirectory().resolve("chain.pem")
                : layout.clientCertificate(mode);
        String curl = output(List.of("curl", "-sS", "--tlsv1.3", "--noproxy", "*", "--insecure", "--cert",
                certificate.toString(), "--key", layout.clientKeyFile(mode).toString(), "-o", "/dev/null", "-w",
                "%{http_code}", url)).strip();
        String what = mode.label() + ", " + HandshakesLayout.title(server.key()) + ": curl -> " + curl;
        if (!curl.equals("200")) {
            throw new IOException(what + " (expected 200); server log: " + server.log());
        }
        ServerCounters before = ServerCounters.read(admin, server.adminPort());
        STime.Outcome outcome = sTime(server, layout.extraChain(mode), 1, 2);
        ServerCounters after = ServerCounters.read(admin, server.adminPort());
        what += String.format(Locale.ROOT, "; s_time 2 s -> %d connections, %d × 200, others %s", outcome.connections(),
                after.okSince(before), after.othersSince(before));
        if (outcome.connections() == 0 || after.okSince(before) != outcome.connections()
                || !after.othersSince(before).isEmpty()) {
            throw new IOException(what + " (expected 200 only); " + outcome.failures());
        }
        if (mode.chainClient()) {
            before = after;
            outcome = sTime(server, null, 1, 1);
            after = ServerCounters.read(admin, server.adminPort());
            what += String.format(Locale.ROOT, "; s_time without the intermediate -> %d connections, %d × 200, "
                    + "others %s", outcome.connections(), after.okSince(before), after.othersSince(before));
            if (after.okSince(before) != 0 || after.othersSince(before).getOrDefault(403, 0L) == 0) {
                throw new IOException(what + " (expected 403 only)");
            }
        }
        PROGRESS.println("check: " + what);
        result.checks.add(what);
    }

    private STime.Outcome sTime(Server server, Path chain, int parallel, int seconds)
            throws IOException, InterruptedException {
        Mode mode = server.mode();
        List<String> command = STime.command(options.clientLauncher(), server.port(), layout.clientCertificate(mode),
                layout.clientKeyFile(mode), chain, HandshakesLayout.path(mode), seconds);
        if (parallel == options.parallel() && java.util.Objects.equals(chain, layout.extraChain(mode))) {
            result.generatorCommands.putIfAbsent(mode, String.join(" ", command));
        }
        Path scratch = Files.createDirectories(options.work().resolve("s_time"));
        return STime.run(command, parallel, seconds + 60, scratch);
    }

    /**
     * A window on a quiet machine: waits for other processes to leave the cores alone (up to {@code --quiet-wait}),
     * and runs the window again when they took CPU during it, up to {@link #ATTEMPTS} times.
     */
    private Window measured(Server server, int round, int seconds) throws IOException, InterruptedException {
        Window window = null;
        for (int attempt = 1; attempt <= ATTEMPTS; attempt++) {
            awaitQuiet();
            window = window(server, round, seconds, attempt);
            if (window.otherCores() <= DISTURBED) {
                break;
            }
            PROGRESS.printf(Locale.ROOT, "  other processes took %.2f cores during the window (attempt %d)%n",
                    window.otherCores(), attempt);
        }
        return window;
    }

    private void awaitQuiet() throws InterruptedException {
        long limit = System.nanoTime() + options.quietWaitSeconds() * 1_000_000_000L;
        boolean said = false;
        while (true) {
            OtherLoad before = OtherLoad.read();
            Thread.sleep(2000);
            double others = OtherLoad.read().coresSince(before);
            if (others <= QUIET || System.nanoTime() > limit) {
                if (others > QUIET) {
                    PROGRESS.printf(Locale.ROOT, "  measuring anyway: other processes still take %.2f cores%n",
                            others);
                }
                return;
            }
            if (!said) {
                PROGRESS.printf(Locale.ROOT, "  waiting for other processes to go quiet (%.2f cores)%n", others);
                said = true;
            }
        }
    }

    private Window window(Server server, int round, int seconds, int attempt)
            throws IOException, InterruptedException {
        ProcessHandle pintle = server.process().toHandle();
        ServerCounters before = ServerCounters.read(admin, server.adminPort());
        OtherLoad othersBefore = OtherLoad.read();
        CoreCpu coresBefore = CoreCpu.read();
        double serverBefore = ProcessCpu.millis(List.of(pintle));
        double childrenBefore = ProcessCpu.childrenMillis();
        STime.Outcome outcome = sTime(server, layout.extraChain(server.mode()), options.parallel(), seconds);
        double childrenAfter = ProcessCpu.childrenMillis();
        double serverAfter = ProcessCpu.millis(List.of(pintle));
        CoreCpu coresAfter = CoreCpu.read();
        double others = OtherLoad.read().coresSince(othersBefore);
        ServerCounters after = ServerCounters.read(admin, server.adminPort());
        double millis = outcome.seconds() * 1e3;
        return new Window(server.mode(), server.key(), round, outcome.connections(), outcome.seconds(),
                after.okSince(before), after.othersSince(before), after.tls13() - before.tls13(),
                (serverAfter - serverBefore) / millis, (childrenAfter - childrenBefore) / millis,
                coresAfter.busySince(coresBefore, options.serverCpus()),
                coresAfter.busySince(coresBefore, options.clientCpus()), outcome.failures(), others, attempt);
    }

    /** A JFR recording (profile settings: a Java stack sample every 10 ms) of the server under the rows' load. */
    private void profile(Server server) throws IOException, InterruptedException {
        PROGRESS.printf("profiling %s (JFR, %d s)%n", server.mode().label(), options.profileSeconds());
        String pid = Long.toString(server.process().pid());
        Path recording = options.work().resolve("profile-" + server.mode().label() + ".jfr");
        output(List.of("jcmd", pid, "JFR.start", "name=handshakes", "settings=profile"));
        Window window = measured(server, 0, options.profileSeconds());
        output(List.of("jcmd", pid, "JFR.stop", "name=handshakes", "filename=" + recording));
        result.profiles.put(server.mode(), Hotspots.read(recording, window));
    }

    private static String output(List<String> command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String text = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        process.waitFor();
        return text;
    }

    private static int count(Path log, String marker) throws IOException {
        return (int) Files.readAllLines(log).stream().filter(line -> line.contains(marker)).count();
    }
}
