package io.pintle.client;

/**
 * Outcome of a conditional download.
 *
 * @param status 200 when a new version was written, 304 when the local copy is current
 * @param etag the server's ETag for the current version (as sent, with quotes), or null
 * @param bytes bytes written (0 for 304)
 */
public record FetchResult(int status, String etag, long bytes) {
    /** @return whether the local file was replaced */
    public boolean changed() {
        return status == 200;
    }
}
