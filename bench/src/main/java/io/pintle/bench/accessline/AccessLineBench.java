package io.pintle.bench.accessline;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.joran.JoranConfigurator;
import io.pintle.bench.plot.DotBars;
import io.pintle.server.http.AccessLine;
import java.awt.Color;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What one access log line costs the process, in CPU per line, with the line handed whole to {@code
 * AccessLogAppender} (as the shipped {@code logback.xml} routes it) and with every line through a Logback event and
 * pattern layout ({@code -Dpintle.bench.wholeLines=false}'s path), in the common and the JSON form. One JVM, the
 * four variants interleaved in blocks, so that the machine's drift falls on all of them alike. Each block is then
 * given 200 ms for the writer thread to write it out (its queue, 262,144 lines, holds a whole block, so none is
 * dropped); the writer wakes every 10 ms rather than the shipped 50, so that fewer queued lines stay live through a
 * young collection at this bench's rate (60 times a server's). Run pinned to one core with
 * stderr (where the appender writes) to {@code /dev/null}: {@code bench/accessline}.
 */
public final class AccessLineBench {
    /** The shipped ACCESS appender, with a queue that never drops a block's lines. */
    private static final String CONFIG = """
            <configuration>
              <appender name="ACCESS" class="io.pintle.server.cli.AccessLogAppender">
                <encoder><pattern>%msg%n</pattern></encoder>
                <queueSize>262144</queueSize>
                <flushMillis>10</flushMillis>
              </appender>
              <logger name="io.pintle.access" level="INFO" additivity="false">
                <appender-ref ref="ACCESS"/>
              </logger>
              <root level="OFF"/>
            </configuration>
            """;
    private static final int REQUESTS_PER_SECOND = 25_000;

    private AccessLineBench() {}

    /** A variant: its name, its writer, its form. */
    private record Variant(String name, AccessLine access, boolean json) {}

    /** Failures are printed to stdout: stderr is the access log's, sent to /dev/null by bench/accessline. */
    public static void main(String[] args) {
        try {
            run(args);
        } catch (Exception | Error e) {
            e.printStackTrace(System.out);
            System.exit(1);
        }
    }

