package io.pintle.server.remoterun;

import static org.assertj.core.api.Assertions.assertThat;

import io.pintle.server.nodes.Node;
import io.pintle.server.nodes.NodeId;
import io.pintle.server.nodes.NodeRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class RemoteRunPlannerTest {
    private static final NodeId ROOT = new NodeId("root");

    private static Node node(String id, String policyServer) {
        return new Node(new NodeId(id), id + ".example.org", Optional.empty(), new NodeId(policyServer));
    }

    /** root ← relay-a ← relay-b ← n-b; root ← relay-a ← n-a; root ← n-1; root lists itself, as Rudder's list does. */
    private static final NodeRegistry TREE = NodeRegistry.of(List.of(node("root", "root"), node("n-1", "root"),
            node("relay-a", "root"), node("n-a", "relay-a"), node("relay-b", "relay-a"), node("n-b", "relay-b")),
            List.of());

    private static Map<String, List<String>> hops(RunPlan plan) {
        return plan.hops().stream().collect(Collectors.toMap(h -> h.via().id().value(),
                h -> h.nodes().stream().map(NodeId::value).toList()));
    }

    private static List<NodeId> ids(String... ids) {
        return java.util.Arrays.stream(ids).map(NodeId::new).toList();
    }

    @Test
    void neighboursAreCalledDirectlyAndDeeperNodesThroughTheNeighbourAboveThem() {
        RunPlan plan = RemoteRunPlanner.plan(TREE, ROOT, ids("n-1", "n-b", "n-a", "relay-b"));
        assertThat(plan.local()).isFalse();
        assertThat(hops(plan)).isEqualTo(Map.of("n-1", List.of("n-1"), "relay-a", List.of("n-b", "n-a", "relay-b")));
        assertThat(plan.unresolved()).isEmpty();
    }

    @Test
    void allIsEveryNodeBelowAndThisServerItself() {
        RunPlan plan = RemoteRunPlanner.plan(TREE, ROOT, null);
        assertThat(plan.local()).isTrue();
        assertThat(plan.targets()).hasSize(6);
        assertThat(hops(plan)).isEqualTo(Map.of("n-1", List.of("n-1"),
                "relay-a", List.of("n-a", "n-b", "relay-a", "relay-b")));
        // On a relay, the same list seen from relay-a: only its subtree, and nothing above it is a target.
        RunPlan fromRelay = RemoteRunPlanner.plan(TREE, new NodeId("relay-a"), null);
        assertThat(fromRelay.targets()).extracting(NodeId::value)
                .containsExactlyInAnyOrder("relay-a", "n-a", "relay-b", "n-b");
        assertThat(fromRelay.unresolved()).isEmpty();
    }

    @Test
    void unknownNodesAndDuplicatesAreHandledOnce() {
        RunPlan plan = RemoteRunPlanner.plan(TREE, ROOT, ids("nobody", "n-1", "n-1", "root"));
        assertThat(plan.targets()).extracting(NodeId::value).containsExactly("nobody", "n-1", "root");
        assertThat(plan.local()).isTrue();
        assertThat(plan.unresolved()).singleElement().satisfies(u -> {
            assertThat(u.node().value()).isEqualTo("nobody");
            assertThat(u.status()).isEqualTo("unknown");
        });
    }

    @Test
    void loopsAndChainsDeeperThanTwentyAreReportedNotFollowed() {
        List<Node> nodes = new ArrayList<>();
        nodes.add(node("x", "y"));
        nodes.add(node("y", "x"));
        // d-0 is under root; d-k under d-(k-1): d-19 is 20 links from root, d-20 is 21.
        nodes.add(node("d-0", "root"));
        for (int k = 1; k <= 20; k++) {
            nodes.add(node("d-" + k, "d-" + (k - 1)));
        }
        nodes.add(node("orphan", "missing-relay"));
        NodeRegistry registry = NodeRegistry.of(nodes, List.of());
        RunPlan plan = RemoteRunPlanner.plan(registry, ROOT, ids("x", "d-19", "d-20", "orphan"));
        assertThat(hops(plan)).isEqualTo(Map.of("d-0", List.of("d-19")));
        assertThat(plan.unresolved()).extracting(u -> u.node().value() + ":" + u.status())
                .containsExactly("x:unroutable", "d-20:unroutable", "orphan:unroutable");
        assertThat(plan.unresolved().get(0).detail()).contains("loop");
        assertThat(plan.unresolved().get(1).detail()).contains("more than 20");
    }
}
