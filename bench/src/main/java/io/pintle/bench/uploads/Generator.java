package io.pintle.bench.uploads;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The external load generators, all C programs run as children of this JVM (and so on its CPUs), and what their
 * outputs say. Every one of them sends the agent's request: {@code PUT /reports/<name>} with Basic auth and the
 * report as body, no client certificate, TLS 1.3.
 */
final class Generator {
    private static final Pattern CURL_LINE = Pattern.compile("^(\\d{3}) (\\d+\\.\\d+) (\\S+) (\\d+)$");
    private static final Pattern AB_NUMBER = Pattern.compile("^([A-Za-z0-9/ -]+):\\s+(\\S.*)$");

    private Generator() {}

    /** The generators and their connection shapes. */
    enum Kind {
        /** ApacheBench: a new connection (full TLS 1.3 handshake) per upload; one name, replaced every time. */
        AB("ab"),
        /** curl, one process, transfers in parallel, each on a new connection and without session reuse. */
        CURL("curl"),
        /** Shell loops of the agent's exact curl line: a new curl process, hence connection, per upload. */
        AGENTS("agents"),
        /** ApacheBench with keep-alive, for contrast: the handshake paid once per connection. */
        AB_KEEPALIVE("ab-keepalive");

        private final String name;

        Kind(String name) {
            this.name = name;
        }

        static Kind named(String text) {
            for (Kind kind : values()) {
                if (kind.name.equals(text)) {
                    return kind;
                }
            }
            throw new IllegalArgumentException("no generator '" + text + "'; generators: " + names());
        }

        static String names() {
            return String.join(",", Arrays.stream(values()).map(k -> k.name).toList());
        }

        String label(int concurrency) {
            return switch (this) {
                case AB -> "ab, new connection per upload, " + concurrency + " at once";
                case CURL -> "curl -Z, new connection per upload, " + concurrency + " at once";
                case AGENTS -> concurrency + " agents: loops of one curl process per upload";
                case AB_KEEPALIVE -> "ab -k, keep-alive, " + concurrency + " connections";
            };
        }

        /** @return whether every upload has a name of its own (else one name, replaced: 201 then 204s) */
        boolean distinctNames() {
            return this == CURL || this == AGENTS;
        }
    }

    /**
     * What one generator run said.
     *
     * @param ok uploads answered 201 or 204
     * @param errors uploads that failed, by kind (status, curl's message, ab's failure class)
     * @param latenciesMillis per-upload times, from the generator (curl: each transfer's {@code time_total}); empty
     *     for ab, whose percentiles are in {@code p50}/{@code p99}
     * @param p50Millis median time per upload
     * @param p99Millis 99th percentile
     * @param protocol the TLS protocol and cipher ab reports, or the HTTP versions curl used
     * @param connections connections opened (curl: its {@code num_connects}; ab: one per upload without
     *     keep-alive), or -1 when the generator does not say (ab -k)
     * @param exitStatus the generator's exit status
     * @param messages what the generator said about failures (curl's and ab's messages), by count
     */
    record Outcome(long ok, Map<String, Long> errors, double p50Millis, double p99Millis, String protocol,
            long connections, int exitStatus, Map<String, Long> messages) {
        long errorCount() {
            return errors.values().stream().mapToLong(Long::longValue).sum();
        }
    }

