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
     */
    record Deny(String reason, String detail) implements Decision {
        public Deny {
            Objects.requireNonNull(reason);
            Objects.requireNonNull(detail);
        }
    }
}
