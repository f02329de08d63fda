package io.pintle.bench.uploads;

import io.pintle.bench.harness.CommandLine;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Options of {@code bench/uploads}. The defaults are issue 19's figures: 1,000 reports of 5 KB per cell.
 *
 * @param rows what is measured, in order (each against both servers)
 * @param uploads uploads per cell
 * @param reportBytes each report's size
 * @param warmup uploads sent to each server before the first row, unmeasured (the JIT of Pintle's JVM)
 * @param cellTimeoutSeconds how long one cell's generator may run before it is killed (its uploads then count as
 *     errors)
 * @param pintleJar the server's runnable jar
 * @param pintleJvmOptions its JVM options
 * @param pintleConfig TOML appended to the demo's configuration
 * @param serverCpu the CPU both servers are pinned to, or -1 for none
 * @param clientCpus the CPUs this JVM and the generators are pinned to (set by the script), for the report, or null
 * @param commit what the server was built from, for the report, or null
 * @param output the directory the report, the plot and the generators' raw outputs go to
 * @param work the work directory (layout, configurations, logs)
 */
record UploadOptions(List<Row> rows, int uploads, int reportBytes, int warmup, int cellTimeoutSeconds, Path pintleJar,
        List<String> pintleJvmOptions, String pintleConfig, int serverCpu, String clientCpus, String commit,
        Path output, Path work) {
    /**
     * Appended to the demo's configuration (after which {@code sync.PintleProcess} appends {@code [log] access =
     * false}: nginx's access log is off too). Every simulated agent uploads from 127.0.0.1, so the per-address
     * share of the upload workers (default: a quarter of 20) is lifted above the generators' largest concurrency,
     * as many agents' own addresses would have it; the pool's size and queue stay at their defaults. ab sends one
     * file name (one node's) at every concurrency: the per-node bound is lifted too. The first line lands in the
     * demo configuration's last table, {@code [limits]}.
     */
    static final String DEFAULT_CONFIG = String.join("\n",
            "max_requests_per_node = 1000",
            "[limits.uploads]",
            "per_address = 64",
            "");
    static final String DEFAULT_ROWS = "ab:1,ab:8,ab:32,curl:1,curl:8,curl:32,agents:8,ab-keepalive:8";
    static final String USAGE = "usage: UploadBench [--rows " + DEFAULT_ROWS + "] [--uploads 1000]"
            + " [--report-bytes 5000] [--warmup 3000] [--cell-timeout-seconds 300]"
            + " [--pintle-jar server/target/pintle.jar] [--pintle-jvm-options '" + CommandLine.UNIT_JVM_OPTIONS + "']"
            + " [--pintle-config FILE] [--server-cpu 0|none] [--client-cpus TEXT] [--commit TEXT]"
            + " --output DIR --work DIR";

    /**
     * One row: a generator at a concurrency.
     *
     * @param generator the load generator and its connection shape
     * @param concurrency uploads in flight (ab {@code -c}, curl {@code --parallel-max}, or agents' loops)
     */
    record Row(Generator.Kind generator, int concurrency) {
        String label() {
            return generator.label(concurrency);
        }
    }

    static UploadOptions parse(String... args) {
        List<Row> rows = rows(DEFAULT_ROWS);
        int uploads = 1000;
        int bytes = 5000;
        int warmup = 3000;
        int timeout = 300;
        Path jar = Path.of("server/target/pintle.jar");
        String jvmOptions = CommandLine.UNIT_JVM_OPTIONS;
        String config = DEFAULT_CONFIG;
        int serverCpu = -1;
        String clientCpus = null;
        String commit = null;
        Path output = null;
        Path work = null;
        CommandLine line = new CommandLine(USAGE, args);
        try {
            while (line.next()) {
                String value = line.value();
                switch (line.option()) {
                    case "--rows" -> rows = rows(value);
                    case "--uploads" -> uploads = line.intValue(10, 100_000);
                    case "--report-bytes" -> bytes = line.intValue(1, 100_000_000);
                    case "--warmup" -> warmup = line.intValue(0, 1_000_000);
                    case "--cell-timeout-seconds" -> timeout = line.intValue(10, 3600);
                    case "--pintle-jar" -> jar = Path.of(value);
                    case "--pintle-jvm-options" -> jvmOptions = value;
                    case "--pintle-config" -> config = read(Path.of(value));
                    case "--server-cpu" -> serverCpu = value.equals("none") ? -1 : line.intValue(0, 63);
                    case "--client-cpus" -> clientCpus = CommandLine.cpusOrNull(value);
                    case "--commit" -> commit = value.isBlank() ? null : value;
                    case "--output" -> output = Path.of(value);
                    case "--work" -> work = Path.of(value);
                    default -> throw line.unknown();
                }
            }
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(USAGE + " (" + e.getMessage() + ")");
        }
        if (output == null || work == null) {
            throw new IllegalArgumentException(USAGE);
        }
        for (Row row : rows) {
            if (row.concurrency() > uploads) {
                throw new IllegalArgumentException("row " + row.label() + ": more in flight than --uploads " + uploads);
            }
        }
        List<String> jvm = CommandLine.jvmOptions(jvmOptions);
        return new UploadOptions(rows, uploads, bytes, warmup, timeout, jar, jvm, config, serverCpu, clientCpus,
                commit, output, work);
    }

    private static List<Row> rows(String text) {
        List<Row> rows = new ArrayList<>();
        for (String spec : text.split(",")) {
            String[] parts = spec.strip().toLowerCase(Locale.ROOT).split(":");
            if (parts.length != 2) {
                throw new IllegalArgumentException("a row is GENERATOR:CONCURRENCY (e.g. ab:8), not '" + spec + "'; "
                        + "generators: " + Generator.Kind.names());
            }
            rows.add(new Row(Generator.Kind.named(parts[0]), CommandLine.bounded(parts[1], 1, 1000, USAGE)));
        }
        return List.copyOf(rows);
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read --pintle-config " + file, e);
        }
    }
}
