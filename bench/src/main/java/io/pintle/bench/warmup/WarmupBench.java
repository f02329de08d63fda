package io.pintle.bench.warmup;

import io.pintle.bench.harness.CommandLine;
import io.pintle.bench.harness.HarnessMain;
import io.pintle.bench.harness.ReportOutput;
import io.pintle.bench.sync.Ports;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Entry point of {@code bench/warmup}: writes the layout, trains the variants that need an archive, then starts
 * the server once per variant, workload and round, loads it with {@code ab} from the moment its port accepts, and
 * prints a Markdown report (also written to {@code --output}, with the raw curves in {@code --csv} and a plot in
 * {@code --plot}). With {@code --merge}, reports on the curves of earlier runs instead.
 *
 * <p>Exit status: 0 every request was answered 2xx; 1 some failed (the report counts them; the work directory is
 * kept); 2 the benchmark could not run.
 */
public final class WarmupBench {
    private static final Duration START_LIMIT = Duration.ofSeconds(60);
    /** How often the port is tried while the server starts: the resolution of "listening after". */
    private static final long LISTEN_POLL_MILLIS = 5;
    /** A training run's exit writes the archive: JDK 25 assembles its cache in a second JVM, which takes a while. */
    private static final Duration TRAINING_STOP_LIMIT = Duration.ofMinutes(5);
    private static final Duration STOP_LIMIT = Duration.ofSeconds(30);
    /** {@code getconf CLK_TCK}: the unit of /proc/PID/stat's times. */
    private static final double TICKS_PER_SECOND = 100;

    private final WarmupOptions options;
    private final PrintStream progress;
    private final List<String> notes = new ArrayList<>();
    private final List<String> unitOptions = CommandLine.jvmOptions(CommandLine.UNIT_JVM_OPTIONS);
    private WarmupLayout layout;

    private WarmupBench(WarmupOptions options, PrintStream progress) {
        this.options = options;
        this.progress = progress;
    }

    /** @param args see {@link WarmupOptions#USAGE} */
    public static void main(String[] args) {
        System.exit(HarnessMain.run(args, WarmupOptions::parse, "warm-up benchmark",
                options -> new WarmupBench(options, System.err).run()));
    }

    private int run() throws Exception {
        if (!options.merge().isEmpty()) {
            return merge();
        }
        Instant date = Instant.now().truncatedTo(ChronoUnit.SECONDS);
        Files.createDirectories(options.work());
        Path archives = Files.createDirectories(options.work().resolve("archives"));
        List<Variant> variants = options.variants().stream()
                .map(name -> Variant.of(name, options.jdk17(), options.jdk25(), archives)).toList();
        progress.println("generating the layout in " + options.work());
        layout = WarmupLayout.create(options.work().resolve("layout"));
        Map<String, String> context = context(variants, date);

        Set<Path> trained = new LinkedHashSet<>();
        for (Variant variant : variants) {
            if (variant.trained() && trained.add(variant.archive())) {
                train(variant);
            }
        }
        List<Curve> curves = new ArrayList<>();
        for (int round = 1; round <= options.rounds(); round++) {
            // Interleaved: every round runs every variant, each round starting with the next one.
            for (Workload workload : options.workloads()) {
                for (int i = 0; i < variants.size(); i++) {
                    Variant variant = variants.get((i + round - 1) % variants.size());
                    Curve curve = measure(variant, workload, round);
                    progress.printf(Locale.ROOT, "round %d %s %s: listening after %.2f s, steady %.0f/s, "
                                    + "80 %% at %s s, first 5 s %.0f %%, ab CPU %.0f %%, failed %d%n", round,
                            workload.label(), variant.label(), curve.listenMillis() / 1e3, curve.steadyRate(),
                            WarmupReport.number(curve.secondsTo80(), 0), 100 * curve.firstSecondsShare(),
                            100 * curve.abSteadyCpu(), curve.failed());
                    curves.add(curve);
                }
            }
        }
        publish(context, curves, date);
        // The script deletes the work directory after a run without failures.
        return curves.stream().anyMatch(c -> c.failed() > 0) ? 1 : 0;
    }

