package io.pintle.server.overload;

import java.util.Locale;

/**
 * The classes of node-facing work, each with its own workers and queue, so that a flood of one (downloads) never
 * starves another. A new kind of route (manifests and archives, remote run, change waits) adds a constant here,
 * its {@code [limits.<class>]} table in the configuration, and its routes in the HTTP layer's classifier
 * ({@code http.edge.OverloadHandler}).
 */
public enum WorkClass {
    /** File downloads: {@code /policies/...}, {@code /common/...}, relayd's shared folder and shared files. */
    FILES,
    /** Every other node-facing route: small JSON or text answers ({@code /uuid}, {@code /v1/whoami}, 404s). */
    API,
    /**
     * Request bodies a client sends (relayd's shared-files {@code PUT}): their own workers, so that clients
     * trickling bodies never take a download's worker.
     */
    UPLOADS,
    /**
     * Requests proxied to the webapp ({@code /rudder/...} on a root): their own slots and queue, so that a slow
     * webapp never takes a download's worker. They hold no thread while the webapp thinks (the proxy is
     * asynchronous); the slots bound what is sent to it at once.
     */
    WEBAPP;

    private final String label = name().toLowerCase(Locale.ROOT);

    /** @return the metric label and configuration table name */
    public String label() {
        return label;
    }
}
