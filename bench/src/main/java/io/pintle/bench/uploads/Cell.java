package io.pintle.bench.uploads;

/**
 * One row against one server: what the generator said, what arrived, and the CPU each side used.
 *
 * @param server {@code Pintle} or {@code nginx}
 * @param row the generator and its concurrency
 * @param uploads uploads sent
 * @param outcome the generator's figures
 * @param destination what arrived
 * @param wallSeconds from the generator's start to its exit
 * @param serverCpuMillis the server's processes' CPU time over that time
 * @param serverSystemMillis of which in the kernel (system time: TLS and file I/O syscalls, fsync)
 * @param serverJitMillis of which Pintle's JIT compiler threads (0 for nginx): high means not yet warm
 * @param generatorCpuMillis the generator's CPU time (its processes and theirs, as waited for)
 * @param machineBusyMillis the whole machine's busy time over that time, all CPUs
 * @param command the generator's command, as printed
 */
record Cell(String server, UploadOptions.Row row, int uploads, Generator.Outcome outcome, Destination destination,
        double wallSeconds, double serverCpuMillis, double serverSystemMillis, double serverJitMillis,
        double generatorCpuMillis, double machineBusyMillis,
        String command) {
    /**
     * A generator using this much of its one CPU is taken to be what limits the rate: ab and curl are single
     * threaded, and the shell loops share the one CPU they are pinned to.
     */
    static final double GENERATOR_LIMIT_SHARE = 0.85;

    /** @return uploads answered 201/204 per second */
    double rate() {
        return outcome.ok() / wallSeconds;
    }

    /** @return the server's CPU per upload sent, in milliseconds */
    double serverCpuPerUpload() {
        return serverCpuMillis / uploads;
    }

    /** @return the generator's CPU time over the wall time: its share of the one CPU it is pinned to */
    double generatorShare() {
        return generatorCpuMillis / (wallSeconds * 1000);
    }

    /** @return whether the generator was busy enough to be the limit */
    boolean generatorLimit() {
        return generatorShare() >= GENERATOR_LIMIT_SHARE;
    }

    /** @return the server's CPU time over the wall time, in cores */
    double serverCores() {
        return serverCpuMillis / (wallSeconds * 1000);
    }

    /** @return what every other process took meanwhile, in cores (this JVM, idle while it waits, included) */
    double otherCores() {
        return Math.max(0, machineBusyMillis - serverCpuMillis - generatorCpuMillis) / (wallSeconds * 1000);
    }
}
