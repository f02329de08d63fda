package io.pintle.server.delivery;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermission;
import java.security.DigestOutputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.Set;
import io.pintle.server.policy.FileStat;
import io.pintle.server.policy.StateFile;

/**
 * Where {@link TreeCopy} keeps the bytes of files it cannot hard-link to their source (another mount, as under the
 * packaged unit, or {@code fs.protected_hardlinks}): {@code [paths] state}/{@value #DIRECTORY}/, one file per
 * content and mode, named by its SHA-256, which every copy links to. The same file in a thousand nodes' trees is
 * stored once. An object no copy links to any more (link count 1) is removed by {@link #sweep}. Storing and
 * sweeping take this object's lock, so a sweep never removes an object between its store and its link; neither is
 * on the request path.
 */
public final class ObjectStore {
    /** Directory in the state directory. */
    public static final String DIRECTORY = "objects";

    /**
     * The object holding these bytes with this mode, stored from {@code file} unless it is there already, then
     * linked at {@code copy}.
     *
     * @param state {@code [paths] state}
     * @param file the source file (read once: hashed while it is copied)
     * @param mode its permissions
     * @param copy where the link goes (must not exist)
     * @return the bytes written (0 when the object was there)
     * @throws IOException when it cannot be read, written or linked
     */
    synchronized long link(Path state, Path file, Set<PosixFilePermission> mode, Path copy) throws IOException {
        Path objects = state.resolve(DIRECTORY);
        Files.createDirectories(objects, StateFile.PRIVATE_DIRECTORY);
        Path temp = Files.createTempFile(objects, ".store-", ".tmp");
        long written;
        String name;
        try {
            MessageDigest sha256 = sha256();
            try (InputStream in = Files.newInputStream(file, LinkOption.NOFOLLOW_LINKS);
                    OutputStream out = new DigestOutputStream(Files.newOutputStream(temp), sha256)) {
                written = in.transferTo(out);
            }
            name = HexFormat.of().formatHex(sha256.digest()) + "-" + Integer.toOctalString(FileStat.mode(mode));
            Path object = objects.resolve(name);
            if (Files.exists(object, LinkOption.NOFOLLOW_LINKS)) {
                written = 0;
            } else {
                Files.setPosixFilePermissions(temp, mode);
                try (FileChannel channel = FileChannel.open(temp, StandardOpenOption.WRITE)) {
                    channel.force(true);
                }
                Files.move(temp, object, StandardCopyOption.ATOMIC_MOVE);
            }
            Files.createLink(copy, object);
            return written;
        } finally {
            Files.deleteIfExists(temp);
        }
    }

    /**
     * Removes the objects no copy links to any more, when older than {@code minimumAge} (so that one stored for a
     * copy under way is not taken from it).
     *
     * @param state {@code [paths] state}
     * @param minimumAge how old an unlinked object must be to go
     * @param now the time
     * @return how many were removed
     * @throws IOException when the directory cannot be read
     */
    public synchronized int sweep(Path state, Duration minimumAge, Instant now) throws IOException {
        Path objects = state.resolve(DIRECTORY);
        if (!Files.isDirectory(objects, LinkOption.NOFOLLOW_LINKS)) {
            return 0;
        }
        int removed = 0;
        FileTime before = FileTime.from(now.minus(minimumAge));
        try (DirectoryStream<Path> all = Files.newDirectoryStream(objects)) {
            for (Path object : all) {
                try {
                    int links = (Integer) Files.getAttribute(object, "unix:nlink", LinkOption.NOFOLLOW_LINKS);
                    if (links <= 1 && Files.getLastModifiedTime(object, LinkOption.NOFOLLOW_LINKS).compareTo(before)
                            <= 0) {
                        Files.delete(object);
                        removed++;
                    }
                } catch (NoSuchFileException gone) {
                    // removed meanwhile
                }
            }
        }
        return removed;
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is not available in this JVM", e);
        }
    }
}
