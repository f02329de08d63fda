package io.pintle.bench.fleet;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** The fleet run's Markdown report and its three plots (written next to it). */
final class FleetReport {
    private final FleetOptions options;
    private final FleetLayout layout;
    private final FleetEvents events;
    private final Map<String, List<ProcessMeter.Point>> processes;
    private final Map<String, Long> moments;
    private final java.util.concurrent.atomic.AtomicLongArray relaySynced;
    private final long generationWritten;
    private final List<String> notes;
    private final List<String> agentSummary;
    private final Map<String, Long> uploads;
    private final Instant began;
    private final String commandLine;
    private final StringBuilder out = new StringBuilder();

    FleetReport(FleetOptions options, FleetLayout layout, FleetEvents events,
            Map<String, List<ProcessMeter.Point>> processes, Map<String, Long> moments, java.util.concurrent.atomic.AtomicLongArray relaySynced,
            long generationWritten, List<String> notes, List<String> agentSummary, Map<String, Long> uploads,
            Instant began, String commandLine) {
        this.options = options;
        this.layout = layout;
        this.events = events;
        this.processes = processes;
        this.moments = moments;
        this.relaySynced = relaySynced;
        this.generationWritten = generationWritten;
        this.notes = notes;
        this.agentSummary = agentSummary;
        this.uploads = uploads;
        this.began = began;
        this.commandLine = commandLine;
    }

    void write(Path output) throws IOException {
        String base = output.getFileName().toString().replaceFirst("\\.md$", "");
        Path latencyPng = output.resolveSibling(base + "-latency.png");
        Path propagationPng = output.resolveSibling(base + "-propagation.png");
        Path processesPng = output.resolveSibling(base + "-processes.png");
        long start = moments.get("start");
        long end = moments.get("end");
        double scheduleEnd = start + options.durationSeconds() * 1000.0;

        String shape = options.replicas() > 0
                ? options.replicas() + " root replicas behind HAProxy (TCP, PROXY v2)"
                : "a root and " + options.relays() + " relays";
        line("# Fleet: %,d simulated nodes, %s", layout.nodes(), shape);
        line("");
        line("%s, commit %s, %d cores, Java %s. Harness arguments: `%s` (work directory %s).", began,
                options.commit(), Runtime.getRuntime().availableProcessors(), System.getProperty("java.version"),
                commandLine, options.work());
        line("");
        setup();
        rates(start, scheduleEnd);
        runs(start, scheduleEnd);
        requests(start, scheduleEnd);
        double[] propagation = propagation();
        processes(start, end);
        line("## Notes");
        line("");
        for (String note : notes) {
            line("- %s", note);
        }
        line("- Agents' own summary: `%s`.", String.join(" ", agentSummary));
        line("");
        line("![latency](%s)", latencyPng.getFileName());
        line("");
        if (propagation != null) {
            line("![propagation](%s)", propagationPng.getFileName());
            line("");
        }
        line("![processes](%s)", processesPng.getFileName());
        line("");
        Files.createDirectories(output.toAbsolutePath().getParent());
        Files.writeString(output, out.toString());
        FleetPlots.latency(latencyPng, events.timeline(start, 10_000, scheduleEnd), marks(start),
                String.format(Locale.ROOT, "Agent runs, %,d nodes: p50 and p99 from scheduled start to last byte",
                        layout.nodes()));
        if (propagation != null) {
            FleetPlots.propagation(propagationPng, propagationCurves(), "Generation: nodes with the new policies");
        }
        FleetPlots.processes(processesPng, processes, marks(start), "CPU (% of one core) and resident memory per process");
    }

