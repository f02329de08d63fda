package io.pintle.bench.hostile;

import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/** The Markdown report of {@code bench/hostile}: one row per attack, the victim's downloads and the gauges. */
final class HostileReport {
    private HostileReport() {}

    /**
     * Where and how the run went, besides its rows.
     *
     * @param date when it started
     * @param minutes how long it took
     * @param options its options
     * @param serverCommand how Pintle was started
     * @param descriptorsExported whether descriptors came from the server's {@code process_open_fds}
     * @param baseline the victim's downloads with no attack
     * @param spread how much each gauge moved with the victim alone
     * @param openFiles the open-files limit the server ran under
     * @param endOfRun the cool-down after the last attack
     * @param loadBefore {@code /proc/loadavg}'s first three figures at the start
     * @param loadAfter the same at the end
     * @param keptAt the work directory, when the run did not hold, or null
     */
    record Context(Instant date, double minutes, HostileOptions options, String serverCommand,
            boolean descriptorsExported, Victim.Window baseline, Map<Gauge, Double> spread, String openFiles,
            EndOfRun endOfRun, String loadBefore, String loadAfter, String keptAt) {
        Context keptAt(String directory) {
            return new Context(date, minutes, options, serverCommand, descriptorsExported, baseline, spread,
                    openFiles, endOfRun, loadBefore, loadAfter, directory);
        }
    }

    /**
     * Issue 18's "done when", for one attack: every victim download a 200 within 2 s, and every gauge back within
     * the idle timeout of the attack's last action. The HTTP/1.1 waits are held to their documented bound
     * instead: their slots come back when the waits end.
     */
    static boolean held(AttackRun run) {
        if (run.victim().slow() > 0 || run.victim().count() == 0) {
            return false;
        }
        return run.gauges().values().stream().allMatch(c -> inTime(c, run));
    }

    /**
     * Back within the bound, give or take one reading: a stream the server frees at its idle timeout, 30 s after
     * the last byte it could send, reads back at 30.0–30.2 s after the launch's end.
     */
    private static boolean inTime(AttackRun.Change change, AttackRun run) {
        return change.back() && change.backSeconds() <= run.boundSeconds() + GaugeSampler.EVERY_MILLIS / 1000.0;
    }

