package io.pintle.bench.treescan;

import io.pintle.bench.plot.DotBars;
import java.awt.Color;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.UUID;
import java.util.stream.Stream;

/**
 * What a walk of a relay's share costs the root, two server builds side by side: a share of {@code --nodes} node
 * directories laid out as {@code bench/relaysync}'s (each {@code rules/rudder.tar.bz2} of 40 KiB and three small
 * files in {@code rules/cfengine-community/}: seven entries), walked by {@code TreeScanner} in fresh JVMs (one per
 * build and round, the order alternating, pinned to {@code --cpus}), each with its build's jar first on the class
 * path. Reports the calling thread's CPU per node: a whole-share scan (a parked wait's look at the share) and a
 * node's scan and replay (the two walks of an {@code ?only=} archive). Digests are cached before the passes that
 * count, as on a root at work: what is measured is walking, not hashing.
 */
public final class TreeScanBench {
    private TreeScanBench() {}

    /** One JVM's medians. */
    private record Result(String variant, int round, double wholeMicros, double perNodeMicros) {}

    public static void main(String[] args) {
        try {
            System.exit(run(args));
        } catch (Exception e) {
            e.printStackTrace();
            System.exit(2);
        }
    }

    private static int run(String[] args) throws Exception {
        Path a = Path.of("server/target/pintle.jar");
        Path b = null;
        String aLabel = "A";
        String bLabel = "B";
        int nodes = 1000;
        int rounds = 6;
        int passes = 20;
        String cpus = "0";
        Path output = null;
        Path plot = null;
        String command = "bench/treescan";
        for (int i = 0; i < args.length; i += 2) {
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException(args[i] + " needs a value");
            }
            String value = args[i + 1];
            switch (args[i]) {
                case "--pintle-jar" -> a = Path.of(value);
                case "--b-pintle-jar" -> b = Path.of(value);
                case "--a-label" -> aLabel = value;
                case "--b-label" -> bLabel = value;
                case "--nodes" -> nodes = Integer.parseInt(value);
                case "--rounds" -> rounds = Integer.parseInt(value);
                case "--passes" -> passes = Integer.parseInt(value);
                case "--cpus" -> cpus = value;
                case "--output" -> output = Path.of(value);
                case "--plot" -> plot = Path.of(value);
                case "--command" -> command = value;
                default -> throw new IllegalArgumentException("usage: bench/treescan [--pintle-jar JAR] "
                        + "[--b-pintle-jar JAR (default: the same: an A/A run)] [--a-label A] [--b-label B] "
                        + "[--nodes 1000] [--rounds 6] [--passes 20] [--cpus 0]");
            }
        }
        if (b == null) {
            b = a;
        }
        if (nodes < 1 || rounds < 1 || passes < 1) {
            throw new IllegalArgumentException("--nodes, --rounds and --passes must be at least 1");
        }
        Path benchJar = Path.of(TreeScanBench.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        Instant start = Instant.now();
        Path work = Files.createTempDirectory("pintle-treescan-");
        try {
            Path share = layOut(work.resolve("share"), nodes);
            List<Result> results = new ArrayList<>();
            for (int round = 1; round <= rounds; round++) {
                boolean aFirst = round % 2 == 1;
                for (int k = 0; k < 2; k++) {
                    boolean isA = (k == 0) == aFirst;
                    results.add(child(isA ? aLabel : bLabel, round, isA ? a : b, benchJar, share, passes, cpus));
                    Result last = results.get(results.size() - 1);
                    System.err.printf(Locale.ROOT, "round %d, %s: whole share %.1f µs a node, a node's scan + "
                            + "replay %.1f µs%n", round, last.variant(), last.wholeMicros(), last.perNodeMicros());
                }
            }
            String report = report(results, aLabel, bLabel, a, b, nodes, rounds, passes, cpus, command, start);
            System.out.print(report);
            if (output != null) {
                Files.writeString(output, report);
            }
            if (plot != null) {
                plot(results, aLabel, bLabel, nodes, start, plot);
            }
            return 0;
        } finally {
            try (Stream<Path> all = Files.walk(work)) {
                for (Path path : all.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(path);
                }
            }
        }
    }

    /** @return the share: {@code nodes} node directories of seven entries each, as bench/relaysync writes them */
    private static Path layOut(Path share, int nodes) throws IOException {
        Random random = new Random(39);
        byte[] archive = new byte[40 * 1024];
        random.nextBytes(archive);
        for (int node = 0; node < nodes; node++) {
            String id = new UUID(random.nextLong(), random.nextLong()).toString();
            Path rules = Files.createDirectories(share.resolve(id).resolve("rules/cfengine-community"));
            Files.write(rules.resolveSibling("rudder.tar.bz2"), archive);
            Files.writeString(rules.resolve("promises.cf"), "bundle agent main { } # generation 1\n");
            Files.writeString(rules.resolve("rudder-promises-generated"), "1\n");
            Files.writeString(rules.resolve("rudder.json"), "{\"RUDDER_NODE_ID\": \"" + id + "\"}\n");
        }
        return share;
    }