    private static void run(String[] args) throws Exception {
        int rounds = 10;
        int warmup = 3;
        int lines = 200_000;
        Path output = null;
        Path plot = null;
        String command = "bench/accessline";
        for (int i = 0; i < args.length; i++) {
            String value = i + 1 < args.length ? args[i + 1] : null;
            switch (args[i]) {
                case "--rounds" -> rounds = Integer.parseInt(value);
                case "--warmup-rounds" -> warmup = Integer.parseInt(value);
                case "--lines" -> lines = Integer.parseInt(value);
                case "--output" -> output = Path.of(value);
                case "--plot" -> plot = Path.of(value);
                case "--command" -> command = value;
                default -> throw new IllegalArgumentException("usage: AccessLineBench [--rounds 10]"
                        + " [--warmup-rounds 3] [--lines 200000] [--output FILE] [--plot FILE]");
            }
            i++;
        }
        if (rounds < 1 || warmup < 0 || lines < 1000 || lines > 250_000) {
            throw new IllegalArgumentException("rounds ≥ 1, warm-up rounds ≥ 0, 1,000 ≤ lines ≤ 250,000");
        }

        LoggerContext context = new LoggerContext();
        JoranConfigurator configurator = new JoranConfigurator();
        configurator.setContext(context);
        configurator.doConfigure(new ByteArrayInputStream(CONFIG.getBytes(StandardCharsets.UTF_8)));
        org.slf4j.Logger logger = context.getLogger(AccessLine.LOGGER);
        AccessLine whole = new AccessLine(logger);
        System.setProperty("pintle.bench.wholeLines", "false");
        AccessLine logback = new AccessLine(logger);
        System.clearProperty("pintle.bench.wholeLines");
        List<Variant> variants = List.of(new Variant("whole line, common", whole, false),
                new Variant("Logback event, common", logback, false), new Variant("whole line, JSON", whole, true),
                new Variant("Logback event, JSON", logback, true));

        var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        Map<String, List<Double>> cpu = new LinkedHashMap<>();
        Map<String, List<Double>> caller = new LinkedHashMap<>();
        Map<String, List<Double>> writerCpu = new LinkedHashMap<>();
        Map<String, List<Double>> gc = new LinkedHashMap<>();
        var threads = ManagementFactory.getThreadMXBean();
        long writerId = Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().equals("pintle-access-log")).findFirst().orElseThrow().getId();
        variants.forEach(v -> {
            cpu.put(v.name(), new ArrayList<>());
            caller.put(v.name(), new ArrayList<>());
            writerCpu.put(v.name(), new ArrayList<>());
            gc.put(v.name(), new ArrayList<>());
        });
        long millis = Instant.parse("2026-12-07T12:00:00Z").toEpochMilli();
        // Built beforehand, as Jetty and the request have them: what is timed is AccessLine.write alone.
        AccessLine.Line[] common = new AccessLine.Line[1024];
        AccessLine.Line[] json = new AccessLine.Line[common.length];
        for (int i = 0; i < common.length; i++) {
            common[i] = line(i, null);
            json[i] = line(i, Instant.ofEpochMilli(millis + i).toString());
        }
        Instant start = Instant.now().truncatedTo(java.time.temporal.ChronoUnit.SECONDS);
        for (int round = 0; round < warmup + rounds; round++) {
            for (int k = 0; k < variants.size(); k++) {
                Variant variant = variants.get((round + k) % variants.size());
                long cpuBefore = os.getProcessCpuTime();
                long gcBefore = gcMillis();
                long writerBefore = threads.getThreadCpuTime(writerId);
                long callerBefore = threads.getCurrentThreadCpuTime();
                for (int i = 0; i < lines; i++) {
                    long at = millis + i * 1000L / REQUESTS_PER_SECOND;
                    variant.access().write((variant.json() ? json : common)[i & 1023], at, 38_000 + (i & 1023) * 7,
                            variant.json());
                }
                long callerNanos = threads.getCurrentThreadCpuTime() - callerBefore;
                Thread.sleep(200); // the writer thread (every 50 ms) writes the block out
                long cpuNanos = os.getProcessCpuTime() - cpuBefore;
                long writerNanos = threads.getThreadCpuTime(writerId) - writerBefore;
                long gcNanos = (gcMillis() - gcBefore) * 1_000_000;
                millis += lines * 1000L / REQUESTS_PER_SECOND;
                if (round >= warmup) {
                    cpu.get(variant.name()).add((double) cpuNanos / lines);
                    caller.get(variant.name()).add((double) callerNanos / lines);
                    writerCpu.get(variant.name()).add((double) writerNanos / lines);
                    gc.get(variant.name()).add((double) gcNanos / lines);
                }
            }
            System.out.printf(Locale.ROOT, "round %d of %d%s%n", round + 1, warmup + rounds,
                    round < warmup ? " (warm-up)" : "");
        }
        context.stop();

