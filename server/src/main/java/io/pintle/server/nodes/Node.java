package io.pintle.server.nodes;

import java.util.Objects;
import java.util.Optional;

/**
 * One entry of {@code nodeslist.json}.
 *
 * @param id the node id
 * @param hostname the node's host name (the address used to reach it)
 * @param keyHash the pin of its agent key, when the entry has a valid one
 * @param policyServer the node's policy server ({@code root} for nodes directly under root)
 */
public record Node(NodeId id, String hostname, Optional<KeyHash> keyHash, NodeId policyServer) {
    public Node {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(hostname, "hostname");
        Objects.requireNonNull(keyHash, "keyHash");
        Objects.requireNonNull(policyServer, "policyServer");
    }
}