    private int merge() throws IOException {
        Map<String, String> context = new LinkedHashMap<>();
        List<Curve> curves = new ArrayList<>();
        Map<String, Integer> rounds = new LinkedHashMap<>();
        for (Path file : options.merge()) {
            for (String line : Files.readAllLines(file)) {
                if (line.startsWith("# ")) {
                    int colon = line.indexOf(": ");
                    context.putIfAbsent(line.substring(2, colon), line.substring(colon + 2));
                } else if (!line.isBlank()) {
                    Curve c = Curve.parse(line);
                    // Rounds are numbered again across the files, in their order.
                    int round = rounds.merge(c.variant() + "/" + c.workload(), 1, Integer::sum);
                    curves.add(new Curve(c.variant(), c.workload(), round, c.listenMillis(), c.perSecond(),
                            c.serverCpu(), c.abCpu(), c.otherCpu(), c.failed()));
                }
            }
        }
        context.put("rounds", rounds.values().stream().mapToInt(Integer::intValue).max().orElse(0)
                + " (over the merged runs)");
        context.put("merged from", String.join(", ", options.merge().stream().map(Path::toString).toList()));
        publish(context, curves, Instant.now().truncatedTo(ChronoUnit.SECONDS));
        return 0;
    }

    private void publish(Map<String, String> context, List<Curve> curves, Instant date) throws IOException {
        if (options.csv() != null) {
            List<String> lines = new ArrayList<>();
            context.forEach((k, v) -> lines.add("# " + k + ": " + v));
            curves.forEach(c -> lines.add(c.csv()));
            Files.createDirectories(options.csv().toAbsolutePath().getParent());
            Files.write(options.csv(), lines);
            progress.println("curves written to " + options.csv());
        }
        ReportOutput.publish(WarmupReport.render(context, notes, curves), options.output(), progress);
        ReportOutput.plot(options.plot(), file -> WarmupPlot.write(curves, date, file), progress);
    }

    private Map<String, String> context(List<Variant> variants, Instant date) throws IOException,
            InterruptedException {
        Map<String, String> context = new LinkedHashMap<>();
        context.put("date", date.toString());
        context.put("commit", options.commit());
        context.put("CPUs", Runtime.getRuntime().availableProcessors() + " for this harness; server on CPU "
                + options.serverCpus() + ", ab on CPU " + options.clientCpus());
        for (String java : new LinkedHashSet<>(variants.stream().map(Variant::java).toList())) {
            context.put("java " + java, firstLines(List.of(java, "-version"), 2));
        }
        context.put("ab", firstLines(List.of("ab", "-V"), 1));
        context.put("JVM options", CommandLine.UNIT_JVM_OPTIONS + " (the systemd unit's) + the variant's");
        for (Variant v : variants) {
            context.put("variant " + v.label(), v.title() + ": " + (v.options().isEmpty() ? "nothing more"
                    : String.join(" ", v.options()).replace(options.work().toString(), "WORK"))
                    + (v.trained() ? "; training run: " + String.join(" ", v.training())
                            .replace(options.work().toString(), "WORK") : ""));
        }
        for (Workload w : options.workloads()) {
            context.put("workload " + w.label(), w.title() + ": ab " + String.join(" ", w.abArguments("CLIENT.pem",
                    options.seconds(), "RECORDS", "https://127.0.0.1:PORT" + layout.smallPath()))
                    + (options.nodelay() != null ? " (LD_PRELOAD=nodelay.so: TCP_NODELAY on ab's sockets)" : ""));
        }
        context.put("seconds", Integer.toString(options.seconds()));
        context.put("training seconds", Integer.toString(options.trainingSeconds()));
        context.put("rounds", Integer.toString(options.rounds()));
        return context;
    }

    // ---- training

