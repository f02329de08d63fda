package io.pintle.bench.fleet;

import io.pintle.bench.harness.ReportOutput;
import io.pintle.server.config.ServerConfig;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToDoubleFunction;
import java.util.regex.Pattern;

/** {@code bench/relaysync}'s Markdown report and its plot (the same name, .png). */
final class RelaySyncReport {
    /** The harness's CPU while it watched, above which its scans may have been late: a note says so. */
    private static final double BUSY_HARNESS = 0.8;
    private static final Pattern RETRY_DELAY = Pattern.compile("next attempt in \\d+ ms");

    /**
     * One generation's figures and what came before it.
     *
     * @param generation its figures
     * @param readySeconds each relay's seconds from its start (with the variant's options) until {@code /ready}
     * @param settleSeconds from the relays' readiness until they were seen in sync and quiet, NaN if not
     * @param scanMillis the watch's mean time to read the archives it still waited for, per scan
     * @param restCores each server's CPU at rest before the writing ({@link RelaySyncBench#REST_MILLIS}), in cores:
     *     the root's, then each relay's
     * @param relayWarnings the WARN and ERROR lines the relays logged from the writing's beginning to the end of the
     *     watch, each prefixed with its relay
     */
    record Measured(RelaySyncGeneration generation, double[] readySeconds, double settleSeconds, double scanMillis,
            double[] restCores, List<String> relayWarnings) {
        Measured {
            relayWarnings = List.copyOf(relayWarnings);
        }
    }

    /**
     * Where the run ran.
     *
     * @param cores the CPUs this JVM could use before it pinned itself (nproc)
     * @param cpu the CPU's model name
     * @param system the kernel
     * @param java the JVM, as {@code java -version}'s last line names it (the servers run the same)
     */
    record Machine(int cores, String cpu, String system, String java) {
        static Machine here() {
            String cpu = "unknown CPU";
            try {
                cpu = Files.readAllLines(Path.of("/proc/cpuinfo")).stream().filter(l -> l.startsWith("model name"))
                        .map(l -> l.substring(l.indexOf(':') + 1).strip()).findFirst().orElse(cpu);
            } catch (IOException e) {
                // Not Linux: the model stays unknown.
            }
            return new Machine(Runtime.getRuntime().availableProcessors(), cpu,
                    System.getProperty("os.name") + " " + System.getProperty("os.version"),
                    System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"));
        }
    }

    private final RelaySyncOptions options;
    private final Machine machine;
    private final Instant began;
    private final double layoutSeconds;
    private final String rootLimits;
    private final double[] firstSync;
    private final List<Measured> measured;
    private final List<RelaySyncGeneration> generations;
    private final List<String> notes;
    private final StringBuilder out = new StringBuilder();

    /**
     * @param rootLimits the root's {@code [limits]} table, empty when it ran with the defaults
     * @param firstSync per relay, seconds from the first relay's start until it served every one of its nodes
     * @param notes what the run noted on the way
     */
    RelaySyncReport(RelaySyncOptions options, Machine machine, Instant began, double layoutSeconds,
            String rootLimits, double[] firstSync, List<Measured> measured, List<String> notes) {
        this.options = options;
        this.machine = machine;
        this.began = began;
        this.layoutSeconds = layoutSeconds;
        this.rootLimits = rootLimits;
        this.firstSync = firstSync.clone();
        this.measured = List.copyOf(measured);
        this.generations = measured.stream().map(Measured::generation).toList();
        this.notes = List.copyOf(notes);
    }

    /** Writes the report (printed too) and the plot. */
    void publish(PrintStream progress) throws IOException {
        Path output = options.output();
        Path png = output.resolveSibling(output.getFileName().toString().replaceFirst("\\.md$", "") + ".png");
        RelaySyncOptions.Variant a = options.a();
        RelaySyncOptions.Variant b = options.b();
        int relayNodes = generations.isEmpty() ? options.nodes() : generations.get(0).relayNodes();
        line("# Relay sync: %,d nodes behind %d relays, %s against %s", relayNodes, options.relays(), a.title(),
                b.title());
        line("");
        line("%s, commit %s. Command: `%s` (work directory %s).", began, options.commit(), options.command(),
                options.work());
        line("");
        setup(relayNodes);
        perGeneration();
        summary();
        notes();
        line("![propagation](%s)", png.getFileName());
        line("");
        ReportOutput.publish(out.toString(), output, progress);
        ReportOutput.plot(png, file -> RelaySyncPlot.write(file, curves(), String.format(Locale.ROOT,
                "Relay sync: %% of the relays' %,d nodes served with the new generation", relayNodes),
                a.title() + ": solid, blues; " + b.title() + ": dashed, oranges; a shade per round"), progress);
    }

