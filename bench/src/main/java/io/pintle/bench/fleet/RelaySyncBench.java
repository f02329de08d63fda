package io.pintle.bench.fleet;

import io.pintle.bench.harness.CommandLine;
import io.pintle.bench.harness.HarnessMain;
import io.pintle.bench.sync.Ports;
import io.pintle.bench.sync.ProcessCpu;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.channels.Channels;
import java.nio.channels.SeekableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * {@code bench/relaysync}: how fast a policy generation goes from the root through its relays, A against B, and at
 * what CPU. bench/fleet's root and relays (each a Pintle JVM under socket activation, {@link FleetServer}) over
 * bench/fleet's layout ({@link FleetLayout}) with every node behind a relay and no agents. Per round and variant:
 * the relays are started again with the variant's JVM options (their share kept, so they start in sync), the root
 * gets a new generation of every node's policies, written as Rudder's is, and each relay's served archives are
 * read every {@link #POLL_MILLIS} until all are the new generation.
 */
public final class RelaySyncBench {
    private static final PrintStream PROGRESS = System.err;
    /** How often the relays' served archives are read while a generation goes through. */
    static final long POLL_MILLIS = 250;
    /** The relays' first sync (every node's archive, from empty shares) may take this long. */
    private static final Duration FIRST_SYNC_LIMIT = Duration.ofMinutes(20);
    /** After a restart, the relays may take this long to be seen in sync and quiet. */
    private static final Duration SETTLE_LIMIT = Duration.ofMinutes(5);
    /**
     * Quiet: every server JVM used less than this share of one core over {@link #QUIET_WINDOW_MILLIS} (a relay
     * started again compares its whole share with the root's first; idle, they use about nothing).
     */
    static final double QUIET_CORES = 0.05;
    private static final long QUIET_WINDOW_MILLIS = 2_000;

    /**
     * Before each measured generation, every server's CPU over this long at rest (relays in sync, their share waits
     * parked on the root): what following a share costs when nothing changes.
     */
    static final long REST_MILLIS = 20_000;
    /** How often the watch says how far it is. */
    private static final long PROGRESS_MILLIS = 30_000;

    private final RelaySyncOptions options;
    private final FleetOptions fleet;
    private final FleetLayout layout;
    private final List<String> notes = new ArrayList<>();
    private FleetServer root;
    private final List<FleetServer> relays = new ArrayList<>();
    private int port;

    private RelaySyncBench(RelaySyncOptions options) {
        this.options = options;
        this.fleet = options.fleet();
        this.layout = new FleetLayout(fleet, options.nodeTree());
    }

    public static void main(String[] args) {
        HarnessMain.quietClientLogging();
        System.exit(HarnessMain.run(args, RelaySyncOptions::parse, "relay sync benchmark",
                o -> new RelaySyncBench(o).run()));
    }

    /** What one watch of the relays saw. */
    private record Watch(long[] syncedMillis, List<double[]> nodeSeconds, double scanMillis) {
        boolean all() {
            return Arrays.stream(syncedMillis).allMatch(t -> t > 0);
        }
    }

    private int run() throws Exception {
        Instant began = Instant.now();
        RelaySyncReport.Machine machine = RelaySyncReport.Machine.here();
        Files.createDirectories(options.work());
        port = Ports.free();
        long layoutStart = System.nanoTime();
        layout.write(port, PROGRESS);
        double layoutSeconds = (System.nanoTime() - layoutStart) / 1e9;
        PROGRESS.printf("layout written in %.0f s%n", layoutSeconds);
        // From here this JVM writes generations and watches the relays: on its own CPUs, not the servers'.
        CommandLine.pinThisJvm(options.harnessCpus());
        Runtime.getRuntime().addShutdownHook(new Thread(this::stopServers, "relaysync-stop"));
        try {
            PROGRESS.println("starting the root");
            root = FleetBench.startRoot(layout, port, fleet);
            long relaysStart = System.currentTimeMillis();
            startRelays(options.a());
            PROGRESS.println("relays started; waiting for their first sync");
            Watch first = watch(1, relaysStart, FIRST_SYNC_LIMIT.toMillis());
            if (!first.all()) {
                throw new IOException("the relays' first sync was not done after " + FIRST_SYNC_LIMIT);
            }
            double[] firstSync = Arrays.stream(first.syncedMillis()).mapToDouble(t -> (t - relaysStart) / 1000.0)
                    .toArray();
            PROGRESS.printf("relays' first sync done in %.0f s%n", Arrays.stream(firstSync).max().orElse(0));

            List<RelaySyncReport.Measured> measured = new ArrayList<>();
            int generation = 1;
            for (int round = 1; round <= options.rounds(); round++) {
                for (RelaySyncOptions.Variant variant : options.order(round)) {
                    PROGRESS.printf("round %d, %s: starting the relays again%n", round, variant.title());
                    double[] ready = restartRelays(variant);
                    double settle = settle(generation);
                    if (Double.isNaN(settle)) {
                        notes.add(String.format("Round %d, %s: the relays were not seen in sync and quiet within "
                                + "%d s of their restart; measured anyway.", round, variant.title(),
                                SETTLE_LIMIT.toSeconds()));
                    }
                    for (int warmup = 1; warmup <= options.warmupGenerations(); warmup++) {
                        generation++;
                        PROGRESS.printf("round %d, %s: warm-up generation %d%n", round, variant.title(), generation);
                        layout.writeGeneration(generation);
                        if (Double.isNaN(settle(generation))) {
                            notes.add(String.format("Round %d, %s: warm-up generation %d not seen everywhere, or "
                                    + "the servers not quiet, within %d s; measured anyway.", round,
                                    variant.title(), generation, SETTLE_LIMIT.toSeconds()));
                        }
                    }
                    generation++;
                    PROGRESS.printf("round %d, %s: in sync and quiet after %s s; writing generation %d%n", round,
                            variant.title(), FleetReport.fmt(settle), generation);
                    RelaySyncReport.Measured m = measure(round, variant, generation, ready, settle);
                    measured.add(m);
                    PROGRESS.printf("round %d, %s: written in %s s, last relay synced %s s after written%n", round,
                            variant.title(), FleetReport.fmt(m.generation().writeSeconds()),
                            m.generation().synced() ? FleetReport.fmt(m.generation().maxSyncedAfterWritten())
                                    : "not within " + options.syncLimitSeconds());
                }
            }
            RelaySyncReport report = new RelaySyncReport(options, machine, began, layoutSeconds,
                    FleetBench.rootLimits(layout), firstSync, measured, notes);
            report.publish(PROGRESS);
            return measured.stream().allMatch(m -> m.generation().synced()) ? 0 : 1;
        } finally {
            stopServers();
        }
    }

    /** Stops what this run started (also from the shutdown hook, when the run is stopped by a signal). */
    private synchronized void stopServers() {
        for (FleetServer relay : relays) {
            relay.close();
        }
        relays.clear();
        if (root != null) {
            root.close();
            root = null;
        }
    }

    /** @return each relay's seconds from its start until ready */
    private double[] startRelays(RelaySyncOptions.Variant variant) throws IOException, InterruptedException {
        FleetOptions withVariant = options.relayCpus() == null ? fleet.withVariant(variant)
                : fleet.withVariant(variant).withServerCpus(options.relayCpus());
        double[] ready = new double[options.relays()];
        for (int relay = 1; relay <= options.relays(); relay++) {
            long start = System.nanoTime();
            FleetServer server = FleetBench.startRelay(layout, relay, port, withVariant);
            synchronized (this) {
                relays.add(server);
            }
            ready[relay - 1] = (System.nanoTime() - start) / 1e9;
        }
        return ready;
    }

    /**
     * Stops every relay's JVM and starts them again with {@code variant}'s options, in their own directories; with
     * {@code --root-options variant}, the root's too, before them.
     */
    private double[] restartRelays(RelaySyncOptions.Variant variant) throws IOException, InterruptedException {
        synchronized (this) {
            for (FleetServer relay : relays) {
                relay.close();
            }
            relays.clear();
            if (options.rootFollowsVariant()) {
                root.close();
                root = null;
            }
        }
        if (options.rootFollowsVariant()) {
            FleetServer started = FleetBench.startRoot(layout, port, fleet.withVariant(variant));
            synchronized (this) {
                root = started;
            }
        }
        return startRelays(variant);
    }

    /**
     * Waits until every relay serves {@code generation} for each of its nodes, then until every server JVM is quiet
     * (see {@link #QUIET_CORES}).
     *
     * @return seconds from the call until both held, NaN when they did not within {@link #SETTLE_LIMIT}
     */
    private double settle(int generation) throws IOException, InterruptedException {
        long start = System.currentTimeMillis();
        long deadline = start + SETTLE_LIMIT.toMillis();
        if (!watch(generation, start, SETTLE_LIMIT.toMillis()).all()) {
            return Double.NaN;
        }
        List<ProcessHandle> jvms = jvms();
        List<CpuSample> samples = new ArrayList<>();
        while (System.currentTimeMillis() < deadline) {
            CpuSample now = new CpuSample(System.currentTimeMillis(),
                    jvms.stream().mapToDouble(RelaySyncBench::cpuMillis).toArray());
            samples.add(now);
            // The window starts at the newest sample at least a window old.
            while (samples.size() > 1 && now.millis() - samples.get(1).millis() >= QUIET_WINDOW_MILLIS) {
                samples.remove(0);
            }
            CpuSample then = samples.get(0);
            long span = now.millis() - then.millis();
            if (span >= QUIET_WINDOW_MILLIS) {
                boolean quiet = true;
                for (int i = 0; i < jvms.size(); i++) {
                    quiet &= (now.cpuMillis()[i] - then.cpuMillis()[i]) / span < QUIET_CORES;
                }
                if (quiet) {
                    return (now.millis() - start) / 1000.0;
                }
            }
            Thread.sleep(500);
        }
        return Double.NaN;
    }

    /** Every server JVM's CPU milliseconds so far, at a moment. */
    private record CpuSample(long millis, double[] cpuMillis) {}

    /** @return the root's JVM then each relay's */
    private List<ProcessHandle> jvms() throws IOException {
        List<ProcessHandle> jvms = new ArrayList<>();
        List<FleetServer> servers = new ArrayList<>();
        servers.add(root);
        synchronized (this) {
            servers.addAll(relays);
        }
        for (FleetServer server : servers) {
            jvms.add(server.jvm().orElseThrow(() -> new IOException(server.name + " has no JVM running")));
        }
        return jvms;
    }

    /** @return the process's CPU time so far in milliseconds, NaN once it has ended */
    private static double cpuMillis(ProcessHandle process) {
        double millis = ProcessCpu.millis(List.of(process));
        return process.isAlive() ? millis : Double.NaN;
    }

    /**
     * Writes generation {@code generation} on the root and watches every relay until it serves it for each of its
     * nodes, or {@code --sync-limit} passes.
     */
    private RelaySyncReport.Measured measure(int round, RelaySyncOptions.Variant variant, int generation,
            double[] ready, double settle) throws IOException, InterruptedException {
        List<ProcessHandle> jvms = jvms();
        double[] restBegin = jvms.stream().mapToDouble(RelaySyncBench::cpuMillis).toArray();
        long restStart = System.nanoTime();
        Thread.sleep(REST_MILLIS);
        double restSpan = (System.nanoTime() - restStart) / 1e6;
        double[] restCores = new double[jvms.size()];
        for (int jvm = 0; jvm < jvms.size(); jvm++) {
            restCores[jvm] = (cpuMillis(jvms.get(jvm)) - restBegin[jvm]) / restSpan;
        }
        long[] logSizes = new long[options.relays()];
        for (int relay = 0; relay < logSizes.length; relay++) {
            logSizes[relay] = Files.size(relays.get(relay).log());
        }
        ProcessHandle self = ProcessHandle.current();
        List<Map<Long, ProcessCpu.ThreadCpu>> threadsBegin = jvms.stream().map(j -> ProcessCpu.threads(j.pid()))
                .toList();
        double[] cpuBegin = jvms.stream().mapToDouble(RelaySyncBench::cpuMillis).toArray();
        double[] systemBegin = jvms.stream().mapToDouble(j -> ProcessCpu.systemMillis(List.of(j))).toArray();
        double harnessBegin = cpuMillis(self);
        double machineBegin = ProcessCpu.machineBusyMillis();
        long begin = System.currentTimeMillis();
        layout.writeGeneration(generation);
        long written = System.currentTimeMillis();
        double harnessWritten = cpuMillis(self);
        Watch watch = watch(generation, written, options.syncLimitSeconds() * 1000L);
        double[] cpuEnd = jvms.stream().mapToDouble(RelaySyncBench::cpuMillis).toArray();
        double[] systemEnd = jvms.stream().mapToDouble(j -> ProcessCpu.systemMillis(List.of(j))).toArray();
        List<Map<String, Double>> threads = new ArrayList<>();
        for (int jvm = 0; jvm < jvms.size(); jvm++) {
            threads.add(RelaySyncGeneration.grouped(ProcessCpu.threadsSince(threadsBegin.get(jvm),
                    ProcessCpu.threads(jvms.get(jvm).pid())), (cpuEnd[jvm] - cpuBegin[jvm]) / 1000,
                    (systemEnd[jvm] - systemBegin[jvm]) / 1000));
        }
        double harnessEnd = cpuMillis(self);
        double machineEnd = ProcessCpu.machineBusyMillis();
        long end = System.currentTimeMillis();

        List<RelaySyncGeneration.Relay> relayFigures = new ArrayList<>();
        double servers = 0;
        for (int relay = 1; relay <= options.relays(); relay++) {
            double cpu = cpuEnd[relay] - cpuBegin[relay];
            servers += cpu;
            relayFigures.add(new RelaySyncGeneration.Relay("relay-" + relay, nodesOf(relay),
                    watch.syncedMillis()[relay - 1], cpu / 1000, watch.nodeSeconds().get(relay - 1),
                    threads.get(relay)));
        }
        double rootCpu = cpuEnd[0] - cpuBegin[0];
        servers += rootCpu;
        double harness = harnessEnd - harnessBegin;
        double others = (machineEnd - machineBegin - servers - harness) / (end - begin);
        RelaySyncGeneration figures = new RelaySyncGeneration(round, variant.key(), generation, begin, written, end,
                rootCpu / 1000, threads.get(0), relayFigures, (harnessWritten - harnessBegin) / Math.max(1, written - begin),
                (harnessEnd - harnessWritten) / Math.max(1, end - written), Math.max(0, others));
        List<String> warnings = new ArrayList<>();
        for (int relay = 0; relay < logSizes.length; relay++) {
            for (String warning : warningsSince(relays.get(relay).log(), logSizes[relay])) {
                warnings.add("relay-" + (relay + 1) + ": " + warning);
            }
        }
        return new RelaySyncReport.Measured(figures, ready, settle, watch.scanMillis(), restCores, warnings);
    }

    /**
     * @return the WARN and ERROR lines a server logged after {@code offset} (its log's size before), each without
     *     its time, level and thread
     */
    private static List<String> warningsSince(Path log, long offset) throws IOException {
        List<String> found = new ArrayList<>();
        try (SeekableByteChannel channel = Files.newByteChannel(log)) {
            channel.position(offset);
            BufferedReader reader = new BufferedReader(Channels.newReader(channel, StandardCharsets.UTF_8));
            for (String line = reader.readLine(); line != null; line = reader.readLine()) {
                if (line.contains(" WARN ") || line.contains(" ERROR ")) {
                    int message = line.indexOf(" - ");
                    found.add(message < 0 ? line : line.substring(message + 3));
                }
            }
        }
        return found;
    }

    private int nodesOf(int relay) {
        int count = 0;
        for (int node = 0; node < layout.nodes(); node++) {
            if (layout.serverOf(node) == relay) {
                count++;
            }
        }
        return count;
    }

    /**
     * Reads every relay node's served archive every {@link #POLL_MILLIS} (the ones not yet seen with the generation)
     * until each relay serves {@code generation} for all its nodes, or {@code limitMillis} after {@code from}.
     *
     * @param from what the nodes' times count from
     * @return per relay when its last node was seen with it (0: not within the limit), and when each node was
     */
    private Watch watch(int generation, long from, long limitMillis) throws InterruptedException {
        int count = options.relays();
        List<List<Integer>> pending = new ArrayList<>();
        List<List<Double>> seen = new ArrayList<>();
        for (int relay = 1; relay <= count; relay++) {
            pending.add(new ArrayList<>());
            seen.add(new ArrayList<>());
        }
        for (int node = 0; node < layout.nodes(); node++) {
            pending.get(layout.serverOf(node) - 1).add(node);
        }
        int total = layout.nodes();
        long[] synced = new long[count];
        long deadline = from + limitMillis;
        long nextProgress = System.currentTimeMillis() + PROGRESS_MILLIS;
        long scans = 0;
        long scanNanos = 0;
        while (true) {
            long scanStart = System.nanoTime();
            boolean all = true;
            int left = 0;
            for (int relay = 0; relay < count; relay++) {
                List<Integer> nodes = pending.get(relay);
                for (Iterator<Integer> it = nodes.iterator(); it.hasNext();) {
                    int node = it.next();
                    if (layout.serves(node, generation)) {
                        long now = System.currentTimeMillis();
                        it.remove();
                        seen.get(relay).add((now - from) / 1000.0);
                        if (nodes.isEmpty()) {
                            synced[relay] = now;
                        }
                    }
                }
                all &= nodes.isEmpty();
                left += nodes.size();
            }
            long scanTook = System.nanoTime() - scanStart;
            scans++;
            scanNanos += scanTook;
            long now = System.currentTimeMillis();
            if (all || now >= deadline) {
                break;
            }
            if (now >= nextProgress) {
                PROGRESS.printf("  generation %d: %,d of %,d relay nodes served, %.0f s%n", generation, total - left,
                        total, (now - from) / 1000.0);
                nextProgress = now + PROGRESS_MILLIS;
            }
            Thread.sleep(Math.max(0, POLL_MILLIS - scanTook / 1_000_000));
        }
        List<double[]> nodeSeconds = new ArrayList<>();
        for (List<Double> times : seen) {
            nodeSeconds.add(times.stream().mapToDouble(Double::doubleValue).sorted().toArray());
        }
        return new Watch(synced, nodeSeconds, scanNanos / 1e6 / scans);
    }
}
