package io.pintle.bench.handshakes;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * OpenSSL's {@code s_time -new}: one process makes one connection at a time, each a full handshake (no session
 * reuse) with the client certificate, then {@code GET <path> HTTP/1.0} and reads the answer to the end. It does not
 * look at the status, so the harness checks the server's request counters around every window. Several processes
 * run at once, on the generator's CPUs, so that the server is never waiting for one client's round trip.
 */
final class STime {
    /** "1234 connections in 21 real seconds, 1081 bytes read per connection". */
    private static final Pattern REAL = Pattern.compile("(\\d+) connections in (\\d+) real seconds");

    private STime() {}

    /**
     * What the processes of one window did.
     *
     * @param connections connections completed, all processes together
     * @param seconds wall time from the first start to the last exit
     * @param failures processes that did not end normally or printed no count, with what they said
     */
    record Outcome(long connections, double seconds, List<String> failures) {}

    /**
     * The command line of one process.
     *
     * @param launcher taskset's prefix, or nothing
     * @param port the server's port on 127.0.0.1
     * @param certificate the client's certificate (the leaf alone)
     * @param key its private key
     * @param chain the verify store OpenSSL builds the sent chain from (its automatic chain), or null for none
     * @param path the path of the GET
     * @param seconds how long
     * @return the argv
     */
    static List<String> command(List<String> launcher, int port, Path certificate, Path key, Path chain, String path,
            int seconds) {
        List<String> command = new ArrayList<>(launcher);
        command.addAll(List.of("openssl", "s_time", "-connect", "127.0.0.1:" + port, "-new", "-cert",
                certificate.toString(), "-key", key.toString()));
        // s_time loads only the first certificate of -cert. OpenSSL then sends the chain it builds for it from the
        // verify store, which is the -CAfile alone (not the system's CAs: a chain built against them per
        // connection costs the generator CPU in one row and not in the other): the intermediate for the CA
        // client, so the chain it sends is leaf + intermediate and stops there (no root to add); the certificate
        // itself for the pinned client, which sends it alone.
        command.addAll(List.of("-no-CApath", "-no-CAstore"));
        command.addAll(chain == null ? List.of("-no-CAfile") : List.of("-CAfile", chain.toString()));
        command.addAll(List.of("-www", path, "-time", Integer.toString(seconds)));
        return command;
    }

    /**
     * Runs {@code parallel} copies of a command to their end.
     *
     * @param command one process's argv
     * @param parallel how many at once
     * @param limitSeconds when to give up on them
     * @param scratch where their output goes (s_time prints a character per connection: more than a pipe holds)
     * @return what they did
     */
    static Outcome run(List<String> command, int parallel, int limitSeconds, Path scratch)
            throws IOException, InterruptedException {
        List<Process> processes = new ArrayList<>(parallel);
        long start = System.nanoTime();
        try {
            List<Path> outputs = new ArrayList<>(parallel);
            for (int i = 0; i < parallel; i++) {
                Path output = scratch.resolve("s_time-" + i + ".out");
                outputs.add(output);
                processes.add(new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile())
                        .start());
            }
            long connections = 0;
            List<String> failures = new ArrayList<>();
            long end = 0;
            for (int i = 0; i < processes.size(); i++) {
                Process process = processes.get(i);
                if (!process.waitFor(limitSeconds, TimeUnit.SECONDS)) {
                    failures.add("s_time still running after " + limitSeconds + " s");
                    continue;
                }
                end = Math.max(end, System.nanoTime());
                String output = Files.readString(outputs.get(i), StandardCharsets.ISO_8859_1);
                Matcher matcher = REAL.matcher(output);
                if (process.exitValue() != 0 || !matcher.find()) {
                    failures.add("s_time exit " + process.exitValue() + ": " + tail(output));
                }
                if (matcher.reset().find()) {
                    connections += Long.parseLong(matcher.group(1));
                }
            }
            return new Outcome(connections, ((end == 0 ? System.nanoTime() : end) - start) / 1e9, failures);
        } finally {
            for (Process process : processes) {
                if (process.isAlive()) {
                    process.destroyForcibly();
                }
            }
        }
    }

    private static String tail(String output) {
        String flat = output.strip().replace('\n', ' ');
        return flat.length() > 300 ? "…" + flat.substring(flat.length() - 300) : flat;
    }
}