    private void setup() {
        line("## Setup");
        line("");
        int[] perServer = new int[options.relays() + 1];
        for (int node = 0; node < layout.nodes(); node++) {
            perServer[layout.serverOf(node)]++;
        }
        line("| | |");
        line("|---|---|");
        line("| nodes | %,d (%,d RSA-4096 keys, the rest EC P-256) |", layout.nodes(), layout.rsaNodes());
        if (options.replicas() > 0) {
            line("| servers | %d replicas of the root (same inputs) behind HAProxy, every node through it |",
                    options.replicas());
        } else {
            StringBuilder text = new StringBuilder("root: " + perServer[0]);
            for (int relay = 1; relay <= options.relays(); relay++) {
                text.append(", relay-").append(relay).append(": ").append(perServer[relay]);
            }
            line("| nodes per server | %s |", text);
        }
        line("| server keys | %s |", options.serverKey().equals("rsa") ? "RSA-4096 (Rudder's agent key)" : "EC P-256");
        line("| server JVM | %s, `%s` |", "deploy/bin/pintle under socket activation"
                + (options.replicas() > 0 ? " (replicas: binding their own port)" : ""),
                String.join(" ", options.pintleJvmOptions()));
        line("| CPUs | servers%s: %s; agents: %s |", options.replicas() > 0 ? " and HAProxy" : "",
                cpus(options.serverCpus()), cpus(options.agentCpus()));
        line("| schedule | a run every %d s with %d s of splay, an inventory a day, time compressed %sx |",
                options.intervalSeconds(), options.splaySeconds(), fmt(options.compression()));
        line("| per run | GET common library (If-None-Match), GET own policies (If-None-Match), PUT report "
                + "(%,d B, Basic); each a new TLS 1.3 connection, as rudder-client's curl |", options.reportBytes());
        line("| per inventory | GET /uuid, PUT .ocs.gz (%,d B), PUT .ocs.sign (2 KiB) |", options.inventoryBytes());
        line("| sizes | rudder.tar.bz2 %,d B per node, library %,d B |", options.policyBytes(),
                options.libraryBytes());
        line("| run | %d s of schedule after the prime |", options.durationSeconds());
        line("");
    }

    private static String cpus(String list) {
        return list == null ? "any" : list;
    }

    private void rates(long start, double scheduleEnd) {
        line("## Rates: scheduled and achieved");
        line("");
        double seconds = (scheduleEnd - start) / 1000;
        long scheduled = events.runs.size();
        double[] lateness = events.requests.stream().filter(r -> r.kind().equals("common"))
                .mapToDouble(r -> r.start() - r.sched()).sorted().toArray();
        long requests = events.requests.stream().filter(r -> !r.kind().startsWith("prime")).count();
        line("A real fleet of %,d nodes makes %s runs/s on average and %s runs/s while the splay window is open "
                + "(%s new TLS connections/s); compressed %sx: %s and %s runs/s.", layout.nodes(),
                fmt(layout.nodes() / (double) options.intervalSeconds()),
                fmt(layout.nodes() / (double) options.splaySeconds()),
                fmt(3 * layout.nodes() / (double) options.splaySeconds()), fmt(options.compression()),
                fmt(options.runsPerSecond()), fmt(options.peakRunsPerSecond()));
        line("");
        line("| | scheduled | achieved |");
        line("|---|---|---|");
        line("| runs (the schedule file / done) | %,d | %,d |", layout.scheduledRuns(), scheduled);
        line("| inventories (the schedule file / done) | %,d | %,d |", layout.scheduledInventories(),
                events.inventories.size());
        line("| runs per second (whole run) | %s | %s |", fmt(layout.scheduledRuns() / seconds),
                fmt(scheduled / seconds));
        line("| requests per second (whole run) | | %s |", fmt(requests / seconds));
        line("| a run's first request late on its schedule, p50 / p99 / max (generator threads busy) | 0 | %s / %s / %s ms |",
                fmt(FleetEvents.percentile(lateness, 0.5)), fmt(FleetEvents.percentile(lateness, 0.99)),
                fmt(lateness.length == 0 ? Double.NaN : lateness[lateness.length - 1]));
        line("");
    }

