package io.pintle.bench.perf;

import io.pintle.bench.harness.CommandLine;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Options of {@code bench/perf} (issue 23's method). What the tuning work changes (the JVM Pintle runs on, its
 * options, its configuration) comes from the command line or the environment, and the report prints what was used.
 * A "B" JVM option string or configuration block adds a third contender, {@code pintle-b}: the same jar with them,
 * interleaved with the others, so that a server-side switch can be A/B'd in one run.
 *
 * @param rounds measured windows per row and contender, interleaved
 * @param window each window's length
 * @param warmup the unmeasured load each Pintle JVM gets before the first row (per generator and key)
 * @param herdAgents agents in each herd row (tlsconn's herd mode)
 * @param newConnectionConcurrency connections being set up at once in the new-connection rows
 * @param serverCpus the CPU list every server is pinned to
 * @param generatorCpus the CPU list every load generator is pinned to
 * @param pintleJar the server's runnable jar
 * @param pintleJava the {@code java} Pintle runs on
 * @param pintleJvmOptions its JVM options
 * @param pintleConfig TOML appended to the demo's configuration
 * @param pintleTlsProvider Pintle's {@code [tls] provider}, or null for its default
 * @param pintleBJvmOptions pintle-b's JVM options, or null (pintle-b runs when this or its config is set)
 * @param pintleBConfig TOML appended after {@code pintleConfig} for pintle-b, or null
 * @param pintleBTlsProvider pintle-b's {@code [tls] provider}, or null for Pintle's (pintle-b runs when set)
 * @param output the Markdown report, or null
 * @param plot the PNG plot, or null
 * @param rows the groups of rows to run ({@link #ROWS}; by default {@link #DEFAULT_ROWS})
 */
record PerCoreOptions(int rounds, Duration window, Duration warmup, List<Integer> herdAgents,
        int newConnectionConcurrency, String serverCpus, String generatorCpus, Path pintleJar, String pintleJava,
        List<String> pintleJvmOptions, String pintleConfig, String pintleTlsProvider, List<String> pintleBJvmOptions,
        String pintleBConfig, String pintleBTlsProvider, Path output, Path plot, Set<String> rows) {
    /** The groups of rows, in the order they run. */
    static final List<String> ROWS = List.of("newconn", "nagle", "abmethod", "firstbyte", "keepalive", "accesslog",
            "herd", "warmup");
    /**
     * The groups a run without {@code --rows} runs: all but {@code abmethod} (issue 39's second method, 9 rows of 3
     * contenders and a second nginx: about 8 more minutes), which {@code --rows} asks for.
     */
    static final List<String> DEFAULT_ROWS = ROWS.stream().filter(r -> !r.equals("abmethod")).toList();
    static final String USAGE = "usage: PerCoreBench [--quick] [--rows " + String.join(",", ROWS) + "]"
            + " [--rounds 3] [--window-seconds 5] [--warmup-seconds 15] [--herd-agents 2000,500]"
            + " [--new-connection-concurrency 8] [--server-cpus 0] [--generator-cpus 1]"
            + " [--pintle-jar server/target/pintle.jar] [--pintle-java JAVA] [--pintle-jvm-options 'OPTIONS']"
            + " [--pintle-config FILE] [--pintle-tls-provider jdk|conscrypt]"
            + " [--pintle-b-jvm-options 'OPTIONS'] [--pintle-b-config FILE] [--pintle-b-tls-provider PROVIDER]"
            + " [--output FILE] [--plot FILE]\n"
            + "environment: PINTLE_PERF_JAVA, PINTLE_PERF_JVM_OPTIONS, PINTLE_PERF_CONFIG (a file),"
            + " PINTLE_PERF_TLS_PROVIDER, PINTLE_PERF_JVM_OPTIONS_B, PINTLE_PERF_CONFIG_B (a file),"
            + " PINTLE_PERF_TLS_PROVIDER_B give the defaults of the --pintle-* options";

    /** @return whether a pintle-b contender runs */
    boolean pintleB() {
        return pintleBJvmOptions != null || pintleBConfig != null || pintleBTlsProvider != null;
    }

    static PerCoreOptions parse(Map<String, String> env, String... args) {
        int rounds = 3;
        Duration window = Duration.ofSeconds(5);
        Duration warmup = Duration.ofSeconds(15);
        // Past one core's rate (2,000 agents over 10 s: 400 connections/s against ~180 RSA-4096 handshakes/s) and
        // below it (500: 100 connections/s).
        List<Integer> herd = List.of(2000, 500);
        int concurrency = 8;
        String serverCpus = "0";
        String generatorCpus = "1";
        Set<String> rows = new LinkedHashSet<>(DEFAULT_ROWS);
        Path jar = Path.of("server/target/pintle.jar");
        String java = env.getOrDefault("PINTLE_PERF_JAVA", ProcessHandle.current().info().command().orElse("java"));
        String jvmOptions = env.getOrDefault("PINTLE_PERF_JVM_OPTIONS", CommandLine.UNIT_JVM_OPTIONS);
        String config = env.containsKey("PINTLE_PERF_CONFIG") ? read(Path.of(env.get("PINTLE_PERF_CONFIG")))
                : PerfOptions.DEFAULT_CONFIG;
        String tlsProvider = env.get("PINTLE_PERF_TLS_PROVIDER");
        String bJvmOptions = env.get("PINTLE_PERF_JVM_OPTIONS_B");
        String bConfig = env.containsKey("PINTLE_PERF_CONFIG_B") ? read(Path.of(env.get("PINTLE_PERF_CONFIG_B")))
                : null;
        String bTlsProvider = env.get("PINTLE_PERF_TLS_PROVIDER_B");
        Path output = null;
        Path plot = null;
        CommandLine line = new CommandLine(USAGE, args, "--quick");
        try {
            while (line.next()) {
                String value = line.value();
                switch (line.option()) {
                    case "--quick" -> {
                        // A smoke run: every row once, briefly.
                        rounds = 1;
                        window = Duration.ofSeconds(1);
                        warmup = Duration.ofSeconds(2);
                        herd = List.of(100);
                    }
                    case "--rounds" -> rounds = line.intValue(1, 20);
                    case "--window-seconds" -> window = Duration.ofSeconds(line.intValue(1, 120));
                    case "--warmup-seconds" -> warmup = Duration.ofSeconds(line.intValue(0, 120));
                    case "--herd-agents" -> {
                        List<Integer> sizes = new ArrayList<>();
                        for (String size : value.split(",")) {
                            sizes.add(CommandLine.bounded(size.strip(), 1, 20_000, USAGE));
                        }
                        herd = List.copyOf(sizes);
                    }
                    case "--new-connection-concurrency" -> concurrency = line.intValue(1, 256);
                    case "--server-cpus" -> serverCpus = value;
                    case "--generator-cpus" -> generatorCpus = value;
                    case "--pintle-jar" -> jar = Path.of(value);
                    case "--pintle-java" -> java = value;
                    case "--pintle-jvm-options" -> jvmOptions = value;
                    case "--pintle-config" -> config = read(Path.of(value));
                    case "--pintle-tls-provider" -> tlsProvider = value;
                    case "--pintle-b-jvm-options" -> bJvmOptions = value;
                    case "--pintle-b-config" -> bConfig = read(Path.of(value));
                    case "--pintle-b-tls-provider" -> bTlsProvider = value;
                    case "--output" -> output = Path.of(value);
                    case "--plot" -> plot = Path.of(value);
                    case "--rows" -> {
                        rows = new LinkedHashSet<>(List.of(value.split(",")));
                        if (!ROWS.containsAll(rows)) {
                            throw new IllegalArgumentException("rows are among " + ROWS + "; " + USAGE);
                        }
                    }
                    default -> throw line.unknown();
                }
            }
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(USAGE + " (" + e.getMessage() + ")");
        }
        Set<String> ordered = new LinkedHashSet<>(ROWS);
        ordered.retainAll(rows);
        return new PerCoreOptions(rounds, window, warmup, herd, concurrency, serverCpus, generatorCpus, jar, java,
                CommandLine.jvmOptions(jvmOptions), config.strip(),
                tlsProvider == null || tlsProvider.isBlank() ? null : tlsProvider.strip(),
                bJvmOptions == null ? null : CommandLine.jvmOptions(bJvmOptions),
                bConfig == null ? null : bConfig.strip(),
                bTlsProvider == null || bTlsProvider.isBlank() ? null : bTlsProvider.strip(), output, plot, Set.copyOf(ordered));
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the Pintle configuration block " + file, e);
        }
    }
}
