package io.pintle.server.nodes;

import java.util.Objects;

/** The outcome of matching a client certificate against a {@link NodeRegistry}. */
public sealed interface Identification {

    /**
     * The certificate authenticates a known node: its key is pinned for the node named by its UID.
     *
     * @param node the node
     * @param key the certificate's key pin (sha256)
     */
    record Authenticated(NodeId node, KeyHash key) implements Identification {
        public Authenticated {
            Objects.requireNonNull(node);
            Objects.requireNonNull(key);
        }
    }

    /**
     * The caller authenticates no node.
     *
     * @param reason why, as a stable code
     * @param detail why, in words an operator can act on
     */
    record Anonymous(Reason reason, String detail) implements Identification {
        public Anonymous {
            Objects.requireNonNull(reason);
            Objects.requireNonNull(detail);
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
        PINS_DISAGREE("pins-disagree");

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
