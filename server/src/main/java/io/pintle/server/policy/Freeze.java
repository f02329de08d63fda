package io.pintle.server.policy;

import io.pintle.server.nodes.NodeId;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * Which nodes are held on which bytes. A frozen node's directory ({@code /policies/<id>/…} over HTTPS, {@code
 * <share>/<id>/…} over CFEngine's protocol) is served from {@code directory/<id>}, a copy taken when the freeze was
 * made ({@code delivery.Freezer}), whatever Rudder writes meanwhile. Immutable; part of the live snapshot.
 *
 * @param id the freeze's identifier, also its directory's name
 * @param since when it was taken
 * @param rollback whether the copies are each node's previous generation rather than its current one
 * @param all whether every node that had a directory was frozen (nodes added later are not)
 * @param nodes the frozen nodes
 * @param directory where the copies are, one directory per node
 * @param reason what the operator said, or null
 */
public record Freeze(String id, Instant since, boolean rollback, boolean all, Set<NodeId> nodes, Path directory,
        String reason) {
    /** Nothing frozen. */
    public static final Freeze NONE = new Freeze(null, null, false, false, Set.of(), null, null);

    public Freeze {
        nodes = Set.copyOf(nodes);
        if (id != null) {
            Objects.requireNonNull(since);
            Objects.requireNonNull(directory);
        }
    }

    /** @return whether anything is frozen */
    public boolean active() {
        return id != null;
    }

    /**
     * @param node a node
     * @return whether it is held
     */
    public boolean covers(NodeId node) {
        return id != null && nodes.contains(node);
    }

    /**
     * @param node a frozen node
     * @return the copy its requests are served from
     */
    public Path root(NodeId node) {
        if (!covers(node)) {
            throw new IllegalArgumentException(node + " is not frozen");
        }
        return directory.resolve(node.value());
    }

    /**
     * @param released nodes to let go
     * @return this freeze without them ({@link #NONE} when none is left)
     */
    public Freeze without(Set<NodeId> released) {
        Set<NodeId> left = new TreeSet<>();
        left.addAll(nodes);
        left.removeAll(released);
        return left.isEmpty() ? NONE : new Freeze(id, since, rollback, false, left, directory, reason);
    }
}
