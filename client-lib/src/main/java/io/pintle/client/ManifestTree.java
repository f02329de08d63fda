package io.pintle.client;

import io.pintle.api.dto.Manifest;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * A manifest checked as a whole before anything is written, since it comes from the network: every path is a
 * {@link TreePath}; a path appears once; an entry's parent is a directory entry of the manifest (so nothing is
 * ever written through a symbolic link); files have a size and a SHA-256; modes are octal permission bits;
 * mtimes parse; and a symbolic link's target is relative and, resolved inside the tree (through the manifest's
 * other links), never leaves it. A manifest breaking any rule is refused whole, with the rule named.
 */
final class ManifestTree {
    private static final Pattern SHA256 = Pattern.compile("[0-9a-f]{64}");
    private static final Pattern MODE = Pattern.compile("0?[0-7]{3,4}");
    /** As Linux's MAXSYMLINKS: resolving more links than this for one target means a loop. */
    private static final int MAX_LINK_HOPS = 40;

    private final Manifest manifest;
    private final Map<TreePath, Manifest.Entry> entries;
    /** Each entry's mode and mtime as parsed once by {@link #of} (a sync asks for each up to three times). */
    private final Map<TreePath, Metadata> metadata;
    private final long fileBytes;

    /** An entry's permission bits and modification time, each null when the manifest gives none. */
    private record Metadata(Set<PosixFilePermission> permissions, Instant mtime) {}

    private ManifestTree(Manifest manifest, Map<TreePath, Manifest.Entry> entries, Map<TreePath, Metadata> metadata,
            long fileBytes) {
        this.manifest = manifest;
        this.entries = Collections.unmodifiableMap(entries);
        this.metadata = metadata;
        this.fileBytes = fileBytes;
    }

    /**
     * @param manifest a manifest as received
     * @return the checked tree
     * @throws IllegalArgumentException naming the entry and the rule it breaks
     */
    static ManifestTree of(Manifest manifest) {
        if (manifest.etag().isBlank()) {
            throw new IllegalArgumentException("the manifest has no etag");
        }
        Map<TreePath, Manifest.Entry> entries = new LinkedHashMap<>();
        Map<TreePath, Metadata> metadata = new HashMap<>();
        long bytes = 0;
        for (Manifest.Entry entry : manifest.entries()) {
            TreePath path = new TreePath(entry.path());
            if (entries.putIfAbsent(path, entry) != null) {
                throw new IllegalArgumentException("entry '" + path + "' appears twice");
            }
            if (entry.isFile()) {
                if (entry.size() == null || entry.size() < 0) {
                    throw new IllegalArgumentException("file '" + path + "' has no valid size");
                }
                if (entry.sha256() == null || !SHA256.matcher(entry.sha256()).matches()) {
                    throw new IllegalArgumentException("file '" + path + "' has no valid sha256");
                }
                bytes += entry.size();
            } else if (entry.isSymlink()) {
                if (entry.target() == null || entry.target().isEmpty()) {
                    throw new IllegalArgumentException("symbolic link '" + path + "' has no target");
                }
            } else if (!entry.isDirectory()) {
                throw new IllegalArgumentException(
                        "entry '" + path + "' has unknown type '" + TreePath.printable(entry.type()) + "'");
            }
            if (entry.mode() != null && !MODE.matcher(entry.mode()).matches()) {
                throw new IllegalArgumentException("entry '" + path + "' has an invalid mode '"
                        + TreePath.printable(entry.mode()) + "'");
            }
            Instant mtime = null;
            if (entry.mtime() != null) {
                try {
                    mtime = Instant.parse(entry.mtime());
                } catch (DateTimeParseException e) {
                    throw new IllegalArgumentException("entry '" + path + "' has an invalid mtime '"
                            + TreePath.printable(entry.mtime()) + "'", e);
                }
            }
            Set<PosixFilePermission> permissions = permissions(entry);
            metadata.put(path, new Metadata(permissions == null ? null : Collections.unmodifiableSet(permissions),
                    mtime));
        }
        for (TreePath path : entries.keySet()) {
            TreePath parent = path.parent();
            if (parent != null) {
                Manifest.Entry parentEntry = entries.get(parent);
                if (parentEntry == null || !parentEntry.isDirectory()) {
                    throw new IllegalArgumentException("entry '" + path + "' is not inside a directory entry");
                }
            }
        }
        for (Map.Entry<TreePath, Manifest.Entry> link : entries.entrySet()) {
            if (link.getValue().isSymlink()) {
                checkTarget(entries, link.getKey(), link.getValue().target());
            }
        }
        return new ManifestTree(manifest, entries, metadata, bytes);
    }

