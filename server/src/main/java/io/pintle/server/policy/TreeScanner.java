package io.pintle.server.policy;

import io.pintle.api.dto.Manifest;
import io.pintle.api.dto.ManifestEtag;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.PriorityQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads a directory tree in manifest order (sorted by whole path) without ever holding it: one stat per entry,
 * digests from the {@link DigestCache} (computed in parallel, a window ahead of the walk, for files it has not
 * seen), and a check that the tree was not swapped while it was read. What a walk holds is the sorted names of
 * the directories on its current path and a window of stats, whatever the tree's size; each entry is handed to
 * a {@link Visitor} and forgotten.
 *
 * <p>A view is made of two walks. {@link #scan} computes the version's ETag and totals, which a response needs
 * before its body; {@link #replay} walks again and hands the entries out, checking that they are still that
 * version: the ETag derived from the entries it handed out must be the scan's, or it fails with {@link
 * FileVersion.FileChangedException} before the visitor may finish (a manifest or an archive is then aborted,
 * never completed with a body that does not match its ETag).
 *
 * <p>Rudder publishes a node's policies by renaming {@code rules.new} over {@code rules}. A scan notes the
 * identity of the directory it starts from and checks it again at the end; if the name now denotes another
 * directory, or a file changed while it was hashed, the scan starts again (a few times, then gives up with
 * {@link FileVersion.FileChangedException}). So a version always describes one side of the swap.
 *
 * <p>Symbolic links are reported, never followed; a link whose target is absolute or leaves the scanned tree is
 * left out (and logged), as the file routes would refuse to follow it. Devices, sockets and pipes are left out.
 */
public final class TreeScanner {
    private static final Logger LOG = LoggerFactory.getLogger(TreeScanner.class);

    /** Scans of a tree that keeps changing are retried this many times before giving up. */
    static final int ATTEMPTS = 4;

    /**
     * Reads of one top-level directory that changed while it was read ({@link #walkByTopLevel}), a pause growing
     * from 1 to 64 ms before each new one: Rudder's replacement of a node's {@code rules} takes milliseconds, and the
     * reads right after one that failed would fall into the same replacement.
     */
    static final int TOP_LEVEL_ATTEMPTS = 8;

    /**
     * Directories whose stat gives at most this size are listed in one call ({@link #sortedNames}): on ext4 about
     * 1,500 names of a node id's length, on tmpfs 3,276 (20 bytes a name), some hundred KiB of names at most. (A
     * file system that reports a directory's size as a constant, as some network and FUSE ones do, has every
     * directory listed in one call: the entry bound then applies once it is listed.)
     */
    static final long SMALL_DIRECTORY_BYTES = 64 * 1024;

    /** Directories of one tree watched for a change wait, every one of them; past this, its top two levels. */
    static final int MAX_WATCHED_DIRECTORIES = 4096;

    /** Trees deeper than this are refused (a loop of bind mounts, or a hostile tree). */
    static final int MAX_DEPTH = 64;

    /**
     * Files whose digests are asked for ahead of the one being handed out: enough to keep the hashing threads
     * busy on a cold tree, few enough that a wide directory's stats are never all held at once.
     */
    static final int DIGEST_WINDOW = 256;

    private final DigestCache digests;
    private final int maxEntries;

    /**
     * @param digests where file digests come from
     * @param maxEntries the largest tree described; a larger one is refused with {@link TreeTooLargeException}
     */
    public TreeScanner(DigestCache digests, int maxEntries) {
        this.digests = Objects.requireNonNull(digests);
        this.maxEntries = maxEntries;
    }

    /** Receives a tree's entries, in manifest order. */
    @FunctionalInterface
    public interface Visitor {
        /**
         * @param entry the manifest entry
         * @param stat the stat it was built from
         * @throws IOException to stop the walk
         */
        void entry(Manifest.Entry entry, FileStat stat) throws IOException;
    }

    /**
     * @param root the real path of a directory
     * @param watched whether the version lists the tree's directories (for a change wait; otherwise empty, so
     *     that a tree of many directories is not held)
     * @return its current version
     * @throws FileVersion.FileChangedException if the tree kept changing during every attempt
     * @throws TreeTooLargeException if the tree has more than {@code maxEntries} entries or is more than
     *     {@link #MAX_DEPTH} directories deep
     * @throws NotADirectoryException if the path names something else than a directory
     * @throws NoSuchFileException if the directory is gone
     * @throws IOException if it cannot be read
     */
    public TreeVersion scan(Path root, boolean watched) throws IOException {
        FileVersion.FileChangedException last = null;
        for (int attempt = 1; attempt <= ATTEMPTS; attempt++) {
            try {
                return scanOnce(root, watched);
            } catch (FileVersion.FileChangedException | NoSuchFileException changed) {
                if (!Files.isDirectory(root)) {
                    throw changed instanceof NoSuchFileException gone ? gone : new NoSuchFileException(root.toString());
                }
                LOG.debug("tree {} changed during scan {} of {}: {}", root, attempt, ATTEMPTS, changed.getMessage());
                last = changed instanceof FileVersion.FileChangedException c
                        ? c
                        : new FileVersion.FileChangedException(changed.getMessage() + " vanished during the scan");
            }
        }
        throw last;
    }

    private TreeVersion scanOnce(Path root, boolean watched) throws IOException {
        FileStat top = FileStat.of(root);
        if (top.kind() != FileStat.Kind.DIRECTORY) {
            throw new NotADirectoryException(root);
        }
        WatchList directories = new WatchList(root);
        Walk walk = new Walk(root, (entry, stat) -> {
            if (watched && entry.isDirectory()) {
                directories.add(stat.path());
            }
        });
        walk.run();
        FileStat end = FileStat.of(root);
        if (!Objects.equals(end.identity(), top.identity())) {
            throw new FileVersion.FileChangedException(root + " was replaced by another directory during the scan");
        }
        return new TreeVersion(root, walk.etag.value(), walk.files, walk.bytes,
                watched ? directories.list() : List.of());
    }

    /**
     * The directories a change wait watches: every directory of the tree, up to {@value #MAX_WATCHED_DIRECTORIES};
     * past that only the root and the directories directly in it. A relay's share of Rudder nodes has 12
     * directories a node (60,000 for 5,000 nodes: each watch a kernel inotify watch, and about 1 KiB of heap with
     * its bookkeeping); Rudder publishes a node's policies by renaming {@code rules.new} over {@code rules}, which
     * the node's directory, directly in the share, sees. A change deeper in such a tree is seen at the periodic
     * re-check.
     */
    static final class WatchList {
        private final Path root;
        private final int shallowDepth;
        private final List<Path> directories = new ArrayList<>();
        private boolean shallow;

        WatchList(Path root) {
            this.root = root;
            this.shallowDepth = root.getNameCount() + 1;
            directories.add(root);
        }

        void add(Path directory) {
            if (shallow) {
                if (directory.getNameCount() <= shallowDepth) {
                    directories.add(directory);
                }
                return;
            }
            directories.add(directory);
            if (directories.size() > MAX_WATCHED_DIRECTORIES) {
                shallow = true;
                directories.removeIf(d -> d.getNameCount() > shallowDepth);
                LOG.debug("{} has more than {} directories: its root and the directories directly in it are "
                        + "watched", root, MAX_WATCHED_DIRECTORIES);
            }
        }

        List<Path> list() {
            return directories;
        }
    }

    /**
     * Walks a version's tree again and hands out its entries, in manifest order.
     *
     * @param version what {@link #scan} found
     * @param visitor receives every entry
     * @throws FileVersion.FileChangedException if the tree is no longer that version (the visitor has then seen
     *     entries of another one, and must not finish what it writes)
     * @throws IOException if the tree cannot be read, or what the visitor throws
     */
    public void replay(TreeVersion version, Visitor visitor) throws IOException {
        Walk walk = new Walk(version.root(), visitor);
        try {
            walk.run();
        } catch (NoSuchFileException | NotADirectoryException gone) {
            throw new FileVersion.FileChangedException(gone.getMessage() + " is gone since the tree was scanned");
        } catch (TreeTooLargeException grown) {
            throw new FileVersion.FileChangedException(version.root() + " grew since it was scanned");
        }
        if (!walk.etag.value().equals(version.etag())) {
            throw new FileVersion.FileChangedException(version.root() + " changed since it was scanned");
        }
    }

    /**
     * One pass over a tree whose top-level directories change each on its own — a relay's share during a
     * generation, where Rudder renames each node's {@code rules.new} over its {@code rules} — for a change list:
     * every entry handed out in manifest order, each top-level directory read whole (its own entry and everything
     * below it) as one version of its own, and read again, up to {@link #TOP_LEVEL_ATTEMPTS} times with a growing
     * pause, when it changed while it was read; one gone meanwhile is left out. The tree as a whole is not checked
     * to be one version, as {@link #scan} and {@link #replay} check it: what is handed out may never have been on
     * disk at one instant, but each top-level directory of it was, and a tree at rest gives the ETag {@link #scan}
     * gives. Holds one top-level directory's entries at a time (and those of the few whose names sort between it
     * and its contents).
     *
     * @param root the real path of a directory
     * @param watched whether the version lists the tree's directories (for a change wait)
     * @param visitor receives every entry
     * @return what was handed out: its ETag, totals and (when watched) directories
     * @throws FileVersion.FileChangedException if a top-level directory changed during every attempt
     * @throws TreeTooLargeException as {@link #scan}
     * @throws NotADirectoryException if the path names something else than a directory
     * @throws NoSuchFileException if the directory is gone
     * @throws IOException if it cannot be read, or what the visitor throws
     */
    public TreeVersion walkByTopLevel(Path root, boolean watched, Visitor visitor) throws IOException {
        FileStat top = FileStat.of(root);
        if (top.kind() != FileStat.Kind.DIRECTORY) {
            throw new NotADirectoryException(root);
        }
        List<String> names = sortedNames(root, root, top.size(), 0);
        ByTopLevel pass = new ByTopLevel(root, watched, visitor);
        pass.listed = names.size();
        // As Walk.directory: a directory's contents come when the walk reaches its name followed by '/'.
        PriorityQueue<String> subtrees = new PriorityQueue<>();
        for (String name : names) {
            while (!subtrees.isEmpty() && subtrees.peek().compareTo(name) < 0) {
                pass.flush(subtrees.poll());
            }
            if (pass.read(name)) {
                subtrees.add(name + "/");
            }
        }
        while (!subtrees.isEmpty()) {
            pass.flush(subtrees.poll());
        }
        return new TreeVersion(root, pass.etag.value(), pass.files, pass.bytes,
                watched ? pass.directories.list() : List.of());
    }

    /**
     * A small directory (its stat's size at most {@value #SMALL_DIRECTORY_BYTES} bytes: a node's directories) is
     * read whole with {@link java.io.File#list()}, five system calls where a {@link DirectoryStream} makes nine (on
     * Linux the JDK's is a secure stream: it opens the directory, duplicates the descriptor and checks it again); a
     * larger one is read name by name, so that a directory of millions of entries is refused at {@code maxEntries}
     * without being held.
     *
     * @param root the tree's root (for the message)
     * @param directory a directory of it
     * @param size the directory's size, as its stat says
     * @param listed the entries of the tree listed so far
     * @return the directory's names, sorted
     * @throws TreeTooLargeException as soon as the tree has more than {@code maxEntries} entries
     */
    private List<String> sortedNames(Path root, Path directory, long size, int listed) throws IOException {
        if (size <= SMALL_DIRECTORY_BYTES) {
            String[] listing = directory.toFile().list();
            if (listing != null) {
                if (listed + listing.length > maxEntries) {
                    throw tooMany(root);
                }
                Arrays.sort(listing);
                return Arrays.asList(listing);
            }
            // Gone, no longer a directory, or unreadable: the stream below says which.
        }
        List<String> names = new ArrayList<>();
        try (DirectoryStream<Path> children = Files.newDirectoryStream(directory)) {
            for (Path child : children) {
                if (listed + names.size() >= maxEntries) {
                    throw tooMany(root);
                }
                names.add(child.getFileName().toString());
            }
        }
        Collections.sort(names);
        return names;
    }

    /** @return the refusal of a tree past {@code maxEntries}, naming the setting that bounds it */
    private TreeTooLargeException tooMany(Path root) {
        return new TreeTooLargeException(root + " has more than " + maxEntries
                + " entries ([limits] max_manifest_entries)");
    }

    /** A subdirectory whose contents come when the walk reaches its key (its name followed by '/'), and its size. */
    private record Subtree(String key, long size) implements Comparable<Subtree> {
        @Override
        public int compareTo(Subtree other) {
            return key.compareTo(other.key);
        }
    }

    /** An entry read, held until its turn comes. */
    private record Held(Manifest.Entry entry, FileStat stat) {}

    /** {@link #walkByTopLevel}'s state: what was handed out so far, and the contents read ahead of their turn. */
    private final class ByTopLevel {
        private final Path root;
        private final boolean watched;
        private final Visitor visitor;
        private final ManifestEtag etag = new ManifestEtag();
        private final WatchList directories;
        private final java.util.Map<String, List<Held>> below = new java.util.HashMap<>();
        private int listed;
        private int files;
        private long bytes;

        ByTopLevel(Path root, boolean watched, Visitor visitor) {
            this.root = root;
            this.directories = new WatchList(root);
            this.watched = watched;
            this.visitor = visitor;
        }

        /**
         * Reads one top-level entry: a directory whole (handed out now, its contents held for their turn), anything
         * else as the walk describes it.
         *
         * @return whether it is a directory whose contents wait for their turn
         */
        boolean read(String name) throws IOException {
            Path child = root.resolve(name);
            FileVersion.FileChangedException last = null;
            for (int attempt = 1; attempt <= TOP_LEVEL_ATTEMPTS; attempt++) {
                if (attempt > 1) {
                    pause(attempt);
                }
                FileStat before;
                try {
                    before = FileStat.of(child);
                } catch (NoSuchFileException gone) {
                    return false;
                }
                List<Held> items = new ArrayList<>();
                Walk walk = new Walk(root, (entry, stat) -> items.add(new Held(entry, stat)));
                try {
                    if (before.kind() != FileStat.Kind.DIRECTORY) {
                        Pending pending = walk.describe(root, "", name);
                        if (pending != null) {
                            walk.hand(pending);
                        }
                    } else {
                        walk.directory(child, before.size(), name + "/", 1);
                    }
                    if (!FileStat.of(child).equals(before)) {
                        throw new FileVersion.FileChangedException(child + " changed while it was read");
                    }
                } catch (NoSuchFileException | NotADirectoryException | FileVersion.FileChangedException changed) {
                    LOG.debug("{} changed during read {} of {}: {}", child, attempt, TOP_LEVEL_ATTEMPTS,
                            changed.getMessage());
                    last = changed instanceof FileVersion.FileChangedException c ? c
                            : new FileVersion.FileChangedException(child + " changed while it was read");
                    continue;
                }
                listed += walk.listed;
                if (listed > maxEntries) {
                    throw tooMany(root);
                }
                files += walk.files;
                bytes += walk.bytes;
                if (before.kind() != FileStat.Kind.DIRECTORY) {
                    for (Held held : items) {
                        hand(held);
                    }
                    return false;
                }
                hand(new Held(new Manifest.Entry(name, Manifest.Types.DIRECTORY, null, before.octalMode(),
                        before.isoModified(), null, null), before));
                if (watched) {
                    directories.add(child);
                    for (Held held : items) {
                        if (held.entry().isDirectory()) {
                            directories.add(held.stat().path());
                        }
                    }
                }
                below.put(name + "/", items);
                return true;
            }
            throw last;
        }

        /** Before read {@code attempt} of a directory that changed: 1, 2, 4 ... 64 ms, 127 ms in all. */
        private static void pause(int attempt) throws java.io.InterruptedIOException {
            try {
                Thread.sleep(1L << (attempt - 2));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new java.io.InterruptedIOException("interrupted while a directory was read again");
            }
        }

        void flush(String key) throws IOException {
            for (Held held : below.remove(key)) {
                hand(held);
            }
        }

        private void hand(Held held) throws IOException {
            etag.add(held.entry());
            visitor.entry(held.entry(), held.stat());
        }
    }

    /** One walk of a tree: what it has counted so far, and the digests it is waiting for. */
    private final class Walk {
        private final Path root;
        private final Visitor visitor;
        private final ManifestEtag etag = new ManifestEtag();
        /** Entries listed so far (every name read from a directory counts, whether described or not). */
        private int listed;
        private int files;
        private long bytes;

        Walk(Path root, Visitor visitor) {
            this.root = root;
            this.visitor = visitor;
        }

        void run() throws IOException {
            FileStat top = FileStat.of(root);
            if (top.kind() != FileStat.Kind.DIRECTORY) {
                throw new NotADirectoryException(root);
            }
            directory(root, top.size(), "", 0);
        }

        /**
         * Hands out the entries below one directory in manifest order. Sorting by whole path is not sorting each
         * directory and descending: {@code a-b} comes between {@code a} and {@code a/x}, as {@code -} sorts
         * before {@code /}. So a directory's entries are sorted by name and its subdirectories' contents are
         * handed out when the walk reaches their name followed by {@code /}.
         */
        private void directory(Path directory, long size, String prefix, int depth) throws IOException {
            if (depth >= MAX_DEPTH) {
                throw new TreeTooLargeException(root + " is more than " + MAX_DEPTH + " directories deep");
            }
            List<String> names = sortedNames(root, directory, size, listed);
            listed += names.size();
            // Subdirectories whose contents come later, by their name followed by '/'.
            PriorityQueue<Subtree> subtrees = new PriorityQueue<>();
            ArrayDeque<Pending> window = new ArrayDeque<>();
            int next = 0;
            while (next < names.size() || !window.isEmpty()) {
                while (next < names.size() && window.size() < DIGEST_WINDOW) {
                    Pending pending = describe(directory, prefix, names.get(next++));
                    if (pending != null) {
                        window.add(pending);
                    }
                }
                if (window.isEmpty()) {
                    break;
                }
                Pending head = window.poll();
                String name = head.name();
                while (!subtrees.isEmpty() && subtrees.peek().key().compareTo(name) < 0) {
                    descend(directory, prefix, subtrees.poll(), depth);
                }
                hand(head);
                if (head.entry().isDirectory()) {
                    subtrees.add(new Subtree(name + "/", head.stat().size()));
                }
            }
            while (!subtrees.isEmpty()) {
                descend(directory, prefix, subtrees.poll(), depth);
            }
        }

        private void descend(Path directory, String prefix, Subtree subtree, int depth) throws IOException {
            String key = subtree.key();
            directory(directory.resolve(key.substring(0, key.length() - 1)), subtree.size(), prefix + key, depth + 1);
        }

        /** @return what the named child is, its digest asked for; null when it is left out */
        private Pending describe(Path directory, String prefix, String name) throws IOException {
            Path child = directory.resolve(name);
            String relative = prefix + name;
            FileStat stat = FileStat.of(child);
            String mtime = stat.isoModified();
            return switch (stat.kind()) {
                case FILE -> new Pending(name, new Manifest.Entry(relative, Manifest.Types.FILE, stat.size(),
                        stat.octalMode(), mtime, null, null), stat, digests.sha256(stat));
                case DIRECTORY -> new Pending(name, new Manifest.Entry(relative, Manifest.Types.DIRECTORY, null,
                        stat.octalMode(), mtime, null, null), stat, null);
                case SYMLINK -> {
                    Path target = Files.readSymbolicLink(child);
                    if (!staysInside(root, directory, target)) {
                        LOG.warn("{}: symbolic link to {} leaves the tree; left out of the manifest", child, target);
                        yield null;
                    }
                    yield new Pending(name, new Manifest.Entry(relative, Manifest.Types.SYMLINK, null, null, null,
                            null, target.toString()), stat, null);
                }
                case OTHER -> {
                    LOG.debug("{}: not a file, directory or link; left out of the manifest", child);
                    yield null;
                }
            };
        }

        private void hand(Pending pending) throws IOException {
            Manifest.Entry entry = pending.entry();
            if (pending.digest() != null) {
                entry = new Manifest.Entry(entry.path(), entry.type(), entry.size(), entry.mode(), entry.mtime(),
                        join(pending.digest()), null);
                files++;
                bytes += entry.size();
            }
            etag.add(entry);
            visitor.entry(entry, pending.stat());
        }
    }

    /** A child described, its digest (files only) perhaps still being computed. */
    private record Pending(String name, Manifest.Entry entry, FileStat stat, CompletableFuture<String> digest) {}

    /**
     * Whether a link's target stays inside the tree. Physically, through every link on the way, when it exists:
     * lexically {@code loop/../..} (with {@code loop -> .}) looks like the tree's root but names its parent. A
     * dangling target must be relative, stay inside lexically and contain no {@code ..} at all.
     */
    private static boolean staysInside(Path root, Path directory, Path target) throws IOException {
        if (target.isAbsolute()) {
            return false;
        }
        Path resolved = directory.resolve(target);
        if (Files.exists(resolved)) {
            return resolved.toRealPath().startsWith(root.toRealPath());
        }
        for (Path segment : target) {
            if (segment.toString().equals("..")) {
                return false;
            }
        }
        return resolved.normalize().startsWith(root);
    }

    private static String join(CompletableFuture<String> digest) throws IOException {
        try {
            return digest.get();
        } catch (ExecutionException | CompletionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof IOException io) {
                throw io;
            }
            throw new IOException("cannot compute a digest", cause);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while waiting for digests", e);
        }
    }

    /**
     * The manifest's strong ETag ({@link ManifestEtag}).
     *
     * @param entries the entries, in manifest order
     * @return the ETag, quoted
     */
    static String etag(List<Manifest.Entry> entries) {
        ManifestEtag etag = new ManifestEtag();
        entries.forEach(etag::add);
        return etag.value();
    }

    /** The path names a file, not a directory. */
    public static final class NotADirectoryException extends IOException {
        private static final long serialVersionUID = 1L;

        NotADirectoryException(Path path) {
            super(path + " is not a directory");
        }
    }

    /**
     * The tree has more entries than a manifest may describe, or is deeper than {@link #MAX_DEPTH} directories.
     */
    public static final class TreeTooLargeException extends IOException {
        private static final long serialVersionUID = 1L;

        TreeTooLargeException(String message) {
            super(message);
        }
    }
}