        StringBuilder report = new StringBuilder();
        report.append("# bench/accessline: what an access log line costs\n\n")
                .append(String.format(Locale.ROOT, "%s, `%s`, %s %s, %d CPUs. %,d lines per block, the four"
                        + " variants interleaved (order rotated each round), %d warm-up rounds not counted, %d"
                        + " rounds; figures are medians of the rounds (min–max). CPU = the process's CPU time over"
                        + " the block and its write-out (the writer thread, stderr to /dev/null), per line;"
                        + " caller = the calling thread's CPU time in `AccessLine.write` (ns resolution), writer ="
                        + " the writer thread's (pintle-access-log) CPU time, GC = collection time (wall, from the"
                        + " GC beans; it overlaps the caller's), all per line.%n%n",
                        start, command, System.getProperty("java.vm.name"), System.getProperty("java.version"),
                        Runtime.getRuntime().availableProcessors(), lines, warmup, rounds))
                .append("| variant | process CPU ns per line | caller CPU ns | writer CPU ns | GC ns |\n"
                        + "|---|---:|---:|---:|---:|\n");
        for (Variant v : variants) {
            report.append(String.format(Locale.ROOT, "| %s | %s | %s | %s | %s |%n", v.name(),
                    figure(cpu.get(v.name())), figure(caller.get(v.name())), figure(writerCpu.get(v.name())),
                    figure(gc.get(v.name()))));
        }
        report.append(String.format(Locale.ROOT, "%nWhole line / Logback event, medians: process CPU common %.2f×,"
                + " JSON %.2f×; caller CPU common %.2f×, JSON %.2f×. Rounds where the whole line's caller CPU was"
                + " below the Logback event's in the same round: common %d of %d, JSON %d of %d.%n",
                ratio(cpu, variants, 0), ratio(cpu, variants, 2), ratio(caller, variants, 0),
                ratio(caller, variants, 2), wins(caller, variants, 0), rounds, wins(caller, variants, 2), rounds));
        System.out.print(report);
        if (output != null) {
            Files.writeString(output, report.toString());
            System.out.println("written to " + output);
        }
        if (plot != null) {
            plot(variants, caller, start, lines, plot);
            System.out.println("plot written to " + plot);
        }
    }

    private static AccessLine.Line line(int i, String time) {
        String node = String.format(Locale.ROOT, "4f0e%04x-8a7c-4d5e-9f3b-1a2b3c4d5e6f", i & 0xffff);
        return new AccessLine.Line(time, "127.0.0." + (1 + (i & 127)), node, "GET",
                "/policies/" + node + "/rules/rudder.tar.bz2", null, "HTTP/1.1", 304, 0, 0.038, "tls", "policies",
                "allowed", null, "policies: own node", null, "cert_pinning", null, null);
    }

    private static double ratio(Map<String, List<Double>> figures, List<Variant> variants, int whole) {
        return median(figures.get(variants.get(whole).name())) / median(figures.get(variants.get(whole + 1).name()));
    }

    /** Rounds in which the whole line (index {@code whole}) cost less than its Logback pair. */
    private static int wins(Map<String, List<Double>> figures, List<Variant> variants, int whole) {
        List<Double> a = figures.get(variants.get(whole).name());
        List<Double> b = figures.get(variants.get(whole + 1).name());
        int wins = 0;
        for (int i = 0; i < a.size(); i++) {
            wins += a.get(i) < b.get(i) ? 1 : 0;
        }
        return wins;
    }

    private static long gcMillis() {
        return ManagementFactory.getGarbageCollectorMXBeans().stream()
                .mapToLong(bean -> Math.max(bean.getCollectionTime(), 0)).sum();
    }

    private static double median(List<Double> values) {
        double[] sorted = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    private static String figure(List<Double> values) {
        double[] sorted = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        return String.format(Locale.ROOT, "%,.0f (%,.0f–%,.0f)", median(values), sorted[0],
                sorted[sorted.length - 1]);
    }

    /** One bar per variant (median CPU per line), each round's value as a dot on it. */
    private static void plot(List<Variant> variants, Map<String, List<Double>> cpu, Instant start, int lines,
            Path file) throws IOException {
        List<DotBars.Row> rows = new ArrayList<>();
        for (Variant variant : variants) {
            String name = variant.name();
            double median = median(cpu.get(name));
            rows.add(new DotBars.Row(name, median, cpu.get(name),
                    name.startsWith("whole") ? new Color(0x4c9a2a) : new Color(0x7f8c8d),
                    String.format(Locale.ROOT, "%,.0f ns", median)));
        }
        DotBars.write("bench/accessline, " + start + ": caller CPU ns per access log line", rows, 200,
                String.format(Locale.ROOT, "Bars: median of the rounds; dots: each round (%,d lines, the calling "
                        + "thread's CPU time; the writer thread's is in the report).", lines), file);
    }
}
