package io.pintle.client;

import io.pintle.api.dto.Manifest;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermission;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Decides, for a checked manifest and the local tree, what the new tree takes from where: local files whose
 * content is the manifest's are reused (hard-linked when their mode and mtime are right too, copied otherwise, so
 * that setting metadata never touches the current tree), the others are downloaded. A local file's content is
 * the manifest's when its size and SHA-256 are; the SHA-256 of the previous sync's manifest is trusted when size
 * and mtime still are that manifest's (the sync sets mtimes from the manifest), otherwise the file is hashed.
 */
final class SyncPlanner {
    private static final int BUFFER = 64 * 1024;

    private SyncPlanner() {}

    /**
     * What to do.
     *
     * @param link files reused as they are (hard link, or copy where linking is impossible)
     * @param copy files whose content is reused but whose mode or mtime differ: copied, then set
     * @param touch files whose content and mode are reused but whose mtime differs, when the sync shares inodes
     *     ({@link DirectorySync#withSharedInodes}): hard-linked, then their mtime set on the inode the current tree
     *     shares (copied where linking is impossible)
     * @param download files to download
     * @param downloadBytes total size of {@code download}
     * @param removed local entries that the manifest no longer has
     * @param identical whether the local tree already is the manifest's (nothing to stage or swap)
     */
    record Plan(List<TreePath> link, List<TreePath> copy, List<TreePath> touch, List<TreePath> download,
            long downloadBytes, int removed, boolean identical) {
        Plan {
            link = List.copyOf(link);
            copy = List.copyOf(copy);
            touch = List.copyOf(touch);
            download = List.copyOf(download);
        }

        /** @return whether any local file's content is reused */
        boolean reusesSomething() {
            return !link.isEmpty() || !copy.isEmpty() || !touch.isEmpty();
        }
    }

    /**
     * @param tree the new manifest
     * @param local the local tree
     * @param previous the manifest the local tree was last synced to, or null
     * @param sharedInodes whether a file whose mtime alone differs is linked and touched rather than copied
     * @return the plan
     * @throws IOException when a local file cannot be read
     */
    static Plan plan(ManifestTree tree, LocalTree local, Manifest previous, boolean sharedInodes)
            throws IOException {
        Map<String, Manifest.Entry> before = new HashMap<>();
        if (previous != null) {
            for (Manifest.Entry entry : previous.entries()) {
                before.put(entry.path(), entry);
            }
        }
        List<TreePath> link = new ArrayList<>();
        List<TreePath> copy = new ArrayList<>();
        List<TreePath> touch = new ArrayList<>();
        List<TreePath> download = new ArrayList<>();
        long downloadBytes = 0;
        boolean identical = local.exists();
        for (Map.Entry<TreePath, Manifest.Entry> item : tree.entries().entrySet()) {
            TreePath path = item.getKey();
            Manifest.Entry wanted = item.getValue();
            LocalTree.Entry have = local.entries().get(path.value());
            Set<PosixFilePermission> permissions = tree.permissions(path);
            boolean modeRight = have != null && (permissions == null || permissions.equals(have.permissions()));
            if (wanted.isDirectory()) {
                identical &= have != null && have.kind() == LocalTree.Kind.DIRECTORY && modeRight;
            } else if (wanted.isSymlink()) {
                identical &= have != null && have.kind() == LocalTree.Kind.SYMLINK
                        && Path.of(have.target()).equals(Path.of(wanted.target()));
            } else if (have != null && have.kind() == LocalTree.Kind.FILE
                    && sameContent(path, wanted, have, before.get(path.value()), local.root())) {
                boolean metadataRight = modeRight && sameTime(have.mtime(), tree.mtime(path));
                (metadataRight ? link : modeRight && sharedInodes ? touch : copy).add(path);
                identical &= metadataRight;
            } else {
                download.add(path);
                downloadBytes += wanted.size();
                identical = false;
            }
        }
        int removed = 0;
        for (String path : local.entries().keySet()) {
            if (!tree.entries().containsKey(asTreePath(path))) {
                removed++;
            }
        }
        identical &= removed == 0;
        return new Plan(link, copy, touch, download, downloadBytes, removed, identical);
    }

    private static TreePath asTreePath(String local) {
        try {
            return new TreePath(local);
        } catch (IllegalArgumentException notAManifestName) {
            return null;
        }
    }

    private static boolean sameContent(TreePath path, Manifest.Entry wanted, LocalTree.Entry have,
            Manifest.Entry previous, Path root) throws IOException {
        if (have.size() != wanted.size()) {
            return false;
        }
        if (previous != null && previous.isFile() && previous.size() != null && previous.size() == have.size()
                && previous.sha256() != null && previous.mtime() != null
                && sameTime(have.mtime(), ManifestTree.mtime(previous))) {
            return previous.sha256().equals(wanted.sha256());
        }
        return sha256(path.under(root)).equals(wanted.sha256());
    }

    /**
     * Whether a file's mtime is the manifest's, allowing for a file system that keeps less precision than the
     * server's (microseconds, milliseconds or seconds).
     */
    static boolean sameTime(FileTime local, Instant wanted) {
        if (wanted == null) {
            return true;
        }
        Instant have = local.toInstant();
        for (ChronoUnit unit : List.of(ChronoUnit.NANOS, ChronoUnit.MICROS, ChronoUnit.MILLIS, ChronoUnit.SECONDS)) {
            if (have.equals(wanted.truncatedTo(unit))) {
                return true;
            }
        }
        return false;
    }

    /**
     * @param file a regular file (not followed if it is a link)
     * @return the lower-case hex SHA-256 of its content
     * @throws IOException when it cannot be read
     */
    static String sha256(Path file) throws IOException {
        MessageDigest digest = newDigest();
        try (InputStream in = Files.newInputStream(file, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
            byte[] buffer = new byte[BUFFER];
            for (int n; (n = in.read(buffer)) > 0; ) {
                digest.update(buffer, 0, n);
            }
        }
        return HexFormat.of().formatHex(digest.digest());
    }

    /** @return a SHA-256 digest (every JDK has one) */
    static MessageDigest newDigest() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("this JDK has no SHA-256", e);
        }
    }
}
