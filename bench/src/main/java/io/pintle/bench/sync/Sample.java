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
 * @param failure why it failed (exception or the first differences found by the tree check), or null
 */
record Sample(String contestant, int files, boolean delayed, Scenario scenario, double millis, long requests,
        long connections, long roundTrips, double clientCpuMillis, double serverCpuMillis, String failure) {
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

    boolean ok() {
        return failure == null;
    }
}
