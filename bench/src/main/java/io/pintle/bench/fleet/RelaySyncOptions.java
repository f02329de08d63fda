package io.pintle.bench.fleet;

import io.pintle.bench.harness.CommandLine;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * {@code bench/relaysync}'s options: the fleet's shape without agents, and the two variants of the relays' JVM
 * options it compares.
 *
 * @param nodes the nodes, all behind the relays (none on the root)
 * @param relays the relays
 * @param serverKey the root's and relays' key: {@code ec} (P-256) or {@code rsa} (RSA-4096)
 * @param policyBytes each node's rudder.tar.bz2
 * @param nodeTree what each node's {@code rules/} holds beside it ({@code --node-tree small|rudder})
 * @param rounds rounds of one generation per variant (A then B, then B then A, ...)
 * @param warmupGenerations generations written and waited for after each restart of the relays, not measured (a
 *     relay restarted is a cold JVM: with one warm-up generation, half of the next one's relay CPU was still its
 *     JIT compilers'; a relay in service has run for days)
 * @param rootFollowsVariant whether the root is restarted with each variant's JVM options too ({@code
 *     --root-options variant}, to compare a change on the root's side), or always runs with A's ({@code a})
 * @param syncLimitSeconds how long after a generation is written the relays may take to serve it
 * @param a variant A (also the root's JVM options and jar)
 * @param b variant B
 * @param pintleJar the server's jar (A's, and B's unless {@code --b-pintle-jar} names another)
 * @param wrapper deploy/bin/pintle
 * @param serverCpus taskset CPU list for the root and the relays, or null
 * @param relayCpus taskset CPU list for the relays when not the root's ({@code --relay-cpus}), or null
 * @param harnessCpus taskset CPU list for this harness (the generation's writer and the relays' watcher), or null
 * @param commit what was measured
 * @param work the work directory
 * @param output the report; the plot goes next to it (same name, .png)
 * @param command the command line as the user typed it, for the report
 */
record RelaySyncOptions(int nodes, int relays, String serverKey, int policyBytes, NodeTree nodeTree, int rounds,
        int warmupGenerations, boolean rootFollowsVariant, int syncLimitSeconds, Variant a, Variant b, Path pintleJar,
        Path wrapper, String serverCpus, String relayCpus, String harnessCpus, String commit, Path work, Path output,
        String command) {
    /** What B adds to A's options by default: the relay's previous sync, one node directory at a time. */
    static final String ONE_AT_A_TIME = "-Dpintle.bench.relayBatch=false";

    static final String USAGE = "usage: RelaySyncBench --pintle-jar JAR --wrapper deploy/bin/pintle --work DIR "
            + "--output FILE [--nodes 15000] [--relays 3] [--server-key ec|rsa] [--policy-bytes 40960] "
            + "[--node-tree small|rudder] [--rounds 3] [--warmup-generations 3] [--root-options a|variant] "
            + "[--sync-limit 600] [--a-jvm-options 'OPTIONS'] "
            + "[--b-jvm-options 'OPTIONS (default: A's "
            + ONE_AT_A_TIME + ")'] [--b-pintle-jar JAR (default: --pintle-jar)] [--a-label batched] "
            + "[--b-label 'one node at a time'] [--server-cpus 0] [--relay-cpus CPUS (default: the servers')] "
            + "[--harness-cpus 1] [--commit C] [--command 'bench/relaysync ...']";

    /**
     * One set of the relays' JVM options and server jar.
     *
     * @param key "A" or "B"
     * @param label what the report calls it
     * @param jvmOptions the relays' JVM options
     * @param pintleJar the relays' server jar (A's is also the root's unless the root follows the variant)
     */
    record Variant(String key, String label, List<String> jvmOptions, Path pintleJar) {
        Variant {
            jvmOptions = List.copyOf(jvmOptions);
        }

        /** @return "A (batched)" */
        String title() {
            return key + " (" + label + ")";
        }
    }

    static RelaySyncOptions parse(String[] args) {
        int nodes = 15_000;
        int relays = 3;
        String serverKey = "ec";
        int policyBytes = FleetOptions.DEFAULT_POLICY_BYTES;
        NodeTree nodeTree = NodeTree.SMALL;
        int rounds = 3;
        int warmup = 3;
        int syncLimit = 600;
        String aJvm = CommandLine.UNIT_JVM_OPTIONS;
        String bJvm = null;
        boolean rootFollows = false;
        String aLabel = "batched";
        String bLabel = "one node at a time";
        Path jar = null;
        Path bJar = null;
        Path wrapper = null;
        String serverCpus = null;
        String relayCpus = null;
        String harnessCpus = null;
        String commit = "unknown";
        Path work = null;
        Path output = null;
        String command = null;
        CommandLine line = new CommandLine(USAGE, args);
        while (line.next()) {
            switch (line.option()) {
                case "--nodes" -> nodes = line.intValue(1, 200_000);
                case "--relays" -> relays = line.intValue(1, 50);
                case "--server-key" -> serverKey = line.value();
                case "--policy-bytes" -> policyBytes = line.intValue(128, 64 << 20);
                case "--node-tree" -> nodeTree = nodeTree(line.value());
                case "--rounds" -> rounds = line.intValue(1, 100);
                case "--warmup-generations" -> warmup = line.intValue(0, 10);
                case "--root-options" -> rootFollows = switch (line.value()) {
                    case "a" -> false;
                    case "variant" -> true;
                    default -> throw new IllegalArgumentException("--root-options is a or variant; " + USAGE);
                };
                case "--sync-limit" -> syncLimit = line.intValue(10, 86_400);
                case "--a-jvm-options" -> aJvm = line.value();
                case "--b-jvm-options" -> bJvm = line.value();
                case "--a-label" -> aLabel = line.value();
                case "--b-label" -> bLabel = line.value();
                case "--pintle-jar" -> jar = Path.of(line.value());
                case "--b-pintle-jar" -> bJar = Path.of(line.value());
                case "--wrapper" -> wrapper = Path.of(line.value());
                case "--server-cpus" -> serverCpus = CommandLine.cpusOrNull(line.value());
                case "--relay-cpus" -> relayCpus = CommandLine.cpusOrNull(line.value());
                case "--harness-cpus" -> harnessCpus = CommandLine.cpusOrNull(line.value());
                case "--commit" -> commit = line.value();
                case "--work" -> work = Path.of(line.value());
                case "--output" -> output = Path.of(line.value());
                case "--command" -> command = line.value();
                default -> throw line.unknown();
            }
        }
        if (jar == null || wrapper == null || work == null || output == null) {
            throw line.unknown();
        }
        if (!serverKey.equals("rsa") && !serverKey.equals("ec")) {
            throw new IllegalArgumentException("--server-key is ec or rsa; " + USAGE);
        }
        if (nodes < relays) {
            throw new IllegalArgumentException("--nodes must be at least --relays (every relay has nodes); " + USAGE);
        }
        if (bJar != null && !Files.isRegularFile(bJar)) {
            throw new IllegalArgumentException("--b-pintle-jar " + bJar + " is no file; " + USAGE);
        }
        Variant a = new Variant("A", aLabel, CommandLine.jvmOptions(aJvm), jar);
        // With another jar for B, B's options default to A's: the jars are what is compared.
        String bOptions = bJvm != null ? bJvm : bJar != null ? aJvm : aJvm + " " + ONE_AT_A_TIME;
        Variant b = new Variant("B", bLabel, CommandLine.jvmOptions(bOptions), bJar != null ? bJar : jar);
        return new RelaySyncOptions(nodes, relays, serverKey, policyBytes, nodeTree, rounds, warmup, rootFollows,
                syncLimit, a, b, jar, wrapper,
                serverCpus, relayCpus, harnessCpus, commit, work, output,
                command != null ? command : "RelaySyncBench " + String.join(" ", args));
    }

    private static NodeTree nodeTree(String value) {
        try {
            return NodeTree.parse(value);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(e.getMessage() + "; " + USAGE, e);
        }
    }

    /**
     * @param round 1-based
     * @return the variants in the order this round measures them: A then B in odd rounds, B then A in even ones
     */
    List<Variant> order(int round) {
        return round % 2 == 1 ? List.of(a, b) : List.of(b, a);
    }

    /**
     * @return the fleet's options for {@link FleetLayout} and {@link FleetServer}: these nodes all behind the relays,
     *     EC P-256 node keys (no agent connects: only the relays' node lists and certificate bundles need them),
     *     the fleet's other sizes, A's JVM options, no agents' schedule to speak of
     */
    FleetOptions fleet() {
        return new FleetOptions(nodes, relays, 0, 0, 0, serverKey, 300, 240, 1, 10, 0, 0, 0, 0, policyBytes,
                FleetOptions.DEFAULT_LIBRARY_BYTES, 16 * 1024, 200 * 1024, 1, 0, a.jvmOptions(), pintleJar, wrapper,
                serverCpus, harnessCpus, commit, work, output);
    }
}
