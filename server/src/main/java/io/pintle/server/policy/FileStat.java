package io.pintle.server.policy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.time.Instant;
import java.util.Objects;
import java.util.Set;

/**
 * What one {@code lstat} says of a path: its kind, identity (device and inode), size, modification time and
 * permission bits. Two stats are equal when they describe the same version of the same file.
 *
 * @param path the path
 * @param kind file, directory, symbolic link or other
 * @param identity the file system's identity of the file (device and inode), or null when it has none
 * @param size size in bytes
 * @param modified modification time
 * @param mode permission bits ({@code 0777} at most: set-id and sticky bits are not reported by Java)
 */
public record FileStat(Path path, Kind kind, Object identity, long size, Instant modified, int mode) {
    public FileStat {
        Objects.requireNonNull(path);
        Objects.requireNonNull(kind);
        Objects.requireNonNull(modified);
    }

    /** Kinds of file system entries. */
    public enum Kind {
        /** A regular file. */
        FILE,
        /** A directory. */
        DIRECTORY,
        /** A symbolic link (never followed). */
        SYMLINK,
        /** A device, socket or pipe: never served. */
        OTHER
    }

    /**
     * @param path a path; a symbolic link is described, not followed
     * @return its stat
     * @throws IOException if it cannot be read (NoSuchFileException when absent)
     */
    public static FileStat of(Path path) throws IOException {
        PosixFileAttributes attributes =
                Files.readAttributes(path, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        Kind kind = attributes.isRegularFile() ? Kind.FILE
                : attributes.isDirectory() ? Kind.DIRECTORY
                : attributes.isSymbolicLink() ? Kind.SYMLINK
                : Kind.OTHER;
        return new FileStat(path, kind, attributes.fileKey(), attributes.size(),
                attributes.lastModifiedTime().toInstant(), mode(attributes.permissions()));
    }

    /**
     * @param permissions POSIX permissions
     * @return the same as octal permission bits
     */
    public static int mode(Set<PosixFilePermission> permissions) {
        int mode = 0;
        for (PosixFilePermission permission : permissions) {
            // OWNER_READ is ordinal 0 and means 0400; OTHERS_EXECUTE is ordinal 8 and means 0001.
            mode |= 1 << (8 - permission.ordinal());
        }
        return mode;
    }

    /** @return the permission bits as four octal digits, for example {@code 0644} */
    public String octalMode() {
        // A manifest entry each: String.format parses its pattern every time (a tenth of a tree walk's CPU).
        return mode >= 0 && mode < OCTAL_MODES.length ? OCTAL_MODES[mode] : String.format("%04o", mode);
    }

    /** @return the modification time as a manifest writes it: {@link Instant#toString()}'s form */
    public String isoModified() {
        return IsoInstant.format(modified);
    }

    /** {@code 0000} to {@code 0777}, by value. */
    private static final String[] OCTAL_MODES = octalModes();

    private static String[] octalModes() {
        String[] modes = new String[01000];
        for (int mode = 0; mode < modes.length; mode++) {
            modes[mode] = new String(new char[] {'0', (char) ('0' + (mode >> 6)), (char) ('0' + (mode >> 3 & 7)),
                (char) ('0' + (mode & 7))});
        }
        return modes;
    }
}
