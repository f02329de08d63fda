package io.pintle.client;

import io.pintle.api.dto.Manifest;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.DirectoryStream;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributeView;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermission;
import java.security.SecureRandom;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The new tree, built in {@code .<name>.pintle-staging-<random>} next to the synced directory: directories,
 * symbolic links, reused local files (hard-linked, or copied), downloaded files, and finally modes and mtimes.
 * Paths come from a {@link ManifestTree}, so nothing lands outside the staging directory: every entry's parent is
 * a directory this class created, never a link.
 */
final class StagingTree {
    private final Path root;
    /** Files linked whose mtime alone is to be set (their mode is right): {@link SyncPlanner.Plan#touch}. */
    private final Set<TreePath> timesOnly = new HashSet<>();

    private StagingTree(Path root) {
        this.root = root;
    }

    /**
     * Creates an empty staging directory with the synced directory's permissions (when it exists).
     *
     * @param localDir the synced directory
     * @param random for the name
     * @return the staging tree
     * @throws IOException when it cannot be created
     */
    static StagingTree create(Path localDir, SecureRandom random) throws IOException {
        Path root = Files.createDirectory(SyncNames.unique(localDir, SyncNames.STAGING, random));
        if (Files.isDirectory(localDir, LinkOption.NOFOLLOW_LINKS)) {
            try {
                Files.setPosixFilePermissions(root, Files.getPosixFilePermissions(localDir));
            } catch (UnsupportedOperationException notPosix) {
                // Nothing to carry over.
            }
        }
        return new StagingTree(root);
    }

    /** @return the staging directory */
    Path root() {
        return root;
    }

    /**
     * @param path a manifest path
     * @return where it goes in the staging tree
     */
    Path resolve(TreePath path) {
        return path.under(root);
    }

    /**
     * Creates the manifest's directories and symbolic links, and the reused files.
     *
     * @param tree the manifest
     * @param plan what is reused from where
     * @param localDir the synced directory, where reused files are
     * @return the files hard-linked to the synced directory's (whose metadata must not be touched; those of the
     *     plan's {@code touch} are not among them: their mtime is set)
     * @throws IOException on a file system error
     * @throws AttemptFailure when a copied local file no longer has the content it was planned for
     */
    Set<TreePath> prepare(ManifestTree tree, SyncPlanner.Plan plan, Path localDir)
            throws IOException, AttemptFailure {
        for (TreePath directory : tree.directories()) {
            Files.createDirectory(resolve(directory));
        }
        for (Map.Entry<TreePath, Manifest.Entry> entry : tree.entries().entrySet()) {
            if (entry.getValue().isSymlink()) {
                Files.createSymbolicLink(resolve(entry.getKey()), Path.of(entry.getValue().target()));
            }
        }
        Set<TreePath> linked = new HashSet<>();
        for (TreePath path : plan.link()) {
            Path from = path.under(localDir);
            if (link(from, path)) {
                linked.add(path);
            } else {
                copy(from, path, tree.entries().get(path));
            }
        }
        for (TreePath path : plan.copy()) {
            copy(path.under(localDir), path, tree.entries().get(path));
        }
        for (TreePath path : plan.touch()) {
            Path from = path.under(localDir);
            if (link(from, path)) {
                if (!linkedElsewhere(resolve(path))) {
                    timesOnly.add(path);
                    continue;
                }
                // A third name holds the inode (a frozen or fetched copy of the server's state): its mtime must
                // not change under it.
                Files.delete(resolve(path));
            }
            copy(from, path, tree.entries().get(path));
        }
        return linked;
    }

    /**
     * Hard-links a reused file into the staging tree.
     *
     * @return false when it cannot be linked (another file system, or one without hard links: a copy does as well)
     */
    private boolean link(Path from, TreePath path) {
        try {
            Files.createLink(resolve(path), from);
            return true;
        } catch (IOException | UnsupportedOperationException cannotLink) {
            return false;
        }
    }

    /** Whether the inode of a file just linked from the current tree has a name beyond those two (or cannot tell). */
    private static boolean linkedElsewhere(Path staged) {
        try {
            return ((Number) Files.getAttribute(staged, "unix:nlink", LinkOption.NOFOLLOW_LINKS)).intValue() > 2;
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException cannotTell) {
            return true;
        }
    }

