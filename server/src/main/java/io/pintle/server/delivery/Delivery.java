package io.pintle.server.delivery;

import io.pintle.server.nodes.Node;
import io.pintle.server.nodes.NodeId;
import io.pintle.server.policy.PolicyArchives;
import io.pintle.server.reload.ServerSnapshot;
import io.pintle.server.uploads.UploadNames;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Policy delivery as one service: the doors report requests, fetches and uploads here; the admin API, the status
 * page and the metrics read node states, the summary and the curve. Every {@code [delivery] sample_seconds} (10 by
 * default) it samples the curve and saves the log when it changed ({@link DeliveryStore}); at stop it saves once
 * more.
 */
public final class Delivery {
    private static final Logger LOG = LoggerFactory.getLogger(Delivery.class);

    private final Supplier<ServerSnapshot> snapshots;
    private final DeliveryLog log = new DeliveryLog();
    private final DeliveryCurve curve = new DeliveryCurve();
    private final FetchedTrees trees;
    private final PolicyArchives archives;
    private final boolean recording;
    private final Clock clock;
    private final Predicate<NodeId> channels;
    private final ScheduledExecutorService scheduler;
    private volatile Summary summary = Summary.NONE;
    private Map<NodeId, String> served = Map.of();
    private DeliveryStore store;
    private long saved = -1;
    private ScheduledFuture<?> ticks;

    /**
     * @param snapshots the live snapshot
     * @param trees keeps what nodes fetched, for diffs
     * @param archives the Linux archives Pintle builds where Rudder's hook has not (their ETags are what is served)
     * @param channels whether a node holds an order channel now
     * @param clock the clock
     * @param scheduler runs the ticks
     */
    public Delivery(Supplier<ServerSnapshot> snapshots, FetchedTrees trees, PolicyArchives archives,
            Predicate<NodeId> channels, Clock clock, ScheduledExecutorService scheduler) {
        this(snapshots, trees, archives, channels, clock, scheduler, true);
    }

    /**
     * @param snapshots the live snapshot
     * @param trees keeps what nodes fetched, for diffs
     * @param archives the Linux archives Pintle builds where Rudder's hook has not
     * @param channels whether a node holds an order channel now
     * @param clock the clock
     * @param scheduler runs the ticks
     * @param recording false to ignore what the doors report (a benchmark's A/B of the request path only)
     */
    public Delivery(Supplier<ServerSnapshot> snapshots, FetchedTrees trees, PolicyArchives archives,
            Predicate<NodeId> channels, Clock clock, ScheduledExecutorService scheduler, boolean recording) {
        this.recording = recording;
        this.archives = archives;
        this.snapshots = snapshots;
        this.trees = trees;
        this.channels = channels;
        this.clock = clock;
        this.scheduler = scheduler;
    }

    /**
     * Counts as of the last tick.
     *
     * @param nodes nodes served here
     * @param behind of which not on what is served now
     * @param silent of which silent
     * @param frozen of which frozen
     * @param channels of which holding an order channel
     */
    public record Summary(int nodes, int behind, int silent, int frozen, int channels) {
        /** Before the first tick. */
        public static final Summary NONE = new Summary(0, 0, 0, 0, 0);

        /** @return the share of nodes on what is served now (1 when there is none) */
        public double currentShare() {
            return nodes == 0 ? 1.0 : (nodes - behind) / (double) nodes;
        }
    }

    // ---- what the doors report

    /**
     * @param node the authenticated node
     * @param address its address
     * @param route the route's label
     * @param status the status answered
     */
    public void request(NodeId node, String address, String route, int status) {
        if (!recording) {
            return;
        }
        log.request(node, clock.instant(), address, route, status);
    }

    /**
     * A node was answered one of its {@link PolicyEntry policy entries} and holds {@code etag} now.
     *
     * @param snapshot the request's snapshot
     * @param node the node
     * @param entry the entry, relative to its directory
     * @param etag the tag it holds
     * @param status 200 or 304
     * @param door {@code https} or {@code cfengine}
     */
    public void fetched(ServerSnapshot snapshot, NodeId node, String entry, String etag, int status, String door) {
        if (!recording) {
            return;
        }
        log.fetched(node, entry, etag, status, clock.instant(), door);
        trees.fetched(snapshot.config().paths().state(), node, snapshot.nodeRoot(node), entry, etag, archives);
    }

    /**
     * An upload was stored; recorded for the node its name is for, when that node is listed.
     *
     * @param snapshot the request's snapshot
     * @param kind the upload route's label
     * @param name the file name
     * @param address who sent it
     * @param status the status answered
     */
    public void uploaded(ServerSnapshot snapshot, String kind, String name, String address, int status) {
        NodeId node = recording ? UploadNames.node(name) : null;
        if (node != null && snapshot.nodes().node(node).isPresent()) {
            log.uploaded(node, kind, name, clock.instant(), address, status);
        }
    }

    // ---- what the admin side reads

    /**
     * @param snapshot a snapshot
     * @return the nodes this server serves (those whose policy server it is), in id order, as of now
     */
    public List<NodeState> nodes(ServerSnapshot snapshot) {
        Instant silentSince = clock.instant().minus(snapshot.config().delivery().silentAfter());
        List<NodeState> states = new ArrayList<>();
        for (Node node : served(snapshot)) {
            states.add(state(snapshot, node, silentSince));
        }
        states.sort(java.util.Comparator.comparing(state -> state.node().id()));
        return states;
    }

