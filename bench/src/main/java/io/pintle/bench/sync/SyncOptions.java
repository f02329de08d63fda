package io.pintle.bench.sync;

import io.pintle.bench.harness.CommandLine;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Command-line options of {@code bench/sync}.
 *
 * @param trees file counts of the generated trees
 * @param repetitions repetitions of each scenario (the table shows medians)
 * @param roundTrip latency the proxy adds
 * @param cfLatencyMaxFiles cf-agent runs through the proxy only on trees up to this many files
 * @param cfLatencyRepetitions repetitions of cf-agent through the proxy
 * @param pintleJar the server's runnable jar
 * @param output where the Markdown report is also written, or null
 * @param keep whether to keep the temporary directory (its path is printed)
 */
record SyncOptions(List<Integer> trees, int repetitions, Duration roundTrip, int cfLatencyMaxFiles,
        int cfLatencyRepetitions, Path pintleJar, Path output, boolean keep) {
    static final String USAGE = "usage: SyncBench [--files 600,3000] [--repetitions 3] [--rtt-ms 25]"
            + " [--cf-latency-max-files 600] [--cf-latency-repetitions 1] [--pintle-jar server/target/pintle.jar]"
            + " [--output FILE] [--keep]";

    /**
     * @param args the command line
     * @return the options
     * @throws IllegalArgumentException with the usage on a bad option
     */
    static SyncOptions parse(String... args) {
        List<Integer> trees = List.of(600, 3000);
        int repetitions = 3;
        Duration roundTrip = Duration.ofMillis(25);
        int cfLatencyMaxFiles = 600;
        int cfLatencyRepetitions = 1;
        Path jar = Path.of("server/target/pintle.jar");
        Path output = null;
        boolean keep = false;
        CommandLine line = new CommandLine(USAGE, args, "--keep");
        try {
            while (line.next()) {
                String value = line.value();
                switch (line.option()) {
                    case "--keep" -> keep = true;
                    case "--files" -> {
                        List<Integer> sizes = new ArrayList<>();
                        for (String size : value.split(",")) {
                            sizes.add(bounded(Integer.parseInt(size.strip()), 20, 20_000));
                        }
                        trees = List.copyOf(sizes);
                    }
                    case "--repetitions" -> repetitions = bounded(Integer.parseInt(value), 1, 10);
                    case "--rtt-ms" -> roundTrip = Duration.ofMillis(bounded(Integer.parseInt(value), 1, 500));
                    case "--cf-latency-max-files" -> cfLatencyMaxFiles = bounded(Integer.parseInt(value), 0, 20_000);
                    case "--cf-latency-repetitions" -> cfLatencyRepetitions = bounded(Integer.parseInt(value), 1, 10);
                    case "--pintle-jar" -> jar = Path.of(value);
                    case "--output" -> output = Path.of(value);
                    default -> throw line.unknown();
                }
            }
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(USAGE + " (" + e.getMessage() + ")");
        }
        return new SyncOptions(trees, repetitions, roundTrip, cfLatencyMaxFiles, cfLatencyRepetitions, jar, output,
                keep);
    }

    private static int bounded(int value, int min, int max) {
        if (value < min || value > max) {
            throw new IllegalArgumentException("value " + value + " out of range [" + min + ", " + max + "]; "
                    + USAGE);
        }
        return value;
    }
}