    private void runs(long start, double scheduleEnd) {
        line("## Agent runs");
        line("");
        line("A run fails when one of its requests fails (no connection, TLS error, timeout, unexpected status). "
                + "Latency: from the run's scheduled start to its last byte, percentiles of the successful runs. A "
                + "window counts every run under way in it (scheduled before its end, ended after its start).");
        line("");
        line("| window | runs | failed | p50 | p99 | max | failures |");
        line("|---|---|---|---|---|---|---|");
        for (Map.Entry<String, double[]> window : windows(start, scheduleEnd).entrySet()) {
            double from = window.getValue()[0];
            double to = window.getValue()[1];
            FleetEvents.Figures f = FleetEvents.tasks(events.runs, from, to);
            line("| %s | %,d | %,d | %s ms | %s ms | %s ms | %s |", window.getKey(), f.count(), f.failed(),
                    fmt(f.p50()), fmt(f.p99()), fmt(f.max()), failures(FleetEvents.failures(events.runs, from, to)));
        }
        FleetEvents.Figures inventories = FleetEvents.tasks(events.inventories, 0, Double.MAX_VALUE);
        line("| inventories (whole run) | %,d | %,d | %s ms | %s ms | %s ms | %s |", inventories.count(),
                inventories.failed(), fmt(inventories.p50()), fmt(inventories.p99()), fmt(inventories.max()),
                failures(FleetEvents.failures(events.inventories, 0, Double.MAX_VALUE)));
        if (!events.updates.isEmpty()) {
            FleetEvents.Figures updates = FleetEvents.tasks(events.updates, 0, Double.MAX_VALUE);
            line("| policy updates on order | %,d | %,d | %s ms | %s ms | %s ms | %s |", updates.count(),
                    updates.failed(), fmt(updates.p50()), fmt(updates.p99()), fmt(updates.max()),
                    failures(FleetEvents.failures(events.updates, 0, Double.MAX_VALUE)));
        }
        line("");
        int[] retried = events.retriedByNextRun();
        line("Failed runs: %,d; the same node's next run succeeded for %,d (what a real agent does: rudder-client "
                + "gives curl no --retry, a policy update is tried again at the next run and a report that could "
                + "not be sent stays in reports/ready and goes with the next run); %,d had no later run in the "
                + "window.", retried[0], retried[1], retried[2]);
        long reportsOk = events.requests.stream().filter(r -> r.kind().equals("report") && r.ok()).count();
        long inventoryOk = events.requests.stream().filter(r -> (r.kind().equals("inventory")
                || r.kind().equals("inventory-sign")) && r.ok()).count();
        line("");
        line("Uploads: %,d reports and %,d inventory files answered 2xx; %,d reports and %,d inventory files found "
                + "complete in the servers' directories by the consumer (relayd's part); %s.", reportsOk,
                inventoryOk, uploads.getOrDefault("reports", 0L), uploads.getOrDefault("inventory-updates", 0L),
                reportsOk == uploads.getOrDefault("reports", 0L)
                        && inventoryOk == uploads.getOrDefault("inventory-updates", 0L)
                        ? "none lost" : "**they differ**");
        line("");
    }

    /** Named windows of the run, in ms since the epoch. */
    private Map<String, double[]> windows(long start, double scheduleEnd) {
        Map<String, double[]> windows = new LinkedHashMap<>();
        windows.put("whole run", new double[] {start, scheduleEnd});
        Long generation = moments.get("generation");
        if (generation != null) {
            windows.put("steady state (before the generation)", new double[] {start, generation});
            windows.put("generation + one interval", new double[] {generation,
                    Math.min(scheduleEnd, generation + options.intervalSeconds() * 1000.0 / options.compression())});
        }
        for (String moment : List.of("relay-1 restart", "root restart", "replica-1 killed")) {
            Long at = moments.get(moment);
            if (at != null) {
                windows.put(moment + " (60 s from it)", new double[] {at, at + 60_000});
            }
        }
        return windows;
    }

    private static String failures(Map<String, Integer> failures) {
        if (failures.isEmpty()) {
            return "";
        }
        List<String> parts = new ArrayList<>();
        failures.entrySet().stream().limit(3).forEach(e -> parts.add(e.getValue() + "× " + e.getKey()));
        return String.join("; ", parts).replace("|", "/");
    }

    private void requests(long start, double scheduleEnd) {
        line("## Requests by kind (whole run)");
        line("");
        line("From schedule: from the run's scheduled start to this request's last byte (queueing in the agent and "
                + "the earlier requests of its run included). Own: from this request's connect to its last byte.");
        line("");
        line("Percentiles of the successful requests.");
        line("");
        line("| request | count | failed | p50 own | p99 own | max own | p50 from schedule | p99 from schedule |");
        line("|---|---|---|---|---|---|---|---|");
        Map<String, FleetEvents.Figures> own = events.byKind(0, Double.MAX_VALUE, false);
        Map<String, FleetEvents.Figures> sched = events.byKind(0, Double.MAX_VALUE, true);
        for (Map.Entry<String, FleetEvents.Figures> entry : own.entrySet()) {
            FleetEvents.Figures o = entry.getValue();
            FleetEvents.Figures s = sched.get(entry.getKey());
            line("| %s | %,d | %,d | %s ms | %s ms | %s ms | %s ms | %s ms |", label(entry.getKey()), o.count(),
                    o.failed(), fmt(o.p50()), fmt(o.p99()), fmt(o.max()), fmt(s.p50()), fmt(s.p99()));
        }
        line("");
    }

    private static String label(String kind) {
        return switch (kind) {
            case "common" -> "GET /common/policies-library-linux.tar.bz2";
            case "policies" -> "GET /policies/<id>/rules/rudder.tar.bz2";
            case "report" -> "PUT /reports/<date>@<id>.log.gz";
            case "uuid" -> "GET /uuid";
            case "inventory" -> "PUT /inventory-updates/<id>_<date>.ocs.gz";
            case "inventory-sign" -> "PUT /inventory-updates/<id>_<date>.ocs.sign";
            default -> kind;
        };
    }

