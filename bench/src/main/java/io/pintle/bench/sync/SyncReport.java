package io.pintle.bench.sync;

import io.pintle.bench.sync.Sample.Scenario;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.function.ToDoubleFunction;
import java.util.stream.Stream;

/** Formats the sync benchmark's results as Markdown. */
final class SyncReport {
    static final String CF = "cf-serverd + cf-agent";
    static final String NGINX = "nginx, per file";
    static final String PINTLE_FILES = "Pintle, per file";
    static final String PINTLE_ARCHIVE = "Pintle archive";
    static final String PINTLE_SYNC = "Pintle sync";
    /** Not a contestant: Pintle's first manifest request after each change, made before the contestants'. */
    static final String FIRST_MANIFEST = "first manifest after the change";
    /** Column order. */
    private static final List<String> CONTESTANTS = List.of(CF, NGINX, PINTLE_FILES, PINTLE_ARCHIVE, PINTLE_SYNC);
    private static final String NONE = "–";
    /** The latency target: at least this many times faster than cf-serverd. */
    private static final double CF_TARGET = 20;

    private SyncReport() {}

    /**
     * What the report says besides the samples.
     *
     * @param date start of the run
     * @param options the options
     * @param proxy the proxy check
     * @param trees the trees by file count
     * @param views which Pintle views the server answered
     * @param nginxVersion {@code nginx -v}
     * @param cfVersion {@code cf-agent --version}
     * @param cfEmptyRunMillis cf-agent's run time with an empty policy
     * @param notes anything not measured, and why
     */
    record Context(Instant date, SyncOptions options, ProxyCheck proxy, Map<Integer, RudderTree> trees,
            SyncBench.Views views, String nginxVersion, String cfVersion, double cfEmptyRunMillis, List<String> notes) {}

    static String render(Context context, List<Sample> samples) {
        StringBuilder out = new StringBuilder();
        List<String> contestants = CONTESTANTS.stream()
                .filter(name -> samples.stream().anyMatch(s -> s.contestant().equals(name)))
                .toList();
        header(out, context);
        times(out, context, samples, contestants);
        exchanges(out, context, samples, contestants);
        ratios(out, context, samples, contestants);
        targets(out, context, samples, contestants);
        cpu(out, context, samples, contestants);
        checks(out, context, samples);
        return out.toString();
    }

    private static void header(StringBuilder out, Context context) {
        SyncOptions options = context.options();
        out.append("## Pintle sync benchmark (issue 4)\n\n")
                .append("- Date: ").append(context.date()).append('\n')
                .append("- Machine: nproc = ").append(Runtime.getRuntime().availableProcessors()).append(", ")
                .append(cpuModel()).append(", ").append(System.getProperty("os.name")).append(' ')
                .append(System.getProperty("os.version")).append(' ').append(System.getProperty("os.arch"))
                .append('\n')
                .append("- Harness JVM: ").append(System.getProperty("java.vm.name")).append(' ')
                .append(System.getProperty("java.runtime.version")).append(", options `")
                .append(String.join(" ", ManagementFactory.getRuntimeMXBean().getInputArguments())).append("`\n")
                .append("- Servers, all on 127.0.0.1: Pintle (`java -jar pintle.jar serve`, own JVM), ")
                .append(context.nginxVersion()).append(", ").append(context.cfVersion().lines().findFirst().orElse(""))
                .append(" (cf-serverd and cf-agent)\n");
        for (Map.Entry<Integer, RudderTree> tree : context.trees().entrySet()) {
            RudderTree t = tree.getValue();
            out.append("- Tree of ").append(format("%,d", tree.getKey())).append(" files: ")
                    .append(format("%.1f MB", t.bytes() / 1e6)).append(", ")
                    .append(uncheckedDirectories(t)).append(" directories, ")
                    .append(t.symlinks().size()).append(" relative symbolic links; ")
                    .append(format("%.2f MB", t.gzipBytes() / 1e6)).append(" as gzip\n");
        }
        ProxyCheck proxy = context.proxy();
        out.append("- Added latency: a delaying TCP proxy in front of each server, +")
                .append(options.roundTrip().toMillis()).append(" ms per round trip. Measured before the run: ")
                .append("one-byte ping-pong ").append(format("%.2f", proxy.proxiedMillis()))
                .append(" ms median (").append(format("%.2f–%.2f", proxy.proxiedMinMillis(),
                        proxy.proxiedMaxMillis())).append(" ms over ").append(proxy.pings()).append("; direct ")
                .append(format("%.3f", proxy.directMillis())).append(" ms), connect + first ping-pong ")
                .append(format("%.1f", proxy.firstExchangeMillis())).append(" ms (TCP handshake charged), ")
                .append("bulk throughput through it ").append(format("%,.0f", proxy.megabytesPerSecond()))
                .append(" MB/s (direct ").append(format("%,.0f", proxy.directMegabytesPerSecond()))
                .append(" MB/s); turns counted for the ping-pongs: ").append(proxy.turnsCounted()).append('/')
                .append(proxy.pings()).append('\n')
                .append("- Repetitions: ").append(options.repetitions()).append(" (medians shown); cf-agent ")
                .append("through the proxy: ").append(options.cfLatencyRepetitions()).append(", trees up to ")
                .append(options.cfLatencyMaxFiles()).append(" files\n\n");
    }

