package io.pintle.bench.warmup;

import io.pintle.bench.harness.CommandLine;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * bench/warmup's options.
 *
 * @param pintleJar the server jar
 * @param jdk17 JDK 17's java
 * @param jdk25 JDK 25's java
 * @param variants the variants, in the order of the first round
 * @param workloads the workloads
 * @param rounds how many times every variant runs every workload
 * @param seconds how long each measured start is followed, from the spawn
 * @param trainingSeconds how long a training run is loaded (half each workload)
 * @param serverCpus taskset CPU list of the server, or null
 * @param clientCpus taskset CPU list of ab, or null
 * @param nodelay the LD_PRELOAD library that sets TCP_NODELAY on ab's sockets, or null
 * @param work a directory for the layout, archives and logs
 * @param commit what the report says was measured
 * @param output the Markdown report, or null
 * @param plot the PNG, or null
 * @param csv the raw curves, or null
 * @param merge CSV files of earlier runs to report on instead of measuring (empty: measure)
 */
record WarmupOptions(Path pintleJar, String jdk17, String jdk25, List<String> variants, List<Workload> workloads,
        int rounds, int seconds, int trainingSeconds, String serverCpus, String clientCpus, Path nodelay, Path work,
        String commit, Path output, Path plot, Path csv, List<Path> merge) {
    static final String USAGE = "usage: WarmupBench --pintle-jar JAR --work DIR [--quick] [--rounds 1] [--seconds 60]"
            + " [--training-seconds 30] [--variants " + String.join(",", Variant.NAMES.subList(0, 4)) + "]"
            + " [--workloads keep-alive,new-connection] [--jdk17 JAVA] [--jdk25 JAVA] [--server-cpus 0]"
            + " [--client-cpus 1] [--nodelay LIB] [--commit TEXT] [--output MD] [--plot PNG] [--csv CSV]"
            + " [--merge CSV,CSV,...]";

    static WarmupOptions parse(String[] args) {
        Path jar = null;
        Path work = null;
        String jdk17 = "/usr/lib/jvm/java-17-openjdk-amd64/bin/java";
        String jdk25 = "/usr/lib/jvm/temurin-25-jdk-amd64/bin/java";
        List<String> variants = Variant.NAMES.subList(0, 4);
        List<Workload> workloads = List.of(Workload.values());
        int rounds = 1;
        int seconds = 60;
        int training = 30;
        String serverCpus = "0";
        String clientCpus = "1";
        Path nodelay = null;
        String commit = "unknown";
        Path output = null;
        Path plot = null;
        Path csv = null;
        List<Path> merge = List.of();
        CommandLine line = new CommandLine(USAGE, args, "--quick");
        while (line.next()) {
            switch (line.option()) {
                case "--pintle-jar" -> jar = Path.of(line.value());
                case "--work" -> work = Path.of(line.value());
                case "--quick" -> {
                    rounds = 1;
                    seconds = 15;
                    training = 10;
                }
                case "--rounds" -> rounds = line.intValue(1, 20);
                case "--seconds" -> seconds = line.intValue(6, 600);
                case "--training-seconds" -> training = line.intValue(2, 600);
                case "--variants" -> variants = List.of(line.value().split(","));
                case "--workloads" -> workloads = List.of(line.value().split(",")).stream().map(Workload::of)
                        .toList();
                case "--jdk17" -> jdk17 = line.value();
                case "--jdk25" -> jdk25 = line.value();
                case "--server-cpus" -> serverCpus = CommandLine.cpusOrNull(line.value());
                case "--client-cpus" -> clientCpus = CommandLine.cpusOrNull(line.value());
                case "--nodelay" -> nodelay = line.value().isBlank() ? null : Path.of(line.value());
                case "--commit" -> commit = line.value();
                case "--output" -> output = Path.of(line.value());
                case "--plot" -> plot = Path.of(line.value());
                case "--csv" -> csv = Path.of(line.value());
                case "--merge" -> {
                    List<Path> files = new ArrayList<>();
                    for (String f : line.value().split(",")) {
                        files.add(Path.of(f));
                    }
                    merge = List.copyOf(files);
                }
                default -> throw line.unknown();
            }
        }
        for (String v : variants) {
            if (!Variant.NAMES.contains(v)) {
                throw new IllegalArgumentException("no variant '" + v + "' " + Variant.NAMES + "; " + USAGE);
            }
        }
        if (merge.isEmpty() && (jar == null || work == null)) {
            throw new IllegalArgumentException(USAGE);
        }
        return new WarmupOptions(jar, jdk17, jdk25, List.copyOf(variants), List.copyOf(workloads), rounds, seconds,
                training, serverCpus, clientCpus, nodelay, work, commit, output, plot, csv, merge);
    }
}