    /** @return a jar's size and modification time, to tell two builds apart in the report */
    private static String jarStamp(Path jar) {
        try {
            return String.format(Locale.ROOT, "%,d bytes, modified %s", Files.size(jar),
                    Files.getLastModifiedTime(jar));
        } catch (IOException e) {
            return "unreadable: " + e.getMessage();
        }
    }

    private void setup(int relayNodes) {
        line("## Setup");
        line("");
        line("| | |");
        line("|---|---|");
        line("| machine | %d cores (%s), %s, %s |", machine.cores(), machine.cpu(), machine.system(), machine.java());
        if (options.relayCpus() == null) {
            line("| CPUs | root and relays: %s; harness (the generation's writer, the relays' watcher): %s |",
                    cpus(options.serverCpus()), cpus(options.harnessCpus()));
        } else {
            line("| CPUs | root: %s; relays: %s; harness (the generation's writer, the relays' watcher): %s |",
                    cpus(options.serverCpus()), cpus(options.relayCpus()), cpus(options.harnessCpus()));
        }
        StringBuilder perRelay = new StringBuilder();
        if (!generations.isEmpty()) {
            for (RelaySyncGeneration.Relay relay : generations.get(0).relays()) {
                perRelay.append(perRelay.length() == 0 ? "" : ", ").append(relay.name()).append(": ")
                        .append(String.format(Locale.ROOT, "%,d", relay.nodes()));
            }
        }
        line("| nodes | %,d behind %d relays (%s), none on the root; node keys EC P-256 (no agent connects) |",
                relayNodes, options.relays(), perRelay);
        line("| server keys | %s |", options.serverKey().equals("rsa") ? "RSA-4096" : "EC P-256");
        line("| a generation | every node's `rules/` on the root (%s) written as Rudder's generation does: "
                + "`rules.new` filled, then renamed over `rules` |",
                options.nodeTree().describe(options.policyBytes()));
        if (!rootLimits.isEmpty()) {
            line("| root's limits | `%s` (a relay's share past the default's %,d entries, %d a node, is refused) |",
                    rootLimits.strip().replace("\n", " "), ServerConfig.Limits.DEFAULTS.maxManifestEntries(),
                    options.nodeTree().entriesPerNode());
        }
        line("| servers | `deploy/bin/pintle serve` under socket activation, as the package runs it (bench/fleet's) |");
        if (options.rootFollowsVariant()) {
            line("| root's JVM options | each variant's, the root restarted with the relays (`--root-options "
                    + "variant`) |");
        } else {
            line("| root's JVM options | `%s` (always A's) |", String.join(" ", options.a().jvmOptions()));
        }
        line("| %s: relays' JVM options | `%s` |", options.a().title(), String.join(" ", options.a().jvmOptions()));
        line("| %s: relays' JVM options | `%s` |", options.b().title(), String.join(" ", options.b().jvmOptions()));
        RelaySyncOptions.Variant a = options.a();
        RelaySyncOptions.Variant b = options.b();
        if (!a.pintleJar().equals(b.pintleJar())) {
            line("| %s: server jar | `%s` (%s)%s |", a.title(), a.pintleJar(), jarStamp(a.pintleJar()),
                    options.rootFollowsVariant() ? "" : ", also the root's");
            line("| %s: server jar | `%s` (%s) |", b.title(), b.pintleJar(), jarStamp(b.pintleJar()));
        }
        List<String> orders = new ArrayList<>();
        for (int round = 1; round <= options.rounds(); round++) {
            orders.add(options.order(round).stream().map(RelaySyncOptions.Variant::key)
                    .reduce((x, y) -> x + " " + y).orElse(""));
        }
        line("| rounds | %d: %s; before every generation the relays are stopped and started again with the "
                + "variant's options (their share kept), then waited for: every node served with the current "
                + "generation and every server JVM under %.0f %% of a core over 2 s; then %d warm-up generation(s), "
                + "each waited for the same way, not measured (a relay restarted is a cold JVM) |", options.rounds(),
                String.join(", ", orders), 100 * RelaySyncBench.QUIET_CORES, options.warmupGenerations());
        line("| watch | from the end of the writing, every %d ms, the first line of each relay node's served "
                + "rudder.tar.bz2 not yet seen with the generation; limit %d s |", RelaySyncBench.POLL_MILLIS,
                options.syncLimitSeconds());
        StringBuilder first = new StringBuilder();
        for (int relay = 0; relay < firstSync.length; relay++) {
            first.append(relay == 0 ? "" : ", ").append("relay-").append(relay + 1).append(' ')
                    .append(FleetReport.fmt(firstSync[relay])).append(" s");
        }
        line("| before the rounds | layout written in %s s; the relays' first sync (empty shares, A's options, "
                + "from the first relay's start): %s |", FleetReport.fmt(layoutSeconds), first);
        line("");
    }

