package io.pintle.bench.fleet;

import io.pintle.bench.harness.CommandLine;
import java.nio.file.Path;
import java.util.List;

/**
 * {@code bench/fleet}'s options. Times are the fleet's real ones (Rudder's defaults: a run every 300 s, 240 s of
 * splay, an inventory a day); {@code compression} divides every one of them, so a compressed fleet makes its
 * requests that many times as often as the real one would.
 *
 * @param nodes simulated nodes
 * @param relays relays between the root and the nodes (0: every node on the root)
 * @param rootShare the share of the nodes attached to the root itself (the rest spread evenly over the relays)
 * @param replicas root replicas behind HAProxy (0: none; then relays must be 0), every node through HAProxy
 * @param rsaShare the share of the nodes with an RSA-4096 key (Rudder's default), the others EC P-256
 * @param serverKey the root's and relays' key: {@code rsa} (RSA-4096, Rudder's agent key) or {@code ec}
 * @param intervalSeconds the agent's run interval
 * @param splaySeconds its splay
 * @param compression how many times faster than real time the fleet runs
 * @param durationSeconds how long agents run (after the prime)
 * @param generationAt seconds into the run when every node's policies change on the root (0: never)
 * @param relayRestartAt seconds into the run when the first relay is restarted (0: never)
 * @param rootRestartAt seconds into the run when the root is restarted (0: never)
 * @param killAt seconds into the run when one replica is killed (SIGKILL) and started again (0: never)
 * @param policyBytes each node's rudder.tar.bz2
 * @param libraryBytes the common library's archive
 * @param reportBytes a run's report
 * @param inventoryBytes an inventory
 * @param threads the agents' worker threads
 * @param channels the share of the nodes that hold their order channel (the pull channel) to their server, which
 *     sends them a "policies changed" update order after a generation (0: none); every other node is the first
 * @param pintleJvmOptions each server JVM's options
 * @param pintleJar the server's jar
 * @param wrapper deploy/bin/pintle
 * @param serverCpus taskset CPU list for every server (and HAProxy), or null
 * @param agentCpus taskset CPU list for the agents, or null
 * @param commit what was measured
 * @param work the work directory
 * @param output the report; the plots are written next to it
 */
