package io.pintle.client;

import java.util.Objects;

/**
 * Outcome of {@link PintleClient#sync}: the local directory now holds exactly the version {@code etag} names.
 *
 * @param etag the server's ETag of the manifest now applied (quoted, as sent)
 * @param changed whether the local tree was replaced (false when it already was this version)
 * @param filesDownloaded files whose content came from the server
 * @param bytesDownloaded content bytes received: the files downloaded one by one, or every file the archive
 *     carried (uncompressed sizes)
 * @param removed local entries (files, directories, links) gone because the server no longer has them
 * @param requests HTTP requests made, all attempts together ({@code 1} for a no-change check)
 * @param usedArchive whether the content came as one {@code ?view=archive} download rather than file by file
 * @param attempts attempts made (more than one when the server's tree changed during the download)
 */
public record SyncResult(String etag, boolean changed, int filesDownloaded, long bytesDownloaded, int removed,
        int requests, boolean usedArchive, int attempts) {
    public SyncResult {
        Objects.requireNonNull(etag, "etag");
        if (filesDownloaded < 0 || bytesDownloaded < 0 || removed < 0) {
            throw new IllegalArgumentException("negative count in a sync result");
        }
        if (requests < 1 || attempts < 1) {
            throw new IllegalArgumentException("a sync makes at least one request, in at least one attempt");
        }
    }
}
