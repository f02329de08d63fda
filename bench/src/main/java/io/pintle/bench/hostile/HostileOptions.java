package io.pintle.bench.hostile;

import io.pintle.bench.harness.CommandLine;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Options of {@code bench/hostile}. The defaults are issue 18's figures, sized so that the whole run takes about
 * eight minutes; each can be scaled up.
 *
 * @param attacks the attacks to run, in order
 * @param warmup how long the victim downloads before anything is measured (the server's JIT warms up)
 * @param baseline how long the victim downloads alone before the first attack
 * @param cooldown how long, at most, the gauges get to settle after the last attack
 * @param abortedDownloads how many aborted Range downloads (issue: 1,000)
 * @param abortConcurrency how many of them at once
 * @param zeroWindowConnections HTTP/2 connections with a zero initial window (issue: 2)
 * @param zeroWindowStreams streams on each (issue: 120)
 * @param slowUploads trickling uploads (issue: 105)
 * @param trickleEvery how often each sends its next byte (issue: 10 s)
 * @param pollConnections HTTP/2 connections of abandoned change waits
 * @param pollStreams change waits on each
 * @param pollHold how long the change waits stay parked before they are abandoned
 * @param http1Polls HTTP/1.1 connections of abandoned change waits, one wait each
 * @param http1Wait their {@code ?wait=}: the server sees an HTTP/1.1 client's close only when the wait ends
 * @param settle quiet time between two attacks
 * @param victimPause the victim's pause between two downloads
 * @param pintleJar the server's runnable jar
 * @param pintleJvmOptions its JVM options
 * @param serverCpus the CPUs Pintle is pinned to ({@code taskset -c} list), or null for none
 * @param commit what the server was built from, for the report, or null
 * @param output the Markdown report, or null
 * @param plot the PNG plot, or null
 * @param work where the layout, the configuration and the server's log go, or null for a new temporary
 *     directory
 * @param clientCpus the CPUs the harness is pinned to, for the report, or null
 * @param machineCpus the machine's online CPUs, for the report, or null
 */
record HostileOptions(List<Kind> attacks, Duration warmup, Duration baseline, Duration cooldown, int abortedDownloads,
        int abortConcurrency, int zeroWindowConnections, int zeroWindowStreams, int slowUploads, Duration trickleEvery,
        int pollConnections, int pollStreams, Duration pollHold, int http1Polls, Duration http1Wait, Duration settle,
        Duration victimPause, Path pintleJar, List<String> pintleJvmOptions, String serverCpus, String commit,
        Path output, Path plot, Path work, String clientCpus, String machineCpus) {
    /** The attacks, in the order of issue 18. */
    enum Kind {
        ABORTED_RANGES("aborted-ranges"),
        ZERO_WINDOW("zero-window"),
        SLOW_UPLOADS("slow-uploads"),
        POLLS_HTTP2("polls-h2"),
        POLLS_HTTP1("polls-h1");

        private final String label;

        Kind(String label) {
            this.label = label;
        }

        String label() {
            return label;
        }

        static Kind named(String name) {
            for (Kind kind : values()) {
                if (kind.label.equals(name.strip().toLowerCase(Locale.ROOT))) {
                    return kind;
                }
            }
            throw new IllegalArgumentException("no attack '" + name + "'; attacks: " + names());
        }

        static String names() {
            return String.join(",", Arrays.stream(values()).map(Kind::label).toList());
        }
    }

    static final String USAGE = "usage: HostileBench [--attacks " + Kind.names() + "] [--warmup-seconds 10]"
            + " [--baseline-seconds 20]"
            + " [--cooldown-seconds 75]"
            + " [--aborted 1000] [--abort-concurrency 4] [--zero-window-connections 2] [--zero-window-streams 120]"
            + " [--slow-uploads 105] [--trickle-seconds 10] [--poll-connections 2] [--poll-streams 120]"
            + " [--poll-hold-seconds 10] [--http1-polls 120] [--http1-wait-seconds 60] [--settle-seconds 5]"
            + " [--victim-pause-ms 20] [--pintle-jar server/target/pintle.jar] [--pintle-jvm-options 'OPTIONS']"
            + " [--server-cpus 0] [--commit TEXT] [--output FILE] [--plot FILE]"
            + " [--work DIR] [--client-cpus 1] [--machine-cpus N]";

    static HostileOptions parse(String... args) {
        List<Kind> attacks = List.of(Kind.values());
        Duration warmup = Duration.ofSeconds(10);
        Duration baseline = Duration.ofSeconds(20);
        // Jetty's thread pool lets an idle thread go after 60 s: long enough to see threads come down.
        Duration cooldown = Duration.ofSeconds(75);
        int aborted = 1000;
        // Four at a time: enough to keep the server writing to several departed clients at once, few enough that
        // the handshakes leave the victim (same JVM, same CPU) some of the load generator's CPU.
        int abortConcurrency = 4;
        int zeroConnections = 2;
        int zeroStreams = 120;
        int uploads = 105;
        Duration trickle = Duration.ofSeconds(10);
        int pollConnections = 2;
        int pollStreams = 120;
        Duration pollHold = Duration.ofSeconds(10);
        int http1Polls = 120;
        // Not the 300 s: an HTTP/1.1 wait holds its slot until it ends, and the run should not take 5
        // minutes for that one row. The row shows the limitation either way.
        Duration http1Wait = Duration.ofSeconds(60);
        Duration settle = Duration.ofSeconds(5);
        Duration victimPause = Duration.ofMillis(20);
        Path jar = Path.of("server/target/pintle.jar");
        String jvmOptions = CommandLine.UNIT_JVM_OPTIONS;
        String serverCpus = null;
        String commit = null;
        Path output = null;
        Path plot = null;
        Path work = null;
        String clientCpus = null;
        String machineCpus = null;
        CommandLine line = new CommandLine(USAGE, args);
        try {
            while (line.next()) {
                String value = line.value();
                switch (line.option()) {
                    case "--attacks" -> {
                        Set<Kind> chosen = new LinkedHashSet<>();
                        for (String name : value.split(",")) {
                            chosen.add(Kind.named(name));
                        }
                        attacks = List.copyOf(new ArrayList<>(chosen));
                    }
                    case "--warmup-seconds" -> warmup = Duration.ofSeconds(line.intValue(0, 600));
                    case "--baseline-seconds" -> baseline = Duration.ofSeconds(line.intValue(5, 600));
                    case "--cooldown-seconds" -> cooldown = Duration.ofSeconds(line.intValue(0, 3600));
                    case "--aborted" -> aborted = line.intValue(1, 1_000_000);
                    case "--abort-concurrency" -> abortConcurrency = line.intValue(1, 256);
                    case "--zero-window-connections" -> zeroConnections = line.intValue(1, 100);
                    case "--zero-window-streams" -> zeroStreams = line.intValue(1, 1000);
                    case "--slow-uploads" -> uploads = line.intValue(1, 5000);
                    case "--trickle-seconds" -> trickle = Duration.ofSeconds(line.intValue(1, 120));
                    case "--poll-connections" -> pollConnections = line.intValue(1, 100);
                    case "--poll-streams" -> pollStreams = line.intValue(1, 1000);
                    case "--poll-hold-seconds" -> pollHold = Duration.ofSeconds(line.intValue(1, 600));
                    case "--http1-polls" -> http1Polls = line.intValue(1, 5000);
                    case "--http1-wait-seconds" -> http1Wait = Duration.ofSeconds(line.intValue(5, 3600));
                    case "--settle-seconds" -> settle = Duration.ofSeconds(line.intValue(0, 600));
                    case "--victim-pause-ms" -> victimPause = Duration.ofMillis(line.intValue(0, 10_000));
                    case "--pintle-jar" -> jar = Path.of(value);
                    case "--pintle-jvm-options" -> jvmOptions = value;
                    case "--server-cpus" -> serverCpus = CommandLine.cpusOrNull(value);
                    case "--commit" -> commit = value.isBlank() ? null : value;
                    case "--output" -> output = Path.of(value);
                    case "--plot" -> plot = Path.of(value);
                    case "--work" -> work = Path.of(value);
                    case "--client-cpus" -> clientCpus = CommandLine.cpusOrNull(value);
                    case "--machine-cpus" -> machineCpus = value;
                    default -> throw line.unknown();
                }
            }
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(USAGE + " (" + e.getMessage() + ")");
        }
        List<String> jvm = CommandLine.jvmOptions(jvmOptions);
        return new HostileOptions(attacks, warmup, baseline, cooldown, aborted, abortConcurrency, zeroConnections,
                zeroStreams, uploads, trickle, pollConnections, pollStreams, pollHold, http1Polls, http1Wait, settle,
                victimPause, jar, jvm, serverCpus, commit, output, plot, work, clientCpus, machineCpus);
    }

    /** @return the command words that pin Pintle, or none */
    List<String> serverLauncher() {
        return CommandLine.taskset(serverCpus);
    }
}
