package io.pintle.client;

import java.io.IOException;
import java.nio.file.DirectoryIteratorException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What a local directory holds, walked without following symbolic links (so a link placed in the tree can never
 * make the sync read, or hard-link, a file from elsewhere).
 */
final class LocalTree {
    /** Kind of a local entry. */
    enum Kind {
        FILE,
        DIRECTORY,
        SYMLINK,
        /** A device, socket or FIFO: never reused. */
        OTHER
    }

    /**
     * One local entry.
     *
     * @param kind its kind
     * @param size size in bytes
     * @param mtime modification time
     * @param permissions permission bits, or null on a file system without them
     * @param target the link's target (links only)
     */
    record Entry(Kind kind, long size, FileTime mtime, Set<PosixFilePermission> permissions, String target) {}

    private final Path root;
    private final boolean exists;
    private final Map<String, Entry> entries;

    private LocalTree(Path root, boolean exists, Map<String, Entry> entries) {
        this.root = root;
        this.exists = exists;
        this.entries = Collections.unmodifiableMap(entries);
    }

    /**
     * @param root the local directory; may not exist
     * @return what it holds, by {@code /}-separated relative path
     * @throws IOException when it cannot be read, or exists and is not a directory
     */
    static LocalTree scan(Path root) throws IOException {
        BasicFileAttributes top;
        try {
            top = attributes(root);
        } catch (NoSuchFileException none) {
            return new LocalTree(root, false, Map.of());
        }
        if (!top.isDirectory()) {
            throw new IOException(root + " exists and is not a directory");
        }
        // Walked here rather than by Files.walkFileTree, whose attributes are basic ones only: the modes would
        // cost a second stat of every entry. One lstat an entry, directories listed in order, links not followed.
        Map<String, Entry> entries = new LinkedHashMap<>();
        Deque<Path> directories = new ArrayDeque<>();
        directories.push(root);
        while (!directories.isEmpty()) {
            Path directory = directories.pop();
            List<Path> children = new ArrayList<>();
            try (DirectoryStream<Path> listing = Files.newDirectoryStream(directory)) {
                listing.forEach(children::add);
            } catch (NoSuchFileException | NotDirectoryException gone) {
                continue; // removed (or replaced) since it was seen: simply not there
            } catch (DirectoryIteratorException e) {
                throw e.getCause(); // a read error part way through the listing
            }
            List<Path> below = new ArrayList<>();
            for (Path child : children) {
                BasicFileAttributes attributes;
                try {
                    attributes = attributes(child);
                } catch (NoSuchFileException gone) {
                    continue;
                }
                record(root, child, attributes, entries);
                if (attributes.isDirectory()) {
                    below.add(child);
                }
            }
            for (int i = below.size() - 1; i >= 0; i--) {
                directories.push(below.get(i));
            }
        }
        return new LocalTree(root, true, entries);
    }

    /** An entry's attributes, POSIX ones where the file system has modes, its link itself if it is one. */
    private static BasicFileAttributes attributes(Path path) throws IOException {
        try {
            return Files.readAttributes(path, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (UnsupportedOperationException notPosix) {
            return Files.readAttributes(path, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        }
    }

    private static void record(Path root, Path path, BasicFileAttributes attributes, Map<String, Entry> entries)
            throws IOException {
        Kind kind = attributes.isSymbolicLink() ? Kind.SYMLINK
                : attributes.isDirectory() ? Kind.DIRECTORY
                : attributes.isRegularFile() ? Kind.FILE
                : Kind.OTHER;
        Set<PosixFilePermission> permissions = attributes instanceof PosixFileAttributes posix && kind != Kind.SYMLINK
                ? posix.permissions()
                : null;
        String target = kind == Kind.SYMLINK ? Files.readSymbolicLink(path).toString() : null;
        entries.put(relative(root, path), new Entry(kind, attributes.size(), attributes.lastModifiedTime(),
                permissions, target));
    }

    private static String relative(Path root, Path path) {
        StringBuilder text = new StringBuilder();
        for (Path segment : root.relativize(path)) {
            if (text.length() > 0) {
                text.append('/');
            }
            text.append(segment);
        }
        return text.toString();
    }

    /** @return the directory walked */
    Path root() {
        return root;
    }

    /** @return whether the directory exists */
    boolean exists() {
        return exists;
    }

    /** @return every entry below the root, by {@code /}-separated relative path */
    Map<String, Entry> entries() {
        return entries;
    }
}
