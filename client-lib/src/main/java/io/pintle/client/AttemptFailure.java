package io.pintle.client;

import java.time.Duration;

/**
 * A sync attempt failed in a way that a fresh attempt, from a new manifest, may not: the server's tree changed
 * under the download (size or SHA-256 not the manifest's, a file gone, an archive of another version), the
 * connection broke, or the server was overloaded. Never for a refused manifest or a local error.
 */
final class AttemptFailure extends Exception {
    private static final long serialVersionUID = 1L;

    private final transient Duration retryAfter;

    /**
     * @param message what failed
     * @param cause the underlying error, or null
     */
    AttemptFailure(String message, Throwable cause) {
        this(message, cause, Duration.ZERO);
    }

    /**
     * @param message what failed
     * @param cause the underlying error, or null
     * @param retryAfter how long the server asked to wait before the next attempt
     */
    AttemptFailure(String message, Throwable cause, Duration retryAfter) {
        super(message, cause);
        this.retryAfter = retryAfter;
    }

    /**
     * @return whether the response's stream failed while it was read (reset, cut, timed out), rather than its
     *     content being refused
     */
    boolean cut() {
        return getCause() instanceof java.io.IOException;
    }

    /** @return how long the server asked to wait (zero when it did not) */
    Duration retryAfter() {
        return retryAfter;
    }
}
