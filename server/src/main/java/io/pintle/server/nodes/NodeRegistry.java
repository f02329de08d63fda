package io.pintle.server.nodes;

import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PublicKey;
import java.security.cert.X509Certificate;
import java.security.spec.X509EncodedKeySpec;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.bouncycastle.asn1.x509.SubjectPublicKeyInfo;

/**
 * The nodes this server knows and the keys pinned for each, from {@code nodeslist.json} ({@code key-hash}) and
 * from the certificate bundles ({@code [nodes] certificates}: key of a certificate whose subject UID names the
 * node). Immutable.
 *
 * <p><b>Identity rule.</b> A client certificate authenticates node N when its subject UID is N and every input
 * that is configured pins its key for N:
 * <ul>
 *   <li>{@code nodeslist.json} lists N (it is always configured: a node it does not list is unknown, whatever a
 *       bundle still holds), and when N's entry has a {@code key-hash}, it is this key;</li>
 *   <li>when certificate bundles are configured, one of them holds a certificate of N with this key.</li>
 * </ul>
 * Rudder writes {@code nodeslist.json} and {@code nodescerts.pem} one after the other, each by a rename, so a
 * reload can land between the two: a node just removed, added or re-keyed in one file and not yet in the other is
 * then refused until both agree, never accepted on the word of one. An entry whose {@code key-hash} is missing or
 * malformed (relayd ignores such hashes) leaves the key to the bundles; without a bundle configured, such a node
 * has no pinned key and is refused. A certificate is otherwise accepted whatever its issuer (Rudder agents use
 * self-signed certificates); its validity dates are checked.
 *
 * <p>Building is linear in the number of pins, also when thousands of nodes share one key (cloned machines keep
 * their template's agent key).
 */
public final class NodeRegistry {
    /** OID of RSA keys ({@code rsaEncryption}, RFC 8017). */
    private static final String RSA_OID = "1.2.840.113549.1.1.1";
    /** OID of EC keys ({@code id-ecPublicKey}, RFC 5480). */
    private static final String EC_OID = "1.2.840.10045.2.1";

    private final Map<NodeId, Node> nodes;
    /**
     * Keys pinned by the certificate bundles, per node, each with the certificate binding that pins it (which holds
     * the key itself, for {@link #certifiedKeys}); null when no bundle is configured.
     */
    private final Map<NodeId, Map<KeyHash, CertificateBinding>> certified;
    /** Every key either input pins, with the nodes it is pinned for: for counts, {@link #isPinned} and messages. */
    private final Map<KeyHash, Set<NodeId>> owners;
    /** Whether any input pins a sha512 key hash: only then is a client's key hashed with sha512. */
    private final boolean sha512Pins;

    private NodeRegistry(Map<NodeId, Node> nodes, Map<NodeId, Map<KeyHash, CertificateBinding>> certified,
            Map<KeyHash, Set<NodeId>> owners) {
        // Built by of() into collections nobody else holds, and never changed after: wrapping is enough.
        this.nodes = Collections.unmodifiableMap(nodes);
        this.certified = certified == null ? null : Collections.unmodifiableMap(certified);
        this.owners = Collections.unmodifiableMap(owners);
        this.sha512Pins = owners.keySet().stream().anyMatch(key -> key.algorithm().equals("sha512"));
    }

    /**
     * A registry over {@code nodeslist.json} and configured certificate bundles: both must pin a node's key.
     *
     * @param nodes entries of {@code nodeslist.json}
     * @param certificates what the configured bundles pin (possibly nothing); certificates without a valid UID
     *     must have been filtered out
     * @return the registry
     */
    public static NodeRegistry of(Collection<Node> nodes, Collection<CertificateBinding> certificates) {
        return build(nodes, certificates);
    }

    /**
     * A registry over {@code nodeslist.json} alone, for a configuration that names no certificate bundle
     * ({@code [nodes] certificates = []}): an entry's {@code key-hash} is its only pin.
     *
     * @param nodes entries of {@code nodeslist.json}
     * @return the registry
     */
    public static NodeRegistry of(Collection<Node> nodes) {
        return build(nodes, null);
    }