    private double[] propagation() {
        Long generation = moments.get("generation");
        if (generation == null) {
            return null;
        }
        double[] got = events.propagation(layout.nodes(), generation);
        line("## Generation: propagation");
        line("");
        line("Every node's policies changed on the root at t=%s s (written in %s s). A node has them when a policy "
                + "GET of its own returned the new archive (200, new ETag). Relay sync: when every node's archive "
                + "on that relay was the new one (looked at every second).", fmt((generation - moments.get("start"))
                / 1000.0), fmt((generationWritten - generation) / 1000.0));
        line("");
        line("| server | nodes | relay synced after | nodes with it p50 | p99 | last | never (in the run) |");
        line("|---|---|---|---|---|---|---|");
        int servers = options.replicas() > 0 ? 1 : options.relays() + 1;
        List<Double> all = new ArrayList<>();
        int never = 0;
        for (int server = 0; server < servers; server++) {
            List<Double> values = new ArrayList<>();
            int missing = 0;
            for (int node = 0; node < layout.nodes(); node++) {
                if (layout.serverOf(node) == server) {
                    if (Double.isNaN(got[node])) {
                        missing++;
                    } else {
                        values.add(got[node] / 1000);
                    }
                }
            }
            all.addAll(values);
            never += missing;
            double[] sorted = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
            String synced = server == 0 ? "(serves the root's tree)"
                    : relaySynced != null && relaySynced.get(server) > 0
                            ? fmt((relaySynced.get(server) - generation) / 1000.0) + " s"
                            : String.format(Locale.ROOT, "**not by the end of the run** (t+%s s)",
                                    fmt((moments.get("end") - generation) / 1000.0));
            line("| %s | %,d | %s | %s s | %s s | %s s | %,d |", server == 0 ? (options.replicas() > 0 ? "replicas"
                    : "root") : "relay-" + server, values.size() + missing, synced,
                    fmt(FleetEvents.percentile(sorted, 0.5)), fmt(FleetEvents.percentile(sorted, 0.99)),
                    fmt(sorted.length == 0 ? Double.NaN : sorted[sorted.length - 1]), missing);
        }
        if (options.channels() > 0) {
            for (boolean holds : new boolean[] {true, false}) {
                List<Double> values = new ArrayList<>();
                int missing = 0;
                for (int node = 0; node < layout.nodes(); node++) {
                    if (FleetLayout.holdsChannel(node, options.channels()) == holds) {
                        if (Double.isNaN(got[node])) {
                            missing++;
                        } else {
                            values.add(got[node] / 1000);
                        }
                    }
                }
                double[] sorted = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
                line("| %s | %,d | | %s s | %s s | %s s | %,d |", holds ? "nodes with an order channel (update order)"
                        : "nodes without (their next run)", values.size() + missing,
                        fmt(FleetEvents.percentile(sorted, 0.5)), fmt(FleetEvents.percentile(sorted, 0.99)),
                        fmt(sorted.length == 0 ? Double.NaN : sorted[sorted.length - 1]), missing);
            }
        }
        double[] sorted = all.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        line("| **all** | %,d | | %s s | %s s | **%s s** | %,d |", layout.nodes(),
                fmt(FleetEvents.percentile(sorted, 0.5)), fmt(FleetEvents.percentile(sorted, 0.99)),
                fmt(sorted.length == 0 ? Double.NaN : sorted[sorted.length - 1]), never);
        line("");
        return got;
    }

    private Map<String, double[]> propagationCurves() {
        double[] got = events.propagation(layout.nodes(), moments.get("generation"));
        Map<String, double[]> curves = new LinkedHashMap<>();
        int servers = options.replicas() > 0 ? 1 : options.relays() + 1;
        for (int server = 0; server < servers; server++) {
            List<Double> values = new ArrayList<>();
            int total = 0;
            for (int node = 0; node < layout.nodes(); node++) {
                if (layout.serverOf(node) == server) {
                    total++;
                    if (!Double.isNaN(got[node])) {
                        values.add(got[node] / 1000);
                    }
                }
            }
            double[] sorted = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
            curves.put((server == 0 ? "root" : "relay-" + server) + " (" + total + ")",
                    withTotal(sorted, total));
        }
        double[] everything = Arrays.stream(got).filter(v -> !Double.isNaN(v)).map(v -> v / 1000).sorted().toArray();
        curves.put("all (" + layout.nodes() + ")", withTotal(everything, layout.nodes()));
        return curves;
    }

