package io.pintle.server.nodes;

import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * The nodes this server knows and the keys pinned for each, from {@code nodeslist.json} ({@code key-hash}) and
 * from certificate bundles (key of a certificate whose subject UID names the node). Immutable.
 *
 * <p>A client certificate authenticates node N when its subject UID is N and its public key is pinned for N.
 * A certificate is otherwise accepted whatever its issuer (Rudder agents use self-signed certificates); its
 * validity dates are checked.
 */
public final class NodeRegistry {
    private final Map<NodeId, Node> nodes;
    private final Map<KeyHash, Set<NodeId>> pins;

    private NodeRegistry(Map<NodeId, Node> nodes, Map<KeyHash, Set<NodeId>> pins) {
        // Built by of() into maps nobody else holds, and never changed after: wrapping is enough.
        this.nodes = Collections.unmodifiableMap(nodes);
        this.pins = Collections.unmodifiableMap(pins);
    }

    /**
     * @param nodes entries of {@code nodeslist.json}
     * @param certificates node certificates; those without a valid UID must have been filtered out
     * @return the registry
     */
    public static NodeRegistry of(Collection<Node> nodes, Collection<CertificateBinding> certificates) {
        Map<NodeId, Node> byId = new HashMap<>(nodes.size() * 2);
        Map<KeyHash, Set<NodeId>> pins = new HashMap<>((nodes.size() + certificates.size()) * 2);
        for (Node node : nodes) {
            byId.put(node.id(), node);
            if (node.keyHash().isPresent()) {
                pin(pins, node.keyHash().get(), node.id());
            }
        }
        for (CertificateBinding binding : certificates) {
            pin(pins, binding.key(), binding.node());
        }
        return new NodeRegistry(byId, pins);
    }

    /** Adds an owner to a key; most keys have exactly one, often pinned twice (list and certificate). */
    private static void pin(Map<KeyHash, Set<NodeId>> pins, KeyHash key, NodeId node) {
        Set<NodeId> owners = pins.get(key);
        if (owners == null) {
            pins.put(key, Set.of(node));
        } else if (!owners.contains(node)) {
            Set<NodeId> both = new HashSet<>(owners);
            both.add(node);
            pins.put(key, Set.copyOf(both));
        }
    }

    /** @return an empty registry: nobody is authenticated */
    public static NodeRegistry empty() {
        return of(List.of(), List.of());
    }

    /** @return every {@code nodeslist.json} entry */
    public Collection<Node> nodes() {
        return nodes.values();
    }

    /** @return the number of nodes in {@code nodeslist.json} */
    public int nodeCount() {
        return nodes.size();
    }

    /** @return the number of distinct pinned keys */
    public int pinCount() {
        return pins.size();
    }

    /**
     * @param id a node id
     * @return the node's {@code nodeslist.json} entry
     */
    public Optional<Node> node(NodeId id) {
        return Optional.ofNullable(nodes.get(id));
    }

    /**
     * @param node a node
     * @param key a key pin
     * @return whether the key is pinned for that node (by {@code nodeslist.json} or a node certificate)
     */
    public boolean isPinned(NodeId node, KeyHash key) {
        Set<NodeId> owners = pins.get(key);
        return owners != null && owners.contains(node);
    }

    /**
     * @param node a node
     * @return every key pinned for it (from {@code nodeslist.json} and the certificate bundles); a scan of all
     *     pins, for rare callers (remote run) only
     */
    public Set<KeyHash> pinsOf(NodeId node) {
        Set<KeyHash> keys = new TreeSet<>(java.util.Comparator.comparing(KeyHash::toString));
        for (Map.Entry<KeyHash, Set<NodeId>> entry : pins.entrySet()) {
            if (entry.getValue().contains(node)) {
                keys.add(entry.getKey());
            }
        }
        return keys;
    }

    /**
     * Decides which node, if any, a client certificate authenticates.
     *
     * @param certificate the client's leaf certificate, or null when the client presented none
     * @param now the time to check validity against
     * @return the identification, with a reason when it is not a known node
     */
    public Identification identify(X509Certificate certificate, Instant now) {
        return identifyClient(certificate == null ? null : ClientCertificate.of(certificate), now);
    }

    /**
     * Decides which node, if any, a client certificate authenticates, from what was read of it already.
     *
     * @param presented the client's leaf certificate, read, or null when the client presented none
     * @param now the time to check validity against
     * @return the identification, with a reason when it is not a known node
     */
    public Identification identifyClient(ClientCertificate presented, Instant now) {
        if (presented == null) {
            return new Identification.Anonymous(Identification.Reason.NO_CERTIFICATE,
                    "no client certificate was presented (use the agent's certificate and key)");
        }
        if (now.isBefore(presented.notBefore())) {
            return new Identification.Anonymous(Identification.Reason.CERTIFICATE_NOT_YET_VALID,
                    "the client certificate is not valid before " + presented.notBefore());
        }
        if (now.isAfter(presented.notAfter())) {
            return new Identification.Anonymous(Identification.Reason.CERTIFICATE_EXPIRED,
                    "the client certificate expired on " + presented.notAfter());
        }
        if (presented.uidProblem() != null) {
            return new Identification.Anonymous(Identification.Reason.INVALID_UID, presented.uidProblem());
        }
        if (presented.uid() == null) {
            return new Identification.Anonymous(Identification.Reason.CERTIFICATE_WITHOUT_UID,
                    "the client certificate subject '" + presented.certificate().getSubjectX500Principal().getName()
                            + "' has no UID attribute");
        }
        NodeId uid;
        try {
            uid = new NodeId(presented.uid());
        } catch (IllegalArgumentException e) {
            return new Identification.Anonymous(Identification.Reason.INVALID_UID,
                    "the client certificate UID is not a node id: " + e.getMessage());
        }
        KeyHash sha256 = presented.sha256();
        Set<NodeId> bySha256 = pins.getOrDefault(sha256, Set.of());
        Set<NodeId> bySha512 = pins.getOrDefault(presented.sha512(), Set.of());
        if (bySha256.isEmpty() && bySha512.isEmpty()) {
            return new Identification.Anonymous(Identification.Reason.UNKNOWN_KEY,
                    "key " + sha256 + " (certificate UID " + uid + ") is not known to this server");
        }
        if (!bySha256.contains(uid) && !bySha512.contains(uid)) {
            Set<NodeId> owners = new TreeSet<>(bySha256);
            owners.addAll(bySha512);
            return new Identification.Anonymous(Identification.Reason.KEY_NOT_FOR_UID,
                    "key " + sha256 + " is pinned for node " + owners.iterator().next()
                            + ", not for the certificate UID " + uid);
        }
        return new Identification.Authenticated(uid, sha256);
    }
}
