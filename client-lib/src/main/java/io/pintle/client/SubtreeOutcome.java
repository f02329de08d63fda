package io.pintle.client;

import java.util.Objects;

/**
 * What {@link DirectorySync#syncSubtrees} did with one directory.
 *
 * @param name the directory's name in its parent
 * @param etag the ETag of the directory's version it now holds (its own manifest's), null when it failed
 * @param changed whether the local directory was replaced
 * @param filesDownloaded files written from the archive
 * @param bytesDownloaded their bytes
 * @param failure why it failed, null when it did not; the local directory is then as it was
 * @param stale whether it failed because the server's copy is no longer the manifest's (it changed since): a next
 *     manifest fixes it
 */
public record SubtreeOutcome(String name, String etag, boolean changed, int filesDownloaded, long bytesDownloaded,
        String failure, boolean stale) {
    public SubtreeOutcome {
        Objects.requireNonNull(name, "name");
        if ((etag == null) == (failure == null)) {
            throw new IllegalArgumentException("an outcome has either an etag or a failure");
        }
    }

    /** @return whether the directory now holds the manifest's version */
    public boolean ok() {
        return failure == null;
    }

    static SubtreeOutcome done(String name, String etag, boolean changed, int files, long bytes) {
        return new SubtreeOutcome(name, etag, changed, files, bytes, null, false);
    }

    static SubtreeOutcome failed(String name, String failure, boolean stale) {
        return new SubtreeOutcome(name, null, false, 0, 0, failure, stale);
    }
}