    static String render(Context context, List<AttackRun> runs) {
        HostileOptions options = context.options();
        StringBuilder out = new StringBuilder();
        out.append(String.format(Locale.ROOT, "# bench/hostile: hold under hostile load (issue 18), %s%n%n",
                context.date()));
        out.append(String.format(Locale.ROOT, "- Machine: %s CPUs online; Pintle pinned to CPU %s, the harness"
                        + " (attacker and victim, one JVM) to CPU %s; open-files limit %s. Run: %.1f min.%n",
                orUnknown(options.machineCpus()), orNone(options.serverCpus()), orNone(options.clientCpus()),
                context.openFiles(), context.minutes()));
        out.append("- Load average (shared machine, other sessions included): ").append(context.loadBefore())
                .append(" at the start, ").append(context.loadAfter()).append(" at the end.\n");
        out.append("- Server: `").append(context.serverCommand()).append("`").append(options.commit() != null
                ? ", built from " + options.commit() : "").append("; `pintle demo`'s layout with every limit at its"
                + " default (idle timeout " + HostileBench.IDLE_TIMEOUT.toSeconds() + " s), a 8 MiB"
                + " `" + HostileLayout.LARGE_FILE + "`, access log off.\n");
        out.append(String.format(Locale.ROOT, "- Victim: a node on 127.0.0.1 downloading its"
                        + " `/policies/<node>/rules/rudder.tar.bz2` one at a time, a new TLS connection each (full"
                        + " handshake, RSA-2048 client certificate, HTTP/1.1, `Connection: close`), %d ms apart."
                        + " Attacker: 127.0.0.2, no client certificate.%n",
                options.victimPause().toMillis()));
        out.append(String.format(Locale.ROOT, "- Baseline (victim alone, %d s): %,d downloads, p50 %s ms, p99 %s ms,"
                        + " max %s ms, %d errors.%n%n", options.baseline().toSeconds(), context.baseline().count(),
                ms(context.baseline().percentileMillis(50)), ms(context.baseline().percentileMillis(99)),
                ms(context.baseline().maxMillis()), context.baseline().errors()));

        out.append("## The victim during each attack\n\n");
        out.append("| Attack | Attacker sent | Attacker got | Delivered | Window s | Downloads | p50 ms (× base)"
                + " | p99 ms (× base) | max ms | Errors | > 2 s | Generator the limit? | Held |\n");
        out.append("|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|---|\n");
        Victim.Window base = context.baseline();
        out.append(String.format(Locale.ROOT, "| baseline | nothing | | | %d | %,d | %s | %s | %s | %d | %d | | |%n",
                options.baseline().toSeconds(), base.count(), ms(base.percentileMillis(50)),
                ms(base.percentileMillis(99)), ms(base.maxMillis()), base.errors(), base.slow()));
        for (AttackRun run : runs) {
            Victim.Window v = run.victim();
            out.append(String.format(Locale.ROOT, "| %s | %s | %s | %s | %.0f | %,d | %s (%s) | %s (%s) | %s | %d |"
                            + " %d | %s | %s |%n", run.kind().label(), run.description(), cell(run.seen()),
                    run.delivered(), run.windowSeconds(), v.count(), ms(v.percentileMillis(50)),
                    ratio(v.percentileMillis(50), base.percentileMillis(50)), ms(v.percentileMillis(99)),
                    ratio(v.percentileMillis(99), base.percentileMillis(99)), ms(v.maxMillis()), v.errors(),
                    v.slow(), generator(run), heldCell(run)));
        }
        EndOfRun end = context.endOfRun();
        Victim.Window after = end.victim();
        out.append(String.format(Locale.ROOT, "| after the attacks (cool-down) | nothing | | | %.0f | %,d | %s (%s) |"
                        + " %s (%s) | %s | %d | %d | | |%n", end.seconds(), after.count(),
                ms(after.percentileMillis(50)), ratio(after.percentileMillis(50), base.percentileMillis(50)),
                ms(after.percentileMillis(99)), ratio(after.percentileMillis(99), base.percentileMillis(99)),
                ms(after.maxMillis()), after.errors(), after.slow()));
        out.append("\n## The server's gauges: before → peak → after (back after)\n\n");
        out.append("| Attack |");
        for (Gauge gauge : Gauge.values()) {
            out.append(' ').append(gauge.label()).append(" |");
        }
        out.append("\n|---|");
        out.append("---|".repeat(Gauge.values().length)).append('\n');
        for (AttackRun run : runs) {
            out.append("| ").append(run.kind().label()).append(" |");
            for (Gauge gauge : Gauge.values()) {
                out.append(' ').append(change(run.gauges().get(gauge))).append(" |");
            }
            out.append('\n');
        }
        out.append('\n');
        out.append(String.format(Locale.ROOT, "At the end of the run (the victim alone for %.0f s after the last"
                + " attack, until every gauge was back at its reading before the first attack or %d s had passed;"
                + " then a garbage collection %s):%n%n", end.seconds(), options.cooldown().toSeconds(), end.gc()));
        out.append("| Reading |");
        for (Gauge gauge : Gauge.values()) {
            out.append(' ').append(gauge.label()).append(" |");
        }
        out.append("\n|---|").append("---:|".repeat(Gauge.values().length)).append('\n');
        endRow(out, "before the first attack", end.beforeAttacks());
        endRow(out, "after the cool-down", end.settled());
        if (end.afterGc() != null) {
            endRow(out, "3 s after the forced collection", end.afterGc());
        }
        out.append('\n');
        out.append("Window: from the attacker's first action until every gauge had read at or below its threshold"
                + " three times in a row, or the watch's bound (the idle timeout plus 15 s after the attacker's last"
                + " new action; for the HTTP/1.1 waits, their `wait` plus 15 s). The victim's figures are over the"
                + " downloads it started in that window; × base is the ratio to the baseline above. Errors: anything"
                + " but a 200 with the whole file. > 2 s: downloads that took more than 2 s or failed (issue 18:"
                + " a node's download still gets 200 within 2 s).\n\n");
        out.append(String.format(Locale.ROOT, "Gauges: read every %d ms from `/metrics` on the admin listener"
                        + " (`pintle_inflight_requests{class}`, `pintle_queued_requests{class}`,"
                        + " `pintle_change_waiters`, `jvm_threads_current`, %s). Before: the reading just before the"
                        + " attack; peak: the highest in the window; after: the last. Back after: seconds from the"
                        + " attacker's last new action (its last request, or the resets that abandon its waits;"
                        + " what it holds stays held) until the gauge was at or below its threshold for good; \"at"
                        + " once\" when it was at the first reading after that; \"not back\" when it was not"
                        + " when the watch ended. Threshold: the reading before plus what the gauge moved with the"
                        + " victim alone (baseline max − min: %s), at least the victim's own share (its download: 1"
                        + " inflight file, 3 descriptors).%n%n", GaugeSampler.EVERY_MILLIS,
                context.descriptorsExported() ? "`process_open_fds`" : "descriptors counted in `/proc/<pid>/fd`",
                context.spread().entrySet().stream().map(e -> String.format(Locale.ROOT, "%s %s",
                        e.getKey().label(), number(e.getValue()))).collect(Collectors.joining(", "))));
        out.append(String.format(Locale.ROOT, "Generator the limit: whether the harness (attacker and victim share"
                + " its CPU) used %.0f %% or more of the CPU it may use while launching the attack; then the attack"
                + " went as fast as the load generator could send it, not as fast as the server could take it, and"
                + " the victim's own TLS work waited for the same CPU. Held: no victim download failed or took over"
                + " 2 s, and every gauge was back within the idle timeout (%d s, give or take one reading; for the"
                + " HTTP/1.1 waits, within"
                + " their `wait`: an HTTP/1.1 client's close is not seen while its wait is parked, as documented).%n",
                AttackRun.GENERATOR_BOUND * 100, HostileBench.IDLE_TIMEOUT.toSeconds()));
        List<AttackRun> failing = runs.stream().filter(r -> !r.victim().failures().isEmpty()).toList();
        if (!failing.isEmpty()) {
            out.append("\nThe victim's failures (first distinct ones per attack):\n\n");
            for (AttackRun run : failing) {
                out.append("- ").append(run.kind().label()).append(": ")
                        .append(String.join("; ", run.victim().failures())).append('\n');
            }
        }
        if (context.keptAt() != null) {
            out.append("\nThe run did not hold: the work directory, with the server log (`pintle.log`), is kept at `")
                    .append(context.keptAt()).append("`.\n");
        }
        return out.toString();
    }

