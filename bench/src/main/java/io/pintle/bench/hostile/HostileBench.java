package io.pintle.bench.hostile;

import ch.qos.logback.classic.Level;
import io.pintle.bench.harness.HarnessMain;
import io.pintle.bench.harness.ReportOutput;
import io.pintle.bench.sync.ProcessCpu;
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
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import javax.net.ssl.SSLContext;
import org.slf4j.Logger;

/**
 * Entry point of {@code bench/hostile} (issue 18). Lays out {@code pintle demo}'s files plus a large /common file,
 * starts the real server with the systemd unit's JVM options (its own JVM, its log in a file), starts the victim
 * node's download loop and the gauge sampler, measures a baseline with the victim alone, then runs the attacks one
 * after the other. For each: the victim's downloads from the attack's start until every gauge is back (or the
 * watch's bound: the server's idle timeout plus a margin), each gauge before, at its peak and after, and how long
 * it took to come back. Prints a Markdown report (also written to {@code --output}, with a plot in {@code --plot}).
 *
 * <p>Exit status: 0 when the run held (every victim download a 200 within 2 s, every gauge back within the idle
 * timeout), 1 when it did not, 2 when the harness could not run.
 */
public final class HostileBench {
    /** The server's default {@code idle_timeout_seconds}, which the layout keeps: the "done when" bound. */
    static final Duration IDLE_TIMEOUT = Duration.ofSeconds(30);
    /** How much longer than the bound the harness watches, so that "not back" is told from "back a bit late". */
    private static final Duration WATCH_MARGIN = Duration.ofSeconds(15);
    /** Every gauge must read at or below its threshold this many times in a row to count as back. */
    private static final int BACK_READINGS = 3;

    /** Only errors: the attacks make the client side log warnings by design. */
    private static final Map<String, Level> QUIETED_LOGGERS = Map.of(
            Logger.ROOT_LOGGER_NAME, Level.ERROR, "org.eclipse.jetty", Level.ERROR);

    private final HostileOptions options;
    private final PrintStream progress;

    private HostileBench(HostileOptions options, PrintStream progress) {
        this.options = options;
        this.progress = progress;
    }

    /** @param args see {@link HostileOptions#USAGE} */
    public static void main(String[] args) {
        HarnessMain.setLevels(QUIETED_LOGGERS);
        System.exit(HarnessMain.run(args, HostileOptions::parse, "hostile harness",
                options -> new HostileBench(options, System.err).run()));
    }

