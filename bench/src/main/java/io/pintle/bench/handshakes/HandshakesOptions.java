package io.pintle.bench.handshakes;

import io.pintle.bench.harness.CommandLine;
import io.pintle.server.tls.SelfSigned;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code bench/handshakes}' options.
 *
 * @param modes the rows' trust modes, in the order each round runs them
 * @param serverKeys the server key types; each gets its own servers and rounds
 * @param clientKey both clients' key type (and the CAs')
 * @param rounds rounds of measured windows (each round runs every mode once)
 * @param windowSeconds each window's length ({@code s_time -time})
 * @param warmupSeconds unmeasured load on each server before the first round
 * @param parallel s_time processes at once, each one connection at a time
 * @param profileSeconds length of the JFR recording of each mode's server after the rounds (0: none)
 * @param quietWaitSeconds how long to wait, before a window, for other processes to leave the CPUs alone
 * @param pintleJvmOptions the server JVM's options
 * @param pintleJar the server's jar
 * @param serverCpus taskset CPU list for the servers, or null
 * @param clientCpus taskset CPU list for s_time (and this harness, set by the script), or null
 * @param commit what was measured
 * @param work the work directory
 * @param output the report, or null
 * @param plot the plot, or null
 */
record HandshakesOptions(List<Mode> modes, List<SelfSigned.KeyType> serverKeys, SelfSigned.KeyType clientKey,
        int rounds, int windowSeconds, int warmupSeconds, int parallel, int profileSeconds,
        int quietWaitSeconds, List<String> pintleJvmOptions, Path pintleJar, String serverCpus, String clientCpus, String commit,
        Path work, Path output, Path plot) {
    static final String USAGE = "usage: HandshakesBench --pintle-jar JAR --work DIR [--modes pinned,ca-chain,both] "
            + "[--server-keys rsa2048,ec,rsa4096] [--client-key ec|rsa2048] [--rounds 3] [--window-seconds 20] "
            + "[--warmup-seconds 40] [--parallel 6] [--profile-seconds 15] [--quiet-wait 120] [--pintle-jvm-options 'OPTIONS'] "
            + "[--server-cpus 0] [--client-cpus 1] [--commit C] [--output FILE] [--plot FILE]";

    static HandshakesOptions parse(String[] args) {
        List<Mode> modes = List.of(Mode.PINNED, Mode.CA_CHAIN, Mode.BOTH);
        List<SelfSigned.KeyType> serverKeys = List.of(SelfSigned.KeyType.RSA_2048, SelfSigned.KeyType.EC_P256,
                SelfSigned.KeyType.RSA_4096);
        SelfSigned.KeyType clientKey = SelfSigned.KeyType.EC_P256;
        int rounds = 3;
        int window = 20;
        int warmup = 40;
        int parallel = 6;
        int profile = 15;
        int quietWait = 120;
        String jvm = CommandLine.UNIT_JVM_OPTIONS;
        Path jar = null;
        String serverCpus = null;
        String clientCpus = null;
        String commit = "unknown";
        Path work = null;
        Path output = null;
        Path plot = null;
        CommandLine line = new CommandLine(USAGE, args);
        while (line.next()) {
            switch (line.option()) {
                case "--modes" -> {
                    List<Mode> parsed = new ArrayList<>();
                    for (String text : line.value().split(",")) {
                        parsed.add(Mode.parse(text.strip()));
                    }
                    modes = List.copyOf(parsed);
                }
                case "--server-keys" -> {
                    List<SelfSigned.KeyType> parsed = new ArrayList<>();
                    for (String text : line.value().split(",")) {
                        parsed.add(SelfSigned.KeyType.parse(text.strip()));
                    }
                    serverKeys = List.copyOf(parsed);
                }
                case "--client-key" -> clientKey = SelfSigned.KeyType.parse(line.value());
                case "--rounds" -> rounds = line.intValue(1, 100);
                case "--window-seconds" -> window = line.intValue(1, 600);
                case "--warmup-seconds" -> warmup = line.intValue(0, 600);
                case "--parallel" -> parallel = line.intValue(1, 64);
                case "--profile-seconds" -> profile = line.intValue(0, 600);
                case "--quiet-wait" -> quietWait = line.intValue(0, 3600);
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
        if (jar == null || work == null || modes.isEmpty() || serverKeys.isEmpty()) {
            throw line.unknown();
        }
        return new HandshakesOptions(modes, serverKeys, clientKey, rounds, window, warmup, parallel, profile,
                quietWait, CommandLine.jvmOptions(jvm), jar, serverCpus, clientCpus, commit, work, output, plot);
    }

    /** @return taskset's prefix for a server, or nothing */
    List<String> serverLauncher() {
        return CommandLine.taskset(serverCpus);
    }

    /** @return taskset's prefix for the load generator, or nothing */
    List<String> clientLauncher() {
        return CommandLine.taskset(clientCpus);
    }
}
