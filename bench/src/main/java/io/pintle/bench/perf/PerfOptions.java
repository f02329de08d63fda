package io.pintle.bench.perf;

import io.pintle.bench.harness.CommandLine;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Options of {@code bench/perf}. What the tuning work changes (the JVM Pintle runs on, its options, its
 * configuration) comes from the command line or the environment, and the report prints what was used.
 *
 * @param warmup unmeasured time before each measured window
 * @param window each row's measured window, per server
 * @param herdAgents agents in each herd (one row per herd)
 * @param herdSpread the time over which the herd's agents start
 * @param idleConnections idle connections held open in the idle row
 * @param handshakeConcurrency connections being set up at once in the handshake rows
 * @param cfRuns cf-agent copies of the large file (0: no cf-serverd)
 * @param pintleJar the server's runnable jar
 * @param pintleJava the {@code java} Pintle runs on
 * @param pintleJvmOptions its JVM options
 * @param pintleConfig TOML appended to the demo's configuration
 * @param pintleTlsProvider Pintle's {@code [tls] provider} ({@code jdk}, {@code conscrypt}), or null for its default
 * @param output the Markdown report, or null
 * @param plot the PNG plot, or null
 * @param rows the groups of rows to run ({@link #ROWS})
 */
record PerfOptions(Duration warmup, Duration window, List<Integer> herdAgents, Duration herdSpread, int idleConnections,
        int handshakeConcurrency, int cfRuns, Path pintleJar, String pintleJava, List<String> pintleJvmOptions,
        String pintleConfig, String pintleTlsProvider, Path output, Path plot, Set<String> rows) {
    /** The groups of rows, in the order they run. */
    static final List<String> ROWS = List.of("small", "large", "handshake", "herd", "idle");
    /**
     * Appended to the demo configuration. The access log is off (nginx's is off too). The connection limit must be
     * above the idle row's 10,000 connections (the default is 10,000), and the idle timeout above the idle row's
     * length (the default, 30 s, would close them while they are measured; nginx's keepalive_timeout is set to
     * 300 s likewise). Every simulated agent connects from 127.0.0.1, so the per-address shares are lifted to the
     * whole class, as thousands of agents' own addresses would have it; and every simulated agent presents the
     * same node's certificate, so the per-node bound is lifted likewise.
     */
    static final String DEFAULT_CONFIG = String.join("\n",
            "[log]",
            "access = false",
            "[limits]",
            "max_connections = 20000",
            "idle_timeout_seconds = 300",
            "max_waiters_per_address = 10000",
            "max_requests_per_node = 10000",
            "[limits.files]",
            "per_address = 1100",
            "[limits.api]",
            "per_address = 550",
            "[limits.uploads]",
            "per_address = 220");
    static final String USAGE = "usage: PerfBench [--quick] [--warmup-seconds 3] [--window-seconds 5]"
            + " [--herd-agents 2000,500] [--idle-connections 10000] [--handshake-concurrency 8] [--cf-runs 3]"
            + " [--pintle-jar server/target/pintle.jar] [--pintle-java JAVA] [--pintle-jvm-options 'OPTIONS']"
            + " [--pintle-config FILE] [--pintle-tls-provider jdk|conscrypt] [--rows small,large,handshake,herd,idle] [--output FILE] [--plot FILE]\n"
            + "environment: PINTLE_PERF_JAVA, PINTLE_PERF_JVM_OPTIONS, PINTLE_PERF_CONFIG (a file),"
            + " PINTLE_PERF_TLS_PROVIDER give the defaults of the four --pintle-* options";

    static PerfOptions parse(Map<String, String> env, String... args) {
        Duration warmup = Duration.ofSeconds(3);
        Set<String> rows = new LinkedHashSet<>(ROWS);
        Duration window = Duration.ofSeconds(5);
        // The herd, and one this 2-core machine can carry with the load generator's own RSA-4096
        // signatures (about 10 ms of its CPU per agent).
        List<Integer> herd = List.of(2000, 500);
        int idle = 10_000;
        int handshakeConcurrency = 8;
        int cfRuns = 3;
        Path jar = Path.of("server/target/pintle.jar");
        String java = env.getOrDefault("PINTLE_PERF_JAVA", ProcessHandle.current().info().command().orElse("java"));
        String jvmOptions = env.getOrDefault("PINTLE_PERF_JVM_OPTIONS", CommandLine.UNIT_JVM_OPTIONS);
        String config = env.containsKey("PINTLE_PERF_CONFIG") ? read(Path.of(env.get("PINTLE_PERF_CONFIG")))
                : DEFAULT_CONFIG;
        String tlsProvider = env.get("PINTLE_PERF_TLS_PROVIDER");
        Path output = null;
        Path plot = null;
        CommandLine line = new CommandLine(USAGE, args, "--quick");
        try {
            while (line.next()) {
                String value = line.value();
                switch (line.option()) {
                    case "--quick" -> {
                        // A smoke run: every row, briefly.
                        warmup = Duration.ofSeconds(1);
                        window = Duration.ofSeconds(2);
                        herd = List.of(200);
                        idle = 1000;
                        cfRuns = 1;
                    }
                    case "--warmup-seconds" -> warmup = Duration.ofSeconds(bounded(value, 0, 60));
                    case "--window-seconds" -> window = Duration.ofSeconds(bounded(value, 1, 120));
                    case "--herd-agents" -> {
                        List<Integer> sizes = new java.util.ArrayList<>();
                        for (String size : value.split(",")) {
                            sizes.add(bounded(size.strip(), 1, 20_000));
                        }
                        herd = List.copyOf(sizes);
                    }
                    case "--idle-connections" -> idle = bounded(value, 1, 15_000);
                    case "--handshake-concurrency" -> handshakeConcurrency = bounded(value, 1, 256);
                    case "--cf-runs" -> cfRuns = bounded(value, 0, 10);
                    case "--pintle-jar" -> jar = Path.of(value);
                    case "--pintle-java" -> java = value;
                    case "--pintle-jvm-options" -> jvmOptions = value;
                    case "--pintle-config" -> config = read(Path.of(value));
                    case "--pintle-tls-provider" -> tlsProvider = value;
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
        List<String> jvm = jvmOptions.isBlank() ? List.of() : List.of(jvmOptions.trim().split("\\s+"));
        return new PerfOptions(warmup, window, herd, Duration.ofSeconds(10), idle, handshakeConcurrency, cfRuns, jar,
                java, jvm, config.strip(), tlsProvider == null || tlsProvider.isBlank() ? null : tlsProvider.strip(),
                output, plot, Set.copyOf(rows));
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the Pintle configuration block " + file, e);
        }
    }

    private static int bounded(String text, int min, int max) {
        int value = Integer.parseInt(text);
        if (value < min || value > max) {
            throw new IllegalArgumentException("value " + value + " out of range [" + min + ", " + max + "]; "
                    + USAGE);
        }
        return value;
    }
}