    private void train(Variant variant) throws IOException, InterruptedException {
        Files.deleteIfExists(variant.archive());
        int port = Ports.free();
        Path config = layout.configFor(port);
        List<String> jvm = new ArrayList<>(unitOptions);
        jvm.addAll(variant.training());
        Path log = options.work().resolve("training-" + variant.label() + ".log");
        progress.println("training " + variant.label() + " for " + options.trainingSeconds() + " s");
        Process server = startServer(variant.java(), jvm, config, log);
        try {
            awaitListening(port, server, System.nanoTime(), log);
            int half = Math.max(1, options.trainingSeconds() / 2);
            for (Workload workload : List.of(Workload.KEEP_ALIVE, Workload.NEW_CONNECTION)) {
                Path records = options.work().resolve("training.records");
                Process ab = startAb(workload, half, records, port, options.work().resolve("training-ab.out"));
                ab.waitFor(half + 60L, TimeUnit.SECONDS);
                ab.destroyForcibly();
                Files.deleteIfExists(records);
            }
        } finally {
            long stopping = System.nanoTime();
            // SIGTERM, as systemd stops the service: the JVM writes the archive on its way out.
            server.destroy();
            if (!server.waitFor(TRAINING_STOP_LIMIT.toSeconds(), TimeUnit.SECONDS)) {
                server.destroyForcibly();
                throw new IOException("training run of " + variant.label() + " did not stop; see " + log);
            }
            double stopSeconds = (System.nanoTime() - stopping) / 1e9;
            notes.add(String.format(Locale.ROOT, "Training of %s: stopped by SIGTERM, exit status %d after %.1f s "
                            + "(writing the archive), archive %s", variant.label(), server.exitValue(), stopSeconds,
                    Files.exists(variant.archive()) ? String.format(Locale.ROOT, "%.1f MB",
                            Files.size(variant.archive()) / 1e6) : "MISSING"));
        }
        if (!Files.exists(variant.archive())) {
            throw new IOException("training of " + variant.label() + " wrote no " + variant.archive() + "; see " + log);
        }
        // The measured starts use -Xshare:auto / AOTMode=auto, which start without an archive they cannot use: check
        // that this one can be used, with the options that refuse to start otherwise.
        List<String> check = new ArrayList<>(CommandLine.taskset(options.serverCpus()));
        check.add(variant.java());
        check.addAll(unitOptions);
        check.addAll(variant.strict());
        check.addAll(List.of("-jar", options.pintleJar().toString(), "check-config", "--config", config.toString()));
        Path checkLog = options.work().resolve("check-" + variant.label() + ".log");
        Process process = new ProcessBuilder(check).redirectErrorStream(true).redirectOutput(checkLog.toFile())
                .start();
        if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
            process.destroyForcibly();
            throw new IOException("the archive of " + variant.label() + " cannot be used (" + String.join(" ",
                    variant.strict()) + "): " + Files.readString(checkLog));
        }
        notes.add("The archive of " + variant.label() + " was checked usable: check-config started with "
                + String.join(" ", variant.strict()).replace(options.work().toString(), "WORK") + ".");
    }

    // ---- one measured start

    private Curve measure(Variant variant, Workload workload, int round) throws IOException, InterruptedException {
        int port = Ports.free();
        Path config = layout.configFor(port);
        String name = variant.label() + "-" + workload.label() + "-r" + round;
        Path log = options.work().resolve(name + ".log");
        Path records = options.work().resolve(name + ".records");
        Path abOut = options.work().resolve(name + ".ab");
        int seconds = options.seconds();
        // ab's records carry the wall-clock second each request started in: spawning on a whole second makes
        // second k after the spawn the epoch second t0 + k - 1.
        Thread.sleep(1000 - System.currentTimeMillis() % 1000);
        long spawnMillis = System.currentTimeMillis();
        long spawnNanos = System.nanoTime();
        Process server = startServer(variant.java(), variant.jvmOptions(unitOptions), config, log);
        Process ab = null;
        double[] serverCpu = new double[seconds];
        double[] abCpu = new double[seconds];
        double[] otherCpu = new double[seconds];
        long listenMillis;
        try {
            listenMillis = awaitListening(port, server, spawnNanos, log);
            int abSeconds = (int) Math.ceil(seconds - listenMillis / 1e3);
            ab = startAb(workload, abSeconds, records, port, abOut);
            double lastServer = 0;
            double lastAb = 0;
            double lastBusy = cpuBusySeconds(options.serverCpus());
            for (int k = 1; k <= seconds; k++) {
                long wait = spawnNanos + k * 1_000_000_000L - System.nanoTime();
                if (wait > 0) {
                    TimeUnit.NANOSECONDS.sleep(wait);
                }
                // A process that is gone reads 0: keep its last total.
                double s = Math.max(cpuSeconds(server.pid()), lastServer);
                double a = Math.max(cpuSeconds(ab.pid()), lastAb);
                double busy = cpuBusySeconds(options.serverCpus());
                serverCpu[k - 1] = s - lastServer;
                abCpu[k - 1] = a - lastAb;
                otherCpu[k - 1] = Math.max(0, busy - lastBusy - serverCpu[k - 1]);
                lastBusy = busy;
                lastServer = s;
                lastAb = a;
            }
            if (!ab.waitFor(120, TimeUnit.SECONDS)) {
                throw new IOException("ab did not end; see " + abOut);
            }
        } finally {
            if (ab != null) {
                ab.destroyForcibly();
            }
            Ports.stop(server, STOP_LIMIT);
        }
        long[] perSecond = new long[seconds];
        long first = spawnMillis / 1000;
        try (Stream<String> lines = Files.lines(records)) {
            lines.skip(1).forEach(line -> {
                String[] fields = line.split("\t");
                long k = Long.parseLong(fields[1].strip()) - first;
                if (k >= 0 && k < seconds) {
                    perSecond[(int) k]++;
                }
            });
        }
        Files.delete(records);
        long failed = abCount(abOut, "Failed requests:") + abCount(abOut, "Non-2xx responses:");
        if (spawnMillis % 1000 > 100) {
            notes.add(name + ": spawned " + spawnMillis % 1000 + " ms after the whole second (its seconds are off"
                    + " by that much)");
        }
        return new Curve(variant.label(), workload.label(), round, listenMillis, perSecond, serverCpu, abCpu, otherCpu,
                failed);
    }

    private Process startServer(String java, List<String> jvm, Path config, Path log) throws IOException {
        List<String> command = new ArrayList<>(CommandLine.taskset(options.serverCpus()));
        command.add(java);
        command.addAll(jvm);
        command.addAll(List.of("-jar", options.pintleJar().toString(), "serve", "--config", config.toString()));
        return new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    }

    private Process startAb(Workload workload, int seconds, Path records, int port, Path out) throws IOException {
        List<String> command = new ArrayList<>(CommandLine.taskset(options.clientCpus()));
        command.add("ab");
        command.addAll(workload.abArguments(layout.clientPem().toString(), seconds, records.toString(),
                "https://127.0.0.1:" + port + layout.smallPath()));
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(out.toFile());
        if (options.nodelay() != null) {
            builder.environment().put("LD_PRELOAD", options.nodelay().toAbsolutePath().toString());
        }
        return builder.start();
    }

    /** @return milliseconds from the spawn until the port accepted a connection */
    private static long awaitListening(int port, Process server, long spawnNanos, Path log) throws IOException,
            InterruptedException {
        long deadline = spawnNanos + START_LIMIT.toNanos();
        while (System.nanoTime() < deadline) {
            if (!server.isAlive()) {
                throw new IOException("the server exited with " + server.exitValue() + ": " + Files.readString(log));
            }
            try (Socket socket = new Socket()) {
                socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1000);
                return (System.nanoTime() - spawnNanos) / 1_000_000;
            } catch (IOException notYet) {
                Thread.sleep(LISTEN_POLL_MILLIS);
            }
        }
        server.destroyForcibly();
        throw new IOException("nothing listening on " + port + " after " + START_LIMIT + ": " + Files.readString(log));
    }

    /** @return the process's user + system CPU time, in seconds; 0 once it is gone */
    private static double cpuSeconds(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
            // Fields after the command name (in parentheses, which may hold spaces): state is field 3, utime 14.
            String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return (Long.parseLong(fields[11]) + Long.parseLong(fields[12])) / TICKS_PER_SECOND;
        } catch (IOException | RuntimeException gone) {
            return 0;
        }
    }

    /**
     * @param cpus the server's CPU list
     * @return that CPU's busy time so far (user, nice, system, irq, softirq, steal of its line in /proc/stat), in
     *     seconds; 0 when the list is not one CPU or cannot be read
     */
    private static double cpuBusySeconds(String cpus) {
        if (cpus == null || !cpus.matches("\\d+")) {
            return 0;
        }
        try {
            for (String line : Files.readAllLines(Path.of("/proc/stat"))) {
                if (line.startsWith("cpu" + cpus + " ")) {
                    String[] f = line.split("\\s+");
                    long busy = 0;
                    for (int i : new int[] {1, 2, 3, 6, 7, 8}) {
                        busy += Long.parseLong(f[i]);
                    }
                    return busy / TICKS_PER_SECOND;
                }
            }
        } catch (IOException | RuntimeException e) {
            return 0;
        }
        return 0;
    }

    private static long abCount(Path abOut, String label) throws IOException {
        for (String line : Files.readAllLines(abOut, StandardCharsets.ISO_8859_1)) {
            if (line.startsWith(label)) {
                return Long.parseLong(line.substring(label.length()).strip().split("\\s+")[0]);
            }
        }
        if (label.startsWith("Non-2xx")) {
            return 0;
        }
        throw new IOException("ab did not finish its run: " + Files.readString(abOut, StandardCharsets.ISO_8859_1));
    }

    private static String firstLines(List<String> command, int count) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        p.waitFor();
        return String.join("; ", out.lines().limit(count).toList());
    }
}
