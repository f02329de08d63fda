package io.pintle.server.reload;

import io.pintle.server.acl.AclEvaluator;
import io.pintle.server.acl.AllowedNetworks;
import io.pintle.server.acl.PolicyServerNetworks;
import io.pintle.server.config.ServerConfig;
import io.pintle.server.nodes.CertificateIndex;
import io.pintle.server.nodes.KeyHash;
import io.pintle.server.nodes.NodeId;
import io.pintle.server.nodes.NodeRegistry;
import io.pintle.server.nodes.NodeTrust;
import io.pintle.server.nodes.NodesList;
import io.pintle.server.policy.Freeze;
import io.pintle.server.policy.ShareTree;
import io.pintle.server.tls.ServerCredentials;
import io.pintle.server.uploads.UploadUsers;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Everything a request's authorisation reads, as of one load of the input files. Immutable.
 *
 * @param generation increases by one with each published snapshot, starting at 1
 * @param loadedAt when it was built
 * @param config the configuration it was built from
 * @param self this server's node id
 * @param nodes the node registry
 * @param networks allowed networks
 * @param share the served tree
 * @param credentials the server certificate and key
 * @param upstreamPin the key pin of this server's policy server ({@code [upstream] key_hash}, or the key of
 *     {@code [upstream] certificate}), or null when there is no {@code [upstream] url} (a root)
 * @param inputs every input file read, in a stable order
 * @param nodesList the parsed nodes list, whose unchanged entries the next load reuses
 * @param certificates the parsed form of each certificate bundle, whose unchanged blocks the next load reuses
 * @param uploadUsers who may upload ({@link UploadUsers#NONE} when uploads are off)
 * @param policyServerNetworks who may ask for a remote run without a certificate ({@code [networks]
 *     policy_server_file}); {@link PolicyServerNetworks#NONE} when none is configured
 * @param trust how client certificates are trusted and revoked
 * @param freeze which nodes are held on which bytes ({@link Freeze#NONE} when none): kept by reloads, changed only
 *     by the freeze API ({@link Reloader#freeze})
 */
public record ServerSnapshot(
        long generation,
        Instant loadedAt,
        ServerConfig config,
        NodeId self,
        NodeRegistry nodes,
        AllowedNetworks networks,
        ShareTree share,
        ServerCredentials credentials,
        KeyHash upstreamPin,
        Map<Path, InputFile> inputs,
        NodesList nodesList,
        Map<Path, CertificateIndex> certificates,
        UploadUsers uploadUsers,
        PolicyServerNetworks policyServerNetworks,
        NodeTrust trust,
        Freeze freeze) {
    public ServerSnapshot {
        Objects.requireNonNull(freeze);
        Objects.requireNonNull(loadedAt);
        Objects.requireNonNull(config);
        inputs = Collections.unmodifiableMap(new LinkedHashMap<>(inputs));
        Objects.requireNonNull(nodesList);
        certificates = Map.copyOf(certificates);
        Objects.requireNonNull(self);
        Objects.requireNonNull(nodes);
        Objects.requireNonNull(networks);
        Objects.requireNonNull(share);
        Objects.requireNonNull(credentials);
        Objects.requireNonNull(uploadUsers);
        Objects.requireNonNull(policyServerNetworks);
        Objects.requireNonNull(trust);
        if (config.upstream().configured() != (upstreamPin != null)) {
            throw new IllegalArgumentException("the policy server's pin goes with an [upstream] url, and only then");
        }
    }

    /**
     * @return every file whose creation, change or removal should reload: the inputs, and the default
     *     policy-server networks file and deny list while they are absent (Rudder's agent may write the first
     *     after Pintle started; an operator writes the second when a key is stolen)
     */
    public Set<Path> watched() {
        Set<Path> files = new LinkedHashSet<>(inputs.keySet());
        if (policyServerNetworks.file() != null && !policyServerNetworks.present()) {
            files.add(policyServerNetworks.file());
        }
        // The deny list is made in an emergency: creating it at its default path must take effect.
        if (config.nodes().deniedKeysFile() != null) {
            files.add(config.nodes().deniedKeysFile());
        }
        // So is Rudder's nodes-auth include, which an administrator writes when the CA puts ids in SANs.
        if (config.nodes().nodesAuthFile() != null) {
            files.add(config.nodes().nodesAuthFile());
        }
        return Collections.unmodifiableSet(files);
    }

    /**
     * @param other another snapshot
     * @return whether both were read from the same input files with the same bytes
     */
    public boolean sameInputs(ServerSnapshot other) {
        if (!inputs.keySet().equals(other.inputs.keySet())) {
            return false;
        }
        for (Map.Entry<Path, InputFile> input : inputs.entrySet()) {
            if (!input.getValue().sameContent(other.inputs.get(input.getKey()))) {
                return false;
            }
        }
        return true;
    }

    /**
     * @param node a node
     * @return the directory its {@code /policies/<id>/} and {@code <share>/<id>/} are served from: the frozen copy
     *     when it is frozen, else its directory in the share
     */
    public Path nodeRoot(NodeId node) {
        return freeze.covers(node) ? freeze.root(node) : share.nodeRoot(node);
    }

    /**
     * @param next the freeze to put in force
     * @param nextGeneration this snapshot's successor's generation
     * @param now when it is made
     * @return this snapshot with that freeze, as a new generation
     */
    public ServerSnapshot withFreeze(Freeze next, long nextGeneration, Instant now) {
        return new ServerSnapshot(nextGeneration, now, config, self, nodes, networks, share, credentials, upstreamPin,
                inputs, nodesList, certificates, uploadUsers, policyServerNetworks, trust, next);
    }

    /** @return the access rules over this snapshot's networks */
    public AclEvaluator acl() {
        return new AclEvaluator(networks, trust);
    }
}
