package io.pintle.client;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.pintle.api.dto.Manifest;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Objects;
import java.util.Set;

/**
 * The sidecar file that remembers, next to a synced directory (in its parent, never inside it), which manifest
 * it was last synced to and from where: {@code .<name>.pintle-sync.json}. An unreadable or foreign sidecar is
 * as good as none: the next sync compares the tree file by file instead of trusting it.
 *
 * @param format {@link #FORMAT}
 * @param remote the remote directory path the manifest came from
 * @param manifest the manifest last applied
 */
record SyncState(int format, String remote, Manifest manifest) {
    /** What a sidecar's name takes while it is written. */
    static final String TEMPORARY_SUFFIX = ".tmp";
    /** What a sidecar's name takes while its tree is swapped ({@link #retire}). */
    static final String RETIRED_SUFFIX = ".retired";

    /** Current sidecar format. */
    static final int FORMAT = 1;

    private static final FileAttribute<Set<PosixFilePermission>> OWNER_ONLY =
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------"));

    private static final ObjectMapper JSON =
            new ObjectMapper().configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);

    SyncState {
        Objects.requireNonNull(remote, "remote");
        Objects.requireNonNull(manifest, "manifest");
    }

    /**
     * @param localDir a synced directory
     * @return its sidecar file
     */
    static Path file(Path localDir) {
        return SyncNames.sibling(localDir, SyncNames.STATE);
    }

    /**
     * @param sidecar a sidecar file
     * @return the file it is written to before it is renamed over the sidecar
     */
    static Path temporary(Path sidecar) {
        return sidecar.resolveSibling(sidecar.getFileName() + TEMPORARY_SUFFIX);
    }

    /**
     * @param sidecar a sidecar file
     * @return where {@link #retire} puts it
     */
    static Path retired(Path sidecar) {
        return sidecar.resolveSibling(sidecar.getFileName() + RETIRED_SUFFIX);
    }

    /**
     * Takes the sidecar of {@code localDir} out of the way before its tree is swapped: renamed to {@code
     * .<name>.pintle-sync.json.retired} (over one a crash may have left there), for the caller to delete once the
     * swap is done. To a later sync the sidecar is then simply missing, as if deleted; renaming rather than deleting
     * keeps an unlink, which waits for the file system's journal, off the sync's way. The caller holds the
     * directory's sync lock.
     *
     * @param localDir the synced directory
     * @return the retired file, or null when there was no sidecar
     * @throws IOException when it can be neither renamed nor deleted
     */
    static Path retire(Path localDir) throws IOException {
        Path file = file(localDir);
        Path retired = retired(file);
        try {
            Files.move(file, retired, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            return retired;
        } catch (NoSuchFileException none) {
            return null;
        } catch (AtomicMoveNotSupportedException e) {
            Files.deleteIfExists(file);
            return null;
        }
    }

    /**
     * Puts a retired sidecar back, after a swap that failed.
     *
     * @param retired what {@link #retire} returned, or null
     * @param localDir the synced directory
     * @return whether it is back
     */
    static boolean restore(Path retired, Path localDir) {
        if (retired == null) {
            return false;
        }
        try {
            Files.move(retired, file(localDir), StandardCopyOption.ATOMIC_MOVE);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * @param localDir a synced directory
     * @param remote the remote directory path about to be synced
     * @return the state of the last sync of {@code remote} into {@code localDir}, or null when there is none
     *     usable (missing, unreadable, another format or another remote)
     */
    static SyncState read(Path localDir, String remote) {
        try {
            SyncState state = JSON.readValue(Files.readAllBytes(file(localDir)), SyncState.class);
            return state.format() == FORMAT && state.remote().equals(remote) ? state : null;
        } catch (NoSuchFileException none) {
            return null;
        } catch (IOException | RuntimeException unusable) {
            // Includes Jackson's parse errors: a sidecar from an older format, or damaged by hand.
            return null;
        }
    }

    /**
     * Writes the sidecar atomically: to a new owner-only {@code .<name>.pintle-sync.json.tmp} beside it, then
     * renamed over it. A fixed name, not a random one: every writer holds the directory's sync lock, so there is
     * never a second one; a temporary file left by a crash is deleted first.
     *
     * @param localDir the synced directory
     * @throws IOException when it cannot be written
     */
    void write(Path localDir) throws IOException {
        Path file = file(localDir);
        Path temporary = temporary(file);
        ByteBuffer json = ByteBuffer.wrap(JSON.writeValueAsBytes(this));
        try {
            try (SeekableByteChannel out = open(temporary)) {
                while (json.hasRemaining()) {
                    out.write(json);
                }
            }
            try {
                Files.move(temporary, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(temporary, file, StandardCopyOption.REPLACE_EXISTING);
            }
        } catch (IOException | RuntimeException e) {
            try {
                Files.deleteIfExists(temporary);
            } catch (IOException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    /** A new file (never through a link, never one already there: a crash's leftover is deleted first). */
    private static SeekableByteChannel open(Path temporary) throws IOException {
        try {
            return create(temporary);
        } catch (FileAlreadyExistsException leftover) {
            Files.deleteIfExists(temporary); // does not follow a link
            return create(temporary);
        }
    }

    private static SeekableByteChannel create(Path temporary) throws IOException {
        Set<OpenOption> options = Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE,
                LinkOption.NOFOLLOW_LINKS);
        try {
            return Files.newByteChannel(temporary, options, OWNER_ONLY);
        } catch (UnsupportedOperationException notPosix) {
            return Files.newByteChannel(temporary, options);
        }
    }
}
