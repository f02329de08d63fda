package io.pintle.bench;

import io.pintle.server.Bootstrap;
import io.pintle.server.demo.DemoLayout;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToLongFunction;

/** Formats {@link ReloadBench}'s results as Markdown: the header, the targets table, and where the time goes. */
final class ReloadReport {
    /** The target for trigger-to-effective. */
    static final double TARGET_EFFECTIVE_MILLIS = 100;
    /** Shown where a figure does not apply. */
    private static final String NONE = "–";

    private ReloadReport() {}

    /**
     * Everything the report shows.
     *
     * @param environment machine and JVM
     * @param options the run's options
     * @param generationNanos time to generate the registry
     * @param snapshots snapshot-build figures
     * @param underLoad reload-under-load figures
     * @param totalNanos the whole run, registry generation included
     */
    record Results(Environment environment, ReloadOptions options, long generationNanos,
            SnapshotCosts.Figures snapshots, ReloadUnderLoad.Figures underLoad, long totalNanos) {
        /** @return whether every request, connection and reload behaved: the "must be 0" targets */
        boolean clean() {
            SteadyLoad.Figures load = underLoad.load();
            return load.failed() == 0 && load.tlsClosed() == 0 && load.closedAtEnd() == 0
                    && underLoad.failedOutcomes() == 0 && underLoad.anomalies().isEmpty()
                    && underLoad.reloads().stream().allMatch(reload -> reload.effectiveNanos() >= 0);
        }
    }

    /**
     * @param results the results
     * @return the report
     */
    static String render(Results results) {
        StringBuilder out = new StringBuilder();
        header(out, results);
        targets(out, results);
        breakdown(out, results.snapshots());
        underLoad(out, results.underLoad());
        problems(out, results.underLoad());
        return out.toString();
    }

    private static void header(StringBuilder out, Results results) {
        Environment env = results.environment();
        ReloadOptions options = results.options();
        SnapshotCosts.Figures snapshots = results.snapshots();
        ReloadUnderLoad.Figures underLoad = results.underLoad();
        out.append("## Pintle reload benchmark\n\n")
                .append("- Date: ").append(env.date()).append('\n')
                .append("- Machine: nproc = ").append(env.processors()).append(", ").append(env.cpuModel())
                .append(", ").append(env.os()).append('\n')
                .append("- JVM: ").append(env.jvm()).append(", options `").append(env.jvmArguments())
                .append("`\n")
                .append(format("- Registry: %,d generated nodes plus the demo's 3, each with its own EC P-256 key "
                        + "and a self-signed certificate `UID=<uuid>` in `nodescerts.pem`, and a "
                        + "`nodeslist.json` entry whose `key-hash` pins that key; generated in %.1f s with %d "
                        + "threads. At the cold builds: %,d nodes, %d input files, %.1f MB.%n",
                        options.nodes(), results.generationNanos() / 1e9, options.threads(), snapshots.nodes(),
                        snapshots.inputFiles(), snapshots.inputBytes() / 1e6))
                .append(format("- Snapshot builds, no server: %d measured repetitions each, after %d unmeasured "
                        + "cold builds. Warm = `load(n, previous)` after one node was added to both files. "
                        + "Retained heap = used heap after `System.gc()` with the snapshots held, minus without "
                        + "(median of %d rounds).%n", options.repetitions(), SnapshotCosts.JIT_WARMUP_LOADS,
                        SnapshotCosts.HEAP_ROUNDS))
                .append(format("- Under load: the server in-process (`Bootstrap.build` + `start`, %,d nodes, "
                        + "file watch on, quiet period %d ms; its limits the defaults but `[limits] "
                        + "max_connections` = %,d, twice the load, at least the demo's %d); %,d keep-alive "
                        + "HTTP/1.1 TLS 1.3 connections from Jetty's HttpClient with the demo node linux-2's certificate, each "
                        + "from its own loopback address (127.1.x.y, as each node of a fleet from its own host: the "
                        + "per-address shares apply per connection), held open throughout; "
                        + "%d req/s spread round-robin over them (9 in 10 `If-None-Match` GETs of its "
                        + "`rudder.tar.bz2` → 304, 1 in 10 `/v1/whoami` → 200 known). %d measured reloads after "
                        + "%d earlier ones (reported apart), alternating admin API and file watch; each adds one node to both "
                        + "files (temporary file, then `ATOMIC_MOVE`). Trigger-to-effective: from the first rename "
                        + "(for the admin API: renames, then the call at once; the file watch sees the renames too) to "
                        + "the new node's first 200 for its own policy file, polled with %d ms pauses on a "
                        + "connection it opened before the trigger (and got 403 on). With fewer than 100 samples, "
                        + "p99 is the maximum.%n",
                        underLoad.nodesAtStart(), Bootstrap.WATCH_QUIET_PERIOD.toMillis(),
                        ReloadUnderLoad.maxConnections(options.connections()), DemoLayout.MAX_CONNECTIONS,
                        options.connections(),
                        options.rate(), underLoad.reloads().size(), underLoad.warmupReloads(),
                        ReloadUnderLoad.POLL_PAUSE_MILLIS))
                .append(format("- Duration: %.0f s in all (registry generation %.0f s).%n%n",
                        results.totalNanos() / 1e9, results.generationNanos() / 1e9));
    }