    private static String cpus(String list) {
        return list == null ? "any" : list;
    }

    private void perGeneration() {
        line("## Per generation");
        line("");
        line("Write: the root's generation, from the first node's `rules.new` to the last rename. Synced: when the "
                + "watch saw the relay serve the new archive for its last node, from written (and the slowest "
                + "relay's). Nodes/s: a relay's nodes over its time from the writing's beginning. CPU: user + "
                + "system from `/proc/<pid>/stat` of each JVM, from the writing's beginning until the last relay "
                + "synced; per node, the root's over every relay node, the relays' over their own. Harness: this "
                + "JVM's CPU while it wrote, and while it watched, in % of one core. Restart: the relays' "
                + "seconds until `/ready` (slowest), then until in sync and quiet. At rest: each server's CPU over "
                + "the " + RelaySyncBench.REST_MILLIS / 1000 + " s before the writing, in % of one core (the relays "
                + "in sync, their share waits parked on the root): the root's, and the relays' mean. "
                + "Warnings: WARN and ERROR lines "
                + "in the relays' logs from the writing's beginning to the watch's end (in the notes below).");
        line("");
        StringBuilder header = new StringBuilder("| round | variant | write s | synced after written s (");
        String rule = "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|";
        for (int relay = 1; relay <= options.relays(); relay++) {
            header.append(relay == 1 ? "" : " / ").append("relay-").append(relay);
        }
        header.append(") | max | nodes/s per relay | root CPU s | relays CPU s | CPU ms/node root / relay "
                + "| harness CPU % write / watch | restart: ready / settled s | at rest, % of a core: root / relays "
                + "| relays' warnings |");
        line("%s", header);
        line("%s", rule);
        for (Measured m : measured) {
            RelaySyncGeneration g = m.generation();
            List<String> synced = new ArrayList<>();
            List<String> rates = new ArrayList<>();
            for (RelaySyncGeneration.Relay relay : g.relays()) {
                synced.add(relay.synced() ? FleetReport.fmt(g.syncedAfterWritten(relay))
                        : "**not in " + options.syncLimitSeconds() + " s** (" + relay.nodeSeconds().length + " of "
                                + relay.nodes() + ")");
                rates.add(FleetReport.fmt(g.nodesPerSecond(relay)));
            }
            line("| %d | %s | %s | %s | %s | %s | %s | %s | %s / %s | %s / %s | %s / %s | %s / %s | %d |", g.round(),
                    title(g.variant()), FleetReport.fmt(g.writeSeconds()), String.join(" / ", synced),
                    g.synced() ? "**" + FleetReport.fmt(g.maxSyncedAfterWritten()) + "**" : "-",
                    String.join(" / ", rates), FleetReport.fmt(g.rootCpuSeconds()),
                    FleetReport.fmt(g.relaysCpuSeconds()), FleetReport.fmt(g.rootCpuMillisPerNode()),
                    FleetReport.fmt(g.relayCpuMillisPerNode()), FleetReport.fmt(100 * g.harnessWriteCores()),
                    FleetReport.fmt(100 * g.harnessWatchCores()),
                    FleetReport.fmt(Arrays.stream(m.readySeconds()).max().orElse(Double.NaN)),
                    FleetReport.fmt(m.settleSeconds()), FleetReport.fmt(100 * rootAtRest(m)),
                    FleetReport.fmt(100 * relaysAtRest(m)), m.relayWarnings().size());
        }
        line("");
    }

    private String title(String key) {
        return key.equals("A") ? options.a().title() : options.b().title();
    }