    private void copy(Path from, TreePath path, Manifest.Entry entry) throws IOException, AttemptFailure {
        try (InputStream in = Files.newInputStream(from, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
            VerifiedWrite.write(in, resolve(path), path, entry, "the local tree");
        }
    }

    /**
     * Sets modes and mtimes: files and links first, then directories from the deepest up (so that creating
     * their content does not change their mtime afterwards, and a read-only directory is set last).
     *
     * @param tree the manifest
     * @param untouched files already right (hard links to the current tree, whose inode must not change)
     * @throws IOException on a file system error
     */
    void applyMetadata(ManifestTree tree, Collection<TreePath> untouched) throws IOException {
        Set<TreePath> skip = Set.copyOf(untouched);
        // Given an access time, the JDK sets both times without first reading the file's (an fstat per entry).
        FileTime accessed = FileTime.from(Instant.now());
        for (Map.Entry<TreePath, Manifest.Entry> item : tree.entries().entrySet()) {
            Manifest.Entry entry = item.getValue();
            if (entry.isFile() && timesOnly.contains(item.getKey())) {
                // The inode the current tree shares: its content and mode are the manifest's, its mtime becomes
                // the manifest's a moment before the swap.
                setMtime(resolve(item.getKey()), tree, item.getKey(), accessed);
            } else if (entry.isFile() && !skip.contains(item.getKey())) {
                apply(resolve(item.getKey()), tree, item.getKey(), accessed);
            } else if (entry.isSymlink() && entry.mtime() != null) {
                try {
                    FileTime time = FileTime.from(tree.mtime(item.getKey()));
                    Files.getFileAttributeView(resolve(item.getKey()), BasicFileAttributeView.class,
                            LinkOption.NOFOLLOW_LINKS).setTimes(time, null, null);
                } catch (IOException | UnsupportedOperationException cosmetic) {
                    // A link's own mtime is cosmetic; some platforms cannot set it.
                }
            }
        }
        List<TreePath> directories = new ArrayList<>(tree.directories());
        java.util.Collections.reverse(directories);
        for (TreePath directory : directories) {
            apply(resolve(directory), tree, directory, accessed);
        }
    }

    private static void apply(Path path, ManifestTree tree, TreePath entry, FileTime accessed) throws IOException {
        Set<PosixFilePermission> permissions = tree.permissions(entry);
        if (permissions != null) {
            try {
                Files.setPosixFilePermissions(path, permissions);
            } catch (UnsupportedOperationException notPosix) {
                // Modes cannot be kept on this file system.
            }
        }
        setMtime(path, tree, entry, accessed);
    }

    private static void setMtime(Path path, ManifestTree tree, TreePath entry, FileTime accessed) throws IOException {
        Instant mtime = tree.mtime(entry);
        if (mtime != null) {
            Files.getFileAttributeView(path, BasicFileAttributeView.class).setTimes(FileTime.from(mtime), accessed,
                    null);
        }
    }

    /**
     * Deletes a tree: a failed staging directory or a swapped-out old tree. Directories made read-only by a
     * manifest are made writable first.
     *
     * @param tree the tree (not followed if it is a link); nothing happens when it does not exist
     * @throws IOException when something cannot be deleted
     */
    static void delete(Path tree) throws IOException {
        // A tree that does not exist: its walk reports it to visitFileFailed, which lets it go.
        Files.walkFileTree(tree, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attributes) throws IOException {
                try {
                    Set<PosixFilePermission> permissions = Files.getPosixFilePermissions(dir);
                    if (permissions.add(PosixFilePermission.OWNER_WRITE)
                            | permissions.add(PosixFilePermission.OWNER_EXECUTE)
                            | permissions.add(PosixFilePermission.OWNER_READ)) {
                        Files.setPosixFilePermissions(dir, permissions);
                    }
                } catch (UnsupportedOperationException notPosix) {
                    // Nothing to unlock.
                }
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attributes) throws IOException {
                Files.deleteIfExists(file);
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFileFailed(Path file, IOException e) throws IOException {
                if (e instanceof NoSuchFileException) {
                    return FileVisitResult.CONTINUE;
                }
                throw e;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path dir, IOException e) throws IOException {
                if (e != null) {
                    throw e;
                }
                Files.deleteIfExists(dir);
                return FileVisitResult.CONTINUE;
            }
        });
    }

    /**
     * Cleans up after a sync that crashed: deletes leftover staging directories and sidecar files, and puts a
     * swapped-out tree back when the crash came between the two renames of the fallback swap (the synced directory
     * is then missing); other swapped-out trees are deleted. Called with the sync lock held.
     *
     * @param localDir the synced directory
     * @throws IOException on a file system error
     */
    static void removeStale(Path localDir) throws IOException {
        Path absolute = localDir.toAbsolutePath().normalize();
        String prefix = SyncNames.prefix(absolute);
        List<Path> old = new ArrayList<>();
        try (DirectoryStream<Path> siblings = Files.newDirectoryStream(absolute.getParent(), prefix + "*")) {
            for (Path sibling : siblings) {
                String name = sibling.getFileName().toString();
                if (name.startsWith(prefix + SyncNames.STAGING)) {
                    delete(sibling);
                } else if (name.startsWith(prefix + SyncNames.OLD)) {
                    old.add(sibling);
                } else if (isLeftoverState(name)) {
                    Files.deleteIfExists(sibling);
                }
            }
        }
        for (Path tree : old) {
            if (!Files.exists(absolute, LinkOption.NOFOLLOW_LINKS)) {
                Files.move(tree, absolute, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
            } else {
                delete(tree);
            }
        }
    }

    /** A sidecar's temporary or retired file, which a sync cut by a crash may leave ({@link SyncState}). */
    private static boolean isLeftoverState(String name) {
        return name.endsWith("." + SyncNames.STATE + SyncState.TEMPORARY_SUFFIX)
                || name.endsWith("." + SyncNames.STATE + SyncState.RETIRED_SUFFIX);
    }

    /**
     * What {@link #removeStale} does for every synced directory of {@code parent} at once, in one listing of it:
     * for a caller that syncs many directories side by side (a relay's share: one per node), where a listing of
     * the parent per sync would cost, per generation, the square of the number of directories.
     *
     * @param parent the directory holding the synced directories
     * @throws IOException if it cannot be listed or a leftover cannot be removed
     */
    static void removeStaleIn(Path parent) throws IOException {
        if (!Files.isDirectory(parent)) {
            return;
        }
        Set<Path> targets = new LinkedHashSet<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(parent, ".*")) {
            for (Path entry : entries) {
                String name = entry.getFileName().toString();
                if (isLeftoverState(name)) {
                    Files.deleteIfExists(entry);
                    continue;
                }
                for (String suffix : List.of(SyncNames.STAGING, SyncNames.OLD)) {
                    int at = name.lastIndexOf("." + suffix);
                    if (at > 1) {
                        targets.add(parent.resolve(name.substring(1, at)));
                        break;
                    }
                }
            }
        }
        for (Path target : targets) {
            removeStale(target);
        }
    }
}