    private static void targets(StringBuilder out, Results results) {
        SnapshotCosts.Figures snapshots = results.snapshots();
        ReloadUnderLoad.Figures underLoad = results.underLoad();
        SteadyLoad.Figures load = underLoad.load();
        out.append("| What | Value (median / p99) | Target | Met? |\n")
                .append("|---|---|---|---|\n");
        row(out, format("Snapshot build, cold (`load(1)`, %,d nodes)", snapshots.nodes()),
                snapshots.cold().medianAndP99(), NONE, NONE);
        row(out, "Snapshot build, warm: one node added (`load(n, previous)`)", snapshots.warm().medianAndP99(),
                NONE, NONE);
        row(out, "Heap retained by one snapshot", megabytes(snapshots.retainedOne()), NONE, NONE);
        row(out, "Heap retained by the previous and the new snapshot together (during a reload)",
                megabytes(snapshots.retainedDuringReload()), NONE, NONE);
        for (ReloadUnderLoad.Trigger trigger : ReloadUnderLoad.Trigger.values()) {
            List<ReloadUnderLoad.Reload> reloads = underLoad.of(trigger);
            Summary effective = summary(reloads, ReloadUnderLoad.Reload::effectiveNanos);
            row(out, format("Trigger-to-effective, %s (%d reloads, %,d connections, %d req/s)", label(trigger),
                            reloads.size(), load.connections(), results.options().rate()),
                    effective.medianAndP99(), format("< %.0f ms", TARGET_EFFECTIVE_MILLIS), met(effective));
        }
        row(out, format("Failed requests of the steady load (whole run: warm-up and the %d reloads)",
                        underLoad.reloads().size()),
                format("%,d of %,d", load.failed(), load.sent()), "0", load.failed() == 0 ? "yes" : "**no**");
        long closed = Math.max(load.tlsClosed(), load.closedAtEnd());
        row(out, "Keep-alive connections closed during the run", format("%,d of %,d", closed, load.connections()),
                "0", closed == 0 ? "yes" : "**no**");
        long notEffective = underLoad.reloads().stream().filter(reload -> reload.effectiveNanos() < 0).count();
        long failedReloads = underLoad.failedOutcomes() + notEffective;
        row(out, "Reloads refused or never effective (warm-up included)",
                format("%,d of %,d", failedReloads, underLoad.reloads().size() + underLoad.warmupReloads()), "0",
                failedReloads == 0 ? "yes" : "**no**");
        out.append('\n');
    }

    private static void breakdown(StringBuilder out, SnapshotCosts.Figures snapshots) {
        out.append(format("#### Where a warm reload's time goes (no load, %d repetitions)%n%n",
                        snapshots.warm().count()))
                .append("The steps of `SnapshotLoader.load(n, previous)` after one node was added, repeated one by "
                        + "one with the loaders it calls, on the same files and the same previous snapshot.\n\n")
                .append("| Step | Median ms | p99 ms | Share of the warm build (medians) |\n")
                .append("|---|---:|---:|---:|\n");
        double warm = snapshots.warm().medianMillis();
        double sum = 0;
        for (SnapshotCosts.Step step : snapshots.steps()) {
            if (step.part() == SnapshotCosts.Part.LOADER) {
                sum += step.time().medianMillis();
            }
        }
        for (SnapshotCosts.Step step : snapshots.steps()) {
            switch (step.part()) {
                case LOADER -> out.append(stepRow(step.label(), step.time(),
                        percent(step.time().medianMillis(), warm)));
                case DETAIL -> out.append(stepRow("&nbsp;&nbsp;" + step.label(), step.time(),
                        percent(step.time().medianMillis(), warm)));
                case RELOADER -> { }
            }
        }
        out.append(format("| Sum of the steps above (without the detail) | %s | – | %s |%n", Summary.millis(sum),
                        percent(sum, warm)))
                .append(stepRow("Warm `load(n, previous)` as measured", snapshots.warm(), "100%"))
                .append(stepRow("&nbsp;&nbsp;its thread's CPU time", snapshots.warmCpu(),
                        percent(snapshots.warmCpu().medianMillis(), warm)))
                .append(stepRow("&nbsp;&nbsp;collectors' pauses during it", snapshots.warmGc(), NONE));
        for (SnapshotCosts.Step step : snapshots.steps()) {
            if (step.part() == SnapshotCosts.Part.RELOADER) {
                out.append(stepRow(step.label(), step.time(), NONE));
            }
        }
        out.append(stepRow("For comparison: parse `nodescerts.pem` from scratch (cold, nothing reused)",
                        snapshots.coldCertificates(), NONE))
                .append('\n')
                .append(cpuLine("the warm builds and their breakdown", snapshots.warmCpuShare()))
                .append('\n');
    }

