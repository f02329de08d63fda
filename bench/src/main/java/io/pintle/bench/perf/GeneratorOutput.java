package io.pintle.bench.perf;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What a C load generator said at the end of a window, read from its standard output: {@code ab}'s summary,
 * {@code h2load}'s summary, and the {@code key=value} line of bench/perf's own {@code tlsconn}.
 *
 * @param completed exchanges completed (requests, or connections of one request each)
 * @param expected of those, the ones answered as the row expects (status and length)
 * @param failed exchanges that failed or were answered otherwise ({@code completed - expected} plus transport
 *     failures)
 * @param seconds the generator's own measured time
 * @param firstByteP50Millis request written → first byte of the answer, median, or NaN when the generator does not
 *     say
 * @param firstByteP99Millis the same, 99th percentile, or NaN
 * @param firstError the first failure the generator named, or empty
 */
record GeneratorOutput(long completed, long expected, long failed, double seconds, double firstByteP50Millis,
        double firstByteP99Millis, String firstError) {
    private static final Pattern AB_COMPLETE = Pattern.compile("(?m)^Complete requests:\\s+(\\d+)");
    private static final Pattern AB_FAILED = Pattern.compile("(?m)^Failed requests:\\s+(\\d+)");
    private static final Pattern AB_NON_2XX = Pattern.compile("(?m)^Non-2xx responses:\\s+(\\d+)");
    private static final Pattern AB_TIME = Pattern.compile("(?m)^Time taken for tests:\\s+([\\d.]+) seconds");
    private static final Pattern AB_ERRORS = Pattern.compile(
            "(?m)^\\s+\\((Connect: \\d+, Receive: \\d+, Length: \\d+, Exceptions: \\d+)\\)");
    private static final Pattern H2_FINISHED = Pattern.compile("(?m)^finished in ([\\d.]+)(m?s),");
    private static final Pattern H2_REQUESTS = Pattern.compile(
            "(?m)^requests: (\\d+) total, (\\d+) started, (\\d+) done, (\\d+) succeeded, (\\d+) failed, (\\d+) errored,"
                    + " (\\d+) timeout");
    private static final Pattern H2_STATUS = Pattern.compile(
            "(?m)^status codes: (\\d+) 2xx, (\\d+) 3xx, (\\d+) 4xx, (\\d+) 5xx");
    private static final Pattern TLSCONN = Pattern.compile("connections=(\\d+) ok=(\\d+) errors=(\\d+)"
            + " wrong_status=(\\d+) seconds=([\\d.]+) handshake_p50_us=(-?[\\d.]+) first_byte_p50_us=(-?[\\d.]+)"
            + " first_byte_p99_us=(-?[\\d.]+) first_error=(\\S+)");
    private static final Pattern TLSCONN_HERD = Pattern.compile("herd agents=(\\d+) updates_ok=(\\d+)"
            + " update_errors=(\\d+) completion_seconds=([\\d.]+) update_p50_us=(-?[\\d.]+) update_p99_us=(-?[\\d.]+)"
            + " update_max_us=(-?[\\d.]+) connect_p99_us=(-?[\\d.]+) connect_max_us=(-?[\\d.]+) connect_errors=(\\d+)");

    /**
     * @return the exchanges per second that went as expected
     */
    double rate() {
        return seconds > 0 ? expected / seconds : Double.NaN;
    }

    /**
     * {@code ab}'s summary. ab counts a 304 among "Non-2xx responses" (and reads no body for it), so a row that
     * expects 304 expects every completed request there.
     *
     * @param output what ab printed on standard output
     * @param expectNotModified whether the row's requests are conditional and should all be answered 304
     * @return the figures
     * @throws IllegalArgumentException if the output has no summary (ab failed before it)
     */
    static GeneratorOutput ab(String output, boolean expectNotModified) {
        long complete = number(AB_COMPLETE, output, "ab", 1);
        long failed = optional(AB_FAILED, output);
        long non2xx = optional(AB_NON_2XX, output);
        double seconds = Double.parseDouble(group(AB_TIME, output, "ab", 1));
        // "Failed requests" includes length mismatches of 2xx answers; a request is as expected when it did not
        // fail and its class of status is the row's.
        long rightClass = expectNotModified ? non2xx : complete - non2xx;
        // With -t, ab may count the answers of the requests in flight when time ran out among the non-2xx ones
        // without counting them complete.
        long expected = Math.min(complete, Math.max(0, rightClass - failed));
        Matcher errors = AB_ERRORS.matcher(output);
        String first = failed > 0 && errors.find() ? errors.group(1) : non2xx > 0 && !expectNotModified
                ? non2xx + " non-2xx" : "";
        return new GeneratorOutput(complete, expected, complete - expected, seconds, Double.NaN, Double.NaN,
                first);
    }

    /**
     * {@code h2load}'s summary.
     *
     * @param output what h2load printed on standard output
     * @return the figures (expected: 2xx answers)
     * @throws IllegalArgumentException if the output has no summary
     */
    static GeneratorOutput h2load(String output) {
        Matcher finished = H2_FINISHED.matcher(output);
        if (!finished.find()) {
            throw new IllegalArgumentException("no \"finished in\" line in h2load's output: " + tail(output));
        }
        double seconds = Double.parseDouble(finished.group(1)) / (finished.group(2).equals("ms") ? 1e3 : 1);
        Matcher requests = H2_REQUESTS.matcher(output);
        if (!requests.find()) {
            throw new IllegalArgumentException("no \"requests:\" line in h2load's output: " + tail(output));
        }
        // "done" includes the failed requests; timed-out ones are apart.
        long completed = Long.parseLong(requests.group(3)) + Long.parseLong(requests.group(7));
        boolean failures = Long.parseLong(requests.group(5)) + Long.parseLong(requests.group(7)) > 0;
        long twoHundreds = number(H2_STATUS, output, "h2load", 1);
        String first = failures ? requests.group(5) + " failed, " + requests.group(6) + " errored, "
                + requests.group(7) + " timeout" : twoHundreds < completed ? (completed - twoHundreds) + " not 2xx"
                : "";
        return new GeneratorOutput(completed, twoHundreds, completed - twoHundreds, seconds, Double.NaN, Double.NaN,
                first);
    }

    /**
     * tlsconn's line.
     *
     * @param output what tlsconn printed on standard output
     * @return the figures (expected: answered with the status tlsconn was told to expect)
     * @throws IllegalArgumentException if there is no such line
     */
    static GeneratorOutput tlsconn(String output) {
        Matcher line = TLSCONN.matcher(output);
        if (!line.find()) {
            throw new IllegalArgumentException("no summary line in tlsconn's output: " + tail(output));
        }
        long connections = Long.parseLong(line.group(1));
        long ok = Long.parseLong(line.group(2));
        long errors = Long.parseLong(line.group(3));
        double p50 = Double.parseDouble(line.group(7));
        double p99 = Double.parseDouble(line.group(8));
        String first = line.group(9).equals("none") ? "" : line.group(9).replace('_', ' ');
        return new GeneratorOutput(connections + errors, ok, connections + errors - ok,
                Double.parseDouble(line.group(5)), p50 < 0 ? Double.NaN : p50 / 1e3, p99 < 0 ? Double.NaN : p99 / 1e3,
                first);
    }

    /**
     * What tlsconn's herd mode adds: per agent update (two new connections, one request each), from its scheduled
     * start to its last byte.
     *
     * @param agents agents started
     * @param ok updates whose two answers had the expected statuses
     * @param errors updates that failed
     * @param completionSeconds from the first agent's start to the last one's end
     * @param p50Millis update latency, median
     * @param p99Millis 99th percentile
     * @param maxMillis the slowest
     * @param connectP99Millis TCP connect (SYN to established) of the herd's connections, 99th percentile: above a
     *     second, some SYNs were dropped (a full accept queue) and retransmitted
     * @param connectMaxMillis the slowest connect
     * @param connectErrors connections that never got established (refused, or past the 60 s timeout)
     */
    record Herd(long agents, long ok, long errors, double completionSeconds, double p50Millis, double p99Millis,
            double maxMillis, double connectP99Millis, double connectMaxMillis, long connectErrors) {}

    /**
     * tlsconn's herd line.
     *
     * @param output what tlsconn printed on standard output in herd mode
     * @return the herd's figures
     * @throws IllegalArgumentException if there is no herd line
     */
    static Herd tlsconnHerd(String output) {
        Matcher line = TLSCONN_HERD.matcher(output);
        if (!line.find()) {
            throw new IllegalArgumentException("no herd line in tlsconn's output: " + tail(output));
        }
        double[] micros = new double[5];
        for (int i = 0; i < micros.length; i++) {
            double value = Double.parseDouble(line.group(5 + i));
            micros[i] = value < 0 ? Double.NaN : value / 1e3;
        }
        return new Herd(Long.parseLong(line.group(1)), Long.parseLong(line.group(2)), Long.parseLong(line.group(3)),
                Double.parseDouble(line.group(4)), micros[0], micros[1], micros[2], micros[3], micros[4],
                Long.parseLong(line.group(10)));
    }

    private static long number(Pattern pattern, String output, String generator, int group) {
        return Long.parseLong(group(pattern, output, generator, group));
    }

    private static String group(Pattern pattern, String output, String generator, int group) {
        Matcher matcher = pattern.matcher(output);
        if (!matcher.find()) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "no /%s/ in %s's output: %s", pattern,
                    generator, tail(output)));
        }
        return matcher.group(group);
    }

    private static long optional(Pattern pattern, String output) {
        Matcher matcher = pattern.matcher(output);
        return matcher.find() ? Long.parseLong(matcher.group(1)) : 0;
    }

    private static String tail(String output) {
        String flat = output.strip().replace('\n', ' ');
        return flat.length() > 300 ? "…" + flat.substring(flat.length() - 300) : flat;
    }
}
