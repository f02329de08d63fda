package io.pintle.server.delivery;

import io.pintle.server.nodes.NodeId;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Each node's last request, last policy fetch and last uploads, as the doors report them. Every event replaces
 * the node's {@link NodeRecord} in one {@link ConcurrentHashMap#compute}, which orders the events of one node
 * and never blocks another node's; readers get whole records. Only nodes the caller vouched for are recorded
 * (authenticated callers, uploads named for a listed node), so its size is bounded by the nodes list.
 */
public final class DeliveryLog {
    private final ConcurrentHashMap<NodeId, NodeRecord> nodes = new ConcurrentHashMap<>();
    private final AtomicLong changes = new AtomicLong();

    /**
     * @param node the node that asked
     * @param time when it was answered
     * @param address its address
     * @param route the route's label
     * @param status the status answered
     */
    public void request(NodeId node, Instant time, String address, String route, int status) {
        NodeRecord.Seen seen = new NodeRecord.Seen(time, address, route, status);
        update(node, record -> record.withRequest(seen));
    }

    /**
     * A fetch of the node's policies after which the node holds {@code etag}.
     *
     * @param node the node
     * @param entry which {@link PolicyEntry}
     * @param etag what it holds now
     * @param status 200 or 304
     * @param time when
     * @param door {@code https} or {@code cfengine}
     */
    public void fetched(NodeId node, String entry, String etag, int status, Instant time, String door) {
        NodeRecord.Fetch fetch = new NodeRecord.Fetch(entry, etag, status, time, door);
        update(node, record -> record.withFetch(fetch));
    }

    /**
     * @param node the node the file is named for
     * @param kind its upload route's label
     * @param name the file name
     * @param time when it was stored
     * @param address who sent it
     * @param status the status answered
     */
    public void uploaded(NodeId node, String kind, String name, Instant time, String address, int status) {
        NodeRecord.Seen seen = new NodeRecord.Seen(time, address, name, status);
        update(node, record -> record.withUpload(kind, seen));
    }

    /**
     * @param node a node
     * @return what is known of it ({@link NodeRecord#NONE} when nothing)
     */
    public NodeRecord get(NodeId node) {
        return nodes.getOrDefault(node, NodeRecord.NONE);
    }

    /** @return every node's record, as of now (each record whole) */
    public Map<NodeId, NodeRecord> copy() {
        return Map.copyOf(nodes);
    }

    /** @return increases with every event: what a saver compares to know whether to write */
    public long changes() {
        return changes.get();
    }

    /**
     * Puts back what an earlier process saved, under anything recorded since (which is newer).
     *
     * @param saved the saved records
     */
    public void restore(Map<NodeId, NodeRecord> saved) {
        saved.forEach(nodes::putIfAbsent);
    }

    /**
     * Forgets the nodes no longer served here.
     *
     * @param listed whether a node is still listed
     */
    public void retain(java.util.function.Predicate<NodeId> listed) {
        if (nodes.keySet().removeIf(node -> !listed.test(node))) {
            changes.incrementAndGet();
        }
    }

    private void update(NodeId node, java.util.function.UnaryOperator<NodeRecord> change) {
        Objects.requireNonNull(node);
        nodes.compute(node, (id, old) -> change.apply(old != null ? old : NodeRecord.NONE));
        changes.incrementAndGet();
    }
}