    private static String cpuLine(String during, CpuShare cpu) {
        return format("During %s the JVM kept %.0f%% of the %d cores busy (of its CPU time: GC %.0f%%, JIT "
                        + "%.0f%%), other processes %.0f%%.%n", during, 100 * cpu.busy(), cpu.cores(),
                100 * cpu.gcShare(), 100 * cpu.jitShare(), 100 * cpu.others());
    }

    private static List<ReloadUnderLoad.Reload> of(List<ReloadUnderLoad.Reload> reloads,
            ReloadUnderLoad.Trigger trigger) {
        return reloads.stream().filter(reload -> reload.trigger() == trigger).toList();
    }

    private static long appliedByWatch(List<ReloadUnderLoad.Reload> reloads) {
        return reloads.stream().filter(ReloadUnderLoad.Reload::appliedByWatch).count();
    }

    private static long split(List<ReloadUnderLoad.Reload> reloads) {
        return reloads.stream().filter(reload -> reload.applies() > 1).count();
    }

    private static void underLoad(StringBuilder out, ReloadUnderLoad.Figures figures) {
        SteadyLoad.Figures load = figures.load();
        List<ReloadUnderLoad.Reload> api = figures.of(ReloadUnderLoad.Trigger.ADMIN_API);
        List<ReloadUnderLoad.Reload> watch = figures.of(ReloadUnderLoad.Trigger.FILE_WATCH);
        out.append("#### Reloads under load\n\n")
                .append("| Median / p99 (max) | Admin API | File watch |\n")
                .append("|---|---:|---:|\n")
                .append(pair("Trigger-to-effective", api, watch, ReloadUnderLoad.Reload::effectiveNanos))
                .append(pair(format("&nbsp;&nbsp;the %d reloads before those, just after start (JIT still compiling "
                                + "the reload path), not in the figures above", figures.warmupReloads()),
                        of(figures.warmups(), ReloadUnderLoad.Trigger.ADMIN_API),
                        of(figures.warmups(), ReloadUnderLoad.Trigger.FILE_WATCH),
                        ReloadUnderLoad.Reload::effectiveNanos))
                .append(pair("The server's reload attempt (`ReloadOutcome.duration`)", api, watch,
                        ReloadUnderLoad.Reload::attemptNanos))
                .append(pair("&nbsp;&nbsp;CPU time of the reload thread in that attempt", api, watch,
                        ReloadUnderLoad.Reload::attemptCpuNanos))
                .append(pair("&nbsp;&nbsp;collectors' pauses from the trigger to the attempt's end", api, watch,
                        ReloadUnderLoad.Reload::gcNanos))
                .append(pair("Admin API round trip (`POST .../system/reload`)", api, watch,
                        ReloadUnderLoad.Reload::apiNanos))
                .append(pair("Trigger-to-effective minus the attempt: detection, quiet period, queueing, polling",
                        api, watch, reload -> reload.effectiveNanos() < 0 || reload.attemptNanos() < 0 ? -1
                                : reload.effectiveNanos() - reload.attemptNanos()))
                .append(format("| Probe polls per reload, median | %s | %s |%n", medianPolls(api),
                        medianPolls(watch)))
                .append(format("| Changes the file watch applied first (before the API call's own reload) | %d of %d "
                        + "| %d of %d |%n", appliedByWatch(api), api.size(), appliedByWatch(watch), watch.size()))
                .append(format("| Changes applied in two reloads (the two renames seen as two bursts) | %d | %d |%n%n",
                        split(api), split(watch)))
                .append(cpuLine("the measured reloads", figures.cpu()))
                .append('\n');
        out.append("| Steady load | Value |\n|---|---:|\n")
                .append(format("| Requests sent in all (%.0f s, warm-up included) / failed | %,d / %,d |%n",
                        load.seconds(), load.sent(), load.failed()))
                .append(format("| Requests sent during the measured reloads / while one was in progress (trigger "
                        + "to effective) | %,d / %,d |%n", load.sentMeasured(), load.sentDuringReload()))
                .append(format("| Latency outside reloads, p50 / p99 / max | %s / %s / %s ms |%n",
                        Summary.millis(load.quietLatency().medianMillis()),
                        Summary.millis(load.quietLatency().p99Millis()),
                        Summary.millis(load.quietLatency().maxMillis())))
                .append(format("| Latency during reloads, p50 / p99 / max | %s / %s / %s ms |%n",
                        Summary.millis(load.reloadLatency().medianMillis()),
                        Summary.millis(load.reloadLatency().p99Millis()),
                        Summary.millis(load.reloadLatency().maxMillis())))
                .append(format("| Connections held / TLS connections opened by the client (setup included) | "
                        + "%,d / %,d |%n", load.connections(), load.tlsOpened()))
                .append(format("| TLS connections closed during the run / found closed at the end | %,d / %,d |%n",
                        load.tlsClosed(), load.closedAtEnd()))
                .append(format("| Connections that carried no request after their first | %,d |%n", load.unused()))
                .append(format("| Times the next connection was still busy (request went to the one after) | "
                        + "%,d |%n", load.skippedBusy()))
                .append(format("| Probe TLS handshakes (one per reload: the 403 keeps the connection) | %,d |%n",
                        figures.probeHandshakes()))
                .append(format("| Server start (`Bootstrap.build`, i.e. a cold snapshot, + `start`) | %s ms |%n%n",
                        Summary.millis(figures.serverStartNanos() / 1e6)));
    }

