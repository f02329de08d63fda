package io.pintle.server.policy;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

/**
 * Writes one of Pintle's own state files ({@code [paths] state}) whole or not at all: to a temporary name in its
 * directory (created private when missing), fsync'd, renamed over the old one. A crash leaves the old file or the
 * new one.
 */
public final class StateFile {
    /** Directories of the state directory are the service's only. */
    public static final FileAttribute<Set<PosixFilePermission>> PRIVATE_DIRECTORY =
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------"));

    private StateFile() {}

    /**
     * @param file the file
     * @param bytes its new content
     * @throws IOException when it cannot be written (the old file stays)
     */
    public static void write(Path file, byte[] bytes) throws IOException {
        Files.createDirectories(file.getParent(), PRIVATE_DIRECTORY);
        Path temp = Files.createTempFile(file.getParent(), "." + file.getFileName() + "-", ".tmp");
        try {
            Files.write(temp, bytes);
            try (FileChannel channel = FileChannel.open(temp, StandardOpenOption.WRITE)) {
                channel.force(true);
            }
            Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } finally {
            Files.deleteIfExists(temp);
        }
    }
}
