package io.pintle.bench.uploads;

import io.pintle.bench.plot.RatioBars;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/** The Markdown report and the plot of {@code bench/uploads}. */
final class UploadReport {
    private static final double MAX_RATIO = 1.6;

    private UploadReport() {}

    /**
     * @param date the run's start
     * @param minutes the run's length
     * @param options what was run
     * @param layout the files and the password file
     * @param targets the servers, as started
     * @param loadBefore {@code /proc/loadavg} at the start
     * @param loadAfter and at the end
     * @param notes said before the tables
     */
    record Context(Instant date, double minutes, UploadOptions options, UploadLayout layout,
            List<UploadTarget> targets, String loadBefore, String loadAfter, List<String> notes) {}

    static String render(Context context, List<Cell> cells) throws IOException {
        UploadOptions options = context.options();
        StringBuilder out = new StringBuilder();
        out.append(String.format(Locale.ROOT, "## bench/uploads, %s (%.1f min)%n%n", context.date(),
                context.minutes()));
        out.append(String.format(Locale.ROOT, "- Machine: CPUs %s online; load average at the start `%s`, at the end"
                        + " `%s`; reports and temporary files on %s%n", onlineCpus(),
                context.loadBefore(), context.loadAfter(), fileSystem(options.work())));
        out.append("- Built from: ").append(options.commit() == null ? "unknown" : options.commit()).append('\n');
        out.append("- Pinning: servers on CPU ").append(options.serverCpu() < 0 ? "(none)" : options.serverCpu())
                .append(", this harness and the load generators (its children) on CPUs ")
                .append(options.clientCpus() == null ? "(none)" : options.clientCpus()).append('\n');
        for (UploadTarget target : context.targets()) {
            out.append("- ").append(target.name()).append(": `").append(target.command()).append("`\n");
        }
        out.append("- Pintle's configuration: the demo's, with its own port, `[uploads] htpasswd` pointed at the"
                + " shared file, and this block appended (then `[log] access = false`): `").append(options.pintleConfig().strip()
                .replace("\n", "; ")).append("`\n");
        out.append("- Basic auth: user `rudder`, one htpasswd file for both servers, ")
                .append(context.layout().hashScheme()).append('\n');
        out.append(String.format(Locale.ROOT, "- Each cell: %,d uploads of a %,d-byte report (`<date>@<uuid>.log.gz`,"
                        + " random bytes), `PUT /reports/<name>`, TLS 1.3, no client certificate; before the first"
                        + " row, each server got %,d unmeasured uploads with ab and %,d with curl -Z; rows alternate"
                        + " which server goes first%n", options.uploads(), options.reportBytes(), options.warmup(),
                Math.min(options.warmup(), options.uploads())));
        out.append("- Versions: ").append(version("ab", "-V")).append("; ").append(version("curl", "--version"))
                .append('\n');
        out.append("- **Durability differs:** Pintle writes each body to a hidden temporary file, fsyncs it, renames"
                + " it and fsyncs the directory; nginx's dav module writes its temporary file and renames it without"
                + " fsync, so an nginx 201 does not mean the report is on disk.\n");
        for (String note : context.notes()) {
            out.append("- ").append(note).append('\n');
        }
        out.append('\n');
        out.append("| # | Row | Pintle uploads/s | nginx uploads/s | Pintle / nginx | p50 / p99 ms, Pintle |"
                + " p50 / p99 ms, nginx | Server CPU ms / upload (P / N) | Generator CPU share (P / N) |"
                + " Generator the limit? | Files complete (P / N) | Errors (P / N) |\n");
        out.append("|---:|---|---:|---:|---:|---:|---:|---:|---:|---|---|---|\n");
        List<UploadOptions.Row> rows = options.rows();
        for (int i = 0; i < rows.size(); i++) {
            Optional<Cell> pintle = find(cells, rows.get(i), "Pintle");
            Optional<Cell> nginx = find(cells, rows.get(i), "nginx");
            out.append(String.format(Locale.ROOT, "| %d | %s | %s | %s | %s | %s | %s | %s / %s | %s / %s | %s | %s /"
                            + " %s | %s / %s |%n", i + 1, rows.get(i).label(),
                    pintle.map(c -> rate(c.rate())).orElse("—"), nginx.map(c -> rate(c.rate())).orElse("—"),
                    ratio(pintle, nginx), pintle.map(UploadReport::latency).orElse("—"),
                    nginx.map(UploadReport::latency).orElse("—"),
                    pintle.map(c -> ms(c.serverCpuPerUpload())).orElse("—"),
                    nginx.map(c -> ms(c.serverCpuPerUpload())).orElse("—"),
                    pintle.map(c -> percent(c.generatorShare())).orElse("—"),
                    nginx.map(c -> percent(c.generatorShare())).orElse("—"),
                    limit(pintle, nginx),
                    pintle.map(c -> c.destination().summary()).orElse("—"),
                    nginx.map(c -> c.destination().summary()).orElse("—"),
                    pintle.map(c -> Long.toString(c.outcome().errorCount())).orElse("—"),
                    nginx.map(c -> Long.toString(c.outcome().errorCount())).orElse("—")));
        }
        out.append('\n');
        out.append("Uploads/s: uploads answered 201 or 204 over the generator's run, from its start to its exit."
                + " Latency: per upload, connection and handshake included, as the generator measures it (ab:"
                + " its percentile table; curl: each transfer's `time_total`). Server CPU: the server's processes'"
                + " user + system time (`/proc/<pid>/stat`; nginx: master and worker) over the run, per upload"
                + " sent. Generator CPU share: its processes' CPU time (as waited for by this JVM) over the wall"
                + " time, i.e. of the one CPU it is pinned to; at " + percent(Cell.GENERATOR_LIMIT_SHARE)
                + " or more it is counted as the limit. Files complete: expected files present under their final"
                + " name and byte-identical to what was sent (all compared), and any other file or temporary file"
                + " left is named; ab sends every upload to one name (it cannot vary the URL), so its rows expect"
                + " one file, replaced by every upload after the first (201, then 204s).\n\n");
        out.append("Per cell (server CPU per upload split into user and system time, and the part of it Pintle's JIT"
                + " compiler threads took):\n\n| # | Server | Wall s | Protocol (as the generator reports it) |"
                + " Connections | Server, cores | Server CPU ms / upload: user / system / JIT | Other processes, cores |"
                + " Generator exit | Generator said |\n"
                + "|---:|---|---:|---|---:|---:|---|---:|---:|---|\n");
        for (int i = 0; i < rows.size(); i++) {
            for (Cell cell : cells) {
                if (!cell.row().equals(rows.get(i))) {
                    continue;
                }
                Map<String, Long> said = new TreeMap<>(cell.outcome().messages());
                cell.outcome().errors().forEach((k, v) -> said.merge("error: " + k, v, Long::sum));
                out.append(String.format(Locale.ROOT, "| %d | %s | %.2f | %s | %s | %.2f | %s / %s / %s | %.2f | %d |"
                                + " %s |%n",
                        i + 1, cell.server(), cell.wallSeconds(), cell.outcome().protocol(),
                        cell.outcome().connections() < 0 ? "—" : String.format(Locale.ROOT, "%,d",
                                cell.outcome().connections()), cell.serverCores(),
                        ms((cell.serverCpuMillis() - cell.serverSystemMillis()) / cell.uploads()),
                        ms(cell.serverSystemMillis() / cell.uploads()), ms(cell.serverJitMillis() / cell.uploads()),
                        cell.otherCores(),
                        cell.outcome().exitStatus(), said.isEmpty() ? "" : said.entrySet().stream()
                                .limit(4).map(e -> e.getKey().replace("|", "\\|") + " × " + e.getValue())
                                .reduce((a, b) -> a + "; " + b).orElse("")));
            }
        }
        out.append("\nGenerators' commands (first cell of each row; `<pw>` is the password):\n\n");
        for (int i = 0; i < rows.size(); i++) {
            for (Cell cell : cells) {
                if (cell.row().equals(rows.get(i))) {
                    out.append(i + 1).append(". `").append(cell.command().length() > 400
                            ? cell.command().substring(0, 400) + " …" : cell.command()).append("`\n");
                    break;
                }
            }
        }
        return out.toString();
    }