    private static void times(StringBuilder out, Context context, List<Sample> samples, List<String> contestants) {
        out.append("### Wall time per sync (median, ms)\n\n");
        tableHeader(out, List.of("Files", "Added RTT", "Scenario"), contestants);
        for (Row row : rows(context, true)) {
            out.append("| ").append(format("%,d", row.files())).append(" | ").append(row.latency(context))
                    .append(" | ").append(row.scenario().label());
            for (String contestant : contestants) {
                List<Sample> cell = row.select(samples, contestant);
                out.append(" | ").append(cell.isEmpty() ? NONE : timeCell(cell));
            }
            out.append(" |\n");
        }
        out.append("\nA sync is timed from the client's start to its end: cf-agent as a whole process (start-up and ")
                .append("policy parsing included, about ").append(format("%.0f", context.cfEmptyRunMillis()))
                .append(" ms with an empty policy on this machine), the Java clients from building the HTTP client ")
                .append("(connection and TLS handshake included) to the last file renamed into place. ")
                .append("`†` marks a cell where some repetition failed (see the checks below).\n\n");
    }

    private static void exchanges(StringBuilder out, Context context, List<Sample> samples,
            List<String> contestants) {
        out.append("### Requests and round trips per sync\n\n")
                .append("Requests as the client counts them / round trips as the proxy counts them (TCP ")
                .append("connections + server-to-client turns, TLS handshake included), with the added latency.\n\n");
        tableHeader(out, List.of("Files", "Scenario"), contestants);
        for (Row row : rows(context, false)) {
            out.append("| ").append(format("%,d", row.files())).append(" | ").append(row.scenario().label());
            for (String contestant : contestants) {
                List<Sample> all = new ArrayList<>(new Row(row.files(), false, row.scenario()).select(samples,
                        contestant));
                List<Sample> delayed = new Row(row.files(), true, row.scenario()).select(samples, contestant);
                all.addAll(delayed);
                if (all.isEmpty()) {
                    out.append(" | ").append(NONE);
                    continue;
                }
                String requests = medianOf(all, s -> s.requests()).stream()
                        .mapToObj(v -> v < 0 ? "?" : format("%,.0f", v)).findFirst().orElse("?");
                String roundTrips = medianOf(delayed, s -> s.roundTrips()).stream()
                        .mapToObj(v -> format("%,.0f", v)).findFirst().orElse(NONE);
                out.append(" | ").append(requests).append(" / ").append(roundTrips);
            }
            out.append(" |\n");
        }
        out.append("\nPer file: up to ").append(PerFileSync.IN_FLIGHT).append(" requests in flight on one HTTP/2 ")
                .append("connection, so round trips are far fewer than requests. cf-agent's requests are not ")
                .append("visible to the harness (`?`); its protocol is sequential, so its round trips are its ")
                .append("requests.\n\n");
    }

