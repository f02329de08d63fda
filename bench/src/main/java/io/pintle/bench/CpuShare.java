package io.pintle.bench;

/**
 * CPU time used during a measured window.
 *
 * @param wallNanos the window's length
 * @param processNanos CPU time of the whole JVM
 * @param clientNanos CPU time of the load generator's threads
 * @param serverNanos CPU time of the servers' worker threads
 * @param cores available processors
 * @param machineBusy fraction of all cores busy, this JVM and every other process together; NaN if unknown
 * @param jitShare the JIT compilers' share of the JVM's CPU time; NaN if unknown
 * @param gcShare the garbage collector's share of the JVM's CPU time; NaN if unknown
 */
record CpuShare(
        long wallNanos, long processNanos, long clientNanos, long serverNanos, int cores, double machineBusy,
        double jitShare, double gcShare) {
    /** @return the load generator's share of the JVM's CPU time, 0 to 1 */
    double clientShare() {
        return share(clientNanos);
    }

    /** @return the servers' share of the JVM's CPU time, 0 to 1 */
    double serverShare() {
        return share(serverNanos);
    }

    /** @return everything else (JVM internals, Jetty's schedulers, the harness), 0 to 1 */
    double restShare() {
        double known = clientShare() + serverShare() + orZero(jitShare) + orZero(gcShare);
        return Math.max(0, 1 - known);
    }

    /** @return how busy the machine's cores were with this JVM, 0 to 1 */
    double busy() {
        return wallNanos <= 0 ? 0 : (double) processNanos / ((double) wallNanos * cores);
    }

    /** @return the fraction of all cores other processes kept busy, 0 to 1, or NaN if unknown */
    double others() {
        return Double.isNaN(machineBusy) ? Double.NaN : Math.max(0, machineBusy - busy());
    }

    private double share(long nanos) {
        return processNanos <= 0 ? 0 : (double) nanos / processNanos;
    }

    private static double orZero(double value) {
        return Double.isNaN(value) ? 0 : value;
    }
}