    /**
     * The command to run.
     *
     * @param row the generator and its concurrency
     * @param layout the reports and the password
     * @param target the server
     * @param uploads how many
     * @param cell a fresh directory for the generator's files and outputs
     * @return the command and what to read afterwards
     */
    static List<String> command(UploadOptions.Row row, UploadLayout layout, UploadTarget target, int uploads,
            Path cell) throws IOException {
        String user = UploadLayout.USER + ":" + layout.password();
        String first = layout.names().get(0);
        switch (row.generator()) {
            case AB, AB_KEEPALIVE -> {
                List<String> command = new ArrayList<>(List.of("ab", "-q", "-f", "TLS1.3", "-n", Integer.toString(uploads),
                        "-c", Integer.toString(row.concurrency()), "-A", user, "-u",
                        layout.reports().resolve(first).toString(), "-T", "application/gzip",
                        // Variable length: a 201 and a 204 have different bodies; no exit on a receive error.
                        "-l", "-r", "-s", "30", "-e", cell.resolve("ab-percentiles.csv").toString()));
                if (row.generator() == Kind.AB_KEEPALIVE) {
                    command.add("-k");
                }
                command.add(target.url() + UploadLayout.urlName(first));
                return command;
            }
            case CURL -> {
                // The names go in a config file: 1,000 of them are more than one argument may hold (128 KiB).
                // HTTP/1.1 with "Connection: close": curl has no option to forbid reusing a connection, and over
                // HTTP/2 (which both servers offer) it would multiplex every transfer on one connection.
                Path config = cell.resolve("curl.config");
                Files.writeString(config, "url = \"" + target.url() + "\"\nupload-file = \"{"
                        + String.join(",", layout.names().subList(0, uploads)) + "}\"\n");
                return List.of("curl", "--tlsv1.3", "--pinnedpubkey", layout.demo().serverPin(), "--insecure",
                        "--silent", "--show-error", "--no-progress-meter", "--user", user, "--parallel",
                        "--parallel-max", Integer.toString(row.concurrency()), "--parallel-immediate",
                        "--no-sessionid", "--http1.1", "-H", "Connection: close", "--config", config.toString(),
                        "--write-out", "%{stderr}%{http_code} %{time_total} HTTP/%{http_version} %{num_connects}\\n");
            }
            case AGENTS -> {
                List<String> command = new ArrayList<>(List.of("bash", script(cell).toString(), target.url(),
                        layout.password(), layout.demo().serverPin()));
                for (int agent = 0; agent < row.concurrency(); agent++) {
                    List<String> mine = new ArrayList<>();
                    for (int i = agent; i < uploads; i += row.concurrency()) {
                        mine.add(layout.names().get(i));
                    }
                    Path list = cell.resolve("agent-" + agent + ".list");
                    Files.write(list, mine);
                    command.add(list.toString());
                }
                return command;
            }
            default -> throw new IllegalStateException(row.generator().toString());
        }
    }

    /**
     * The agents' script: one loop per agent, each sending its reports one after the other with rudder-agent's
     * line ({@code curl --user rudder:<pw> --upload-file F https://server/reports/}), plus the trust options of the
     * demo's own agent line ({@code --tlsv1.3 --pinnedpubkey … --insecure}: the demo's key is self-signed) and what
     * records the outcome.
     */
    private static Path script(Path cell) throws IOException {
        Path script = cell.resolve("agents.sh");
        Files.writeString(script, String.join("\n",
                "#!/bin/bash",
                "# usage: agents.sh URL PASSWORD PIN LIST...: one loop per list, one curl process per report",
                "set -u",
                "url=$1 password=$2 pin=$3",
                "shift 3",
                "for list in \"$@\"; do",
                "  while IFS= read -r report; do",
                "    curl --tlsv1.3 --pinnedpubkey \"$pin\" --insecure --silent --show-error \\",
                "      --user \"rudder:$password\" --upload-file \"$report\" \"$url\" \\",
                "      --output /dev/null --write-out '%{http_code} %{time_total} HTTP/%{http_version} %{num_connects}\\n'",
                "  done < \"$list\" > \"$list.out\" 2>&1 &",
                "done",
                "wait",
                ""));
        return script;
    }