    private static void ratios(StringBuilder out, Context context, List<Sample> samples, List<String> contestants) {
        List<String[]> pairs = new ArrayList<>();
        for (String pintle : List.of(PINTLE_ARCHIVE, PINTLE_SYNC)) {
            for (String other : List.of(NGINX, CF)) {
                if (contestants.contains(pintle) && contestants.contains(other)) {
                    pairs.add(new String[] {other, pintle});
                }
            }
        }
        if (pairs.isEmpty()) {
            return;
        }
        out.append("### Side by side: how many times faster Pintle is\n\n")
                .append("Median wall time of the other over Pintle's, same run, same tree, same scenario.\n\n");
        List<String> titles = pairs.stream().map(p -> p[0] + " / " + p[1]).toList();
        tableHeader(out, List.of("Files", "Added RTT", "Scenario"), titles);
        for (Row row : rows(context, true)) {
            out.append("| ").append(format("%,d", row.files())).append(" | ").append(row.latency(context))
                    .append(" | ").append(row.scenario().label());
            for (String[] pair : pairs) {
                out.append(" | ").append(ratio(row, samples, pair[0], pair[1]).stream()
                        .mapToObj(r -> format(r < 10 ? "%.2f×" : "%.0f×", r)).findFirst().orElse(NONE));
            }
            out.append(" |\n");
        }
        out.append('\n');
    }

    private static void targets(StringBuilder out, Context context, List<Sample> samples, List<String> contestants) {
        out.append("### Targets of issue 4\n\n");
        for (String pintle : List.of(PINTLE_SYNC, PINTLE_ARCHIVE)) {
            if (!contestants.contains(pintle)) {
                out.append("- ").append(pintle).append(": not measured in this run.\n");
                continue;
            }
            List<String> requests = new ArrayList<>();
            boolean oneRequest = true;
            for (int files : context.trees().keySet()) {
                for (boolean delayed : List.of(false, true)) {
                    OptionalDouble r = medianOf(new Row(files, delayed, Scenario.NO_CHANGE).select(samples, pintle),
                            Sample::requests);
                    if (r.isPresent()) {
                        requests.add(format("%,.0f", r.getAsDouble()));
                        oneRequest &= r.getAsDouble() == 1;
                    }
                }
            }
            out.append("- ").append(pintle).append(", no-change check is one request whatever the tree size: ")
                    .append(verdict(oneRequest, requests.isEmpty())).append(" (requests: ")
                    .append(String.join(", ", requests)).append(")\n");
            List<String> cold = new ArrayList<>();
            boolean fasterCold = true;
            for (Row row : rows(context, true)) {
                if (row.scenario() != Scenario.COLD) {
                    continue;
                }
                OptionalDouble r = ratio(row, samples, NGINX, pintle);
                if (r.isPresent()) {
                    cold.add(format("%.2f×", r.getAsDouble()) + " at " + format("%,d", row.files()) + " files "
                            + row.latency(context));
                    fasterCold &= r.getAsDouble() >= 1;
                }
            }
            out.append("- ").append(pintle).append(", cold sync at least as fast as nginx one by one: ")
                    .append(verdict(fasterCold, cold.isEmpty())).append(" (nginx / Pintle: ")
                    .append(String.join("; ", cold)).append(")\n");
            List<String> latency = new ArrayList<>();
            boolean twenty = true;
            for (Row row : rows(context, true)) {
                if (!row.delayed()) {
                    continue;
                }
                OptionalDouble r = ratio(row, samples, CF, pintle);
                if (r.isPresent()) {
                    latency.add(format("%.0f×", r.getAsDouble()) + " " + row.scenario().label() + " at "
                            + format("%,d", row.files()) + " files");
                    twenty &= r.getAsDouble() >= CF_TARGET;
                }
            }
            out.append("- ").append(pintle).append(", with latency at least ").append(format("%.0f", CF_TARGET))
                    .append("× faster than cf-serverd: ").append(verdict(twenty, latency.isEmpty()))
                    .append(" (cf / Pintle: ").append(String.join("; ", latency)).append(")\n");
        }
        out.append('\n');
    }