    private void summary() {
        RelaySyncSummary a = RelaySyncSummary.of("A", generations);
        RelaySyncSummary b = RelaySyncSummary.of("B", generations);
        line("## Summary: medians of the rounds, side by side");
        line("");
        line("Each figure is the median over the variant's %d generations (nodes/s: over every relay of every one). "
                + "B/A below 1: B took less (or, for nodes/s, was slower).", a.generations());
        line("");
        line("| median | %s | %s | B/A |", options.a().title(), options.b().title());
        line("|---|---:|---:|---:|");
        row("root's writing, s", a, b, RelaySyncSummary::writeSeconds);
        row("**slowest relay synced, s after written**", a, b, RelaySyncSummary::maxSyncedAfterWritten);
        row("slowest relay synced, s after the writing began", a, b, RelaySyncSummary::maxSyncedAfterBegin);
        row("nodes/s per relay (from the writing's beginning)", a, b, RelaySyncSummary::nodesPerSecond);
        row("root CPU s", a, b, RelaySyncSummary::rootCpuSeconds);
        row("relays' CPU s (all)", a, b, RelaySyncSummary::relaysCpuSeconds);
        row("root CPU ms per relay node", a, b, RelaySyncSummary::rootCpuMillisPerNode);
        row("relay CPU ms per node of its own", a, b, RelaySyncSummary::relayCpuMillisPerNode);
        row("harness CPU % while watching", a, b, RelaySyncSummary::harnessWatchPercent);
        restRow("root CPU at rest, % of a core (relays parked on it)", RelaySyncReport::rootAtRest);
        restRow("relay CPU at rest, % of a core (mean of the relays)", RelaySyncReport::relaysAtRest);
        line("");
        line("### Where the CPU went: ms per node, by thread");
        line("");
        line("Each JVM's threads from `/proc/<pid>/task/*/stat` at the writing's beginning and at the last relay "
                + "synced, grouped by name: JIT compilers (C1, C2), GC and VM (G1's threads, the VM thread), relay "
                + "sync (`pintle-relay-sync-*`: manifests, archives, files on disk), HTTP client (the relay's JDK "
                + "HttpClient: its selector and workers, TLS), server threads (every other `pintle-*`: Jetty's "
                + "pool, the access log, the watch), other (the rest, and threads that ended meanwhile); the last row "
                + "is the part of all of them spent in the kernel (system time: file and socket calls). Medians "
                + "of the generations; the relays' over their own nodes, the root's over every relay node.");
        line("");
        line("| thread group | relays, %s | relays, %s | B/A | root, %s | root, %s | B/A |", options.a().title(),
                options.b().title(), options.a().title(), options.b().title());
        line("|---|---:|---:|---:|---:|---:|---:|");
        for (String group : RelaySyncGeneration.THREAD_ROWS) {
            double relayA = a.relayThreadMillisPerNode().get(group);
            double relayB = b.relayThreadMillisPerNode().get(group);
            double rootA = a.rootThreadMillisPerNode().get(group);
            double rootB = b.rootThreadMillisPerNode().get(group);
            line("| %s | %s | %s | %s | %s | %s | %s |", group, FleetReport.fmt(relayA), FleetReport.fmt(relayB),
                    FleetReport.fmt(RelaySyncSummary.ratio(relayB, relayA)), FleetReport.fmt(rootA),
                    FleetReport.fmt(rootB), FleetReport.fmt(RelaySyncSummary.ratio(rootB, rootA)));
        }
        line("");
    }

    private static double rootAtRest(Measured m) {
        return m.restCores()[0];
    }

    private static double relaysAtRest(Measured m) {
        return Arrays.stream(m.restCores()).skip(1).average().orElse(Double.NaN);
    }

    /** A summary row of an at-rest figure, in % of a core: medians of each variant's generations. */
    private void restRow(String name, ToDoubleFunction<Measured> cores) {
        row(name, 100 * restMedian("A", cores), 100 * restMedian("B", cores));
    }

    private double restMedian(String variant, ToDoubleFunction<Measured> cores) {
        return RelaySyncSummary.median(measured.stream().filter(m -> m.generation().variant().equals(variant))
                .mapToDouble(cores).toArray());
    }

    private void row(String name, RelaySyncSummary a, RelaySyncSummary b, ToDoubleFunction<RelaySyncSummary> figure) {
        row(name, figure.applyAsDouble(a), figure.applyAsDouble(b));
    }

