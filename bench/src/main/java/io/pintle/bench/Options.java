package io.pintle.bench;

import io.pintle.bench.harness.CommandLine;
import io.pintle.server.tls.SelfSigned;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import java.util.TreeSet;

/**
 * Command-line options. The defaults keep a full run (18 cells) near two minutes on two cores.
 *
 * @param timing warm-up and measured window of every cell
 * @param output where the Markdown table is also written, or null
 * @param rows the rows to run (1-based, in table order), or empty for all; the report numbers the rows it ran
 *     from 1
 * @param serverKey the type of the server's key ({@code rsa2048}, the demo's, by default; {@code rsa4096}, Rudder
 *     agents' keys; {@code ec})
 */
record Options(ClosedLoop.Timing timing, Path output, Set<Integer> rows, SelfSigned.KeyType serverKey) {
    /**
     * Warm-up of each cell: its connections are opened and the loop is steady before measuring. (The JIT warm-up
     * is separate: once per request shape, before the first cell.)
     */
    static final Duration DEFAULT_WARMUP = Duration.ofSeconds(1);
    /** Measured window of each cell. */
    static final Duration DEFAULT_MEASURE = Duration.ofSeconds(5);
    /** Upper bound of either duration, so that a run stays bounded whatever the arguments. */
    static final Duration MAX_DURATION = Duration.ofSeconds(30);

    /** The usage line. */
    static final String USAGE = "usage: PolicyServingBench [--warmup SECONDS] [--measure SECONDS] [--output FILE] [--rows 1,3,7] [--server-key rsa2048|rsa4096|ec]";

    /**
     * @param args the command line
     * @return the options
     * @throws IllegalArgumentException on an unknown option or a value out of range
     */
    static Options parse(String... args) {
        Duration warmup = DEFAULT_WARMUP;
        Duration measure = DEFAULT_MEASURE;
        Path output = null;
        Set<Integer> rows = Set.of();
        SelfSigned.KeyType serverKey = SelfSigned.KeyType.RSA_2048;
        CommandLine line = new CommandLine(USAGE, args);
        while (line.next()) {
            String option = line.option();
            String value = line.value();
            switch (option) {
                case "--warmup" -> warmup = seconds(option, value, 0);
                case "--measure" -> measure = seconds(option, value, 1);
                case "--output" -> output = Path.of(value);
                case "--rows" -> rows = rows(value);
                case "--server-key" -> serverKey = SelfSigned.KeyType.parse(value);
                default -> throw line.unknown();
            }
        }
        return new Options(new ClosedLoop.Timing(warmup, measure), output, rows, serverKey);
    }

    private static Set<Integer> rows(String value) {
        Set<Integer> rows = new TreeSet<>();
        for (String part : value.split(",")) {
            try {
                int row = Integer.parseInt(part.strip());
                if (row >= 1) {
                    rows.add(row);
                    continue;
                }
            } catch (NumberFormatException e) {
                // reported below
            }
            throw new IllegalArgumentException("--rows takes row numbers from 1, comma-separated, not '" + value + "'");
        }
        return Set.copyOf(rows);
    }

    private static Duration seconds(String option, String value, int min) {
        try {
            Duration duration = Duration.ofSeconds(Long.parseLong(value));
            if (duration.toSeconds() >= min && duration.compareTo(MAX_DURATION) <= 0) {
                return duration;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException(option + " takes whole seconds from " + min + " to "
                + MAX_DURATION.toSeconds() + ", not '" + value + "'");
    }
}
