package io.pintle.server.policy;

import io.pintle.api.dto.Manifest;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;

/**
 * One consistent version of a directory tree: its manifest and, for each entry, the stat it was built from (so
 * that an archive can check that every file it streams is still that version).
 *
 * @param root the directory's real path
 * @param manifest the manifest (entries sorted by path)
 * @param items one per manifest entry, in the same order
 * @param directories every directory of the tree, the root first (what a change watcher must watch)
 */
public record TreeVersion(Path root, Manifest manifest, List<Item> items, List<Path> directories) {
    public TreeVersion {
        Objects.requireNonNull(root);
        Objects.requireNonNull(manifest);
        items = List.copyOf(items);
        directories = List.copyOf(directories);
    }

    /** @return the strong ETag, quoted */
    public String etag() {
        return manifest.etag();
    }

    /**
     * One entry and where it is.
     *
     * @param entry the manifest entry
     * @param stat the stat it was built from
     */
    public record Item(Manifest.Entry entry, FileStat stat) {
        public Item {
            Objects.requireNonNull(entry);
            Objects.requireNonNull(stat);
        }
    }
}
