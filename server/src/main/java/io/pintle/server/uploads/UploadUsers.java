package io.pintle.server.uploads;

import java.util.Objects;

/**
 * Who may upload, as of one snapshot: the users of {@code htpasswd-webdav-initial} (new nodes' inventories) and of
 * {@code htpasswd-webdav} (everything else).
 *
 * @param initial the users of {@code /inventories/}
 * @param webdav the users of {@code /inventory-updates/} and {@code /reports/}
 */
public record UploadUsers(Htpasswd initial, Htpasswd webdav) {
    /** Uploads disabled: nobody. */
    public static final UploadUsers NONE = new UploadUsers(Htpasswd.EMPTY, Htpasswd.EMPTY);

    public UploadUsers {
        Objects.requireNonNull(initial);
        Objects.requireNonNull(webdav);
    }

    /**
     * @param kind an upload route
     * @return the users it checks
     */
    public Htpasswd of(UploadKind kind) {
        return kind == UploadKind.INVENTORIES ? initial : webdav;
    }
}
