package io.pintle.server.policy;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.HexFormat;
import java.util.Objects;

/**
 * One version of one file: its identity (device and inode), size and modification time, and the strong ETag
 * derived from them. Rudder replaces policy files and archives by writing a new file and renaming it, which
 * always gives a new inode, so the ETag changes whenever the content does, without reading the content.
 *
 * @param path the real path
 * @param directory whether it is a directory
 * @param size size in bytes
 * @param lastModified modification time
 * @param identity the file system's identity of the file (device and inode), as text
 * @param etag the strong entity tag, quoted
 */
public record FileVersion(
        Path path, boolean directory, long size, Instant lastModified, String identity, String etag) {
    public FileVersion {
        Objects.requireNonNull(path);
        Objects.requireNonNull(lastModified);
        Objects.requireNonNull(identity);
        Objects.requireNonNull(etag);
    }

    /**
     * Describes the file at {@code path} as it is now.
     *
     * @param path a real path, as returned by {@link SafePaths#resolve}
     * @return its current version
     * @throws IOException if it cannot be read
     */
    public static FileVersion of(Path path) throws IOException {
        // Not following links: SafePaths resolved every link already, so the real path it returned names a file,
        // not a link. If it names a link now, something swapped it in since: never follow that one.
        BasicFileAttributes attributes = Files.readAttributes(path, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        if (attributes.isSymbolicLink()) {
            throw new NoSuchFileException(path.toString(), null, "replaced by a symbolic link since it was resolved");
        }
        String identity = identity(attributes, path);
        Instant modified = attributes.lastModifiedTime().toInstant();
        String fingerprint = identity + "|" + attributes.size() + "|" + modified.getEpochSecond() + "."
                + modified.getNano();
        return new FileVersion(path, attributes.isDirectory(), attributes.size(), modified, identity,
                "\"" + digest(fingerprint) + "\"");
    }

    /**
     * Opens this version for reading. Fails if the path now names another version, so that the bytes sent
     * always match the headers already sent ({@code ETag}, {@code Content-Length}).
     *
     * @return an open channel on exactly this version
     * @throws FileChangedException if the file changed since this version was taken
     * @throws IOException if it cannot be opened
     */
    public FileChannel open() throws IOException {
        FileChannel channel = openNoFollow(path);
        boolean ok = false;
        try {
            // Checked after opening: if the path still names this version, the open channel reads it, and keeps
            // reading it even if a rename replaces the path later.
            BasicFileAttributes now;
            try {
                now = Files.readAttributes(path, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            } catch (NoSuchFileException gone) {
                throw new FileChangedException(path + " was removed or replaced while it was being served");
            }
            if (now.isSymbolicLink()) {
                throw new FileChangedException(path + " was replaced by a symbolic link while it was being served");
            }
            if (!describes(now)) {
                throw new FileChangedException(path + " changed while it was being served");
            }
            ok = true;
            return channel;
        } finally {
            if (!ok) {
                channel.close();
            }
        }
    }

    /**
     * The ETag is derived from exactly these fields, so comparing them is comparing versions, without the digest.
     *
     * @param attributes a file's attributes, read without following a link
     * @return whether they describe this version
     */
    private boolean describes(BasicFileAttributes attributes) {
        return attributes.isDirectory() == directory && attributes.size() == size
                && attributes.lastModifiedTime().toInstant().equals(lastModified)
                && identity(attributes, path).equals(identity);
    }

    /** Device and inode where the file system has them, else the path. */
    private static String identity(BasicFileAttributes attributes, Path path) {
        Object key = attributes.fileKey();
        return key != null ? key.toString() : path.toString();
    }

    /**
     * Opens a file for reading without following a symbolic link in its last component (O_NOFOLLOW): a link
     * swapped in for the file since it was stat'ed is not followed.
     *
     * @param path the file
     * @return an open channel
     * @throws FileChangedException if the path names a symbolic link now
     * @throws IOException if it cannot be opened (NoSuchFileException when absent)
     */
    static FileChannel openNoFollow(Path path) throws IOException {
        try {
            return FileChannel.open(path, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException | AccessDeniedException e) {
            throw e;
        } catch (IOException e) {
            // The JDK reports O_NOFOLLOW's ELOOP as a plain IOException "... (NOFOLLOW_LINKS specified)"; by now
            // the link may be gone again, so the message is what tells.
            if (String.valueOf(e.getMessage()).contains("NOFOLLOW_LINKS") || Files.isSymbolicLink(path)) {
                throw new FileChangedException(path + " was replaced by a symbolic link while it was being read");
            }
            throw e;
        }
    }

    private static String digest(String text) {
        try {
            byte[] hash = MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(hash, 0, 16);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is not available in this JVM", e);
        }
    }

    /** The file was replaced between describing it and opening it. */
    public static final class FileChangedException extends IOException {
        private static final long serialVersionUID = 1L;

        /**
         * @param message what changed
         */
        public FileChangedException(String message) {
            super(message);
        }
    }
}
