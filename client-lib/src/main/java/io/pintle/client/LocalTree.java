package io.pintle.client;

import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.util.Collections;
import java.util.EnumSet;
import java.util.LinkedHashMap;
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
        if (!Files.exists(root, LinkOption.NOFOLLOW_LINKS)) {
            return new LocalTree(root, false, Map.of());
        }
        if (!Files.isDirectory(root, LinkOption.NOFOLLOW_LINKS)) {
            throw new IOException(root + " exists and is not a directory");
        }
        Map<String, Entry> entries = new LinkedHashMap<>();
        Files.walkFileTree(root, EnumSet.noneOf(java.nio.file.FileVisitOption.class), Integer.MAX_VALUE,
                new SimpleFileVisitor<>() {
                    @Override
                    public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attributes)
                            throws IOException {
                        if (!dir.equals(root)) {
                            record(dir, attributes);
                        }
                        return FileVisitResult.CONTINUE;
                    }

                    @Override
                    public FileVisitResult visitFile(Path file, BasicFileAttributes attributes) throws IOException {
                        record(file, attributes);
                        return FileVisitResult.CONTINUE;
                    }

                    @Override
                    public FileVisitResult visitFileFailed(Path file, IOException e) throws IOException {
                        if (e instanceof NoSuchFileException) {
                            return FileVisitResult.CONTINUE; // removed while we walked: simply not there
                        }
                        throw e;
                    }

                    private void record(Path path, BasicFileAttributes attributes) throws IOException {
                        Kind kind = attributes.isSymbolicLink() ? Kind.SYMLINK
                                : attributes.isDirectory() ? Kind.DIRECTORY
                                : attributes.isRegularFile() ? Kind.FILE
                                : Kind.OTHER;
                        Set<PosixFilePermission> permissions = attributes instanceof PosixFileAttributes posix
                                ? posix.permissions()
                                : null;
                        if (permissions == null && kind != Kind.SYMLINK) {
                            permissions = posixPermissions(path);
                        }
                        String target = kind == Kind.SYMLINK ? Files.readSymbolicLink(path).toString() : null;
                        entries.put(relative(root, path), new Entry(kind, attributes.size(),
                                attributes.lastModifiedTime(), permissions, target));
                    }
                });
        return new LocalTree(root, true, entries);
    }

    private static Set<PosixFilePermission> posixPermissions(Path path) throws IOException {
        try {
            return Files.getPosixFilePermissions(path, LinkOption.NOFOLLOW_LINKS);
        } catch (UnsupportedOperationException notPosix) {
            return null;
        }
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
