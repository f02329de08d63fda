package io.pintle.server.remoterun;

import io.pintle.api.Routes;
import io.pintle.api.dto.RemoteRunEvent;
import io.pintle.server.nodes.Node;
import io.pintle.server.nodes.NodeId;
import io.pintle.server.nodes.NodeRegistry;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Routes targets as relayd does, from {@code nodeslist.json}'s {@code policy-server} links (which list every node
 * below this server, recursively): a node whose policy server is this server is a neighbour, called directly;
 * any other is reached through the neighbour found by walking up its links, at most {@link
 * Routes#MAX_REMOTE_RUN_HOPS} of them. Links that loop, break or go deeper are reported, never followed.
 */
public final class RemoteRunPlanner {
    private RemoteRunPlanner() {}

    /**
     * @param registry this server's nodes
     * @param self this server's id
     * @param targets the nodes asked for, or null for all of them (every node below this server, and itself)
     * @return the plan
     */
    public static RunPlan plan(NodeRegistry registry, NodeId self, List<NodeId> targets) {
        Set<NodeId> wanted = new LinkedHashSet<>();
        if (targets == null) {
            wanted.add(self);
            registry.nodes().stream().map(Node::id).sorted().forEach(wanted::add);
        } else {
            wanted.addAll(targets);
        }
        boolean local = false;
        Map<NodeId, List<NodeId>> byVia = new LinkedHashMap<>();
        List<RunPlan.Unresolved> unresolved = new ArrayList<>();
        List<NodeId> kept = new ArrayList<>();
        for (NodeId target : wanted) {
            if (target.equals(self)) {
                local = true;
                kept.add(target);
                continue;
            }
            Route route = route(registry, self, target);
            if (route.via == null) {
                // "all" is every node whose links reach this server; the others are not below it.
                if (targets == null) {
                    continue;
                }
                unresolved.add(new RunPlan.Unresolved(target, route.status, route.detail));
            } else {
                byVia.computeIfAbsent(route.via, v -> new ArrayList<>()).add(target);
            }
            kept.add(target);
        }
        List<RunPlan.Hop> hops = new ArrayList<>();
        for (Map.Entry<NodeId, List<NodeId>> entry : byVia.entrySet()) {
            hops.add(new RunPlan.Hop(registry.node(entry.getKey()).orElseThrow(), entry.getValue()));
        }
        return new RunPlan(kept, local, hops, unresolved);
    }

    /**
     * @param via the neighbour to call, or null when unreachable
     * @param status why unreachable
     * @param detail the details
     */
    private record Route(NodeId via, String status, String detail) {}

    private static Route route(NodeRegistry registry, NodeId self, NodeId target) {
        Optional<Node> node = registry.node(target);
        if (node.isEmpty()) {
            return new Route(null, RemoteRunEvent.UNKNOWN, "node " + target + " is not in this server's node list");
        }
        Set<NodeId> seen = new HashSet<>();
        seen.add(target);
        Node current = node.get();
        for (int depth = 1; depth <= Routes.MAX_REMOTE_RUN_HOPS; depth++) {
            NodeId parent = current.policyServer();
            if (parent.equals(self)) {
                return new Route(current.id(), null, null);
            }
            if (!seen.add(parent)) {
                return new Route(null, RemoteRunEvent.UNROUTABLE, "the policy-server links of node " + target
                        + " loop at " + parent);
            }
            Optional<Node> next = registry.node(parent);
            if (next.isEmpty()) {
                return new Route(null, RemoteRunEvent.UNROUTABLE, "node " + target + " is below " + parent
                        + ", which is not in this server's node list");
            }
            current = next.get();
        }
        return new Route(null, RemoteRunEvent.UNROUTABLE, "node " + target + " is more than "
                + Routes.MAX_REMOTE_RUN_HOPS + " policy servers below this one");
    }
}
