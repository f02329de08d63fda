package io.pintle.bench.perf;

import java.time.Instant;
import java.util.List;
import java.util.Locale;

/** The Markdown report of {@code bench/perf}. */
final class PerfReport {
    private PerfReport() {}

    /**
     * @param date the run's start
     * @param minutes the run's length
     * @param options what was run
     * @param nginxVersion what {@code nginx -v} said
     * @param cfVersion what {@code cf-agent --version} said
     * @param harnessJdk the load generator's JDK
     * @param notes details of rows, printed after the tables
     */
    record Context(Instant date, double minutes, PerfOptions options, String nginxVersion, String cfVersion,
            String harnessJdk, List<String> notes) {}

    static String render(Context context, List<PerfRow> rows) {
        StringBuilder out = new StringBuilder();
        PerfOptions options = context.options();
        out.append(String.format(Locale.ROOT, "## bench/perf, %s (%.1f min, %d cores)%n%n", context.date(),
                context.minutes(), Runtime.getRuntime().availableProcessors()));
        out.append(String.format(Locale.ROOT, "- Pintle: `%s %s -jar %s`, one JVM per server key%n",
                options.pintleJava(), String.join(" ", options.pintleJvmOptions()), options.pintleJar()));
        out.append("- Pintle configuration appended to the demo's: `")
                .append(options.pintleConfig().replace("\n", "; ")).append("`\n");
        out.append("- Pintle's TLS provider: ").append(options.pintleTlsProvider() != null
                ? "`[tls] provider = \"" + options.pintleTlsProvider() + "\"`" : "its default").append('\n');
        out.append("- ").append(context.nginxVersion()).append(", ").append(context.cfVersion())
                .append("; load generator: Jetty HttpClient on JDK ").append(context.harnessJdk()).append('\n');
        out.append(String.format(Locale.ROOT, "- Windows: %d s warm-up + %d s measured per server and row"
                        + " (large file: 1 + 8 s)%n%n",
                options.warmup().toSeconds(), options.window().toSeconds()));
        out.append("| Row | Pintle | nginx | cf-serverd | Pintle / nginx | Target | Server CPU per unit, Pintle"
                + " (without JIT) / nginx | CPU per unit, Pintle ÷ nginx | Load generator, cores (P / N) |"
                + " Other processes, cores (P / N) | Errors (P / N) |\n");
        out.append("|---|---:|---:|---|---:|---|---|---:|---|---|---|\n");
        for (PerfRow row : rows) {
            Boolean met = row.met();
            String target = row.target() + (met == null ? "" : met ? " ✅" : " ❌");
            if (met == null && row.unit().equals("MiB")) {
                target += row.pintle().value() < 1024 && row.pintle().errors() == 0 ? " ✅" : " ❌";
            } else if (met == null) {
                target += row.pintle().errors() == 0 ? " ✅" : " ❌";
            }
            out.append(String.format(Locale.ROOT, "| %s | %s | %s | %s | %s | %s | %s (%s) / %s | %s | %.2f / %.2f |"
                            + " %.2f / %.2f | %d / %d |%n", row.label(), value(row, row.pintle()),
                    value(row, row.nginx()), row.cfServerd(),
                    Double.isNaN(row.ratio()) ? "—" : String.format(Locale.ROOT, "%.2f×", row.ratio()), target,
                    row.pintle().serverCpuPerUnit(), PerfRow.format(row.pintle().cpuPerUnitNoJit()),
                    row.nginx().serverCpuPerUnit(),
                    Double.isNaN(row.cpuRatio()) ? "—" : String.format(Locale.ROOT, "%.1f×", row.cpuRatio()),
                    row.pintle().cpu().client(),
                    row.nginx().cpu().client(), row.pintle().cpu().others(), row.nginx().cpu().others(),
                    row.pintle().errors(), row.nginx().errors()));
        }
        out.append("\ncf-serverd: (a) not comparable: a cf-agent process per copy, no keep-alive request stream, no"
                + " HTTP; (b) not comparable: CFEngine's own protocol and key exchange, not TLS with HTTP; (c) not run:"
                + " one cf-agent process per agent update would make the load generator the bottleneck; (d) not run:"
                + " needs a CFEngine-protocol client holding 10,000 sessions.\n");
        out.append("\nLatency, ms (p50 / p99), Pintle vs nginx; for the herd, per agent update; for the idle row,"
                + " a new connection with one request while the idle ones are open:\n\n");
        out.append("| Row | Pintle | nginx | Server cores busy (P / N) | Pintle's JIT / GC threads, cores |\n"
                + "|---|---|---|---|---|\n");
        for (PerfRow row : rows) {
            out.append(String.format(Locale.ROOT, "| %s | %.2f / %.2f | %.2f / %.2f | %.2f / %.2f | %.2f / %.2f |%n",
                    row.label(), row.pintle().p50Millis(), row.pintle().p99Millis(), row.nginx().p50Millis(),
                    row.nginx().p99Millis(), row.pintle().cpu().server(), row.nginx().cpu().server(),
                    row.pintle().cpu().serverJit(), row.pintle().cpu().serverGc()));
        }
        boolean errors = false;
        for (PerfRow row : rows) {
            for (PerfRow.Cell cell : List.of(row.pintle(), row.nginx())) {
                if (cell.errors() > 0) {
                    if (!errors) {
                        out.append("\nErrors:\n\n");
                        errors = true;
                    }
                    out.append("- ").append(row.label()).append(", ")
                            .append(cell == row.pintle() ? PerfBench.PINTLE : PerfBench.NGINX).append(": ")
                            .append(cell.errorKinds()).append('\n');
                }
            }
        }
        if (!context.notes().isEmpty()) {
            out.append('\n');
            context.notes().forEach(note -> out.append("- ").append(note).append('\n'));
        }
        return out.toString();
    }

    private static String value(PerfRow row, PerfRow.Cell cell) {
        return switch (row.unit()) {
            case "s to complete" -> String.format(Locale.ROOT, "%.1f s", cell.value());
            case "MiB" -> String.format(Locale.ROOT, "%.0f MiB", cell.value());
            default -> String.format(Locale.ROOT, "%,.0f %s", cell.value(), row.unit());
        };
    }
}