    static void plot(Context context, List<Cell> cells, Path file) throws IOException {
        List<RatioBars.Bar> bars = new ArrayList<>();
        for (UploadOptions.Row row : context.options().rows()) {
            Optional<Cell> pintle = find(cells, row, "Pintle");
            Optional<Cell> nginx = find(cells, row, "nginx");
            double ratio = pintle.isPresent() && nginx.isPresent() && nginx.get().rate() > 0
                    ? pintle.get().rate() / nginx.get().rate() : Double.NaN;
            double cpu = pintle.isPresent() && nginx.isPresent() && pintle.get().serverCpuPerUpload() > 0
                    ? nginx.get().serverCpuPerUpload() / pintle.get().serverCpuPerUpload() : Double.NaN;
            String limit = pintle.map(Cell::generatorLimit).orElse(false) || nginx.map(Cell::generatorLimit)
                    .orElse(false) ? " (generator the limit)" : "";
            bars.add(new RatioBars.Bar(row.label() + limit, ratio, cpu, 1.0));
        }
        RatioBars.write("Report uploads, Pintle / nginx WebDAV PUT (bench/uploads, " + context.date() + ")", bars,
                List.of(new RatioBars.Mark(1.0, "= nginx", true)), MAX_RATIO,
                List.of("Thick bars: Pintle's uploads/s over nginx's (green: at least nginx's; red: below). Thin grey"
                                + " bars: nginx's server CPU per upload over Pintle's.",
                        "Pintle fsyncs every upload before its rename; nginx does not. No bar: Pintle not run."),
                file);
    }