    private static void cpu(StringBuilder out, Context context, List<Sample> samples, List<String> contestants) {
        out.append("### Is the client the bottleneck? CPU per sync, loopback (median, ms)\n\n")
                .append("Client = the harness JVM (all its threads) plus cf-agent; server = the server's ")
                .append("processes (nginx's master and workers). From /proc/<pid>/stat, 10 ms ticks. ")
                .append("Wall time is in the first table; the machine has ")
                .append(Runtime.getRuntime().availableProcessors()).append(" cores.\n\n");
        List<String> columns = new ArrayList<>(contestants.stream().map(c -> c + " client / server").toList());
        columns.add("Other processes");
        tableHeader(out, List.of("Files", "Scenario"), columns);
        for (Row row : rows(context, false)) {
            out.append("| ").append(format("%,d", row.files())).append(" | ").append(row.scenario().label());
            for (String contestant : contestants) {
                List<Sample> cell = row.select(samples, contestant);
                if (cell.isEmpty()) {
                    out.append(" | ").append(NONE);
                    continue;
                }
                out.append(" | ").append(format("%,.0f", medianOf(cell, Sample::clientCpuMillis).orElse(0)))
                        .append(" / ").append(format("%,.0f", medianOf(cell, Sample::serverCpuMillis).orElse(0)));
            }
            List<Sample> all = samples.stream()
                    .filter(s -> contestants.contains(s.contestant()) && s.files() == row.files() && !s.delayed()
                            && s.scenario() == row.scenario())
                    .toList();
            out.append(" | ").append(format("%.0f%%", medianOf(all, Sample::otherShare).orElse(0) * 100))
                    .append(" |\n");
        }
        List<Sample> all = samples.stream().filter(s -> contestants.contains(s.contestant())).toList();
        out.append("\nOther processes: the machine's busy time (/proc/stat, steal included) minus the client's and ")
                .append("the server's, as a share of wall time × cores, median over the row's syncs; over all syncs ")
                .append("of the run: median ").append(format("%.0f%%", medianOf(all, Sample::otherShare).orElse(0) * 100))
                .append(", highest ").append(format("%.0f%%", all.stream().mapToDouble(Sample::otherShare).max()
                        .orElse(0) * 100))
                .append(". When it is high, something else shared the two cores and the times are longer than ")
                .append("they should be.\n\n");
    }

    private static void checks(StringBuilder out, Context context, List<Sample> samples) {
        List<Sample> syncs = samples.stream().filter(s -> CONTESTANTS.contains(s.contestant())).toList();
        long failed = syncs.stream().filter(s -> !s.ok()).count();
        out.append("### Checks\n\n")
                .append("- Every sync's result was compared with the source tree (same files, SHA-256 of each, ")
                .append("nothing extra): ").append(syncs.size()).append(" syncs, ").append(failed)
                .append(" failed (expected 0).\n");
        samples.stream().filter(s -> !s.ok()).limit(20).forEach(s -> out.append("  - ").append(s.contestant())
                .append(", ").append(s.files()).append(" files, ").append(s.delayed() ? "with latency" : "loopback")
                .append(", ").append(s.scenario().label()).append(": ").append(s.failure()).append('\n'));
        List<String> firsts = new ArrayList<>();
        for (int files : context.trees().keySet()) {
            List<Sample> first = samples.stream()
                    .filter(s -> s.contestant().equals(FIRST_MANIFEST) && s.files() == files && s.ok())
                    .toList();
            if (!first.isEmpty()) {
                firsts.add(format("%,d", files) + " files: " + format("%,.0f", medianOf(first, Sample::millis)
                        .orElse(0)) + " ms median, " + format("%,.0f", first.stream().mapToDouble(Sample::millis)
                        .max().orElse(0)) + " ms at most, over " + first.size() + " changes");
            }
        }
        if (!firsts.isEmpty()) {
            out.append("- After each change of 10 files, one `?view=manifest` request was made to Pintle (on ")
                    .append("loopback) before the contestants synced, so that whichever Pintle contestant came first ")
                    .append("did not pay alone for what the server does to bring its manifest up to date (once ")
                    .append("per change, for all clients). Its time: ").append(String.join("; ", firsts))
                    .append(".\n");
        }
        for (String note : context.notes()) {
            out.append("- ").append(note).append('\n');
        }
        out.append('\n');
    }

