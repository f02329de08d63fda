package io.pintle.server.policy;

import java.nio.file.Path;
import java.util.List;
import java.util.Objects;

/**
 * One version of a directory tree, as {@link TreeScanner#scan} found it: what a response needs before its body
 * (the ETag, the totals), never the entries themselves, which {@link TreeScanner#replay} hands out again while the
 * body is written.
 *
 * @param root the directory's real path
 * @param etag the manifest's strong ETag, quoted, derived from every field of every entry
 * @param files number of regular files
 * @param bytes total size of the regular files
 * @param directories every directory of the tree, the root first (what a change watcher must watch)
 */
public record TreeVersion(Path root, String etag, int files, long bytes, List<Path> directories) {
    public TreeVersion {
        Objects.requireNonNull(root);
        Objects.requireNonNull(etag);
        directories = List.copyOf(directories);
    }
}