    /** The sorted times, then the group's size as the last element (the curve's 100 %). */
    private static double[] withTotal(double[] sorted, int total) {
        double[] result = Arrays.copyOf(sorted, sorted.length + 1);
        result[sorted.length] = total;
        return result;
    }

    private void processes(long start, long end) {
        line("## Processes: CPU and memory");
        line("");
        double realTime = options.compression() * 300.0 / options.intervalSeconds();
        // Steady state: before the generation and outside the 60 s after a restart or a kill.
        double steadyEnd = moments.containsKey("generation") ? (moments.get("generation") - start) / 1000.0
                : (end - start) / 1000.0;
        List<double[]> excluded = new ArrayList<>();
        for (String moment : List.of("relay-1 restart", "root restart", "replica-1 killed")) {
            if (moments.containsKey(moment)) {
                double at = (moments.get(moment) - start) / 1000.0;
                excluded.add(new double[] {at, at + 60});
            }
        }
        java.util.function.Predicate<ProcessMeter.Point> steady = p -> p.seconds() <= steadyEnd
                && excluded.stream().noneMatch(w -> p.seconds() > w[0] && p.seconds() <= w[1] + 5);
        double busy = 0;
        for (List<ProcessMeter.Point> points : processes.values()) {
            busy += points.stream().filter(steady).mapToDouble(ProcessMeter.Point::cores).average().orElse(0);
        }
        int cpus = Runtime.getRuntime().availableProcessors();
        line("Sampled every %d s from /proc (user + system time; VmRSS). Cores: share of one core (mean over the "
                + "steady state: before any generation, outside the 60 s after a restart or a kill; and the busiest "
                + "5 s of the whole run). Per 10,000 nodes: the steady mean scaled to 10,000 nodes running every 5 "
                + "minutes (this run makes requests %sx as often as that); the root's includes serving the relays' "
                + "sync. Every metered process together: %s of the machine's %d cores in the steady state%s.",
                ProcessMeter.PERIOD_MILLIS / 1000, fmt(realTime), fmt(busy), cpus,
                busy >= 0.9 * cpus ? " — **saturated: the figures are what the servers got, a lower bound of what "
                        + "they needed**" : "");
        line("");
        line("| process | nodes served | steady mean cores | max cores (5 s) | RSS max | cores per 10,000 nodes |");
        line("|---|---|---|---|---|---|");
        int[] perServer = new int[Math.max(options.relays(), 0) + 1];
        for (int node = 0; node < layout.nodes(); node++) {
            perServer[layout.serverOf(node)]++;
        }
        for (Map.Entry<String, List<ProcessMeter.Point>> entry : processes.entrySet()) {
            List<ProcessMeter.Point> points = entry.getValue();
            if (points.isEmpty()) {
                continue;
            }
            double mean = points.stream().filter(steady).mapToDouble(ProcessMeter.Point::cores).average()
                    .orElse(Double.NaN);
            double max = points.stream().mapToDouble(ProcessMeter.Point::cores).max().orElse(Double.NaN);
            double rss = points.stream().mapToDouble(ProcessMeter.Point::rssMib).max().orElse(Double.NaN);
            String name = entry.getKey();
            int served = name.equals("root") ? perServer[0]
                    : name.startsWith("relay-") ? perServer[Integer.parseInt(name.substring(6))]
                    : name.startsWith("replica-") ? layout.nodes() / options.replicas() : 0;
            line("| %s | %s | %s | %s | %s MiB | %s |", name, served == 0 ? "" : String.format("%,d", served),
                    fmt(mean), fmt(max), fmt(rss), served == 0 ? "" : fmt(mean * 10_000 / served / realTime));
        }
        line("");
    }

    private Map<String, Double> marks(long start) {
        Map<String, Double> marks = new LinkedHashMap<>();
        for (Map.Entry<String, Long> moment : moments.entrySet()) {
            if (!moment.getKey().equals("start") && !moment.getKey().equals("end")
                    && !moment.getKey().equals("haproxy") && !moment.getKey().equals("generation written")) {
                marks.put(moment.getKey(), (moment.getValue() - start) / 1000.0);
            }
        }
        return marks;
    }

    static String fmt(double value) {
        if (Double.isNaN(value)) {
            return "-";
        }
        if (Math.abs(value) >= 100) {
            return String.format(Locale.ROOT, "%,.0f", value);
        }
        if (Math.abs(value) >= 10) {
            return String.format(Locale.ROOT, "%.1f", value);
        }
        return String.format(Locale.ROOT, "%.2f", value);
    }

    private void line(String format, Object... args) {
        out.append(args.length == 0 ? format : String.format(Locale.ROOT, format, args)).append('\n');
    }
}
