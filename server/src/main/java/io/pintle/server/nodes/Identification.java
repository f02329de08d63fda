package io.pintle.server.nodes;

import java.util.Objects;

/** The outcome of matching a client certificate against a {@link NodeRegistry}. */
public sealed interface Identification {

    /**
     * The certificate authenticates a known node: its key is pinned for the node named by its UID, or its chain
     * leads to a trusted CA and its id rule names a listed node.
     *
     * @param node the node
     * @param key the certificate's key pin (sha256)
     * @param via which trust mode admitted it
     */
    record Authenticated(NodeId node, KeyHash key, NodeTrust.Mode via) implements Identification {
        public Authenticated {
            Objects.requireNonNull(node);
            Objects.requireNonNull(key);
            Objects.requireNonNull(via);
        }

        /**
         * @param node the node
         * @param key the certificate's key pin (sha256), pinned for it
         */
        public Authenticated(NodeId node, KeyHash key) {
            this(node, key, NodeTrust.Mode.CERT_PINNING);
        }
    }

    /**
     * The caller authenticates no node.
     *
     * @param reason why, as a stable code
     * @param detail why, in words an operator can act on
     * @param verified when the certificate's chain leads to a trusted CA and nothing revokes it (a node not yet
     *     accepted, whose inventory upload it admits in certificate-validation mode), its subject; else null
     */
    record Anonymous(Reason reason, String detail, String verified) implements Identification {
        public Anonymous {
            Objects.requireNonNull(reason);
            Objects.requireNonNull(detail);
        }

        /**
         * @param reason why, as a stable code
         * @param detail why, in words an operator can act on
         */
        public Anonymous(Reason reason, String detail) {
            this(reason, detail, null);
        }
    }

    /** Why a caller authenticates no node. */
    enum Reason {
        NO_CERTIFICATE("no-certificate"),
        CERTIFICATE_NOT_YET_VALID("certificate-not-yet-valid"),
        CERTIFICATE_EXPIRED("certificate-expired"),
        CERTIFICATE_WITHOUT_UID("certificate-without-uid"),
        INVALID_UID("invalid-uid"),
        UNKNOWN_KEY("unknown-key"),
        KEY_NOT_FOR_UID("key-not-for-uid"),
        /** The key is pinned for the UID by a certificate bundle, but {@code nodeslist.json} does not list it. */
        NODE_NOT_LISTED("node-not-listed"),
        /** One configured input pins the key for the UID and another does not (see {@link NodeRegistry}). */
        PINS_DISAGREE("pins-disagree"),
        /** Certificate-validation mode: the chain does not lead to a CA of the bundle through valid CAs. */
        CERTIFICATE_NOT_TRUSTED("certificate-not-trusted"),
        /** Certificate-validation mode: more CA certificates above the client's than {@code ca_max_depth}. */
        CHAIN_TOO_DEEP("chain-too-deep"),
        /** A CRL lists the certificate or a CA above it, or the deny list names its key. */
        REVOKED("revoked"),
        /** Certificate-validation mode: no id rule finds a node id in the certificate. */
        NO_NODE_ID("no-node-id");

        private final String code;

        Reason(String code) {
            this.code = code;
        }

        /** @return the code used in problem details and logs */
        public String code() {
            return code;
        }
    }
}