    private static Optional<Cell> find(List<Cell> cells, UploadOptions.Row row, String server) {
        return cells.stream().filter(c -> c.row().equals(row) && c.server().equals(server)).findFirst();
    }

    private static String ratio(Optional<Cell> pintle, Optional<Cell> nginx) {
        if (pintle.isEmpty() || nginx.isEmpty() || nginx.get().rate() == 0) {
            return "—";
        }
        return String.format(Locale.ROOT, "%.2f×", pintle.get().rate() / nginx.get().rate());
    }

    private static String limit(Optional<Cell> pintle, Optional<Cell> nginx) {
        List<String> parts = new ArrayList<>();
        pintle.ifPresent(c -> parts.add("P " + (c.generatorLimit() ? "**yes**" : "no")));
        nginx.ifPresent(c -> parts.add("N " + (c.generatorLimit() ? "**yes**" : "no")));
        return String.join(", ", parts);
    }

    private static String latency(Cell cell) {
        return ms(cell.outcome().p50Millis()) + " / " + ms(cell.outcome().p99Millis());
    }

    private static String rate(double value) {
        return String.format(Locale.ROOT, "%,.0f", value);
    }

    private static String percent(double share) {
        return String.format(Locale.ROOT, "%.0f%%", 100 * share);
    }

    /** Three significant digits at most. */
    private static String ms(double value) {
        if (Double.isNaN(value)) {
            return "—";
        }
        double magnitude = Math.abs(value);
        return String.format(Locale.ROOT, magnitude >= 100 ? "%.0f" : magnitude >= 10 ? "%.1f" : "%.2f", value);
    }

    private static String onlineCpus() {
        try {
            return java.nio.file.Files.readString(Path.of("/sys/devices/system/cpu/online")).strip();
        } catch (IOException e) {
            return "?";
        }
    }

    private static String fileSystem(Path directory) {
        try {
            Process process = new ProcessBuilder("stat", "-f", "-c", "%T", directory.toString())
                    .redirectErrorStream(true).start();
            String type = new String(process.getInputStream().readAllBytes()).strip();
            process.waitFor();
            return "`" + type + "` (`stat -f`)";
        } catch (IOException | InterruptedException e) {
            return "an unknown file system";
        }
    }

    private static String version(String program, String option) {
        try {
            Process process = new ProcessBuilder(program, option).redirectErrorStream(true).start();
            String text = new String(process.getInputStream().readAllBytes());
            process.waitFor();
            return text.lines().filter(l -> l.contains("Version") || l.startsWith("curl ")).findFirst()
                    .map(String::strip).orElse(program);
        } catch (IOException | InterruptedException e) {
            return program + " (version unknown)";
        }
    }
}