    private int run() throws Exception {
        Instant date = Instant.now().truncatedTo(ChronoUnit.SECONDS);
        long runStart = System.nanoTime();
        String loadBefore = loadAverage();
        Path work = options.work() != null ? Files.createDirectories(options.work())
                : Files.createTempDirectory("pintle-hostile-");
        progress.println("work directory: " + work);
        try {
            HostileLayout layout = HostileLayout.create(work.resolve("layout"));
            Path log = work.resolve("pintle.log");
            SSLContext victimTls = ClientTls.context(layout.victimHome().resolve("agent.cert"),
                    layout.victimHome().resolve("localhost.priv"), Set.of(layout.demo().serverPin()));
            long victimLength = Files.size(layout.demo().directory().resolve("share")
                    .resolve(layout.victimFile().substring("/policies/".length())));
            HostileReport.Context context;
            List<AttackRun> runs = new ArrayList<>();
            List<GaugeSampler.Sample> samples;
            List<Victim.Download> downloads;
            Victim.Window baseline;
            EndOfRun endOfRun;
            try (HostileServer server = HostileServer.start(options, layout, log)) {
                // bench/hostile's time bound ends this JVM with SIGTERM: the server must not outlive it.
                Thread stopServer = new Thread(server::close, "stop-pintle");
                Runtime.getRuntime().addShutdownHook(stopServer);
                progress.println("Pintle started (pid " + server.pid() + "), log: " + log);
                GaugeSampler gauges = new GaugeSampler(layout.adminPort(), server.pid());
                Victim victim = new Victim(victimTls, URI.create("https://127.0.0.1:" + layout.port()
                        + layout.victimFile()), victimLength, options.victimPause());
                try (gauges; victim) {
                    String failure = victim.check();
                    if (failure != null) {
                        throw new IllegalStateException("the victim's first download failed: " + failure);
                    }
                    gauges.start();
                    victim.start();
                    progress.printf(Locale.ROOT, "warm-up: the victim alone for %d s, not measured%n",
                            options.warmup().toSeconds());
                    Thread.sleep(options.warmup().toMillis());
                    progress.printf(Locale.ROOT, "baseline: the victim alone for %d s%n",
                            options.baseline().toSeconds());
                    long baselineStart = System.nanoTime();
                    Thread.sleep(options.baseline().toMillis());
                    long baselineEnd = System.nanoTime();
                    baseline = victim.between(baselineStart, baselineEnd);
                    Map<Gauge, Double> spread = spread(gauges.between(baselineStart, baselineEnd));
                    progress.printf(Locale.ROOT, "baseline: %,d downloads, p50 %.1f ms, p99 %.1f ms, %d errors;"
                            + " gauge spread %s%n", baseline.count(), baseline.percentileMillis(50),
                            baseline.percentileMillis(99), baseline.errors(), spread);
                    Attacker attacker = new Attacker(layout);
                    GaugeSampler.Sample beforeAttacks = gauges.latest();
                    for (HostileOptions.Kind kind : options.attacks()) {
                        if (!server.isAlive()) {
                            progress.println("the server exited; the remaining attacks are not run");
                            break;
                        }
                        Thread.sleep(options.settle().toMillis());
                        runs.add(runAttack(kind, attacker, layout, gauges, victim, server, spread));
                    }
                    endOfRun = settle(gauges, victim, server, beforeAttacks, spread);
                    samples = gauges.all();
                    downloads = victim.all();
                    context = new HostileReport.Context(date, (System.nanoTime() - runStart) / 6e10, options,
                            String.join(" ", server.command()).replace(layout.demo().config().toString(),
                                    "<work>/pintle.toml"), gauges.descriptorsExported(), baseline, spread,
                            openFilesLimit(), endOfRun, loadBefore, loadAverage(), null);
                }
                Runtime.getRuntime().removeShutdownHook(stopServer);
            }
            boolean held = runs.size() == options.attacks().size() && runs.stream().allMatch(HostileReport::held);
            context = context.keptAt(held ? null : work.toString());
            String markdown = HostileReport.render(context, runs);
            ReportOutput.publish(markdown, options.output(), progress);
            HostileReport.Context reported = context;
            ReportOutput.plot(options.plot(), file -> HostilePlot.write(reported, runs, samples, downloads, file),
                    progress);
            return held ? 0 : 1;
        } finally {
            // bench/hostile deletes it after a run that held, unless --keep.
            progress.println("work directory (layout, configuration, pintle.log): " + work);
        }
    }

