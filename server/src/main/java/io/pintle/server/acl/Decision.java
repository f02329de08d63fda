package io.pintle.server.acl;

import java.util.Objects;

/** The outcome of an access check. */
public sealed interface Decision {

    /**
     * Access granted.
     *
     * @param rule which rule allowed it, for the access log
     */
    record Allow(String rule) implements Decision {}

    /**
     * Access denied.
     *
     * @param reason a stable code ({@code network-not-allowed}, {@code uid-mismatch}, ...)
     * @param detail why, in words an operator can act on; never says whether the path exists
     * @param realm for a refusal that credentials would lift (HTTP Basic), the realm to ask them for (401 with
     *     {@code WWW-Authenticate}); null otherwise
     * @param absent whether the request names nothing that exists (a malformed node id, a server that takes no
     *     uploads): answered 404, as a missing file is, not 403
     */
    record Deny(String reason, String detail, String realm, boolean absent) implements Decision {
        public Deny {
            Objects.requireNonNull(reason);
            Objects.requireNonNull(detail);
        }

        /**
         * A refusal credentials would lift (401).
         *
         * @param reason a stable code
         * @param detail why
         * @param realm the realm to ask them for, or null for a 403
         */
        public Deny(String reason, String detail, String realm) {
            this(reason, detail, realm, false);
        }

        /**
         * A request that names nothing there is (404).
         *
         * @param reason a stable code
         * @param detail why, as the client reads it
         * @return the refusal
         */
        public static Deny absent(String reason, String detail) {
            return new Deny(reason, detail, null, true);
        }

        /**
         * A refusal credentials would not lift (403).
         *
         * @param reason a stable code
         * @param detail why
         */
        public Deny(String reason, String detail) {
            this(reason, detail, null);
        }
    }
}
