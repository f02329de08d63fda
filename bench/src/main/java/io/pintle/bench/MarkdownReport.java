package io.pintle.bench;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/** Formats the results as Markdown: a header, the results table, the load-generator check and any errors. */
final class MarkdownReport {
    /** Error descriptions listed per cell; the count always covers all of them. */
    private static final int MAX_ERROR_KINDS = 5;
    /** Shown where a row has no baseline. */
    private static final String NONE = "–";

    private MarkdownReport() {}

    /**
     * @param environment machine and JVM
     * @param options the timing used
     * @param rows the results, in table order
     * @return the report
     */
    static String render(Environment environment, Options options, List<Row> rows) {
        StringBuilder out = new StringBuilder();
        header(out, environment, options);
        results(out, rows);
        cpu(out, rows);
        errors(out, rows);
        return out.toString();
    }

    private static void header(StringBuilder out, Environment env, Options options) {
        out.append("## Pintle policy-serving benchmark\n\n")
                .append("- Date: ").append(env.date()).append('\n')
                .append("- Machine: nproc = ").append(env.processors()).append(", ").append(env.cpuModel())
                .append(", ").append(env.os()).append('\n')
                .append("- JVM: ").append(env.jvm()).append(", options `").append(env.jvmArguments())
                .append("`\n")
                .append("- Server key: ").append(options.serverKey().name()).append('\n')
                .append("- Each cell: a fresh Jetty HttpClient keeping N requests in flight (closed loop) over ")
                .append("TLS 1.3 with the demo node's client certificate, on 127.0.0.1; ")
                .append(options.timing().warmup().toSeconds()).append(" s warm-up, then ")
                .append(options.timing().measure().toSeconds())
                .append(" s measured. HTTP/1.1 uses N keep-alive connections, HTTP/2 one connection with N ")
                .append("streams. For each row Pintle runs first, then the baseline (plain Jetty ResourceHandler, ")
                .append("same TLS setup, no authorisation), in the same JVM.\n\n");
    }