    private static void problems(StringBuilder out, ReloadUnderLoad.Figures figures) {
        Map<String, Long> failures = figures.load().failureKinds();
        if (!failures.isEmpty()) {
            out.append("Failed requests by kind:\n\n");
            failures.forEach((kind, count) -> out.append(format("- %,d × %s%n", count, kind)));
            out.append('\n');
        }
        if (!figures.anomalies().isEmpty()) {
            out.append("Anomalies:\n\n");
            figures.anomalies().forEach(anomaly -> out.append("- ").append(anomaly).append('\n'));
            out.append('\n');
        }
    }

    private static String pair(String label, List<ReloadUnderLoad.Reload> api, List<ReloadUnderLoad.Reload> watch,
            ToLongFunction<ReloadUnderLoad.Reload> value) {
        return format("| %s | %s | %s |%n", label, withMax(summary(api, value)), withMax(summary(watch, value)));
    }

    /** Summary of the non-negative values (-1 marks "does not apply" or "never happened"). */
    private static Summary summary(List<ReloadUnderLoad.Reload> reloads, ToLongFunction<ReloadUnderLoad.Reload> value) {
        return Summary.of(reloads.stream().mapToLong(value).filter(nanos -> nanos >= 0).toArray());
    }

    private static String withMax(Summary summary) {
        if (summary.count() == 0) {
            return NONE;
        }
        return Summary.millis(summary.medianMillis()) + " / " + Summary.millis(summary.p99Millis()) + " ("
                + Summary.millis(summary.maxMillis()) + ") ms";
    }

    private static String medianPolls(List<ReloadUnderLoad.Reload> reloads) {
        int[] polls = reloads.stream().mapToInt(ReloadUnderLoad.Reload::polls).sorted().toArray();
        return polls.length == 0 ? NONE : Integer.toString(polls[polls.length / 2]);
    }

    /** "yes" when the p99 is under the target, "median only" when just the median is, "no" otherwise. */
    private static String met(Summary summary) {
        if (summary.count() == 0) {
            return "**no**";
        }
        if (summary.p99Millis() < TARGET_EFFECTIVE_MILLIS) {
            return "yes";
        }
        return summary.medianMillis() < TARGET_EFFECTIVE_MILLIS ? "median only" : "**no**";
    }

    private static String label(ReloadUnderLoad.Trigger trigger) {
        return switch (trigger) {
            case ADMIN_API -> "renames then admin API (`POST /rudder/relay-api/1/system/reload`)";
            case FILE_WATCH -> "file watch only";
        };
    }

    private static void row(StringBuilder out, String what, String value, String target, String met) {
        out.append("| ").append(what).append(" | ").append(value).append(" | ").append(target).append(" | ")
                .append(met).append(" |\n");
    }

    private static String stepRow(String label, Summary time, String share) {
        return format("| %s | %s | %s | %s |%n", label, Summary.millis(time.medianMillis()),
                Summary.millis(time.p99Millis()), share);
    }

    private static String percent(double part, double whole) {
        return format("%.0f%%", 100 * part / whole);
    }

    private static String megabytes(long bytes) {
        return format("%.1f MB", bytes / 1e6);
    }

    private static String format(String format, Object... args) {
        return String.format(Locale.ROOT, format, args);
    }
}