    private AttackRun runAttack(HostileOptions.Kind kind, Attacker attacker, HostileLayout layout,
            GaugeSampler gauges, Victim victim, HostileServer server, Map<Gauge, Double> spread) throws Exception {
        Attack attack = switch (kind) {
            case ABORTED_RANGES -> new AbortedRanges(attacker, options.abortedDownloads(), options.abortConcurrency());
            case ZERO_WINDOW -> new ZeroWindow(attacker, options.zeroWindowConnections(), options.zeroWindowStreams());
            case SLOW_UPLOADS -> new SlowUploads(attacker, layout, options.slowUploads(), options.trickleEvery());
            case POLLS_HTTP2 -> new AbandonedPolls.Http2(attacker, options.pollConnections(), options.pollStreams(),
                    options.pollHold());
            case POLLS_HTTP1 -> new AbandonedPolls.Http1(attacker, options.http1Polls(), options.http1Wait(),
                    options.pollHold());
        };
        // An HTTP/1.1 wait holds its slot until it ends (documented): its bound is its wait, not the idle timeout.
        Duration bound = kind == HostileOptions.Kind.POLLS_HTTP1 ? options.http1Wait() : IDLE_TIMEOUT;
        Duration watch = bound.plus(WATCH_MARGIN);
        progress.printf(Locale.ROOT, "%s: %s%n", kind.label(), attack.description());
        attacker.drainSeen();
        GaugeSampler.Sample before = gauges.latest();
        List<ProcessHandle> serverProcess = List.of(server.handle());
        double harnessFrom = ProcessCpu.selfAndChildrenMillis();
        double serverFrom = ProcessCpu.millis(serverProcess);
        long start = System.nanoTime();
        long end;
        double harnessShare;
        try {
            attack.launch();
            end = System.nanoTime();
            harnessShare = (ProcessCpu.selfAndChildrenMillis() - harnessFrom) / ((end - start) / 1e6)
                    / allowedCpus();
            progress.printf(Locale.ROOT, "%s: launched in %.1f s (%s); watching the gauges for up to %d s%n",
                    kind.label(), (end - start) / 1e9, attack.delivered(), watch.toSeconds());
            long deadline = end + watch.toNanos();
            int backInARow = 0;
            long lastSeen = 0;
            while (System.nanoTime() < deadline && backInARow < BACK_READINGS) {
                attack.tick();
                Thread.sleep(50);
                GaugeSampler.Sample now = gauges.latest();
                if (now.nanos() != lastSeen && now.nanos() > end) {
                    lastSeen = now.nanos();
                    backInARow = atOrBelow(now, before, spread) ? backInARow + 1 : 0;
                }
            }
        } finally {
            attack.close();
        }
        long observedUntil = System.nanoTime();
        double serverCores = (ProcessCpu.millis(serverProcess) - serverFrom) / ((observedUntil - start) / 1e6);
        String delivered = attack.delivered();
        // Answers that came after the launch (408s, resets by the server) are in by now.
        String seen = attacker.drainSeen();
        Map<Gauge, AttackRun.Change> changes = changes(gauges.between(start, observedUntil), before, end, spread);
        AttackRun run = new AttackRun(kind, attack.description(), delivered, seen, start, end, observedUntil,
                victim.between(start, observedUntil), changes, harnessShare, serverCores, bound.toSeconds());
        progress.printf(Locale.ROOT, "%s: attacker saw %s; victim %,d downloads, p50 %.1f ms, p99 %.1f ms, max %.1f"
                        + " ms, %d errors; gauges %s%n", kind.label(), seen, run.victim().count(),
                run.victim().percentileMillis(50), run.victim().percentileMillis(99), run.victim().maxMillis(),
                run.victim().errors(), HostileReport.gaugeLine(changes));
        return run;
    }

    /**
     * The victim alone again until every gauge is back at its reading before the first attack (or the cool-down's
     * bound), then a forced collection.
     */
    private EndOfRun settle(GaugeSampler gauges, Victim victim, HostileServer server,
            GaugeSampler.Sample beforeAttacks, Map<Gauge, Double> spread) throws InterruptedException {
        progress.printf(Locale.ROOT, "cool-down: the victim alone until the gauges are back, at most %d s%n",
                options.cooldown().toSeconds());
        long start = System.nanoTime();
        long deadline = start + options.cooldown().toNanos();
        int backInARow = 0;
        long lastSeen = 0;
        while (System.nanoTime() < deadline && backInARow < BACK_READINGS && server.isAlive()) {
            Thread.sleep(50);
            GaugeSampler.Sample now = gauges.latest();
            if (now.nanos() != lastSeen && now.nanos() > start) {
                lastSeen = now.nanos();
                backInARow = atOrBelow(now, beforeAttacks, spread) ? backInARow + 1 : 0;
            }
        }
        long end = System.nanoTime();
        GaugeSampler.Sample settled = gauges.latest();
        EndOfRun.Gc gc = server.isAlive() ? EndOfRun.forceGc(server.pid(), gauges)
                : new EndOfRun.Gc(null, "the server had exited");
        progress.printf(Locale.ROOT, "cool-down: %.0f s; gauges %s; after a forced collection (%s): %s%n",
                (end - start) / 1e9, HostileReport.readings(settled), gc.how(),
                gc.after() == null ? "–" : HostileReport.readings(gc.after()));
        return new EndOfRun(victim.between(start, end), (end - start) / 1e9, beforeAttacks, settled, gc.after(),
                gc.how());
    }

