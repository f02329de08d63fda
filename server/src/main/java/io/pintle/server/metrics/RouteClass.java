package io.pintle.server.metrics;

import java.util.Locale;

/**
 * The fixed set of route classes requests are counted under: a label with a handful of values, never the raw
 * path (which would put node ids and file names in the metrics). The HTTP layer's route table says which class
 * each route is counted under.
 */
public enum RouteClass {
    /** {@code /policies/...} on the TLS listener. */
    POLICIES,
    /** {@code /common/...} on the TLS listener. */
    COMMON,
    /** relayd's {@code shared-folder/...} on the TLS listener (Apache's unversioned prefix). */
    SHARED_FOLDER,
    /** relayd's {@code shared-files/...} on the TLS listener (Apache's unversioned prefix). */
    SHARED_FILES,
    /** relayd's {@code remote-run/...} on the TLS listener (Apache's unversioned prefix). */
    REMOTE_RUN,
    /** {@code PUT /inventories/...} on the TLS listener: new nodes' inventories. */
    INVENTORIES,
    /** {@code PUT /inventory-updates/...} on the TLS listener: accepted nodes' inventories. */
    INVENTORY_UPDATES,
    /** {@code PUT /reports/...} on the TLS listener: run reports. */
    REPORTS,
    /** {@code /uuid} on the TLS listener. */
    UUID,
    /** {@code /v1/whoami} on the TLS listener. */
    WHOAMI,
    /** {@code /rudder/...} but relayd's API, on the TLS listener: the webapp's, proxied when configured. */
    WEBAPP,
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
}