    /**
     * @param snapshot a snapshot
     * @param id a node
     * @return its state, or null when this server does not serve it
     */
    public NodeState node(ServerSnapshot snapshot, NodeId id) {
        Instant silentSince = clock.instant().minus(snapshot.config().delivery().silentAfter());
        for (Node node : served(snapshot)) {
            if (node.id().equals(id)) {
                return state(snapshot, node, silentSince);
            }
        }
        return null;
    }

    /** @return the log (what was recorded) */
    public DeliveryLog log() {
        return log;
    }

    /** @return the counts of the last tick */
    public Summary summary() {
        return summary;
    }

    /** @return the share of nodes on the current version over time */
    public DeliveryCurve curve() {
        return curve;
    }

    /**
     * @param snapshot a snapshot
     * @param node a node
     * @param kept what is kept of its last fetch ({@link FetchedTrees#kept}), or null
     * @return what changed between the tree it last fetched (as kept) and the one served to it now
     * @throws IOException when a tree cannot be read
     */
    public TreeDiff.Result diff(ServerSnapshot snapshot, NodeId node, FetchedTrees.Kept kept) throws IOException {
        return TreeDiff.compare(kept != null ? kept.tree() : null,
                snapshot.nodeRoot(node).resolve(PolicyEntry.CFENGINE_TREE));
    }

    private static List<Node> served(ServerSnapshot snapshot) {
        List<Node> nodes = new ArrayList<>();
        for (Node node : snapshot.nodesList().nodes()) {
            if (snapshot.self().equals(node.policyServer()) && !snapshot.self().equals(node.id())) {
                nodes.add(node);
            }
        }
        return nodes;
    }

    private NodeState state(ServerSnapshot snapshot, Node node, Instant silentSince) {
        NodeRecord record = log.get(node.id());
        Path root = snapshot.nodeRoot(node.id());
        String current = record.policies() != null
                ? PolicyEntry.currentEtag(root, record.policies().path(), archives) : presentEtag(root);
        boolean behind = record.policies() == null || current == null || !current.equals(record.policies().etag());
        boolean silent = record.lastRequest() == null || record.lastRequest().time().isBefore(silentSince);
        return new NodeState(node, record, current, behind, silent, snapshot.freeze().covers(node.id()),
                channels.test(node.id()));
    }

    /** What a node that never fetched would be served: the tag of the first entry its directory has. */
    private String presentEtag(Path root) {
        for (String entry : List.of(PolicyEntry.LINUX_ARCHIVE, PolicyEntry.CFENGINE_STAMP, PolicyEntry.DSC_ARCHIVE)) {
            String etag = PolicyEntry.currentEtag(root, entry, archives);
            if (etag != null) {
                return etag;
            }
        }
        return null;
    }

    // ---- lifecycle

    /**
     * Restores what the last process saved, then samples and saves every {@code [delivery] sample_seconds} of the
     * configuration it starts with.
     */
    public synchronized void start() {
        ServerSnapshot snapshot = snapshots.get();
        store = new DeliveryStore(snapshot.config().paths().state());
        log.restore(store.load());
        saved = log.changes();
        tick();
        long every = snapshot.config().delivery().sampleEvery().toMillis();
        ticks = scheduler.scheduleWithFixedDelay(this::guardedTick, every, every, TimeUnit.MILLISECONDS);
    }

    /** Stops the ticks and saves once more. */
    public synchronized void stop() {
        if (ticks != null) {
            ticks.cancel(false);
        }
        save();
    }

    private void guardedTick() {
        try {
            tick();
            save();
        } catch (RuntimeException e) {
            LOG.warn("delivery: sampling failed: {}", e.toString());
        }
    }

    /** One sample of the curve and of the summary. Package-private for tests. */
    synchronized void tick() {
        ServerSnapshot snapshot = snapshots.get();
        List<NodeState> states = nodes(snapshot);
        int behind = 0;
        int silent = 0;
        int frozen = 0;
        int channel = 0;
        int changed = 0;
        Map<NodeId, String> now = new HashMap<>();
        for (NodeState state : states) {
            behind += state.behind() ? 1 : 0;
            silent += state.silent() ? 1 : 0;
            frozen += state.frozen() ? 1 : 0;
            channel += state.channel() ? 1 : 0;
            if (state.currentEtag() != null) {
                now.put(state.node().id(), state.currentEtag());
                String before = served.get(state.node().id());
                if (before != null && !before.equals(state.currentEtag())) {
                    changed++;
                }
            }
        }
        served = now;
        log.retain(id -> snapshot.nodes().node(id).isPresent());
        summary = new Summary(states.size(), behind, silent, frozen, channel);
        curve.add(new DeliveryCurve.Sample(clock.instant(), states.size(), states.size() - behind, changed));
    }

    private synchronized void save() {
        long changes = log.changes();
        if (store == null || changes == saved) {
            return;
        }
        try {
            store.save(log.copy());
            saved = changes;
        } catch (IOException e) {
            LOG.warn("delivery: cannot save {}: {}", store.file(), e.getMessage());
        }
    }
}