    /** A row of the tables: tree size, with or without latency, scenario. */
    private record Row(int files, boolean delayed, Scenario scenario) {
        List<Sample> select(List<Sample> samples, String contestant) {
            return samples.stream()
                    .filter(s -> s.contestant().equals(contestant) && s.files() == files && s.delayed() == delayed
                            && s.scenario() == scenario)
                    .toList();
        }

        String latency(Context context) {
            return delayed ? "+" + context.options().roundTrip().toMillis() + " ms" : "0 (loopback)";
        }
    }

    private static List<Row> rows(Context context, boolean withLatency) {
        List<Row> rows = new ArrayList<>();
        for (boolean delayed : withLatency ? List.of(false, true) : List.of(false)) {
            for (int files : context.trees().keySet()) {
                for (Scenario scenario : Scenario.values()) {
                    rows.add(new Row(files, delayed, scenario));
                }
            }
        }
        return rows;
    }

    private static OptionalDouble ratio(Row row, List<Sample> samples, String slower, String faster) {
        OptionalDouble a = medianTime(row.select(samples, slower));
        OptionalDouble b = medianTime(row.select(samples, faster));
        return a.isPresent() && b.isPresent() ? OptionalDouble.of(a.getAsDouble() / b.getAsDouble())
                : OptionalDouble.empty();
    }

    /** Median wall time of the successful samples. */
    private static OptionalDouble medianTime(List<Sample> cell) {
        return medianOf(cell.stream().filter(Sample::ok).toList(), Sample::millis);
    }

    private static OptionalDouble medianOf(List<Sample> cell, ToDoubleFunction<Sample> field) {
        if (cell.isEmpty()) {
            return OptionalDouble.empty();
        }
        return OptionalDouble.of(ProxyCheck.median(cell.stream().map(field::applyAsDouble).toList()));
    }

    private static String timeCell(List<Sample> cell) {
        OptionalDouble median = medianTime(cell);
        boolean someFailed = cell.stream().anyMatch(s -> !s.ok());
        if (median.isEmpty()) {
            return "failed";
        }
        double ms = median.getAsDouble();
        return format(ms < 100 ? "%.1f" : "%,.0f", ms) + (cell.size() > 1 ? "" : " (1 run)") + (someFailed ? " †" : "");
    }

    private static void tableHeader(StringBuilder out, List<String> keys, List<String> columns) {
        out.append("| ").append(String.join(" | ", keys));
        for (String column : columns) {
            out.append(" | ").append(column);
        }
        out.append(" |\n|");
        for (int i = 0; i < keys.size(); i++) {
            out.append("---|");
        }
        for (int i = 0; i < columns.size(); i++) {
            out.append("---:|");
        }
        out.append('\n');
    }

    private static String verdict(boolean met, boolean noData) {
        return noData ? "**not measured in this run**" : met ? "**met**" : "**not met**";
    }

    private static long uncheckedDirectories(RudderTree tree) {
        try {
            return tree.directories();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String cpuModel() {
        try (Stream<String> lines = Files.lines(Path.of("/proc/cpuinfo"))) {
            return lines.filter(line -> line.startsWith("model name"))
                    .map(line -> line.substring(line.indexOf(':') + 1).strip())
                    .findFirst()
                    .orElse("unknown CPU");
        } catch (IOException | RuntimeException e) {
            return "unknown CPU";
        }
    }

    static String format(String pattern, Object... values) {
        return String.format(Locale.ROOT, pattern, values);
    }
}
