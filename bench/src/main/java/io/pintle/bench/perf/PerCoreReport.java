package io.pintle.bench.perf;

import io.pintle.bench.plot.RatioBars;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/** {@code bench/perf}'s per-core report: Markdown tables and the ratio plot. */
final class PerCoreReport {
    private static final double TARGET = 0.9;
    private static final double MAX_RATIO = 1.6;

    private PerCoreReport() {}

    /**
     * What the report says around its tables.
     *
     * @param date when the run started
     * @param minutes how long it took
     * @param options what it ran with
     * @param nginxVersion {@code nginx -v}
     * @param versions the generators' and Pintle's JVM's first version lines
     */
    record Context(Instant date, double minutes, PerCoreOptions options, String nginxVersion, List<String> versions) {}

    static String render(Context context, List<PerCoreRow> rows) {
        PerCoreOptions o = context.options();
        boolean b = rows.stream().anyMatch(r -> r.figures().containsKey(PerCoreBench.PINTLE_B));
        boolean noCa = rows.stream().anyMatch(r -> r.figures().containsKey(PerCoreBench.NGINX_NO_CA));
        StringBuilder md = new StringBuilder();
        md.append("# bench/perf: Pintle against nginx, per core, C load generators (issue 23)\n\n");
        md.append(String.format(Locale.ROOT, "%s, %.1f minutes, %d CPUs (%s). Servers pinned to CPU %s (taskset), load"
                        + " generators (and this harness) to CPU %s. %d round%s of %d s per row and contender,"
                        + " interleaved (order rotated each round); figures are medians of the rounds.%n%n",
                context.date(), context.minutes(), cpus().size(), cpus().stream().distinct()
                        .collect(Collectors.joining(", ")), o.serverCpus(),
                o.generatorCpus(), o.rounds(), o.rounds() > 1 ? "s" : "", o.window().toSeconds()));
        md.append("- Pintle: `").append(o.pintleJava()).append(' ').append(String.join(" ", o.pintleJvmOptions()))
                .append(" -jar pintle.jar serve`, one JVM per server key, TLS provider ")
                .append(o.pintleTlsProvider() == null ? "default" : o.pintleTlsProvider())
                .append("; configuration block: `").append(o.pintleConfig().replace("\n", "; ")).append("`\n");
        if (o.pintleB()) {
            md.append("- pintle-b: the same jar with JVM options `").append(String.join(" ",
                    o.pintleBJvmOptions() != null ? o.pintleBJvmOptions() : o.pintleJvmOptions()))
                    .append("` and configuration block `").append(o.pintleConfig().replace("\n", "; "))
                    .append(o.pintleBConfig() != null ? "; " + o.pintleBConfig().replace("\n", "; ") : "")
                    .append("`, TLS provider ").append(o.pintleBTlsProvider() != null ? o.pintleBTlsProvider()
                            : o.pintleTlsProvider() == null ? "default" : o.pintleTlsProvider())
                    .append("\n");
        }
        md.append("- nginx: ").append(context.nginxVersion()).append(", 1 worker, access log off, TLS 1.3, client"
                + " certificate optional (verified against the nodes' certificates; `/policies/<id>/` needs its"
                + " UID)\n");
        if (noCa) {
            md.append("- nginx optional_no_ca (the `abmethod` rows only): a second nginx, the same but"
                    + " `ssl_verify_client optional_no_ca` (the certificate is asked for and its handshake signature"
                    + " checked, its chain is not verified), as issue 39's independent measurement ran it\n");
        }
        md.append("- generators: ").append(String.join("; ", context.versions()))
                .append("; tlsconn (bench/perf's own, C, OpenSSL, built with gcc at start)\n\n");

        md.append("## Rates\n\n");
        StringBuilder header = new StringBuilder("| row | generator | unit | Pintle | nginx | Pintle / nginx |");
        StringBuilder rule = new StringBuilder("|---|---|---|---:|---:|---:|");
        if (noCa) {
            header.append(" nginx optional_no_ca | Pintle / nginx optional_no_ca |");
            rule.append("---:|---:|");
        }
        if (b) {
            header.append(" pintle-b | pintle-b / Pintle |");
            rule.append("---:|---:|");
        }
        header.append(" server CPU ms / 1000 (Pintle, nginx").append(noCa ? ", nginx optional_no_ca when run" : "")
                .append(b ? ", b" : "")
                .append(") | server process (core busy) | generator process (core busy) | generator-limited |");
        rule.append("---:|---:|---:|---|");
        md.append(header).append('\n').append(rule).append('\n');
        for (PerCoreRow row : rows) {
            if (row.kind() == PerCoreRow.Kind.RATE) {
                md.append("| ").append(row.label()).append(" | ").append(row.generator()).append(" | ")
                        .append(row.unit()).append(" | ").append(value(row, PerCoreBench.PINTLE, "%,.0f"))
                        .append(" | ").append(value(row, PerCoreBench.NGINX, "%,.0f")).append(" | ")
                        .append(ratio(row.ratio(PerCoreBench.PINTLE, PerCoreBench.NGINX))).append(" |");
                if (noCa) {
                    md.append(' ').append(value(row, PerCoreBench.NGINX_NO_CA, "%,.0f")).append(" | ")
                            .append(ratio(row.ratio(PerCoreBench.PINTLE, PerCoreBench.NGINX_NO_CA))).append(" |");
                }
                if (b) {
                    md.append(' ').append(value(row, PerCoreBench.PINTLE_B, "%,.0f")).append(" | ")
                            .append(ratio(row.ratio(PerCoreBench.PINTLE_B, PerCoreBench.PINTLE))).append(" |");
                }
                md.append(' ').append(each(row, f -> String.format(Locale.ROOT, "%.0f", f.cpuPerThousand())))
                        .append(" | ").append(each(row, f -> busy(f.serverShare(), f.serverCoreBusy())))
                        .append(" | ").append(each(row, f -> busy(f.generatorShare(), f.generatorCoreBusy())))
                        .append(" | ").append(limited(row))
                        .append(" |\n");
            } else if (row.kind() == PerCoreRow.Kind.ELSEWHERE) {
                md.append("| ").append(row.label()).append(" | ").append(row.generator()).append(" | | | | |")
                        .append(noCa ? " | |" : "").append(b ? " | |" : "").append(" | | | |\n");
            }
        }
        md.append("\nPer contender, in the order of the columns (Pintle, nginx")
                .append(noCa ? ", nginx optional_no_ca in the rows that run it" : "").append(b ? ", pintle-b" : "")
                .append("). A generator whose process is busy ≥ 90 % of its core (its CPU time over the window, from"
                + " /proc/<pid>/stat) limited the row: the server could have done more, and the ratio says less than"
                + " the servers' difference. Server CPU per 1000 exchanges is the server processes' user + system"
                + " time; \"core busy\" is the whole CPU's (/proc/stat, kernel and softirq work for loopback"
                + " included, which the processes' own times do not all show).\n\n");

        if (rows.stream().anyMatch(r -> r.kind() == PerCoreRow.Kind.LATENCY)) {
            md.append("## Latencies\n\n| row | generator | Pintle p50 / p99 | nginx p50 / p99 | Pintle / nginx (p50)"
                    + " |").append(b ? " pintle-b p50 / p99 |" : "").append(" generator process (core busy) |"
                    + " generator-limited |\n|---|---|---:|---:|---:|").append(b ? "---:|" : "")
                    .append("---:|---|\n");
            for (PerCoreRow row : rows) {
                if (row.kind() == PerCoreRow.Kind.LATENCY) {
                    md.append("| ").append(row.label()).append(" | ").append(row.generator()).append(" | ")
                            .append(latency(row, PerCoreBench.PINTLE)).append(" | ")
                            .append(latency(row, PerCoreBench.NGINX)).append(" | ")
                            .append(ratio(row.ratio(PerCoreBench.PINTLE, PerCoreBench.NGINX))).append(" |");
                    if (b) {
                        md.append(' ').append(latency(row, PerCoreBench.PINTLE_B)).append(" |");
                    }
                    md.append(' ').append(each(row, f -> busy(f.generatorShare(), f.generatorCoreBusy()))).append(" | ")
                            .append(limited(row)).append(" |\n");
                }
            }
            md.append("\nFirst byte: from the request's write, right after the handshake, to the first byte of the"
                    + " answer, one connection at a time (tlsconn's only difference between the two client kinds is"
                    + " the TCP_NODELAY call).\n\n");
        }

        if (rows.stream().anyMatch(r -> r.kind() == PerCoreRow.Kind.ACCESS_LOG)) {
            md.append("## Access log\n\n| row | generator | unit | log off | log on | cost (rate) | server CPU ms / 1000"
                    + " (off, on) | cost (CPU) | generator-limited |\n|---|---|---|---:|---:|---:|---:|---:|---|\n");
            for (PerCoreRow row : rows) {
                if (row.kind() == PerCoreRow.Kind.ACCESS_LOG) {
                    double onOverOff = row.ratio(PerCoreBench.PINTLE_LOG, PerCoreBench.PINTLE_LOG_OFF);
                    PerCoreRow.Figures off = row.figures().get(PerCoreBench.PINTLE_LOG_OFF);
                    PerCoreRow.Figures on = row.figures().get(PerCoreBench.PINTLE_LOG);
                    double cpu = off == null || on == null ? Double.NaN
                            : on.cpuPerThousand() / off.cpuPerThousand() - 1;
                    md.append("| ").append(row.label()).append(" | ").append(row.generator()).append(" | ")
                            .append(row.unit()).append(" | ").append(value(row, PerCoreBench.PINTLE_LOG_OFF, "%,.0f"))
                            .append(" | ").append(value(row, PerCoreBench.PINTLE_LOG, "%,.0f")).append(" | ")
                            .append(Double.isNaN(onOverOff) ? "—" : String.format(Locale.ROOT, "%.1f %%",
                                    (1 - onOverOff) * 100))
                            .append(" | ").append(each(row, f -> String.format(Locale.ROOT, "%.0f",
                                    f.cpuPerThousand()))).append(" | ")
                            .append(Double.isNaN(cpu) ? "—" : String.format(Locale.ROOT, "%.1f %%", cpu * 100))
                            .append(" | ").append(limited(row)).append(" |\n");
                }
            }
            md.append("\nTwo JVMs of the same age, started together and warmed alike, RSA-2048 key: one with `[log]"
                    + " access = true` (its lines going to a file as the harness redirects its output), one without;"
                    + " cost = rate lost, and server CPU per 1000 added, with the log on.\n\n");
        }

        List<String> remarks = new ArrayList<>();
        for (PerCoreRow row : rows) {
            if (!row.comment().isEmpty()) {
                remarks.add(row.comment());
            }
            row.figures().forEach((name, f) -> {
                if (f.othersCores() > PerCoreBench.DISTURBED) {
                    remarks.add(String.format(Locale.ROOT, "%s, %s: disturbed, other processes took %.2f cores"
                            + " during its median window (each window measured up to %d times).", row.label(), name,
                            f.othersCores(), PerCoreBench.ATTEMPTS));
                }
                if (f.failed() > 0) {
                    remarks.add(String.format(Locale.ROOT, "%s, %s: %,d exchanges failed or answered otherwise"
                            + " (first: %s).", row.label(), name, f.failed(), f.firstError()));
                }
            });
        }
        if (!remarks.isEmpty()) {
            md.append("## Notes\n\n");
            remarks.forEach(r -> md.append("- ").append(r).append('\n'));
            md.append('\n');
        }
        md.append("## Every round\n\n| row | contender | values per round |\n|---|---|---|\n");
        for (PerCoreRow row : rows) {
            row.figures().forEach((name, f) -> md.append("| ").append(row.label()).append(" | ").append(name)
                    .append(" | ").append(f.rounds().stream().map(v -> String.format(Locale.ROOT,
                            row.kind() == PerCoreRow.Kind.LATENCY ? "%.2f" : "%,.0f", v))
                            .collect(Collectors.joining(", "))).append(" |\n"));
        }
        return md.toString();
    }

