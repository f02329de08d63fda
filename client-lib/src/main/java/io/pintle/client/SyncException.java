package io.pintle.client;

import java.io.IOException;

/**
 * A sync did not complete, and the local directory is exactly as it was: the manifest was refused (a path or
 * link target that would leave the tree, an unknown entry type...), or every attempt failed (the server's tree
 * kept changing during the download, or the connection kept breaking). The message says which; the cause is the
 * last attempt's failure.
 */
public final class SyncException extends IOException {
    private static final long serialVersionUID = 1L;

    /**
     * @param message what failed
     * @param cause the underlying failure, or null
     */
    public SyncException(String message, Throwable cause) {
        super(message, cause);
    }
}