    private static NodeRegistry build(Collection<Node> nodes, Collection<CertificateBinding> certificates) {
        Map<NodeId, Node> byId = new HashMap<>(capacity(nodes.size()));
        Map<KeyHash, Set<NodeId>> owners = new HashMap<>();
        for (Node node : nodes) {
            byId.put(node.id(), node);
            node.keyHash().ifPresent(key -> pin(owners, key, node.id()));
        }
        Map<NodeId, Map<KeyHash, CertificateBinding>> certified = null;
        if (certificates != null) {
            certified = new HashMap<>(capacity(certificates.size()));
            for (CertificateBinding binding : certificates) {
                // Usually one key per node; two while a re-keyed node's old and new certificates are both there.
                // The binding itself is kept, not a copy of its key: the bundle's index holds the same objects.
                certified.computeIfAbsent(binding.node(), id -> new HashMap<>(2)).putIfAbsent(binding.key(), binding);
                pin(owners, binding.key(), binding.node());
            }
        }
        return new NodeRegistry(byId, certified, owners);
    }

    /**
     * Adds an owner to a key, in place: the sets are private to the registry being built and never change after,
     * so a key shared by N nodes costs N insertions, not N copies of a growing set.
     */
    private static void pin(Map<KeyHash, Set<NodeId>> owners, KeyHash key, NodeId node) {
        owners.computeIfAbsent(key, k -> new HashSet<>(2)).add(node);
    }