    /** @return how much each gauge moved with the victim alone (max − min over the baseline) */
    private static Map<Gauge, Double> spread(List<GaugeSampler.Sample> baseline) {
        Map<Gauge, Double> spread = new EnumMap<>(Gauge.class);
        for (Gauge gauge : Gauge.values()) {
            double min = baseline.stream().mapToDouble(s -> s.get(gauge)).filter(v -> !Double.isNaN(v)).min()
                    .orElse(0);
            double max = baseline.stream().mapToDouble(s -> s.get(gauge)).filter(v -> !Double.isNaN(v)).max()
                    .orElse(0);
            spread.put(gauge, max - min);
        }
        return spread;
    }

    /**
     * The reading before, plus what the victim alone moves the gauge: at least its own download's share (a 5 ms
     * download is seldom caught by a reading every 200 ms, but may be).
     */
    private static double threshold(Gauge gauge, GaugeSampler.Sample before, Map<Gauge, Double> spread) {
        return before.get(gauge) + Math.max(spread.get(gauge), gauge.victimShare());
    }

    private static boolean atOrBelow(GaugeSampler.Sample now, GaugeSampler.Sample before, Map<Gauge, Double> spread) {
        for (Gauge gauge : Gauge.values()) {
            if (Double.isNaN(now.get(gauge)) || now.get(gauge) > threshold(gauge, before, spread)) {
                return false;
            }
        }
        return true;
    }

    private static Map<Gauge, AttackRun.Change> changes(List<GaugeSampler.Sample> window,
            GaugeSampler.Sample before, long end, Map<Gauge, Double> spread) {
        Map<Gauge, AttackRun.Change> changes = new EnumMap<>(Gauge.class);
        for (Gauge gauge : Gauge.values()) {
            double threshold = threshold(gauge, before, spread);
            double peak = window.stream().mapToDouble(s -> s.get(gauge)).filter(v -> !Double.isNaN(v)).max()
                    .orElse(Double.NaN);
            double after = window.isEmpty() ? Double.NaN : window.get(window.size() - 1).get(gauge);
            // Back at the first reading after the last one above the threshold (after the attack's last action).
            double back = 0;
            List<GaugeSampler.Sample> afterEnd = window.stream().filter(s -> s.nanos() >= end).toList();
            for (int i = afterEnd.size() - 1; i >= 0; i--) {
                if (!(afterEnd.get(i).get(gauge) <= threshold)) {
                    back = i == afterEnd.size() - 1 ? Double.NaN : (afterEnd.get(i + 1).nanos() - end) / 1e9;
                    break;
                }
            }
            changes.put(gauge, new AttackRun.Change(before.get(gauge), peak, after, threshold, back));
        }
        return changes;
    }

    /** @return how many CPUs this JVM may run on */
    private static int allowedCpus() {
        return Runtime.getRuntime().availableProcessors();
    }

    /** @return the 1, 5 and 15-minute load averages, or "?" */
    private static String loadAverage() {
        try {
            String[] fields = Files.readString(Path.of("/proc/loadavg")).strip().split("\\s+");
            return String.join(" / ", fields[0], fields[1], fields[2]);
        } catch (IOException | RuntimeException e) {
            return "?";
        }
    }

    /** @return the soft open-files limit of this process (the server inherits it), or "?" */
    private static String openFilesLimit() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/limits"))) {
                if (line.startsWith("Max open files")) {
                    return line.substring("Max open files".length()).strip().split("\\s+")[0];
                }
            }
        } catch (IOException e) {
            // Not Linux: the report says "?".
        }
        return "?";
    }

    /**
     * Jetty's client logs at INFO and warns once per context that host names are not checked (the server is
     * pinned by its key instead): only errors on the harness's stderr, which is for progress lines.
     */
}