record FleetOptions(int nodes, int relays, double rootShare, int replicas, double rsaShare, String serverKey,
        int intervalSeconds, int splaySeconds, double compression, int durationSeconds, int generationAt,
        int relayRestartAt, int rootRestartAt, int killAt, int policyBytes, int libraryBytes, int reportBytes,
        int inventoryBytes, int threads, double channels, List<String> pintleJvmOptions, Path pintleJar, Path wrapper,
        String serverCpus, String agentCpus, String commit, Path work, Path output) {
    static final String USAGE = "usage: FleetBench --pintle-jar JAR --wrapper deploy/bin/pintle --work DIR "
            + "--output FILE [--nodes 20000] [--relays 3] [--root-share 0.25] [--replicas 0] [--rsa-share 0.05] "
            + "[--server-key rsa|ec] [--interval 300] [--splay 240] [--compression 1] [--duration 900] "
            + "[--generation-at 300] [--relay-restart-at 0] [--root-restart-at 0] [--kill-at 0] "
            + "[--policy-bytes 40960] [--library-bytes 179200] [--report-bytes 16384] [--inventory-bytes 204800] "
            + "[--threads 2048] [--channels 0] [--pintle-jvm-options 'OPTIONS'] [--server-cpus 0] [--agent-cpus 1] [--commit C]";

    /** A node's rudder.tar.bz2: Rudder's are 35–110 KB; the low end, for the disk. */
    static final int DEFAULT_POLICY_BYTES = 40 * 1024;
    /** The common library's archive. */
    static final int DEFAULT_LIBRARY_BYTES = 175 * 1024;

    static FleetOptions parse(String[] args) {
        int nodes = 20_000;
        int relays = 3;
        double rootShare = 0.25;
        int replicas = 0;
        double rsaShare = 0.05;
        String serverKey = "rsa";
        int interval = 300;
        int splay = 240;
        double compression = 1;
        int duration = 900;
        int generationAt = 300;
        int relayRestartAt = 0;
        int rootRestartAt = 0;
        int killAt = 0;
        int policyBytes = DEFAULT_POLICY_BYTES;
        int libraryBytes = DEFAULT_LIBRARY_BYTES;
        int reportBytes = 16 * 1024;
        int inventoryBytes = 200 * 1024;
        int threads = 2048;
        double channels = 0;
        String jvm = CommandLine.UNIT_JVM_OPTIONS;
        Path jar = null;
        Path wrapper = null;
        String serverCpus = null;
        String agentCpus = null;
        String commit = "unknown";
        Path work = null;
        Path output = null;
        CommandLine line = new CommandLine(USAGE, args);
        while (line.next()) {
            switch (line.option()) {
                case "--nodes" -> nodes = line.intValue(1, 200_000);
                case "--relays" -> relays = line.intValue(0, 50);
                case "--root-share" -> rootShare = fraction(line.value());
                case "--replicas" -> replicas = line.intValue(0, 8);
                case "--rsa-share" -> rsaShare = fraction(line.value());
                case "--server-key" -> serverKey = line.value();
                case "--interval" -> interval = line.intValue(10, 86_400);
                case "--splay" -> splay = line.intValue(0, 86_400);
                case "--compression" -> compression = Double.parseDouble(line.value());
                case "--duration" -> duration = line.intValue(10, 86_400);
                case "--generation-at" -> generationAt = line.intValue(0, 86_400);
                case "--relay-restart-at" -> relayRestartAt = line.intValue(0, 86_400);
                case "--root-restart-at" -> rootRestartAt = line.intValue(0, 86_400);
                case "--kill-at" -> killAt = line.intValue(0, 86_400);
                case "--policy-bytes" -> policyBytes = line.intValue(16, 64 << 20);
                case "--library-bytes" -> libraryBytes = line.intValue(16, 64 << 20);
                case "--report-bytes" -> reportBytes = line.intValue(1, 64 << 20);
                case "--inventory-bytes" -> inventoryBytes = line.intValue(1, 64 << 20);
                case "--threads" -> threads = line.intValue(1, 8192);
                case "--channels" -> channels = fraction(line.value());
                case "--pintle-jvm-options" -> jvm = line.value();
                case "--pintle-jar" -> jar = Path.of(line.value());
                case "--wrapper" -> wrapper = Path.of(line.value());
                case "--server-cpus" -> serverCpus = CommandLine.cpusOrNull(line.value());
                case "--agent-cpus" -> agentCpus = CommandLine.cpusOrNull(line.value());
                case "--commit" -> commit = line.value();
                case "--work" -> work = Path.of(line.value());
                case "--output" -> output = Path.of(line.value());
                default -> throw line.unknown();
            }
        }
        if (jar == null || wrapper == null || work == null || output == null) {
            throw line.unknown();
        }
        if (!serverKey.equals("rsa") && !serverKey.equals("ec")) {
            throw new IllegalArgumentException("--server-key is rsa or ec; " + USAGE);
        }
        if (replicas > 0 && relays > 0) {
            throw new IllegalArgumentException("--replicas needs --relays 0 (replicas stand for the root); " + USAGE);
        }
        if (replicas == 1) {
            throw new IllegalArgumentException("--replicas is 0 or at least 2; " + USAGE);
        }
        if (!(compression >= 1 && compression <= 1000)) {
            throw new IllegalArgumentException("--compression is in [1, 1000]; " + USAGE);
        }
        if (splay >= interval) {
            throw new IllegalArgumentException("--splay must be less than --interval; " + USAGE);
        }
        return new FleetOptions(nodes, relays, relays == 0 ? 1 : rootShare, replicas, rsaShare, serverKey, interval,
                splay, compression, duration, generationAt, relayRestartAt, rootRestartAt, killAt, policyBytes,
                libraryBytes, reportBytes, inventoryBytes, threads, channels, CommandLine.jvmOptions(jvm), jar, wrapper,
                serverCpus, agentCpus, commit, work, output);
    }

    private static double fraction(String text) {
        double value = Double.parseDouble(text);
        if (!(value >= 0 && value <= 1)) {
            throw new IllegalArgumentException("a share is in [0, 1]: " + text + "; " + USAGE);
        }
        return value;
    }

    /**
     * @param variant a variant of bench/relaysync
     * @return these options with its JVM options and server jar
     */
    FleetOptions withVariant(RelaySyncOptions.Variant variant) {
        return new FleetOptions(nodes, relays, rootShare, replicas, rsaShare, serverKey, intervalSeconds,
                splaySeconds, compression, durationSeconds, generationAt, relayRestartAt, rootRestartAt, killAt,
                policyBytes, libraryBytes, reportBytes, inventoryBytes, threads, channels,
                List.copyOf(variant.jvmOptions()), variant.pintleJar(), wrapper, serverCpus, agentCpus, commit, work,
                output);
    }

    /**
     * @param cpus a taskset CPU list for the servers, or null for none
     * @return these options with it
     */
    FleetOptions withServerCpus(String cpus) {
        return new FleetOptions(nodes, relays, rootShare, replicas, rsaShare, serverKey, intervalSeconds,
                splaySeconds, compression, durationSeconds, generationAt, relayRestartAt, rootRestartAt, killAt,
                policyBytes, libraryBytes, reportBytes, inventoryBytes, threads, channels, pintleJvmOptions, pintleJar,
                wrapper, cpus, agentCpus, commit, work, output);
    }

    /** @return the scheduled agent runs per second, on average over an interval */
    double runsPerSecond() {
        return nodes * compression / intervalSeconds;
    }

    /** @return the scheduled agent runs per second while the splay window is open (runs all start within it) */
    double peakRunsPerSecond() {
        return splaySeconds == 0 ? Double.POSITIVE_INFINITY : nodes * compression / splaySeconds;
    }
}
