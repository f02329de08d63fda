package io.pintle.server.nodes;

import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * How a client certificate authenticates a node, as of one load: Rudder's two trust modes, one or both ({@code
 * [nodes] authentication}), and what revokes certificates in either. Immutable.
 *
 * <ul>
 *   <li><b>cert_pinning</b> (Rudder's default): the certificate's key is pinned for the node its subject UID
 *       names (see {@link NodeRegistry}).</li>
 *   <li><b>cert_validation</b> (Rudder's {@code rudder.server.certificate.validation}): the chain the client
 *       sends leads to a root of the CA bundle through valid CA certificates within the depth ({@link CaTrust}),
 *       nothing revokes it ({@link Revocations}), an id rule reads a node id in it ({@link IdRule}), and {@code
 *       nodeslist.json} lists that node (so that deleting a node still refuses its next request).</li>
 * </ul>
 *
 * <p>With both on (a migration), a request is admitted by whichever mode authenticates the certificate, and says
 * which ({@link Identification.Authenticated#via()}); a pinned key whose certificate the CA signed is still refused
 * when a CRL revokes that certificate. When neither mode authenticates it, the refusal is the pinning one for a
 * self-issued certificate (a Rudder agent certificate) and the CA one for any other.
 *
 * @param modes the modes on, in {@link Mode} order
 * @param ca the CA bundle, or null when cert_validation is off
 * @param idRules where cert_validation reads the node id, tried in order
 * @param revocations CRLs and denied keys
 */
public record NodeTrust(List<Mode> modes, CaTrust ca, List<IdRule> idRules, Revocations revocations) {
    /** Rudder's default: pinning only, nothing revoked. */
    public static final NodeTrust PINNING = new NodeTrust(List.of(Mode.CERT_PINNING), null, List.of(IdRule.UID),
            Revocations.NONE);

    public NodeTrust {
        modes = List.copyOf(modes);
        idRules = List.copyOf(idRules);
        Objects.requireNonNull(revocations);
        if (modes.isEmpty()) {
            throw new IllegalArgumentException("at least one trust mode");
        }
        if (modes.contains(Mode.CERT_VALIDATION) != (ca != null)) {
            throw new IllegalArgumentException("a CA bundle goes with cert_validation, and only then");
        }
        if (idRules.isEmpty()) {
            throw new IllegalArgumentException("at least one id rule");
        }
    }

    /** Rudder's trust modes, with Rudder's names (relayd's {@code peer_authentication}). */
    public enum Mode {
        /** Keys pinned by {@code nodeslist.json} and the node certificate bundles. */
        CERT_PINNING,
        /** Chains verified against the organisation's CA. */
        CERT_VALIDATION;

        /** @return its name in the configuration and the access log */
        public String text() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** @return whether pinned keys authenticate nodes */
    public boolean pinning() {
        return modes.contains(Mode.CERT_PINNING);
    }

    /** @return whether CA-signed certificates authenticate nodes */
    public boolean validation() {
        return ca != null;
    }

    /**
     * Decides which node, if any, a client certificate authenticates.
     *
     * @param registry the snapshot's nodes
     * @param presented the client's certificate, read, or null when it sent none
     * @param now the time to check validity against
     * @return the identification, with a reason when it is not a known node
     */
    public Identification identify(NodeRegistry registry, ClientCertificate presented, Instant now) {
        if (presented == null) {
            return new Identification.Anonymous(Identification.Reason.NO_CERTIFICATE,
                    "no client certificate was presented (use the agent's certificate and key"
                            + (validation() ? ": agent-http.cert and agent-http.key in certificate-validation mode"
                                    : "") + ")");
        }
        String denied = revocations.deniedKey(presented);
        if (denied != null) {
            return new Identification.Anonymous(Identification.Reason.REVOKED, denied);
        }
        Identification pinned = null;
        if (pinning()) {
            pinned = registry.identifyClient(presented, now);
            if (!validation()) {
                return pinned;
            }
            if (pinned instanceof Identification.Authenticated) {
                // A key both pinned and certified by the CA: the CA's revocations hold in both modes.
                String revoked = selfIssued(presented) ? null : revokedChain(presented, now);
                return revoked == null ? pinned
                        : new Identification.Anonymous(Identification.Reason.REVOKED, revoked);
            }
        }
        Identification validated = validate(registry, presented, now);
        if (pinned == null || validated instanceof Identification.Authenticated) {
            return validated;
        }
        return selfIssued(presented) ? pinned : validated;
    }

    /** @return whether the certificate is its own issuer, as a Rudder agent's self-signed certificate is */
    private static boolean selfIssued(ClientCertificate presented) {
        X509Certificate leaf = presented.certificate();
        return leaf.getSubjectX500Principal().equals(leaf.getIssuerX500Principal());
    }

    /** @return why the certificate's verified chain is revoked, or null when it does not verify or is not revoked */
    private String revokedChain(ClientCertificate presented, Instant now) {
        return presented.verified(ca, now) instanceof CaTrust.Valid valid ? revocations.revoked(valid.path()) : null;
    }

    private Identification validate(NodeRegistry registry, ClientCertificate presented, Instant now) {
        Identification.Anonymous outside = presented.outsideValidity(now);
        if (outside != null) {
            return outside;
        }
        CaTrust.Verdict verdict = presented.verified(ca, now);
        if (verdict instanceof CaTrust.Invalid invalid) {
            return new Identification.Anonymous(invalid.reason(), invalid.detail());
        }
        CaTrust.Valid valid = (CaTrust.Valid) verdict;
        // Verified once per connection: a CA above the client's may expire while it stays open.
        if (now.isAfter(valid.notAfter())) {
            return new Identification.Anonymous(Identification.Reason.CERTIFICATE_EXPIRED,
                    "a CA certificate above the client's expired on " + valid.notAfter());
        }
        if (now.isBefore(valid.notBefore())) {
            return new Identification.Anonymous(Identification.Reason.CERTIFICATE_NOT_YET_VALID,
                    "a CA certificate above the client's is not valid before " + valid.notBefore());
        }
        String revoked = revocations.revoked(valid.path());
        if (revoked != null) {
            return new Identification.Anonymous(Identification.Reason.REVOKED, revoked);
        }
        // The subject (for a refusal of a verified certificate) and the rules' misses are only formatted on refusal:
        // this runs on every request of certificate-validation mode.
        String id = null;
        List<String> misses = null;
        for (IdRule rule : idRules) {
            IdRule.Outcome outcome = rule.read(presented);
            if (outcome.id() != null) {
                id = outcome.id();
                break;
            }
            if (misses == null) {
                misses = new ArrayList<>(idRules.size());
            }
            misses.add(rule.text() + ": " + outcome.problem());
        }
        if (id == null) {
            return new Identification.Anonymous(Identification.Reason.NO_NODE_ID, "the certificate is signed by "
                    + "the CA but no id rule ([nodes] id_rules) finds a node id in it: " + String.join("; ", misses),
                    subject(presented));
        }
        NodeId node;
        try {
            node = new NodeId(id);
        } catch (IllegalArgumentException e) {
            return new Identification.Anonymous(Identification.Reason.INVALID_UID,
                    "the node id read in the certificate is not a node id: " + e.getMessage(), subject(presented));
        }
        if (registry.node(node).isEmpty()) {
            return new Identification.Anonymous(Identification.Reason.NODE_NOT_LISTED, "node " + node + " (certificate "
                    + "signed by the CA) is not in nodeslist.json: not accepted yet, or deleted", subject(presented));
        }
        return new Identification.Authenticated(node, presented.sha256(), Mode.CERT_VALIDATION);
    }

    private static String subject(ClientCertificate presented) {
        return presented.certificate().getSubjectX500Principal().getName();
    }
}