    /**
     * Refuses a link target that is absolute or that, resolved from the link's directory, leaves the tree. The
     * resolution is lexical except that a link of the manifest met along the way is followed, because
     * {@code a -> .} then {@code b -> a/..} looks inside lexically but is the tree's parent once {@code a} is
     * followed.
     */
    private static void checkTarget(Map<TreePath, Manifest.Entry> entries, TreePath link, String target) {
        if (target.startsWith("/")) {
            throw new IllegalArgumentException("symbolic link '" + link + "' has an absolute target");
        }
        if (target.indexOf('\0') >= 0) {
            throw new IllegalArgumentException("symbolic link '" + link + "' has a NUL in its target");
        }
        Deque<String> start = new ArrayDeque<>(link.segments());
        start.removeLast();
        if (resolve(entries, start, target, 0) == null) {
            throw new IllegalArgumentException(
                    "symbolic link '" + link + "' -> '" + TreePath.printable(target) + "' leaves the tree");
        }
    }

    /** @return the resolved segments, or null when the target leaves the tree */
    private static Deque<String> resolve(
            Map<TreePath, Manifest.Entry> entries, Deque<String> directory, String target, int hops) {
        if (hops > MAX_LINK_HOPS || target.startsWith("/")) {
            return null;
        }
        Deque<String> at = new ArrayDeque<>(directory);
        String[] segments = target.split("/");
        for (int i = 0; i < segments.length; i++) {
            String segment = segments[i];
            if (segment.isEmpty() || segment.equals(".")) {
                continue;
            }
            if (segment.equals("..")) {
                if (at.isEmpty()) {
                    return null;
                }
                at.removeLast();
                continue;
            }
            at.addLast(segment);
            Manifest.Entry entry = entries.get(treePath(at));
            if (entry != null && entry.isSymlink() && i < segments.length - 1) {
                Deque<String> linkDirectory = new ArrayDeque<>(at);
                linkDirectory.removeLast();
                at = resolve(entries, linkDirectory, entry.target(), hops + 1);
                if (at == null) {
                    return null;
                }
            }
        }
        return at;
    }

    private static TreePath treePath(Deque<String> segments) {
        try {
            return new TreePath(String.join("/", segments));
        } catch (IllegalArgumentException notAnEntryName) {
            return null;
        }
    }

    /** @return the manifest as received */
    Manifest manifest() {
        return manifest;
    }

    /** @return the manifest's etag */
    String etag() {
        return manifest.etag();
    }

    /** @return every entry by path, in manifest order */
    Map<TreePath, Manifest.Entry> entries() {
        return entries;
    }

    /** @return the total size of the regular files */
    long fileBytes() {
        return fileBytes;
    }

    /** @return the directory entries, parents before children */
    List<TreePath> directories() {
        List<TreePath> directories = new ArrayList<>();
        entries.forEach((path, entry) -> {
            if (entry.isDirectory()) {
                directories.add(path);
            }
        });
        directories.sort((a, b) -> a.depth() != b.depth() ? Integer.compare(a.depth(), b.depth()) : a.compareTo(b));
        return directories;
    }

    /**
     * @param path an entry of this tree
     * @return its permission bits, as {@link #permissions(Manifest.Entry)}
     */
    Set<PosixFilePermission> permissions(TreePath path) {
        return metadata.get(path).permissions();
    }

    /**
     * @param path an entry of this tree
     * @return its modification time, or null when it has none
     */
    Instant mtime(TreePath path) {
        return metadata.get(path).mtime();
    }

    /**
     * @param entry a manifest entry (its mode checked)
     * @return its permission bits (setuid, setgid and sticky are never applied), or null when it has no mode
     */
    static Set<PosixFilePermission> permissions(Manifest.Entry entry) {
        if (entry.mode() == null) {
            return null;
        }
        int bits = Integer.parseInt(entry.mode(), 8) & 0777;
        StringBuilder text = new StringBuilder(9);
        String letters = "rwxrwxrwx";
        for (int i = 0; i < 9; i++) {
            text.append((bits & (1 << (8 - i))) != 0 ? letters.charAt(i) : '-');
        }
        return PosixFilePermissions.fromString(text.toString());
    }

    /**
     * @param entry a manifest entry (its mtime checked)
     * @return its modification time, or null when it has none
     */
    static Instant mtime(Manifest.Entry entry) {
        return entry.mtime() == null ? null : Instant.parse(entry.mtime());
    }
}
