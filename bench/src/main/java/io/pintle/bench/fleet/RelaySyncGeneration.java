package io.pintle.bench.fleet;

import java.util.List;

/**
 * One generation measured by {@code bench/relaysync}: written on the root, then watched on every relay until each
 * serves it for every one of its nodes. Times are milliseconds since the epoch; a figure that cannot be had (a relay
 * not synced within the limit, a JVM gone) is NaN.
 *
 * @param round the round (1-based)
 * @param variant the relays' variant ("A" or "B")
 * @param generation the generation number written
 * @param beginMillis when the root's writing began
 * @param writtenMillis when every node's {@code rules/} was written
 * @param endMillis when the last relay was seen synced, or when the watch gave up
 * @param rootCpuSeconds the root JVM's CPU time (user + system) from begin to end
 * @param relays each relay's figures, in order
 * @param harnessWriteCores this harness's CPU while it wrote, in cores (1: one core busy all the time)
 * @param harnessWatchCores its CPU while it watched the relays (written to end), in cores
 * @param otherCores what the rest of the machine used from begin to end, in cores (busy time of every CPU less
 *     the root's, the relays' and this harness's)
 */
record RelaySyncGeneration(int round, String variant, int generation, long beginMillis, long writtenMillis,
        long endMillis, double rootCpuSeconds, List<Relay> relays, double harnessWriteCores, double harnessWatchCores,
        double otherCores) {

    /**
     * @param name relay-N
     * @param nodes the nodes behind it
     * @param syncedMillis when every one of them was seen served with the generation, 0 if not within the limit
     * @param cpuSeconds its JVM's CPU time from begin to end
     * @param nodeSeconds sorted, for each node seen with the generation, seconds from written until it was seen
     */
    record Relay(String name, int nodes, long syncedMillis, double cpuSeconds, double[] nodeSeconds) {
        boolean synced() {
            return syncedMillis > 0;
        }
    }

    RelaySyncGeneration {
        relays = List.copyOf(relays);
    }

    double writeSeconds() {
        return (writtenMillis - beginMillis) / 1000.0;
    }

    /** @return seconds from written until the relay had every node's generation, NaN when it never did */
    double syncedAfterWritten(Relay relay) {
        return relay.synced() ? (relay.syncedMillis() - writtenMillis) / 1000.0 : Double.NaN;
    }

    /** @return seconds from the generation's beginning until the relay had it for every node, or NaN */
    double syncedAfterBegin(Relay relay) {
        return relay.synced() ? (relay.syncedMillis() - beginMillis) / 1000.0 : Double.NaN;
    }

    /** @return the slowest relay's {@link #syncedAfterWritten}, NaN when one never synced */
    double maxSyncedAfterWritten() {
        return relays.stream().mapToDouble(this::syncedAfterWritten).reduce(0, RelaySyncGeneration::maxOrNan);
    }

    /** @return the slowest relay's {@link #syncedAfterBegin}, NaN when one never synced */
    double maxSyncedAfterBegin() {
        return relays.stream().mapToDouble(this::syncedAfterBegin).reduce(0, RelaySyncGeneration::maxOrNan);
    }

    /** @return the relay's nodes over the seconds from the generation's beginning until it had them all, or NaN */
    double nodesPerSecond(Relay relay) {
        return relay.nodes() / syncedAfterBegin(relay);
    }

    /** @return whether every relay synced within the limit */
    boolean synced() {
        return relays.stream().allMatch(Relay::synced);
    }

    /** @return the nodes behind every relay */
    int relayNodes() {
        return relays.stream().mapToInt(Relay::nodes).sum();
    }

    double relaysCpuSeconds() {
        return relays.stream().mapToDouble(Relay::cpuSeconds).sum();
    }

    /** @return the root's CPU milliseconds per node behind the relays (it serves every relay's sync) */
    double rootCpuMillisPerNode() {
        return 1000 * rootCpuSeconds / relayNodes();
    }

    /** @return the relays' CPU milliseconds per node, all together (each relay's of its own nodes, pooled) */
    double relayCpuMillisPerNode() {
        return 1000 * relaysCpuSeconds() / relayNodes();
    }

    /** @return one relay's CPU milliseconds per node of its own */
    double relayCpuMillisPerNode(Relay relay) {
        return 1000 * relay.cpuSeconds() / relay.nodes();
    }

    private static double maxOrNan(double a, double b) {
        return Double.isNaN(a) || Double.isNaN(b) ? Double.NaN : Math.max(a, b);
    }
}
