package io.pintle.bench.channels;

import io.pintle.bench.sync.ProcessCpu;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/**
 * A process at one moment, from {@code /proc/<pid>}: CPU time so far, resident memory, threads and open
 * descriptors.
 *
 * @param nanos when it was taken ({@link System#nanoTime()})
 * @param cpuMillis user + system CPU time so far
 * @param rssKib {@code VmRSS}
 * @param threads {@code Threads}
 * @param descriptors entries of {@code /proc/<pid>/fd}
 * @param machineBusyMillis the whole machine's busy time so far, all cores ({@code /proc/stat})
 */
record ProcessSample(long nanos, double cpuMillis, long rssKib, int threads, int descriptors,
        double machineBusyMillis) {
    static ProcessSample of(ProcessHandle process) throws IOException {
        long now = System.nanoTime();
        double cpu = ProcessCpu.millis(List.of(process));
        long rss = 0;
        int threads = 0;
        for (String line : Files.readAllLines(Path.of("/proc", Long.toString(process.pid()), "status"))) {
            if (line.startsWith("VmRSS:")) {
                rss = Long.parseLong(line.substring(6).strip().split("\\s+")[0]);
            } else if (line.startsWith("Threads:")) {
                threads = Integer.parseInt(line.substring(8).strip());
            }
        }
        int descriptors;
        try (Stream<Path> fds = Files.list(Path.of("/proc", Long.toString(process.pid()), "fd"))) {
            descriptors = (int) fds.count();
        }
        return new ProcessSample(now, cpu, rss, threads, descriptors, ProcessCpu.machineBusyMillis());
    }

    /** @return CPU used between {@code earlier} and this, as a share of one core */
    double coresSince(ProcessSample earlier) {
        return (cpuMillis - earlier.cpuMillis) / ((nanos - earlier.nanos) / 1e6);
    }

    /**
     * @param earlier this process's earlier sample
     * @param other the other measured process, then and now
     * @return what every other process on the machine used meanwhile, in cores
     */
    double othersSince(ProcessSample earlier, ProcessSample[] other) {
        double machine = machineBusyMillis - earlier.machineBusyMillis;
        double ours = (cpuMillis - earlier.cpuMillis) + (other[1].cpuMillis - other[0].cpuMillis);
        return Math.max(0, machine - ours) / ((nanos - earlier.nanos) / 1e6);
    }

    /** @return seconds between {@code earlier} and this */
    double secondsSince(ProcessSample earlier) {
        return (nanos - earlier.nanos) / 1e9;
    }
}
