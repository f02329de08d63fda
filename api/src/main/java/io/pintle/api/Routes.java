package io.pintle.api;

/**
 * URL prefixes served on the node-facing TLS listener. The first three are Rudder's (they must behave as
 * Rudder's Apache vhost does); the {@code /v1} ones are Pintle's own.
 */
public final class Routes {
    /** {@code /policies/{nodeId}/{path}}: a node's own policies, under {@code {share}/{nodeId}}. */
    public static final String POLICIES = "/policies";

    /** {@code /common/{path}}: the policy library shared by all nodes, under {@code {share}/common}. */
    public static final String COMMON = "/common";

    /** {@code /uuid}: the server's own node id, as plain text. */
    public static final String UUID = "/uuid";

    /** {@code /v1/whoami}: how the server sees the caller; the entry point for debugging with curl. */
    public static final String WHOAMI = "/v1/whoami";

    /** Node ids as Rudder's Apache configuration accepts them in URLs. */
    public static final String NODE_ID_PATTERN = "[a-zA-Z0-9_-]+";

    private Routes() {}
}
