package io.pintle.server.metrics;

import io.pintle.api.Routes;
import java.util.Locale;

/**
 * The fixed set of route classes requests are counted under: a label with a handful of values, never the raw
 * path (which would put node ids and file names in the metrics).
 */
public enum RouteClass {
    /** {@code /policies/...} on the TLS listener. */
    POLICIES,
    /** {@code /common/...} on the TLS listener. */
    COMMON,
    /** relayd's {@code shared-folder/...} on the TLS listener (both prefixes). */
    SHARED_FOLDER,
    /** relayd's {@code shared-files/...} on the TLS listener (both prefixes). */
    SHARED_FILES,
    /** relayd's {@code remote-run/...} on the TLS listener (both prefixes). */
    REMOTE_RUN,
    /** {@code /uuid} on the TLS listener. */
    UUID,
    /** {@code /v1/whoami} on the TLS listener. */
    WHOAMI,
    /** relayd's {@code /rudder/relay-api/...} on the admin listener. */
    SYSTEM,
    /** {@code /v1/status} on the admin listener. */
    STATUS,
    /** {@code /health} and {@code /ready} on the admin listener. */
    HEALTH,
    /** {@code /metrics} on the admin listener. */
    METRICS,
    /** Anything else: unknown routes, and requests Jetty refused before they had a usable path. */
    OTHER;

    private final String label = name().toLowerCase(Locale.ROOT);

    /** @return the label value */
    public String label() {
        return label;
    }

    /**
     * @param admin whether the request came in on the admin listener
     * @param path the request path (raw), or null
     * @return its class; a node-facing prefix on the admin listener (and the reverse) is {@link #OTHER}
     */
    public static RouteClass of(boolean admin, String path) {
        if (path == null) {
            return OTHER;
        }
        if (admin) {
            if (path.startsWith("/rudder/relay-api/")) {
                return SYSTEM;
            }
            return switch (path) {
                case "/v1/status" -> STATUS;
                case "/health", "/ready" -> HEALTH;
                case "/metrics" -> METRICS;
                default -> OTHER;
            };
        }
        if (path.startsWith(Routes.POLICIES + "/")) {
            return POLICIES;
        }
        if (path.startsWith(Routes.COMMON + "/")) {
            return COMMON;
        }
        if (path.startsWith(Routes.RELAY_API + Routes.SHARED_FOLDER + "/")
                || path.startsWith(Routes.RELAY_API_ALIAS + Routes.SHARED_FOLDER + "/")) {
            return SHARED_FOLDER;
        }
        if (path.startsWith(Routes.RELAY_API + Routes.SHARED_FILES + "/")
                || path.startsWith(Routes.RELAY_API_ALIAS + Routes.SHARED_FILES + "/")) {
            return SHARED_FILES;
        }
        if (path.startsWith(Routes.RELAY_API + Routes.REMOTE_RUN + "/")
                || path.startsWith(Routes.RELAY_API_ALIAS + Routes.REMOTE_RUN + "/")) {
            return REMOTE_RUN;
        }
        return switch (path) {
            case Routes.UUID -> UUID;
            case Routes.WHOAMI -> WHOAMI;
            default -> OTHER;
        };
    }
}
