package io.pintle.bench.sync;

/**
 * One measured sync.
 *
 * @param contestant the contestant's name
 * @param files the tree's file count
 * @param delayed whether it went through the delaying proxy
 * @param scenario which scenario
 * @param millis wall time
 * @param requests requests the client sent, or -1 if it cannot tell
 * @param connections TCP connections the proxy saw, or -1 without the proxy
 * @param roundTrips round trips the proxy counted (connections + turns), or -1 without the proxy
 * @param clientCpuMillis CPU time of the harness JVM and of cf-agent over the sync
 * @param serverCpuMillis CPU time of the server's processes over the sync
 * @param otherCpuMillis the machine's busy time over the sync minus the client's and the server's: what other
 *     processes took meanwhile
 * @param failure why it failed (exception or the first differences found by the tree check), or null
 */
record Sample(String contestant, int files, boolean delayed, Scenario scenario, double millis, long requests,
        long connections, long roundTrips, double clientCpuMillis, double serverCpuMillis, double otherCpuMillis,
        String failure) {
    /** The three scenarios, in table order. */
    enum Scenario {
        COLD("cold sync (empty destination)"),
        NO_CHANGE("no-change check"),
        CHANGED("10 files changed");

        private final String label;

        Scenario(String label) {
            this.label = label;
        }

        String label() {
            return label;
        }
    }

    /** @return what other processes took of the machine over the sync, from 0 to 1 */
    double otherShare() {
        return Math.max(0, otherCpuMillis / (millis * Runtime.getRuntime().availableProcessors()));
    }

    boolean ok() {
        return failure == null;
    }
}