    /** A summary row: A's figure, B's, and B/A. */
    private void row(String name, double x, double y) {
        line("| %s | %s | %s | %s |", name, FleetReport.fmt(x), FleetReport.fmt(y),
                FleetReport.fmt(RelaySyncSummary.ratio(y, x)));
    }

    private void notes() {
        line("## Notes");
        line("");
        double maxWatch = max(generations, RelaySyncGeneration::harnessWatchCores);
        double maxWrite = max(generations, RelaySyncGeneration::harnessWriteCores);
        double maxScan = measured.stream().mapToDouble(Measured::scanMillis).max().orElse(Double.NaN);
        line("- The harness (CPU %s) used at most %s %% of one core while it watched the relays: %s A scan of the "
                + "archives still awaited took %s ms at most on average, so a node's time is at most %d ms + that "
                + "late.", cpus(options.harnessCpus()), FleetReport.fmt(100 * maxWatch), maxWatch >= BUSY_HARNESS
                        ? "**near a core: its scans may have been late, and the synced times with them**."
                        : "the watcher was not the limit.", FleetReport.fmt(maxScan), RelaySyncBench.POLL_MILLIS);
        line("- While it wrote the generations it used at most %s %% of one core: %s", FleetReport.fmt(100 * maxWrite),
                maxWrite >= 0.9 ? "the writing was bound by this harness's CPU (the generator's limit, not the "
                        + "root's)." : "the writing waited on the disk (or for its CPU) part of the time.");
        double others = max(generations, RelaySyncGeneration::otherCores);
        line("- Other processes on the machine (busy time of every CPU less the root's, the relays' and the "
                + "harness's) used at most %s cores during a generation%s.", FleetReport.fmt(others),
                others >= 0.25 ? ": **a shared machine; compare A and B by their ratio, round by round**" : "");
        if (options.a().pintleJar().equals(options.b().pintleJar())
                && options.b().jvmOptions().contains(RelaySyncOptions.ONE_AT_A_TIME)
                && options.b().jvmOptions().size() == options.a().jvmOptions().size() + 1) {
            line("- B is A with `%s`; a server that does not know this switch ignores it, and then A and B run the "
                    + "same code (their ratios show this benchmark's noise).", RelaySyncOptions.ONE_AT_A_TIME);
        }
        for (String note : notes) {
            line("- %s", note);
        }
        for (Measured m : measured) {
            if (!m.relayWarnings().isEmpty()) {
                Map<String, Integer> distinct = new LinkedHashMap<>();
                for (String warning : m.relayWarnings()) {
                    // One kind whatever the retry's delay.
                    String kind = RETRY_DELAY.matcher(warning).replaceAll("next attempt in … ms");
                    distinct.merge(kind.length() > 200 ? kind.substring(0, 200) + "…" : kind, 1, Integer::sum);
                }
                List<String> parts = new ArrayList<>();
                distinct.entrySet().stream().limit(4).forEach(e -> parts.add(e.getValue() + "× `"
                        + e.getKey().replace("`", "'").replace("|", "/") + "`"));
                line("- Round %d, %s, the relays' warnings: %s%s.", m.generation().round(),
                        title(m.generation().variant()), String.join("; ", parts),
                        distinct.size() > 4 ? "; and " + (distinct.size() - 4) + " other kinds (keep the logs: --keep)"
                                : "");
            }
        }
        line("");
    }

    private static double max(List<RelaySyncGeneration> generations, ToDoubleFunction<RelaySyncGeneration> figure) {
        return generations.stream().mapToDouble(figure).filter(v -> !Double.isNaN(v)).max().orElse(Double.NaN);
    }

    /** Per generation, the sorted seconds after written at which relay nodes were seen with it, and their total. */
    private Map<String, RelaySyncPlot.Curve> curves() {
        Map<String, RelaySyncPlot.Curve> curves = new LinkedHashMap<>();
        for (RelaySyncGeneration g : generations) {
            double[] seconds = g.relays().stream().flatMapToDouble(r -> Arrays.stream(r.nodeSeconds())).sorted()
                    .toArray();
            curves.put(g.variant() + ", round " + g.round(),
                    new RelaySyncPlot.Curve(g.variant(), g.round(), seconds, g.relayNodes()));
        }
        return curves;
    }

    private void line(String format, Object... args) {
        out.append(args.length == 0 ? format : String.format(Locale.ROOT, format, args)).append('\n');
    }
}
