package io.pintle.bench.channels;

import io.pintle.bench.harness.CommandLine;
import java.nio.file.Path;
import java.util.List;

/**
 * {@code bench/channels}' options.
 *
 * @param nodes node channels to hold
 * @param handshakes handshakes in flight at once while the channels open
 * @param idleSeconds how long the parked channels' cost is measured
 * @param rate {@code [remote_run] policy_update_rate}
 * @param splaySeconds {@code [remote_run] policy_update_splay}
 * @param tlsProvider {@code [tls] provider}
 * @param reportContentType whether the nodes' reports carry {@code Content-Type: text/plain}
 * @param pintleJvmOptions the server JVM's options
 * @param pintleJar the server's jar
 * @param serverCpus taskset CPU list for the server, or null
 * @param clientCpus the harness's (set by the script), for the report, or null
 * @param commit what was measured
 * @param work the work directory
 * @param output the report, or null
 * @param plot the plot, or null
 */
record ChannelsOptions(int nodes, int handshakes, int idleSeconds, int rate, int splaySeconds, String tlsProvider,
        boolean reportContentType,
        List<String> pintleJvmOptions, Path pintleJar, String serverCpus, String clientCpus, String commit,
        Path work, Path output, Path plot) {
    static final String USAGE = "usage: ChannelsBench --pintle-jar JAR --work DIR [--nodes 20000] "
            + "[--handshakes 64] [--idle-seconds 30] [--rate 200] [--splay 10] [--tls-provider jdk] [--no-content-type] "
            + "[--pintle-jvm-options 'OPTIONS'] [--server-cpus 0] [--client-cpus 1] [--commit C] [--output FILE] "
            + "[--plot FILE]";

    static ChannelsOptions parse(String[] args) {
        int nodes = 20_000;
        int handshakes = 64;
        int idle = 30;
        int rate = 200;
        int splay = 10;
        String provider = "jdk";
        boolean contentType = true;
        String jvm = CommandLine.UNIT_JVM_OPTIONS;
        Path jar = null;
        String serverCpus = null;
        String clientCpus = null;
        String commit = "unknown";
        Path work = null;
        Path output = null;
        Path plot = null;
        CommandLine line = new CommandLine(USAGE, args, "--no-content-type");
        while (line.next()) {
            switch (line.option()) {
                case "--nodes" -> nodes = line.intValue(1, 60_000);
                case "--handshakes" -> handshakes = line.intValue(1, 10_000);
                case "--idle-seconds" -> idle = line.intValue(1, 600);
                case "--rate" -> rate = line.intValue(1, 100_000);
                case "--splay" -> splay = line.intValue(0, 3600);
                case "--tls-provider" -> provider = line.value();
                case "--no-content-type" -> contentType = false;
                case "--pintle-jvm-options" -> jvm = line.value();
                case "--pintle-jar" -> jar = Path.of(line.value());
                case "--server-cpus" -> serverCpus = CommandLine.cpusOrNull(line.value());
                case "--client-cpus" -> clientCpus = CommandLine.cpusOrNull(line.value());
                case "--commit" -> commit = line.value();
                case "--work" -> work = Path.of(line.value());
                case "--output" -> output = Path.of(line.value());
                case "--plot" -> plot = Path.of(line.value());
                default -> throw line.unknown();
            }
        }
        if (jar == null || work == null) {
            throw line.unknown();
        }
        return new ChannelsOptions(nodes, handshakes, idle, rate, splay, provider, contentType, CommandLine.jvmOptions(jvm), jar,
                serverCpus, clientCpus, commit, work, output, plot);
    }

    /** @return taskset's prefix for the server, or nothing */
    List<String> serverLauncher() {
        return CommandLine.taskset(serverCpus);
    }
}
