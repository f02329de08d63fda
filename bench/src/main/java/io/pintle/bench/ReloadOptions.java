package io.pintle.bench;

import io.pintle.bench.harness.CommandLine;
import java.nio.file.Path;

/**
 * Command-line options of {@link ReloadBench}. The defaults are the figures of the issue (20,000 nodes, 1,000
 * connections, 100 reloads) and keep a run under four minutes on two cores, registry generation included.
 *
 * @param nodes generated nodes, on top of the demo layout's three
 * @param connections keep-alive connections held open during the reloads
 * @param rate steady load, requests per second over all connections
 * @param reloads measured reloads under load, half by the admin API, half by the file watch
 * @param repetitions repetitions of each snapshot-build measurement
 * @param threads threads generating the registry's certificates
 * @param output where the Markdown report is also written, or null
 * @param plot where the plot (PNG) is written, or null
 */
record ReloadOptions(int nodes, int connections, int rate, int reloads, int repetitions, int threads,
        Path output, Path plot) {
    /** The registry size. */
    static final int DEFAULT_NODES = 20_000;
    /** The number of open keep-alive connections. */
    static final int DEFAULT_CONNECTIONS = 1_000;
    /**
     * "A few hundred" requests per second: light next to what the server sustains (about 9,000 req/s of 304s on two
     * cores, see bench/run), so that reloads are measured under load rather than behind a saturated CPU. Each
     * connection then gets a request every {@code connections / rate} seconds, far within both idle timeouts.
     */
    static final int DEFAULT_RATE = 300;
    /** The number of reloads. */
    static final int DEFAULT_RELOADS = 100;
    /** Enough for a median and a tail; p99 of 20 samples is their maximum. */
    static final int DEFAULT_REPETITIONS = 20;
    /** The machine has two cores. */
    static final int DEFAULT_THREADS = 2;

    /** The usage line. */
    static final String USAGE = "usage: ReloadBench [--nodes N] [--connections N] [--rate REQ_PER_S] [--reloads N] "
            + "[--repetitions N] [--threads N] [--output FILE] [--plot FILE.png]";

    /**
     * @param args the command line
     * @return the options
     * @throws IllegalArgumentException on an unknown option or a value out of range
     */
    static ReloadOptions parse(String... args) {
        int nodes = DEFAULT_NODES;
        int connections = DEFAULT_CONNECTIONS;
        int rate = DEFAULT_RATE;
        int reloads = DEFAULT_RELOADS;
        int repetitions = DEFAULT_REPETITIONS;
        int threads = DEFAULT_THREADS;
        Path output = null;
        Path plot = null;
        CommandLine line = new CommandLine(USAGE, args);
        while (line.next()) {
            String option = line.option();
            String value = line.value();
            // Upper bounds keep any run bounded in time and memory.
            switch (option) {
                case "--nodes" -> nodes = integer(option, value, 10, 50_000);
                case "--connections" -> connections = integer(option, value, 1, 2_000);
                case "--rate" -> rate = integer(option, value, 10, 2_000);
                case "--reloads" -> reloads = integer(option, value, 2, 200);
                case "--repetitions" -> repetitions = integer(option, value, 3, 50);
                case "--threads" -> threads = integer(option, value, 1, 16);
                case "--output" -> output = Path.of(value);
                case "--plot" -> plot = Path.of(value);
                default -> throw line.unknown();
            }
        }
        if (reloads % 2 != 0) {
            throw new IllegalArgumentException("--reloads must be even: half by the admin API, half by the file watch");
        }
        return new ReloadOptions(nodes, connections, rate, reloads, repetitions, threads, output, plot);
    }

    private static int integer(String option, String value, int min, int max) {
        try {
            int parsed = Integer.parseInt(value);
            if (parsed >= min && parsed <= max) {
                return parsed;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException(option + " takes an integer from " + min + " to " + max + ", not '"
                + value + "'");
    }
}