    /** @return the model name of every CPU of the machine (not only those this JVM is pinned to) */
    private static List<String> cpus() {
        try {
            return java.nio.file.Files.readAllLines(Path.of("/proc/cpuinfo")).stream()
                    .filter(l -> l.startsWith("model name")).map(l -> l.substring(l.indexOf(':') + 1).strip())
                    .toList();
        } catch (IOException e) {
            return List.of("?");
        }
    }

    /** @return the one-line summary printed as each row ends */
    static String summary(PerCoreRow row) {
        StringBuilder line = new StringBuilder(row.label()).append(": ");
        row.figures().forEach((name, f) -> line.append(String.format(Locale.ROOT, "%s %.2f %s (CPU %.0f ms/1000,"
                + " generator %.0f %%); ", name, f.value(), row.unit(), f.cpuPerThousand(), f.generatorShare() * 100)));
        double ratio = row.kind() == PerCoreRow.Kind.ACCESS_LOG
                ? row.ratio(PerCoreBench.PINTLE_LOG, PerCoreBench.PINTLE_LOG_OFF)
                : row.ratio(PerCoreBench.PINTLE, PerCoreBench.NGINX);
        return line.append("ratio ").append(ratio(ratio)).toString();
    }

    static void plot(List<PerCoreRow> rows, Instant date, Path file) throws IOException {
        List<RatioBars.Bar> bars = rows.stream().filter(r -> r.kind() == PerCoreRow.Kind.RATE)
                .map(r -> {
                    PerCoreRow.Figures p = r.figures().get(PerCoreBench.PINTLE);
                    PerCoreRow.Figures n = r.figures().get(PerCoreBench.NGINX);
                    double cheaper = p == null || n == null || p.cpuPerThousand() == 0 ? Double.NaN
                            : n.cpuPerThousand() / p.cpuPerThousand();
                    boolean disturbed = r.figures().values().stream()
                            .anyMatch(f -> f.othersCores() > PerCoreBench.DISTURBED);
                    return new RatioBars.Bar(shorten(r.label()) + (r.generatorLimited().isEmpty() ? ""
                            : " (gen.-limited)") + (disturbed ? " (disturbed)" : ""),
                            r.ratio(PerCoreBench.PINTLE, PerCoreBench.NGINX), cheaper, TARGET);
                }).toList();
        RatioBars.write("Pintle / nginx per core: server on one CPU, C generator on the other (bench/perf, " + date
                        + ")", bars,
                List.of(new RatioBars.Mark(TARGET, "target 0.9×", false), new RatioBars.Mark(1.0, "= nginx", true)),
                MAX_RATIO, List.of("Thick bars: Pintle's rate over nginx's (green: at or above 0.9; red: below)."
                        + " Thin grey bars: nginx's server CPU per request over Pintle's.",
                        "Rate rows only; latencies, the herd and the access log are in the report."), file);
    }

