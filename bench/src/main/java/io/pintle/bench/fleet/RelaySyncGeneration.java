package io.pintle.bench.fleet;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

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
 * @param rootThreadSeconds that time by {@link #THREAD_ROWS} row ({@link #grouped})
 * @param relays each relay's figures, in order
 * @param harnessWriteCores this harness's CPU while it wrote, in cores (1: one core busy all the time)
 * @param harnessWatchCores its CPU while it watched the relays (written to end), in cores
 * @param otherCores what the rest of the machine used from begin to end, in cores (busy time of every CPU less
 *     the root's, the relays' and this harness's)
 */
record RelaySyncGeneration(int round, String variant, int generation, long beginMillis, long writtenMillis,
        long endMillis, double rootCpuSeconds, Map<String, Double> rootThreadSeconds, List<Relay> relays,
        double harnessWriteCores, double harnessWatchCores, double otherCores) {

    /** A JVM's threads by what they do, in the report's order; "other" is the rest, threads that ended too. */
    static final List<String> THREAD_GROUPS = List.of("JIT compilers", "GC and VM", "relay sync", "HTTP client",
            "server threads", "other");

    /** Not a group: of all the threads' time, the part spent in the kernel (system time: file and socket calls). */
    static final String KERNEL = "of which in the kernel";

    /** The rows of a JVM's CPU by thread: {@link #THREAD_GROUPS}, then {@link #KERNEL}. */
    static final List<String> THREAD_ROWS = List.of("JIT compilers", "GC and VM", "relay sync", "HTTP client",
            "server threads", "other", KERNEL);

    /**
     * @param name a thread's name as /proc has it (its first 15 characters)
     * @return its group, one of {@link #THREAD_GROUPS}
     */
    static String threadGroup(String name) {
        if (name.startsWith("C1 CompilerThre") || name.startsWith("C2 CompilerThre")) {
            return "JIT compilers";
        }
        if (name.startsWith("GC Thread") || name.startsWith("G1 ") || name.startsWith("VM ")) {
            return "GC and VM";
        }
        if (name.startsWith("pintle-relay-sy")) {
            return "relay sync"; // pintle-relay-sync-share, -common, -nodes-list...
        }
        if (name.startsWith("HttpClient-")) {
            return "HTTP client"; // the relay's JDK HttpClient: its selector and workers
        }
        if (name.startsWith("pintle-")) {
            return "server threads"; // Jetty's pool, the access log, the watch, the scheduler
        }
        return "other";
    }

    /**
     * @param byName CPU milliseconds per thread name over a window ({@code ProcessCpu.threadsSince})
     * @param totalSeconds the process's CPU seconds over the same window
     * @param systemSeconds of those, the system time
     * @return seconds per {@link #THREAD_ROWS} row, in that order; "other" is the total less the named groups
     *     (so it holds threads that ended in the window), never below 0
     */
    static Map<String, Double> grouped(Map<String, Double> byName, double totalSeconds, double systemSeconds) {
        Map<String, Double> groups = new LinkedHashMap<>();
        THREAD_GROUPS.forEach(group -> groups.put(group, 0.0));
        byName.forEach((name, millis) -> {
            String group = threadGroup(name);
            if (!group.equals("other")) {
                groups.merge(group, millis / 1000, Double::sum);
            }
        });
        double named = groups.values().stream().mapToDouble(Double::doubleValue).sum();
        groups.put("other", Math.max(0, totalSeconds - named));
        groups.put(KERNEL, systemSeconds);
        return groups;
    }

    /**
     * @param name relay-N
     * @param nodes the nodes behind it
     * @param syncedMillis when every one of them was seen served with the generation, 0 if not within the limit
     * @param cpuSeconds its JVM's CPU time from begin to end
     * @param nodeSeconds sorted, for each node seen with the generation, seconds from written until it was seen
     * @param threadSeconds its CPU time by {@link #THREAD_ROWS} row ({@link #grouped})
     */
    record Relay(String name, int nodes, long syncedMillis, double cpuSeconds, double[] nodeSeconds,
            Map<String, Double> threadSeconds) {
        boolean synced() {
            return syncedMillis > 0;
        }
    }

    RelaySyncGeneration {
        relays = List.copyOf(relays);
        rootThreadSeconds = Map.copyOf(rootThreadSeconds);
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

    /** @return the root's CPU milliseconds in threads of {@code group} per node behind the relays */
    double rootThreadMillisPerNode(String group) {
        return 1000 * rootThreadSeconds.getOrDefault(group, Double.NaN) / relayNodes();
    }

    /** @return the relays' CPU milliseconds in threads of {@code group} per node, all relays pooled */
    double relayThreadMillisPerNode(String group) {
        return 1000 * relays.stream().mapToDouble(r -> r.threadSeconds().getOrDefault(group, Double.NaN)).sum()
                / relayNodes();
    }

    private static double maxOrNan(double a, double b) {
        return Double.isNaN(a) || Double.isNaN(b) ? Double.NaN : Math.max(a, b);
    }
}
