package io.pintle.server.acl;

import io.pintle.server.nodes.Identification;
import io.pintle.server.nodes.KeyHash;
import io.pintle.server.nodes.NodeId;
import java.security.cert.X509Certificate;

/**
 * The access rules of Rudder's node-facing Apache vhost, as pure functions of the caller and the snapshot's
 * allowed networks.
 *
 * <ul>
 *   <li>{@code /policies/{id}/...}: the source address is in the allowed networks, the client certificate
 *       authenticates a known node, and that node is {@code {id}}.
 *   <li>{@code /common/...}: the source address is in the allowed networks.
 *   <li>relayd's {@code shared-folder/...}: the source address is in the allowed networks and the client
 *       certificate authenticates a known node (any node).
 *   <li>relayd's {@code remote-run/...} on the TLS listener: the client's key is this server's policy server's
 *       (see {@link #remoteRun}).
 * </ul>
 */
public final class AclEvaluator {
    private final AllowedNetworks networks;

    /**
     * @param networks the allowed networks of the current snapshot
     */
    public AclEvaluator(AllowedNetworks networks) {
        this.networks = networks;
    }

    /**
     * @param caller the caller
     * @param owner the node whose policy directory is requested
     * @return the decision
     */
    public Decision policies(Caller caller, NodeId owner) {
        if (!networks.contains(caller.address())) {
            return networkDenied(caller);
        }
        if (caller.identification() instanceof Identification.Anonymous anonymous) {
            return new Decision.Deny(anonymous.reason().code(), anonymous.detail());
        }
        NodeId node = ((Identification.Authenticated) caller.identification()).node();
        if (!node.equals(owner)) {
            return new Decision.Deny("uid-mismatch",
                    "certificate UID " + node + " does not match the node " + owner + " in the path");
        }
        return new Decision.Allow("policies: node " + node + " reads its own directory");
    }

    /**
     * @param caller the caller
     * @return the decision
     */
    public Decision common(Caller caller) {
        if (!networks.contains(caller.address())) {
            return networkDenied(caller);
        }
        return new Decision.Allow("common: allowed network");
    }

    /**
     * Rudder's Apache: a verified client certificate and an allowed network.
     *
     * @param caller the caller
     * @return the decision
     */
    public Decision sharedFolder(Caller caller) {
        if (!networks.contains(caller.address())) {
            return networkDenied(caller);
        }
        if (caller.identification() instanceof Identification.Anonymous anonymous) {
            return new Decision.Deny(anonymous.reason().code(), anonymous.detail());
        }
        NodeId node = ((Identification.Authenticated) caller.identification()).node();
        return new Decision.Allow("shared-folder: node " + node + " in an allowed network");
    }

    /**
     * relayd's shared-files PUT and HEAD: an allowed network (the upload carries its own signature, checked against
     * the source node's pinned key).
     *
     * @param caller the caller
     * @return the decision
     */
    public Decision sharedFilesUpload(Caller caller) {
        if (!networks.contains(caller.address())) {
            return networkDenied(caller);
        }
        return new Decision.Allow("shared-files: allowed network; the upload is checked by its signature");
    }

    /**
     * Pintle's shared-files GET: only the target node, by its own certificate, from an allowed network.
     *
     * @param caller the caller
     * @param target the node the file is for
     * @return the decision
     */
    public Decision sharedFilesDownload(Caller caller, NodeId target) {
        if (!networks.contains(caller.address())) {
            return networkDenied(caller);
        }
        if (caller.identification() instanceof Identification.Anonymous anonymous) {
            return new Decision.Deny(anonymous.reason().code(), anonymous.detail());
        }
        NodeId node = ((Identification.Authenticated) caller.identification()).node();
        if (!node.equals(target)) {
            return new Decision.Deny("uid-mismatch",
                    "certificate UID " + node + " is not the node " + target + " this file is for");
        }
        return new Decision.Allow("shared-files: node " + node + " reads a file shared with it");
    }

    /**
     * @param caller the caller
     * @return whether the caller's address is in the allowed networks
     */
    public boolean inAllowedNetworks(Caller caller) {
        return networks.contains(caller.address());
    }

    /**
     * Remote run on the TLS listener: only this server's own policy server may ask, authenticated by its key (the
     * {@code [upstream]} pin), never by its address alone.
     *
     * @param enabled {@code [remote_run] enabled}
     * @param peer the client's leaf certificate, or null when it sent none
     * @param upstreamPin the policy server's key pin, from the snapshot, or null when this server has none
     *     (root: remote runs come from the local webapp, on the admin listener)
     * @return the decision
     */
    public static Decision remoteRun(boolean enabled, X509Certificate peer, KeyHash upstreamPin) {
        if (!enabled) {
            return new Decision.Deny("remote-run-disabled", "remote run is disabled on this server ([remote_run] "
                    + "enabled = false)");
        }
        if (upstreamPin == null) {
            return new Decision.Deny("no-policy-server", "this server has no policy server ([upstream]): remote "
                    + "runs are accepted on its admin listener only");
        }
        if (peer == null) {
            return new Decision.Deny("no-certificate", "remote run needs the policy server's client certificate");
        }
        // Hashed as the pin was (key_hash may be written sha512//...), compared as values, not as text.
        KeyHash key = KeyHash.of(upstreamPin.algorithm(), peer.getPublicKey());
        if (!key.equals(upstreamPin)) {
            return new Decision.Deny("not-policy-server", "key " + key + " is not this server's policy server's ("
                    + upstreamPin + ")");
        }
        return new Decision.Allow("remote-run: the policy server's pinned key");
    }

    private static Decision networkDenied(Caller caller) {
        return new Decision.Deny("network-not-allowed",
                caller.address().getHostAddress() + " is not in the allowed networks");
    }
}