    private static String shorten(String label) {
        return label.replace(" client certificate", " client cert.").replace("TCP_NODELAY client", "NODELAY")
                .replace("Nagle client", "Nagle").replace("New TLS connection", "New conn.")
                .replace(" server key", "").replace("conditional GET (304)", "304").replace("GET 1 KiB (200)",
                        "1 KiB").replace(" (no TCP_NODELAY)", "");
    }

    private static String value(PerCoreRow row, String name, String format) {
        PerCoreRow.Figures f = row.figures().get(name);
        if (f == null || Double.isNaN(f.value())) {
            return "—";
        }
        double min = f.rounds().stream().mapToDouble(Double::doubleValue).min().orElse(Double.NaN);
        double max = f.rounds().stream().mapToDouble(Double::doubleValue).max().orElse(Double.NaN);
        String value = String.format(Locale.ROOT, format, f.value());
        return f.rounds().size() > 1 ? value + " (" + String.format(Locale.ROOT, format, min) + "–"
                + String.format(Locale.ROOT, format, max) + ")" : value;
    }

    private static String latency(PerCoreRow row, String name) {
        PerCoreRow.Figures f = row.figures().get(name);
        return f == null ? "—" : String.format(Locale.ROOT, "%s / %s ms", millis(f.value()), millis(f.p99Millis()));
    }

    private static String millis(double value) {
        return Double.isNaN(value) ? "—" : value >= 100 ? String.format(Locale.ROOT, "%,.0f", value)
                : String.format(Locale.ROOT, "%.2f", value);
    }

    private static String each(PerCoreRow row, java.util.function.Function<PerCoreRow.Figures, String> figure) {
        return row.figures().values().stream().map(figure).collect(Collectors.joining(", "));
    }

    private static String busy(double process, double core) {
        return Double.isNaN(core) ? percent(process) : percent(process) + " (" + percent(core) + ")";
    }

    private static String percent(double share) {
        return Double.isNaN(share) ? "—" : String.format(Locale.ROOT, "%.0f %%", share * 100);
    }

    private static String ratio(double ratio) {
        return Double.isNaN(ratio) ? "—" : String.format(Locale.ROOT, "%.2f", ratio);
    }

    private static String limited(PerCoreRow row) {
        List<String> limited = row.generatorLimited();
        if (limited.isEmpty()) {
            return "no";
        }
        Map<String, PerCoreRow.Figures> figures = row.figures();
        return "**yes** (" + limited.stream().map(n -> n + " " + percent(figures.get(n).generatorShare()))
                .collect(Collectors.joining(", ")) + ")";
    }
}