    private static Result child(String variant, int round, Path jar, Path benchJar, Path share, int passes,
            String cpus) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        if (!cpus.equals("none")) {
            command.addAll(List.of("taskset", "-c", cpus));
        }
        command.addAll(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xms256m",
                "-Xmx256m", "-cp", jar.toAbsolutePath() + ":" + benchJar, TreeScanChild.class.getName(),
                share.toString(), Integer.toString(passes)));
        Process process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        String result = null;
        try (BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(),
                StandardCharsets.UTF_8))) {
            for (String line = out.readLine(); line != null; line = out.readLine()) {
                if (line.startsWith("RESULT ")) {
                    result = line;
                }
            }
        }
        int status = process.waitFor();
        if (status != 0 || result == null) {
            throw new IOException(variant + "'s JVM (" + jar + ") ended with status " + status + " and no result");
        }
        String[] fields = result.split(" ");
        return new Result(variant, round, Double.parseDouble(fields[1]), Double.parseDouble(fields[2]));
    }

    /** @return one build's figures (whole share, or a node's scan + replay), a round each */
    private static double[] values(List<Result> results, String variant, boolean whole) {
        return results.stream().filter(r -> r.variant().equals(variant))
                .mapToDouble(r -> whole ? r.wholeMicros() : r.perNodeMicros()).toArray();
    }

    private static double median(List<Result> results, String variant, boolean whole) {
        return TreeScanChild.median(values(results, variant, whole));
    }

    private static String report(List<Result> results, String aLabel, String bLabel, Path a, Path b, int nodes,
            int rounds, int passes, String cpus, String command, Instant start) {
        StringBuilder out = new StringBuilder();
        out.append("# bench/treescan, ").append(start).append("\n\n");
        out.append(String.format(Locale.ROOT, "`%s`: a share of %,d node directories (7 entries each, as "
                + "bench/relaysync's), walked by each build's `TreeScanner` in fresh JVMs pinned to CPU(s) %s, %d "
                + "rounds (order alternating), each JVM %d warm-up passes then %d counted (medians); the calling "
                + "thread's CPU time per node. Digests are cached before the counted passes.%n%n", command, nodes,
                cpus, rounds, passes, passes));
        out.append(String.format(Locale.ROOT, "- %s: `%s`%n- %s: `%s`%n%n", aLabel, a, bLabel, b));
        out.append("| round | build | whole share: µs of CPU a node | a node's scan + replay: µs a node |\n");
        out.append("|---:|---|---:|---:|\n");
        for (Result r : results) {
            out.append(String.format(Locale.ROOT, "| %d | %s | %.1f | %.1f |%n", r.round(), r.variant(),
                    r.wholeMicros(), r.perNodeMicros()));
        }
        out.append("\n| median of the rounds | ").append(aLabel).append(" | ").append(bLabel).append(" | ")
                .append(bLabel).append(" / ").append(aLabel).append(" |\n|---|---:|---:|---:|\n");
        for (boolean whole : new boolean[] {true, false}) {
            double x = median(results, aLabel, whole);
            double y = median(results, bLabel, whole);
            out.append(String.format(Locale.ROOT, "| %s | %.1f µs | %.1f µs | %.2f |%n",
                    whole ? "whole share, a node" : "a node's scan + replay", x, y, y / x));
        }
        return out.toString();
    }

    /** One bar per build and measure (median), each round's value as a dot on it. */
    private static void plot(List<Result> results, String aLabel, String bLabel, int nodes, Instant start, Path file)
            throws IOException {
        List<DotBars.Row> bars = new ArrayList<>();
        for (boolean whole : new boolean[] {true, false}) {
            for (String variant : List.of(aLabel, bLabel)) {
                double median = median(results, variant, whole);
                bars.add(new DotBars.Row(variant + (whole ? ": whole share" : ": a node's scan + replay"), median,
                        Arrays.stream(values(results, variant, whole)).boxed().toList(),
                        variant.equals(aLabel) ? new Color(0x4c9a2a) : new Color(0x7f8c8d),
                        String.format(Locale.ROOT, "%.1f µs", median)));
            }
        }
        DotBars.write("bench/treescan, " + start + ": CPU µs per node of a share walk", bars, 330,
                String.format(Locale.ROOT, "Bars: median of the rounds; dots: each round's JVM (%,d nodes, the "
                        + "walking thread's CPU time per node).", nodes), file);
    }
}
