package io.pintle.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.stream.Stream;

/**
 * Where and when the benchmark ran, as printed above the table.
 *
 * @param date start time (UTC, seconds)
 * @param processors available processors (what {@code nproc} prints)
 * @param cpuModel the CPU model from {@code /proc/cpuinfo}, or "unknown"
 * @param os operating system, version and architecture
 * @param jvm JVM name, vendor and version
 * @param jvmArguments the JVM's command-line options
 */
record Environment(Instant date, int processors, String cpuModel, String os, String jvm, String jvmArguments) {
    private static final Path CPU_INFO = Path.of("/proc/cpuinfo");

    /** @return this JVM's environment, now */
    static Environment current() {
        return new Environment(
                Instant.now().truncatedTo(ChronoUnit.SECONDS),
                Runtime.getRuntime().availableProcessors(),
                readCpuModel(),
                System.getProperty("os.name") + " " + System.getProperty("os.version") + " "
                        + System.getProperty("os.arch"),
                System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version") + " ("
                        + System.getProperty("java.vendor") + ")",
                String.join(" ", ManagementFactory.getRuntimeMXBean().getInputArguments()));
    }

    private static String readCpuModel() {
        try (Stream<String> lines = Files.lines(CPU_INFO)) {
            return lines.filter(line -> line.startsWith("model name"))
                    .map(line -> line.substring(line.indexOf(':') + 1).strip())
                    .findFirst()
                    .orElse("unknown");
        } catch (IOException | RuntimeException e) {
            return "unknown";
        }
    }
}
