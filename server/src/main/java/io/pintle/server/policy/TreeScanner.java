package io.pintle.server.policy;

import io.pintle.api.dto.Manifest;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Builds the {@link Manifest} of a directory tree: one stat per entry, digests from the {@link DigestCache}
 * (computed in parallel for files it has not seen), and a check that the tree was not swapped while it was read.
 *
 * <p>Rudder publishes a node's policies by renaming {@code rules.new} over {@code rules}. A scan notes the
 * identity of the directory it starts from and checks it again at the end; if the name now denotes another
 * directory, or a file changed while it was hashed, the scan starts again (a few times, then gives up with
 * {@link FileVersion.FileChangedException}). So a manifest always describes one side of the swap.
 *
 * <p>Symbolic links are reported, never followed; a link whose target is absolute or leaves the scanned tree is
 * left out (and logged), as the file routes would refuse to follow it. Devices, sockets and pipes are left out.
 */
public final class TreeScanner {
    private static final Logger LOG = LoggerFactory.getLogger(TreeScanner.class);

    /** Scans of a tree that keeps changing are retried this many times before giving up. */
    static final int ATTEMPTS = 4;

    /** Trees deeper than this are refused (a loop of bind mounts, or a hostile tree). */
    static final int MAX_DEPTH = 64;

    private static final Comparator<TreeVersion.Item> BY_PATH =
            Comparator.comparing(item -> item.entry().path());

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

    /**
     * @param root the real path of a directory
     * @return its current version
     * @throws FileVersion.FileChangedException if the tree kept changing during every attempt
     * @throws TreeTooLargeException if the tree has more than {@code maxEntries} entries
     * @throws NoSuchFileException if the directory is gone
     * @throws IOException if it cannot be read
     */
    public TreeVersion scan(Path root) throws IOException {
        FileVersion.FileChangedException last = null;
        for (int attempt = 1; attempt <= ATTEMPTS; attempt++) {
            try {
                return scanOnce(root);
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

    private TreeVersion scanOnce(Path root) throws IOException {
        FileStat top = FileStat.of(root);
        if (top.kind() != FileStat.Kind.DIRECTORY) {
            throw new NotADirectoryException(root);
        }
        List<TreeVersion.Item> items = new ArrayList<>();
        List<CompletableFuture<String>> pending = new ArrayList<>();
        List<Path> directories = new ArrayList<>();
        directories.add(root);
        walk(root, root, "", 0, items, pending, directories);
        // Digests of the files not yet cached are being computed in parallel meanwhile: collect them.
        List<TreeVersion.Item> complete = new ArrayList<>(items.size());
        int next = 0;
        long bytes = 0;
        int files = 0;
        for (TreeVersion.Item item : items) {
            if (item.entry().isFile()) {
                String sha256 = join(pending.get(next++));
                Manifest.Entry entry = item.entry();
                complete.add(new TreeVersion.Item(new Manifest.Entry(entry.path(), entry.type(), entry.size(),
                        entry.mode(), entry.mtime(), sha256, null), item.stat()));
                bytes += entry.size();
                files++;
            } else {
                complete.add(item);
            }
        }
        // The walk's order is the file system's; the manifest is sorted by the whole path ("a-b" before "a/x").
        complete.sort(BY_PATH);
        FileStat end = FileStat.of(root);
        if (!Objects.equals(end.identity(), top.identity())) {
            throw new FileVersion.FileChangedException(root + " was replaced by another directory during the scan");
        }
        List<Manifest.Entry> entries = complete.stream().map(TreeVersion.Item::entry).toList();
        Manifest manifest = new Manifest(Manifest.FORMAT, etag(entries), files, bytes, entries);
        return new TreeVersion(root, manifest, complete, directories);
    }

    private void walk(Path root, Path directory, String prefix, int depth, List<TreeVersion.Item> items,
            List<CompletableFuture<String>> pending, List<Path> directories) throws IOException {
        if (depth >= MAX_DEPTH) {
            throw new IOException(directory + " is more than " + MAX_DEPTH + " directories deep");
        }
        List<TreeVersion.Item> here = new ArrayList<>();
        try (DirectoryStream<Path> children = Files.newDirectoryStream(directory)) {
            for (Path child : children) {
                if (items.size() + here.size() >= maxEntries) {
                    throw new TreeTooLargeException(root, maxEntries);
                }
                String name = child.getFileName().toString();
                String relative = prefix + name;
                FileStat stat = FileStat.of(child);
                String mtime = stat.modified().toString();
                switch (stat.kind()) {
                    case FILE -> here.add(new TreeVersion.Item(new Manifest.Entry(relative, Manifest.Types.FILE,
                            stat.size(), stat.octalMode(), mtime, null, null), stat));
                    case DIRECTORY -> here.add(new TreeVersion.Item(new Manifest.Entry(relative,
                            Manifest.Types.DIRECTORY, null, stat.octalMode(), mtime, null, null), stat));
                    case SYMLINK -> {
                        Path target = Files.readSymbolicLink(child);
                        if (!staysInside(root, directory, target)) {
                            LOG.warn("{}: symbolic link to {} leaves the tree; left out of the manifest", child,
                                    target);
                        } else {
                            here.add(new TreeVersion.Item(new Manifest.Entry(relative, Manifest.Types.SYMLINK, null,
                                    null, null, null, target.toString()), stat));
                        }
                    }
                    case OTHER -> LOG.debug("{}: not a file, directory or link; left out of the manifest", child);
                }
            }
        }
        for (TreeVersion.Item item : here) {
            items.add(item);
            if (item.entry().isFile()) {
                pending.add(digests.sha256(item.stat()));
            } else if (item.entry().isDirectory()) {
                directories.add(item.stat().path());
                walk(root, item.stat().path(), item.entry().path() + "/", depth + 1, items, pending, directories);
            }
        }
    }

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
     * The manifest's strong ETag: a digest of every field of every entry, so that any change to the tree (a
     * file's content, mode or time, an entry added, removed or renamed) gives a new one.
     *
     * @param entries the entries, in manifest order
     * @return the ETag, quoted
     */
    static String etag(List<Manifest.Entry> entries) {
        MessageDigest sha256 = DigestCache.sha256();
        StringBuilder line = new StringBuilder(256);
        for (Manifest.Entry entry : entries) {
            line.setLength(0);
            line.append(entry.path()).append('\0').append(entry.type()).append('\0').append(entry.size())
                    .append('\0').append(entry.mode()).append('\0').append(entry.mtime()).append('\0')
                    .append(entry.sha256()).append('\0').append(entry.target()).append('\n');
            sha256.update(line.toString().getBytes(StandardCharsets.UTF_8));
        }
        return "\"m-" + HexFormat.of().formatHex(sha256.digest(), 0, 16) + "\"";
    }

    /** The path names a file, not a directory. */
    public static final class NotADirectoryException extends IOException {
        private static final long serialVersionUID = 1L;

        NotADirectoryException(Path path) {
            super(path + " is not a directory");
        }
    }

    /** The tree has more entries than a manifest may describe. */
    public static final class TreeTooLargeException extends IOException {
        private static final long serialVersionUID = 1L;

        TreeTooLargeException(Path root, int max) {
            super(root + " has more than " + max + " entries");
        }
    }
}