    private static void endRow(StringBuilder out, String label, GaugeSampler.Sample sample) {
        out.append("| ").append(label).append(" |");
        for (Gauge gauge : Gauge.values()) {
            out.append(' ').append(number(sample.get(gauge))).append(" |");
        }
        out.append('\n');
    }

    /** @return "yes", or what failed: the victim, and the gauges not back within the bound */
    private static String heldCell(AttackRun run) {
        if (held(run)) {
            return "yes";
        }
        List<String> failed = new java.util.ArrayList<>();
        if (run.victim().slow() > 0 || run.victim().count() == 0) {
            failed.add("victim");
        }
        String late = run.gauges().entrySet().stream()
                .filter(e -> !inTime(e.getValue(), run))
                .map(e -> e.getKey().label()).collect(Collectors.joining(", "));
        if (!late.isEmpty()) {
            failed.add(late + " not back in " + Math.round(run.boundSeconds()) + " s");
        }
        return "**no**: " + String.join("; ", failed);
    }

    /** @return one reading in one line, for the progress output */
    static String readings(GaugeSampler.Sample sample) {
        StringBuilder line = new StringBuilder();
        for (Gauge gauge : Gauge.values()) {
            line.append(line.length() == 0 ? "" : ", ").append(gauge.label()).append(' ')
                    .append(number(sample.get(gauge)));
        }
        return line.toString();
    }

    /** @return the gauges in one line, for the progress output */
    static String gaugeLine(Map<Gauge, AttackRun.Change> changes) {
        return changes.entrySet().stream().map(e -> e.getKey().label() + " " + change(e.getValue()))
                .collect(Collectors.joining("; "));
    }

    private static String change(AttackRun.Change c) {
        String back = !c.back() ? "**not back**" : c.backSeconds() == 0 ? "at once"
                : String.format(Locale.ROOT, "%.1f s", c.backSeconds());
        return number(c.before()) + " → " + number(c.peak()) + " → " + number(c.after()) + " (" + back + ")";
    }

    private static String generator(AttackRun run) {
        return String.format(Locale.ROOT, "%s: harness %.0f %% of its CPU over the %.1f s launch; server %.2f cores",
                run.generatorBound() ? "**yes**" : "no", run.harnessCpu() * 100, run.launchSeconds(),
                run.serverCpu());
    }

    private static String number(double value) {
        return Double.isNaN(value) ? "?" : String.format(Locale.ROOT, "%,.0f", value);
    }

    private static String ms(double millis) {
        return Double.isNaN(millis) ? "–" : String.format(Locale.ROOT, millis < 10 ? "%.1f" : "%,.0f", millis);
    }

    private static String ratio(double value, double base) {
        return Double.isNaN(value) || Double.isNaN(base) || base == 0 ? "–"
                : String.format(Locale.ROOT, "%.1f×", value / base);
    }

    private static String cell(String text) {
        return text.isEmpty() ? "–" : text.replace("|", "\\|");
    }

    private static String orNone(String cpus) {
        return cpus == null ? "none (not pinned)" : cpus;
    }

    private static String orUnknown(String text) {
        return text == null ? "?" : text;
    }
}
