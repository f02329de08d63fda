package io.pintle.bench.stall;

import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/** The Markdown report of {@code bench/stall}. */
final class StallReport {
    private StallReport() {}

    /**
     * One family's run.
     *
     * @param family the family
     * @param path what was asked for (path and query)
     * @param outcome what the client saw
     * @param server what the server counted meanwhile
     * @param log what the server logged meanwhile
     */
    record FamilyRun(Family family, String path, StreamLoad.Outcome outcome, ServerCounters server,
            ServerLog.Counts log) {
        /** Whether the server counted as many answers as requests were sent. */
        boolean counted() {
            return server.total() == outcome.sent();
        }

        boolean clean() {
            return outcome.clean() && log.npes() == 0 && counted();
        }
    }

    /**
     * @param date the run's start
     * @param minutes the run's length
     * @param options what was run
     * @param server the server's command line
     * @param machineCpus how many CPUs the machine has (this JVM may be pinned to fewer)
     * @param serverCpus the CPUs the server could run on
     * @param clientCpus the CPUs the load generator could run on
     * @param node the calling node's id
     * @param wholeLog the server log from start-up to shutdown
     * @param keptAt where the work directory (with the server log) was kept, or null
     */
    record Context(Instant date, double minutes, StallOptions options, String server, String machineCpus,
            String serverCpus,
            String clientCpus, String node, ServerLog.Counts wholeLog, String keptAt) {}

    static boolean clean(List<FamilyRun> runs, ServerLog.Counts wholeLog) {
        return wholeLog.npes() == 0 && runs.stream().allMatch(FamilyRun::clean);
    }

    static String render(Context context, List<FamilyRun> runs) {
        StallOptions options = context.options();
        StringBuilder out = new StringBuilder();
        out.append(String.format(Locale.ROOT, "## bench/stall, %s (%.1f min, %s cores)%n%n", context.date(),
                context.minutes(), context.machineCpus()));
        out.append("- Pintle: `").append(context.server()).append("`, CPUs ").append(context.serverCpus())
                .append("; its log to a file, access log off")
                .append(options.commit() != null ? "; built from `" + options.commit() + "`" : "").append('\n');
        out.append("- Load generator: Jetty HttpClient on JDK ").append(Runtime.version()).append(", CPUs ")
                .append(context.clientCpus()).append("; HTTP/2 over TLS with node `").append(context.node())
                .append("`'s client certificate; per family one connection, ").append(options.streams())
                .append(" streams in flight, ").append(options.timeout().toSeconds())
                .append(" s timeout per request\n");
        out.append(String.format(Locale.ROOT, "- %,d requests per family%n%n", options.requests()));
        out.append("| Family | Request | Expected | Requests | Completed | Stuck | Errors | Statuses seen | req/s"
                + " | Server counted | Connections | WARN/ERROR in log | NPEs in log |\n");
        out.append("|---|---|---:|---:|---:|---:|---:|---|---:|---|---:|---:|---:|\n");
        long sent = 0;
        long completed = 0;
        long stuck = 0;
        long errors = 0;
        long counted = 0;
        long connections = 0;
        long warnings = 0;
        long npes = 0;
        double seconds = 0;
        for (FamilyRun run : runs) {
            StreamLoad.Outcome outcome = run.outcome();
            out.append(String.format(Locale.ROOT, "| %s | `%s %s`%s | %d | %,d | %,d | %,d | %,d | %s | %,.0f | %s |"
                            + " %d | %,d | %,d |%n", run.family().label(), run.family().method(),
                    shown(run.path(), context.node()),
                    run.family().conditional() ? " + `If-None-Match`" : "",
                    run.family().expected(), outcome.sent(), outcome.completed(), outcome.stuck(), outcome.errors(),
                    statuses(outcome.statuses()), outcome.perSecond(),
                    String.format(Locale.ROOT, "%,d%s", run.server().total(), run.counted() ? "" : " ❗")
                            + (run.server().requests().isEmpty() ? "" : " (" + statuses(run.server().requests())
                            + ")"),
                    run.server().handshakes(), run.log().warningsAndErrors(), run.log().npes()));
            sent += outcome.sent();
            completed += outcome.completed();
            stuck += outcome.stuck();
            errors += outcome.errors();
            counted += run.server().total();
            connections += run.server().handshakes();
            warnings += run.log().warningsAndErrors();
            npes += run.log().npes();
            seconds += outcome.seconds();
        }
        out.append(String.format(Locale.ROOT, "| **All** | | | %,d | %,d | %,d | %,d | | %,.0f | %,d | %d | %,d |"
                        + " %,d |%n%n", sent, completed, stuck, errors, seconds > 0 ? completed / seconds : 0, counted,
                connections, warnings, npes));
        ServerLog.Counts whole = context.wholeLog();
        out.append(String.format(Locale.ROOT, "Whole server log, start-up to shutdown: %,d WARN and %,d ERROR events,"
                + " %,d naming a `NullPointerException`.%n%n", whole.warnings(), whole.errors(), whole.npes()));
        out.append(clean(runs, whole)
                ? "**Clean**: no stuck request, no error, no `NullPointerException`, and the server counted every"
                        + " request.\n\n"
                : "**Not clean**: see the rows above" + (context.keptAt() != null
                        ? "; the work directory, with the server log (`pintle.log`), is kept at `"
                                + context.keptAt() + "`" : "") + ".\n\n");
        out.append("Stuck: no answer within the timeout, or none at all when the family ended. Errors: answers with"
                + " another status than expected or not over HTTP/2, and exchanges that failed otherwise (reset,"
                + " connection closed). Server counted: the change of `pintle_requests_total` on the node-facing"
                + " routes while the family ran (from `/metrics`; ❗ when it is not the number of requests sent)."
                + " Connections: TLS handshakes the server completed meanwhile (1 = every request on one"
                + " connection). Log columns: events logged while the family ran. req/s includes the connection's"
                + " set-up and the server's JIT warm-up.\n");
        if (!whole.samples().isEmpty()) {
            out.append("\nWARN and ERROR events in the server log (first distinct ones, with their counts):\n\n");
            whole.samples().forEach((text, count) -> out.append(String.format(Locale.ROOT, "- %,d × `%s`%n", count,
                    shorten(text))));
        }
        List<FamilyRun> failing = runs.stream().filter(r -> !r.outcome().failureSamples().isEmpty()).toList();
        if (!failing.isEmpty()) {
            out.append("\nFailures seen by the client (first distinct ones per family):\n\n");
            for (FamilyRun run : failing) {
                for (String failure : run.outcome().failureSamples()) {
                    out.append("- ").append(run.family().label()).append(": `").append(shorten(failure))
                            .append("`\n");
                }
            }
        }
        return out.toString();
    }

    /** The path with the node ids and the digest as placeholders, so that the table stays narrow. */
    private static String shown(String path, String node) {
        return path.replace(node, "<node>").replaceAll(
                "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "<target>")
                .replaceAll("[0-9a-f]{64}", "<sha256>");
    }

    /** @return "304 × 20,000, timeout × 1" */
    static String statuses(Map<String, Long> statuses) {
        return statuses.entrySet().stream()
                .map(e -> String.format(Locale.ROOT, "%s × %,d", e.getKey(), e.getValue()))
                .collect(Collectors.joining(", "));
    }

    private static String shorten(String text) {
        String line = text.replace('`', '\'').replace("|", "\\|");
        return line.length() > 200 ? line.substring(0, 197) + "…" : line;
    }
}
