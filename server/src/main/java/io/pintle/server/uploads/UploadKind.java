package io.pintle.server.uploads;

import java.util.Locale;

/**
 * The three upload routes of Rudder's node-facing vhost, each with its directory and its password file (see
 * {@code [uploads]} in the configuration).
 */
public enum UploadKind {
    /** {@code PUT /inventories/<name>}: a new node's inventory, with the initial password ({@code htpasswd-webdav-initial}). */
    INVENTORIES("/inventories/"),
    /** {@code PUT /inventory-updates/<name>}: an accepted node's inventory ({@code htpasswd-webdav}). */
    INVENTORY_UPDATES("/inventory-updates/"),
    /** {@code PUT /reports/<name>}: a run report ({@code htpasswd-webdav}). */
    REPORTS("/reports/");

    private final String prefix;
    private final String label = name().toLowerCase(Locale.ROOT).replace('_', '-');

    UploadKind(String prefix) {
        this.prefix = prefix;
    }

    /** @return its URL prefix, with both slashes ({@code /reports/}) */
    public String prefix() {
        return prefix;
    }

    /** @return its name in metrics, status and logs ({@code inventories}, {@code inventory-updates}, {@code reports}) */
    public String label() {
        return label;
    }
}