    private static int capacity(int entries) {
        return (int) Math.min(Integer.MAX_VALUE, entries * 4L / 3 + 1);
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

    /** @return the number of distinct keys pinned by either input */
    public int pinCount() {
        return owners.size();
    }

    /** @return whether certificate bundles are configured, so that a node's key must be in one of them too */
    public boolean certificatesConfigured() {
        return certified != null;
    }

    /**
     * Nodes the identity rule refuses because the inputs do not agree on them: listed in {@code nodeslist.json}
     * without a certificate in the bundles (or with a sha256 key-hash no certificate of theirs has), or in a bundle
     * and not listed. Zero without a bundle configured. A few for a moment while Rudder writes the two files; more,
     * or for long, is a configuration to look at. A scan of the registry, for reload and check-config reports.
     *
     * @return how many node ids the inputs disagree on
     */
    public int disagreements() {
        if (certified == null) {
            return 0;
        }
        int count = 0;
        for (Node node : nodes.values()) {
            Map<KeyHash, CertificateBinding> keys = certified.get(node.id());
            Optional<KeyHash> listed = node.keyHash();
            // A sha512 key-hash cannot be compared with the bundles' sha256 pins without the key: not counted.
            if (keys == null || (listed.isPresent() && listed.get().algorithm().equals("sha256")
                    && !keys.containsKey(listed.get()))) {
                count++;
            }
        }
        for (NodeId id : certified.keySet()) {
            if (!nodes.containsKey(id)) {
                count++;
            }
        }
        return count;
    }

    /**
     * @param key a key pin
     * @return the nodes either input pins it for (unmodifiable; empty when none)
     */
    public Set<NodeId> owners(KeyHash key) {
        Set<NodeId> set = owners.get(key);
        return set == null ? Set.of() : Collections.unmodifiableSet(set);
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
     * @param relay another node (a relay)
     * @return whether {@code node} is {@code relay} or below it, following the {@code policy-server} links up (at
     *     most 20 hops, as remote runs are routed)
     */
    public boolean isWithin(NodeId node, NodeId relay) {
        NodeId at = node;
        for (int hop = 0; hop <= 20 && at != null; hop++) {
            if (at.equals(relay)) {
                return true;
            }
            Node entry = nodes.get(at);
            NodeId up = entry == null ? null : entry.policyServer();
            at = up == null || up.equals(at) ? null : up;
        }
        return false;
    }

    /**
     * Whether either input pins the key for the node. This is not the identity rule (see
     * {@link #identifyClient}): a signed shared file may come from any node below this server, whose certificate
     * only its own relay's bundle holds, so callers check the node is listed and this, as relayd does.
     *
     * @param node a node
     * @param key a key pin
     * @return whether the key is pinned for that node (by {@code nodeslist.json} or a node certificate)
     */
    public boolean isPinned(NodeId node, KeyHash key) {
        Set<NodeId> set = owners.get(key);
        return set != null && set.contains(node);
    }

    /**
     * @param node a node
     * @return every key pinned for it (its {@code nodeslist.json} {@code key-hash} and the keys of its
     *     certificates in the bundles), in a stable order
     */
    public Set<KeyHash> pinsOf(NodeId node) {
        Set<KeyHash> keys = new TreeSet<>(Comparator.comparing(KeyHash::toString));
        Node entry = nodes.get(node);
        if (entry != null) {
            entry.keyHash().ifPresent(keys::add);
        }
        if (certified != null) {
            keys.addAll(certified.getOrDefault(node, Map.of()).keySet());
        }
        return keys;
    }

    /**
     * The public keys of a node's certificates in the configured bundles, to check what it signs (run reports,
     * inventories) as relayd and Rudder's webapp do. Only the bundles count: a {@code nodeslist.json} key-hash is
     * a digest, not a key.
     *
     * @param node a node
     * @return its certified keys (RSA or EC), decoded anew on each call, in a stable order; empty when it has no
     *     certificate in the bundles or no bundle is configured
     */
    public List<PublicKey> certifiedKeys(NodeId node) {
        Map<KeyHash, CertificateBinding> bindings = certified == null ? null : certified.get(node);
        if (bindings == null) {
            return List.of();
        }
        List<PublicKey> keys = new ArrayList<>(bindings.size());
        bindings.entrySet().stream()
                .sorted(Map.Entry.comparingByKey(Comparator.comparing(KeyHash::toString)))
                .forEach(entry -> decode(entry.getValue().publicKeyShared()).ifPresent(keys::add));
        return List.copyOf(keys);
    }

    /**
     * @param subjectPublicKeyInfo a key as a certificate carries it
     * @return the key, or empty when it is neither RSA nor EC (a certificate parsed by the JDK always decodes)
     */
    private static Optional<PublicKey> decode(byte[] subjectPublicKeyInfo) {
        try {
            String oid = SubjectPublicKeyInfo.getInstance(subjectPublicKeyInfo).getAlgorithm().getAlgorithm().getId();
            String algorithm = switch (oid) {
                case RSA_OID -> "RSA";
                case EC_OID -> "EC";
                default -> null;
            };
            if (algorithm == null) {
                return Optional.empty();
            }
            return Optional.of(KeyFactory.getInstance(algorithm)
                    .generatePublic(new X509EncodedKeySpec(subjectPublicKeyInfo)));
        } catch (GeneralSecurityException | IllegalArgumentException e) {
            return Optional.empty();
        }
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
     * Decides which node, if any, a client certificate authenticates, from what was read of it already, by the
     * identity rule of this class.
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
        Identification.Anonymous outside = presented.outsideValidity(now);
        if (outside != null) {
            return outside;
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
        KeyHash sha512 = sha512Pins ? presented.sha512() : null;
        Set<NodeId> bySha256 = owners.getOrDefault(sha256, Set.of());
        Set<NodeId> bySha512 = sha512 != null ? owners.getOrDefault(sha512, Set.of()) : Set.of();
        if (bySha256.isEmpty() && bySha512.isEmpty()) {
            return new Identification.Anonymous(Identification.Reason.UNKNOWN_KEY,
                    "key " + sha256 + " (certificate UID " + uid + ") is not known to this server");
        }
        if (!bySha256.contains(uid) && !bySha512.contains(uid)) {
            return new Identification.Anonymous(Identification.Reason.KEY_NOT_FOR_UID,
                    "key " + sha256 + " is pinned for node " + firstOwner(bySha256, bySha512)
                            + ", not for the certificate UID " + uid);
        }
        Node entry = nodes.get(uid);
        if (entry == null) {
            return new Identification.Anonymous(Identification.Reason.NODE_NOT_LISTED,
                    "node " + uid + " is not in nodeslist.json; a certificate in a node certificate bundle is not "
                            + "enough (both must name the node)");
        }
        if (entry.keyHash().isPresent() && !entry.keyHash().get().equals(sha256)
                && !entry.keyHash().get().equals(sha512)) {
            return new Identification.Anonymous(Identification.Reason.PINS_DISAGREE,
                    "key " + sha256 + " of node " + uid + " is not its key-hash in nodeslist.json ("
                            + entry.keyHash().get() + "); both nodeslist.json and the node certificates must pin it");
        }
        if (certified != null) {
            Map<KeyHash, CertificateBinding> keys = certified.getOrDefault(uid, Map.of());
            if (!keys.containsKey(sha256) && (sha512 == null || !keys.containsKey(sha512))) {
                return new Identification.Anonymous(Identification.Reason.PINS_DISAGREE,
                        "key " + sha256 + " of node " + uid + " is in nodeslist.json but no certificate of " + uid
                                + " with that key is in the node certificates ([nodes] certificates); both must pin it");
            }
        }
        return new Identification.Authenticated(uid, sha256);
    }

    private static NodeId firstOwner(Set<NodeId> bySha256, Set<NodeId> bySha512) {
        // The smallest id, so that the message does not depend on hash order.
        NodeId first = null;
        for (Set<NodeId> set : List.of(bySha256, bySha512)) {
            for (NodeId id : set) {
                if (first == null || id.compareTo(first) < 0) {
                    first = id;
                }
            }
        }
        return first;
    }
}