    private static void results(StringBuilder out, List<Row> rows) {
        out.append("| # | Request | HTTP | N | Pintle | Baseline | Pintle / baseline "
                        + "| Pintle p50 / p99 ms | Baseline p50 / p99 ms | Errors | Client CPU share |\n")
                .append("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        int number = 1;
        for (Row row : rows) {
            Scenario scenario = row.scenario();
            Kind.Unit unit = scenario.kind().unit();
            Optional<Measurement> baseline = row.baseline();
            out.append("| ").append(number++)
                    .append(" | ").append(scenario.label())
                    .append(" | ").append(scenario.protocol().label())
                    .append(" | ").append(scenario.concurrency())
                    .append(" | ").append(throughput(row.pintle(), unit))
                    .append(" | ").append(baseline.map(b -> throughput(b, unit)).orElse(NONE))
                    .append(" | ").append(row.ratio().map(r -> format("%.2f", r)).orElse(NONE))
                    .append(" | ").append(latency(row.pintle()))
                    .append(" | ").append(baseline.map(MarkdownReport::latency).orElse(NONE))
                    .append(" | ").append(both(row, m -> Long.toString(m.errors())))
                    .append(" | ").append(both(row, m -> percent(m.cpu().clientShare())))
                    .append(" |\n");
        }
        out.append("\nErrors and client CPU share read \"Pintle / baseline\" where there is a baseline. ")
                .append("MB = 10^6 bytes. Latency is per request, from send to complete response, for requests ")
                .append("completed in the measured window. Errors cover the whole cell, warm-up included: any ")
                .append("status other than the expected one, a wrong body length, a wrong HTTP version, an ")
                .append("exception or a timeout.\n\n");
    }

    private static void cpu(StringBuilder out, List<Row> rows) {
        out.append("### Is the load generator the bottleneck?\n\n")
                .append("Client and servers share the JVM and the cores. Over each measured window, the CPU time ")
                .append("of every thread (ThreadMXBean) is grouped by thread name: the client's pool and scheduler (`")
                .append(LoadClient.THREAD_NAME).append("-*`), the servers' worker pools (`pintle-*`, `")
                .append(BaselineServer.THREAD_NAME).append("-*`); the JIT compiler and GC threads, which ")
                .append("ThreadMXBean does not list, are read from /proc/self/task; the rest (VM, Jetty schedulers) ")
                .append("is what remains of the process CPU time (OperatingSystemMXBean.getProcessCpuTime). ")
                .append("JVM busy is the ")
                .append("process CPU time over wall time times nproc; other processes is the machine's busy time ")
                .append("(/proc/stat, steal included) minus the JVM's, over the same window: when it is high, ")
                .append("another workload shared the cores and absolute figures are low. Client, server, ")
                .append("JIT, GC and rest are shares of the JVM's CPU time. Server CPU per request is the server ")
                .append("threads' CPU time over the requests completed in the window: it compares the servers even ")
                .append("where the client, not the server, limits throughput. TLS handshakes are counted by the ")
                .append("client over the whole cell: one per connection.\n\n")
                .append("| # | Server | JVM busy | Other processes | Client | Server | JIT | GC | Rest "
                        + "| Server CPU µs / request | Requests sent | TLS handshakes |\n")
                .append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        int number = 1;
        for (Row row : rows) {
            cpuLine(out, number, row.pintle());
            int current = number;
            row.baseline().ifPresent(b -> cpuLine(out, current, b));
            number++;
        }
        out.append('\n');
    }

    private static void cpuLine(StringBuilder out, int number, Measurement m) {
        CpuShare cpu = m.cpu();
        out.append("| ").append(number)
                .append(" | ").append(m.target())
                .append(" | ").append(percent(cpu.busy()))
                .append(" | ").append(percent(cpu.others()))
                .append(" | ").append(percent(cpu.clientShare()))
                .append(" | ").append(percent(cpu.serverShare()))
                .append(" | ").append(percent(cpu.jitShare()))
                .append(" | ").append(percent(cpu.gcShare()))
                .append(" | ").append(percent(cpu.restShare()))
                .append(" | ").append(Double.isNaN(m.serverMicrosPerRequest()) ? NONE
                        : format("%,.0f", m.serverMicrosPerRequest()))
                .append(" | ").append(format("%,d", m.sent()))
                .append(" | ").append(format("%,d", m.handshakes()))
                .append(" |\n");
    }

    private static void errors(StringBuilder out, List<Row> rows) {
        long total = rows.stream().mapToLong(Row::errors).sum();
        out.append("Errors in total: ").append(total).append(" (expected 0).\n");
        int number = 1;
        for (Row row : rows) {
            errorLines(out, number, row.pintle());
            int current = number;
            row.baseline().ifPresent(b -> errorLines(out, current, b));
            number++;
        }
    }

    private static void errorLines(StringBuilder out, int number, Measurement m) {
        m.errorKinds().entrySet().stream()
                .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
                .limit(MAX_ERROR_KINDS)
                .forEach(kind -> out.append("- row ").append(number).append(", ").append(m.target()).append(": ")
                        .append(kind.getValue()).append(" × ").append(kind.getKey()).append('\n'));
    }

    private static String throughput(Measurement m, Kind.Unit unit) {
        return format(unit == Kind.Unit.MEGABYTES ? "%,.1f " : "%,.0f ", m.throughput(unit)) + unit.suffix();
    }

    private static String latency(Measurement m) {
        return millis(m.p50Millis()) + " / " + millis(m.p99Millis());
    }

    private static String millis(double value) {
        if (Double.isNaN(value)) {
            return NONE;
        }
        return format(value < 10 ? "%.2f" : "%.1f", value);
    }

    private static String both(Row row, Function<Measurement, String> field) {
        return field.apply(row.pintle()) + row.baseline().map(b -> " / " + field.apply(b)).orElse("");
    }

    private static String percent(double fraction) {
        return Double.isNaN(fraction) ? "n/a" : format("%.0f%%", fraction * 100);
    }

    private static String format(String pattern, Object... values) {
        return String.format(Locale.ROOT, pattern, values);
    }
}
