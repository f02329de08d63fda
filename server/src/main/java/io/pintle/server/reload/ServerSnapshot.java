package io.pintle.server.reload;

import io.pintle.server.acl.AclEvaluator;
import io.pintle.server.acl.AllowedNetworks;
import io.pintle.server.nodes.NodeId;
import io.pintle.server.nodes.NodeRegistry;
import io.pintle.server.policy.ShareTree;
import io.pintle.server.tls.ServerCredentials;
import java.time.Instant;
import java.util.Objects;

/**
 * Everything a request's authorisation reads, as of one load of the input files. Immutable.
 *
 * @param generation increases by one with each published snapshot, starting at 1
 * @param loadedAt when it was built
 * @param self this server's node id
 * @param nodes the node registry
 * @param networks allowed networks
 * @param share the served tree
 * @param credentials the server certificate and key
 */
public record ServerSnapshot(
        long generation,
        Instant loadedAt,
        NodeId self,
        NodeRegistry nodes,
        AllowedNetworks networks,
        ShareTree share,
        ServerCredentials credentials) {
    public ServerSnapshot {
        Objects.requireNonNull(loadedAt);
        Objects.requireNonNull(self);
        Objects.requireNonNull(nodes);
        Objects.requireNonNull(networks);
        Objects.requireNonNull(share);
        Objects.requireNonNull(credentials);
    }

    /** @return the access rules over this snapshot's networks */
    public AclEvaluator acl() {
        return new AclEvaluator(networks);
    }
}
