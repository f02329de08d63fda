package io.pintle.server.remoterun;

import io.pintle.server.nodes.Node;
import io.pintle.server.nodes.NodeId;
import java.util.List;
import java.util.Objects;

/**
 * Where a run goes from this server.
 *
 * @param targets every node targeted, in order, without duplicates
 * @param local whether this server's own agent runs
 * @param hops calls to neighbours: each carries the targets reached through that neighbour
 * @param unresolved targets that cannot be reached, with their status ({@code unknown}, {@code unroutable})
 */
public record RunPlan(List<NodeId> targets, boolean local, List<Hop> hops, List<Unresolved> unresolved) {
    public RunPlan {
        targets = List.copyOf(targets);
        hops = List.copyOf(hops);
        unresolved = List.copyOf(unresolved);
    }

    /**
     * One call to a neighbour.
     *
     * @param via the neighbour called (its policy server is this server)
     * @param nodes the targets reached through it, {@code via} itself included when targeted
     */
    public record Hop(Node via, List<NodeId> nodes) {
        public Hop {
            Objects.requireNonNull(via);
            nodes = List.copyOf(nodes);
        }
    }

    /**
     * A target that cannot be reached from here.
     *
     * @param node the target
     * @param status {@code unknown} or {@code unroutable}
     * @param detail why
     */
    public record Unresolved(NodeId node, String status, String detail) {}
}
