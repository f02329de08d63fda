package io.pintle.server.delivery;

import io.pintle.server.policy.StateFile;
import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayDeque;
import java.util.Comparator;
import java.util.Deque;
import java.util.Set;
import java.util.stream.Stream;

/**
 * Copies a directory tree as it is now, by hard links where the file system allows them. Rudder never rewrites a
 * policy file in place (its webapp writes {@code rules.new} and renames it over {@code rules}; the archive hook
 * writes {@code .part} and renames), so a link keeps exactly the bytes it was made on, and the same inode keeps the
 * same entity tag. Where a link is refused (another file system, or {@code fs.protected_hardlinks} for a file the
 * service may read but not write) the file is copied, once per content, into the {@link ObjectStore} and linked from
 * there, which gives it a new entity tag. Symbolic
 * links are copied as links, never followed; directories keep their modes; anything else (sockets, devices) is left
 * out. The copy is built under a temporary name next to its destination and renamed into place when whole.
 */
public final class TreeCopy {
    private static final Set<PosixFilePermission> PRIVATE = PosixFilePermissions.fromString("rwx------");

    private TreeCopy() {}

    /**
     * What a copy did.
     *
     * @param files regular files
     * @param linked of which hard-linked
     * @param copiedBytes bytes written for the others (0 for content already in the object store)
     */
    public record Outcome(int files, int linked, long copiedBytes) {
        Outcome plus(Outcome other) {
            return new Outcome(files + other.files, linked + other.linked, copiedBytes + other.copiedBytes);
        }

        /** Nothing copied. */
        public static final Outcome NONE = new Outcome(0, 0, 0);
    }

    /**
     * @param source an existing directory
     * @param destination a path that does not exist yet; its parent is created (private) when missing
     * @return what was copied
     * @throws IOException when the source cannot be read or the copy written (nothing is left at the
     *     destination)
     */
    public static Outcome copy(Path source, Path destination) throws IOException {
        return copy(source, destination, null, null, true);
    }

    /**
     * As {@link #copy(Path, Path)}, a file that cannot be linked to its source linked to its object in the store
     * (one stored copy per content, whatever the number of trees).
     *
     * @param source an existing directory
     * @param destination a path that does not exist yet, in {@code state}
     * @param objects where the bytes of unlinkable files go
     * @param state {@code [paths] state}
     * @return what was copied
     * @throws IOException when the source cannot be read or the copy written (nothing is left at the
     *     destination)
     */
    public static Outcome copy(Path source, Path destination, ObjectStore objects, Path state) throws IOException {
        return copy(source, destination, objects, state, true);
    }

    /** Package-private for tests: {@code linkSources} false makes every file go through the store. */
    static Outcome copy(Path source, Path destination, ObjectStore objects, Path state, boolean linkSources)
            throws IOException {
        if (!Files.isDirectory(source, LinkOption.NOFOLLOW_LINKS)) {
            throw new java.nio.file.NoSuchFileException(source.toString(), null, "not a directory");
        }
        Files.createDirectories(destination.getParent(), StateFile.PRIVATE_DIRECTORY);
        Path temp = destination.resolveSibling("." + destination.getFileName() + ".partial");
        delete(temp);
        Walker walker = new Walker(source, temp, objects, state, linkSources);
        try {
            Files.walkFileTree(source, walker);
            Files.move(temp, destination, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException | RuntimeException e) {
            delete(temp);
            throw e;
        }
        return new Outcome(walker.files, walker.linked, walker.copiedBytes);
    }

    /**
     * Removes a tree (links are removed, never followed).
     *
     * @param tree a directory, or a path that does not exist
     * @throws IOException when something cannot be removed
     */
    public static void delete(Path tree) throws IOException {
        if (!Files.exists(tree, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        if (!Files.isDirectory(tree, LinkOption.NOFOLLOW_LINKS)) {
            Files.delete(tree);
            return;
        }
        // Made writable first: a copied read-only directory (Rudder's 0550) could not be emptied otherwise.
        try (Stream<Path> all = Files.walk(tree)) {
            for (Path path : all.sorted(Comparator.reverseOrder()).toList()) {
                if (Files.isDirectory(path, LinkOption.NOFOLLOW_LINKS)) {
                    Files.setPosixFilePermissions(path, PRIVATE);
                }
                Files.delete(path);
            }
        }
    }

    private static final class Walker extends SimpleFileVisitor<Path> {
        private final Path source;
        private final Path target;
        private final ObjectStore objects;
        private final Path state;
        private final boolean linkSources;
        private final Deque<Set<PosixFilePermission>> modes = new ArrayDeque<>();
        private int files;
        private int linked;
        private long copiedBytes;

        Walker(Path source, Path target, ObjectStore objects, Path state, boolean linkSources) {
            this.source = source;
            this.target = target;
            this.objects = objects;
            this.state = state;
            this.linkSources = linkSources;
        }

        private Path to(Path path) {
            return target.resolve(source.relativize(path).toString());
        }

        @Override
        public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) throws IOException {
            // Private while it is filled, its own mode once whole (postVisitDirectory).
            Files.createDirectory(to(dir), PosixFilePermissions.asFileAttribute(PRIVATE));
            modes.push(Files.getPosixFilePermissions(dir, LinkOption.NOFOLLOW_LINKS));
            return FileVisitResult.CONTINUE;
        }

        @Override
        public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
            Path copy = to(file);
            if (attrs.isSymbolicLink()) {
                Files.createSymbolicLink(copy, Files.readSymbolicLink(file));
            } else if (attrs.isRegularFile()) {
                files++;
                try {
                    if (!linkSources) {
                        throw new IOException("links to the sources are off");
                    }
                    Files.createLink(copy, file);
                    linked++;
                } catch (IOException | UnsupportedOperationException refused) {
                    if (objects != null) {
                        copiedBytes += objects.link(state, file,
                                Files.getPosixFilePermissions(file, LinkOption.NOFOLLOW_LINKS), copy);
                    } else {
                        Files.copy(file, copy, StandardCopyOption.COPY_ATTRIBUTES, LinkOption.NOFOLLOW_LINKS);
                        copiedBytes += attrs.size();
                    }
                }
            }
            return FileVisitResult.CONTINUE;
        }

        @Override
        public FileVisitResult postVisitDirectory(Path dir, IOException failure) throws IOException {
            if (failure != null) {
                throw failure;
            }
            Files.setPosixFilePermissions(to(dir), modes.pop());
            return FileVisitResult.CONTINUE;
        }
    }
}
