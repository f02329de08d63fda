package io.pintle.bench.stall;

import io.pintle.bench.harness.CommandLine;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Options of {@code bench/stall}.
 *
 * @param requests requests per family
 * @param streams requests in flight at once, all on one HTTP/2 connection
 * @param timeout how long a request may take before it counts as stuck
 * @param families the families to run, in order
 * @param pintleJar the server's runnable jar
 * @param serverCpus the CPUs Pintle is pinned to ({@code taskset -c} list), or null for none
 * @param commit what the server was built from, for the report, or null
 * @param output the Markdown report, or null
 * @param plot the PNG plot, or null
 * @param keep whether to keep the work directory (layout, configuration, server log) even when the run is clean
 */
record StallOptions(long requests, int streams, Duration timeout, List<Family> families, Path pintleJar,
        String serverCpus, String commit, Path output, Path plot, boolean keep) {
    /** The figure: 2 million requests per family. */
    static final long DEFAULT_REQUESTS = 2_000_000;
    /** The figure: 16 streams on one connection, the concurrency at which the HTTP/2 stall was seen. */
    static final int DEFAULT_STREAMS = 16;
    /**
     * A 304 takes well under a millisecond here; 10 s leaves room for GC pauses and a busy shared machine, and is
     * short enough that a stuck stream does not hold the run for long.
     */
    static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(10);
    static final String USAGE = "usage: StallBench [--requests 2000000] [--streams 16] [--timeout-seconds 10]"
            + " [--families " + Family.names() + "] [--pintle-jar server/target/pintle.jar] [--server-cpus 0]"
            + " [--commit TEXT] [--output FILE] [--plot FILE] [--keep]";

    static StallOptions parse(String... args) {
        long requests = DEFAULT_REQUESTS;
        int streams = DEFAULT_STREAMS;
        Duration timeout = DEFAULT_TIMEOUT;
        List<Family> families = List.of(Family.values());
        Path jar = Path.of("server/target/pintle.jar");
        String serverCpus = null;
        String commit = null;
        Path output = null;
        Path plot = null;
        boolean keep = false;
        CommandLine line = new CommandLine(USAGE, args, "--keep");
        try {
            while (line.next()) {
                String value = line.value();
                switch (line.option()) {
                    case "--keep" -> keep = true;
                    case "--requests" -> requests = line.longValue(1, 100_000_000);
                    case "--streams" -> streams = (int) line.longValue(1, 128);
                    case "--timeout-seconds" -> timeout = Duration.ofSeconds(line.longValue(1, 300));
                    case "--families" -> {
                        Set<Family> chosen = new LinkedHashSet<>();
                        for (String name : value.split(",")) {
                            chosen.add(Family.named(name.strip()));
                        }
                        families = List.copyOf(new ArrayList<>(chosen));
                    }
                    case "--pintle-jar" -> jar = Path.of(value);
                    case "--server-cpus" -> serverCpus = CommandLine.cpusOrNull(value);
                    case "--commit" -> commit = value.isBlank() ? null : value;
                    case "--output" -> output = Path.of(value);
                    case "--plot" -> plot = Path.of(value);
                    default -> throw line.unknown();
                }
            }
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(USAGE + " (" + e.getMessage() + ")");
        }
        return new StallOptions(requests, streams, timeout, families, jar, serverCpus, commit, output, plot, keep);
    }

    /** @return the command words that pin Pintle, or none */
    List<String> serverLauncher() {
        return CommandLine.taskset(serverCpus);
    }
}