    /**
     * Runs the command in the reports' directory (curl uploads names relative to it), its output in the cell.
     *
     * @return the exit status, or -1 when it was killed at the time limit
     */
    static int run(List<String> command, UploadLayout layout, Path cell, int timeoutSeconds)
            throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).directory(layout.reports().toFile())
                .redirectOutput(cell.resolve("stdout.txt").toFile())
                .redirectError(cell.resolve("stderr.txt").toFile())
                .start();
        if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
            process.waitFor();
            return -1;
        }
        return process.exitValue();
    }

    /** Reads what the generator wrote. */
    static Outcome read(UploadOptions.Row row, Path cell, int uploads, int exitStatus) throws IOException {
        return switch (row.generator()) {
            case AB, AB_KEEPALIVE -> readAb(cell, uploads, exitStatus);
            case CURL -> readCurl(List.of(cell.resolve("stderr.txt")), uploads, exitStatus);
            case AGENTS -> {
                List<Path> outputs = new ArrayList<>();
                for (int agent = 0; agent < row.concurrency(); agent++) {
                    outputs.add(cell.resolve("agent-" + agent + ".list.out"));
                }
                outputs.add(cell.resolve("stderr.txt"));
                yield readCurl(outputs, uploads, exitStatus);
            }
        };
    }

    private static Outcome readAb(Path cell, int uploads, int exitStatus) throws IOException {
        Map<String, String> fields = new TreeMap<>();
        for (String line : Files.readAllLines(cell.resolve("stdout.txt"))) {
            Matcher m = AB_NUMBER.matcher(line.strip());
            if (m.matches()) {
                fields.putIfAbsent(m.group(1).strip(), m.group(2).strip());
            }
        }
        long complete = number(fields.get("Complete requests"));
        long failed = number(fields.get("Failed requests"));
        long non2xx = number(fields.get("Non-2xx responses"));
        Map<String, Long> errors = new TreeMap<>();
        if (failed > 0) {
            errors.put("ab: failed requests", failed);
        }
        if (non2xx > 0) {
            errors.put("non-2xx responses", non2xx);
        }
        if (complete < uploads) {
            errors.put("not completed (ab exit " + exitStatus + ")", (long) uploads - complete);
        }
        Map<String, Long> messages = new TreeMap<>();
        Files.readAllLines(cell.resolve("stderr.txt")).stream().map(String::strip).filter(l -> !l.isEmpty())
                .forEach(l -> messages.merge(l.replaceAll("[0-9]+", "N"), 1L, Long::sum));
        double p50 = Double.NaN;
        double p99 = Double.NaN;
        Path csv = cell.resolve("ab-percentiles.csv");
        if (Files.exists(csv)) {
            for (String line : Files.readAllLines(csv)) {
                if (line.startsWith("50,")) {
                    p50 = Double.parseDouble(line.substring(3));
                } else if (line.startsWith("99,")) {
                    p99 = Double.parseDouble(line.substring(3));
                }
            }
        }
        long keepAlive = number(fields.get("Keep-Alive requests"));
        long ok = Math.max(0, complete - failed - non2xx);
        // ab counts every request on a kept-alive connection, its first included: the count of connections is
        // not in its output.
        return new Outcome(ok, errors, p50, p99, fields.getOrDefault("SSL/TLS Protocol", "?"),
                keepAlive > 0 ? -1 : complete, exitStatus, messages);
    }

    private static Outcome readCurl(List<Path> outputs, int uploads, int exitStatus) throws IOException {
        long ok = 0;
        long connections = 0;
        Map<String, Long> errors = new TreeMap<>();
        Map<String, Long> messages = new TreeMap<>();
        Map<String, Long> protocols = new TreeMap<>();
        List<Double> times = new ArrayList<>();
        for (Path output : outputs) {
            if (!Files.exists(output)) {
                continue;
            }
            for (String line : Files.readAllLines(output)) {
                Matcher m = CURL_LINE.matcher(line.strip());
                if (!m.matches()) {
                    if (!line.isBlank()) {
                        messages.merge(line.strip(), 1L, Long::sum);
                    }
                    continue;
                }
                String status = m.group(1);
                protocols.merge(m.group(3), 1L, Long::sum);
                connections += Long.parseLong(m.group(4));
                if (status.equals("201") || status.equals("204")) {
                    ok++;
                    times.add(Double.parseDouble(m.group(2)) * 1000);
                } else {
                    errors.merge(status.equals("000") ? "no response" : "status " + status, 1L, Long::sum);
                }
            }
        }
        long answered = ok + errors.values().stream().mapToLong(Long::longValue).sum();
        if (answered < uploads) {
            errors.merge("no outcome recorded (exit " + exitStatus + ")", uploads - answered, Long::sum);
        }
        double[] sorted = times.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        String protocol = String.join(", ", protocols.entrySet().stream()
                .map(e -> e.getKey() + " × " + e.getValue()).toList());
        return new Outcome(ok, errors, percentile(sorted, 0.50), percentile(sorted, 0.99), protocol, connections,
                exitStatus, messages);
    }

    /** Nearest rank, as ab's own table. */
    static double percentile(double[] sorted, double p) {
        if (sorted.length == 0) {
            return Double.NaN;
        }
        int rank = (int) Math.ceil(p * sorted.length);
        return sorted[Math.min(sorted.length, Math.max(rank, 1)) - 1];
    }

    private static long number(String text) {
        if (text == null) {
            return 0;
        }
        Matcher m = Pattern.compile("^(\\d+)").matcher(text);
        return m.find() ? Long.parseLong(m.group(1)) : 0;
    }

    /** @return the command as printed in the report, without the password or the work directory */
    static String describe(List<String> command, UploadLayout layout, Path work) {
        String text = String.join(" ", command.stream().map(w -> w.contains(" ") ? "'" + w + "'" : w).toList());
        return text.replace(layout.password(), "<pw>").replace(layout.demo().directory().toString(), "<layout>")
                .replace(work.toString(), "<work>");
    }
}
