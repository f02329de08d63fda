package io.pintle.server.remoterun;

import io.pintle.server.config.ServerConfig;
import io.pintle.server.nodes.NodeId;
import io.pintle.server.policy.FileVersion;
import io.pintle.server.reload.ServerSnapshot;
import io.pintle.server.threads.Lane;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * "New policy, now": every {@code [remote_run] policy_update_scan} (5 s by default), the policy archives of the
 * nodes that hold an order channel are looked at ({@code rules/rudder.tar.bz2}, Windows' {@code
 * rules/dsc/rudder.zip}: one {@code stat} each); a node whose archive changed since the previous look is sent an
 * {@code update} order, so it runs {@code rudder agent update} at once instead of at its next run. A generation
 * that changes every node is not released as one herd: each changed node is due at a random moment within {@code
 * [remote_run] policy_update_splay} of the change being seen,
 * and at most {@code policy_update_rate} orders leave per second, the others waiting their turn in due order.
 * Nobody awaits these orders' outcome (the node's report is taken and dropped).
 *
 * <p>All state is confined to one serial {@link Lane}: the scan and the releases never run at once.
 */
public final class PolicyUpdates implements AutoCloseable {
    /** How often due orders are released (the rate's granularity). */
    static final Duration TICK = Duration.ofMillis(100);
    /** The archives that change when a node's policies do, below its share directory. */
    static final List<String> ARCHIVES = List.of("rules/rudder.tar.bz2", "rules/dsc/rudder.zip");

    private static final Logger LOG = LoggerFactory.getLogger(PolicyUpdates.class);
    private static final RunOrder UPDATE = RunOrder.of("update", null, null);

    private final PullChannels channels;
    private final Supplier<ServerSnapshot> snapshots;
    private final Lane lane;
    private final Map<NodeId, String> seen = new HashMap<>();
    private final PriorityQueue<Due> due = new PriorityQueue<>();
    private final Set<NodeId> waiting = new HashSet<>();
    private final AtomicLong released = new AtomicLong();
    private volatile int pending;
    private volatile int watched;
    /** How often the archives of polling nodes are looked at: {@code policy_update_scan}, read at start. */
    private Duration scan;
    private double budget;
    private long lastRelease = Long.MIN_VALUE;

    /**
     * @param channels the order channels
     * @param snapshots the live snapshot (share, configuration)
     * @param workers the server's worker pool (a scan looks at the file system)
     * @param scheduler the server's scheduler
     */
    public PolicyUpdates(PullChannels channels, Supplier<ServerSnapshot> snapshots, Executor workers,
            ScheduledExecutorService scheduler) {
        this.channels = channels;
        this.snapshots = snapshots;
        this.lane = Lane.serial("policy updates", workers, scheduler);
    }

    /** Starts looking (every {@code policy_update_scan} of the configuration it starts with) and releasing. */
    public void start() {
        scan = snapshots.get().config().remoteRun().policyUpdates().scan();
        lane.scheduleWithFixedDelay(this::guarded, scan.toMillis(), scan.toMillis(), TimeUnit.MILLISECONDS);
        lane.scheduleAtFixedRate(this::release, TICK.toMillis(), TICK.toMillis(), TimeUnit.MILLISECONDS);
    }

    @Override
    public void close() {
        lane.shutdownNow();
    }

    /** @return changed nodes waiting for their update order */
    public int pending() {
        return pending;
    }

    /** @return nodes whose policy archives have been looked at since start (what a change is told against) */
    public int watched() {
        return watched;
    }

    /** @return update orders given since start */
    public long released() {
        return released.get();
    }

    private void guarded() {
        try {
            scan(System.nanoTime());
        } catch (RuntimeException e) {
            LOG.warn("policy updates: looking at the policy archives failed: {}", e.toString());
        }
    }

    /** Looks at the archives of every polling node; a changed one becomes due. Package-private for tests. */
    void scan(long now) {
        ServerSnapshot snapshot = snapshots.get();
        ServerConfig.RemoteRun config = snapshot.config().remoteRun();
        if (!config.enabled() || !config.policyUpdates().enabled()
                || !config.transports().contains(ServerConfig.Transport.PULL)) {
            return;
        }
        long splay = config.policyUpdates().splay().toNanos();
        for (NodeId node : channels.polling()) {
            // A frozen node's copy does not change: no "policies changed" order while it is frozen, one at release.
            String version = version(snapshot.nodeRoot(node));
            String previous = seen.put(node, version);
            if (previous != null && !previous.equals(version) && waiting.add(node)) {
                long delay = splay > 0 ? ThreadLocalRandom.current().nextLong(splay) : 0;
                due.add(new Due(now + delay, node));
            }
        }
        pending = waiting.size();
        watched = seen.size();
    }

    /** Gives the due orders the rate allows; a failure is logged and the next tick tries again. */
    void release() {
        try {
            release(System.nanoTime());
        } catch (RuntimeException e) {
            LOG.warn("policy updates: releasing update orders failed: {}", e.toString());
        }
    }

    void release(long now) {
        ServerConfig.RemoteRun config = snapshots.get().config().remoteRun();
        int rate = config.policyUpdates().rate();
        // A token bucket: rate a second by the time that passed (ticks delayed by a slow scan run late, back to
        // back: they must not add a tick's worth each), at most one second's worth saved up.
        long elapsed = lastRelease == Long.MIN_VALUE ? TICK.toNanos() : Math.max(0, now - lastRelease);
        lastRelease = now;
        budget = Math.min(rate, budget + rate * (elapsed / 1e9));
        Deque<NodeId> ready = new ArrayDeque<>();
        while (budget >= 1 && !due.isEmpty() && due.peek().at() <= now) {
            ready.add(due.poll().node());
            budget--;
        }
        for (NodeId node : ready) {
            waiting.remove(node);
            PullChannels.Order order = channels.dispatch(node, UPDATE, config.timeout(), null);
            if (order != null && order.ended() != null) {
                // Its queue is full (it runs orders): told again in a while.
                if (waiting.add(node)) {
                    due.add(new Due(now + scan.toNanos(), node));
                }
            } else if (order != null) {
                released.incrementAndGet();
            } else {
                // Gone: it updates at its next run, as any node without a channel.
                LOG.debug("policy updates: node {} holds no order channel any more", node);
            }
        }
        if (!ready.isEmpty()) {
            LOG.info("policy updates: {} node(s) told their policies changed; {} waiting", ready.size(),
                    waiting.size());
        }
        pending = waiting.size();
    }

    /** The archives' versions, or what is missing: anything that changes when one of them does. */
    private static String version(Path nodeRoot) {
        StringBuilder version = new StringBuilder();
        for (String archive : ARCHIVES) {
            try {
                version.append(FileVersion.of(nodeRoot.resolve(archive)).etag());
            } catch (IOException absent) {
                version.append('-');
            }
            version.append(' ');
        }
        return version.toString();
    }

    private record Due(long at, NodeId node) implements Comparable<Due> {
        @Override
        public int compareTo(Due other) {
            return Long.compare(at, other.at);
        }
    }
}
