package io.pintle.server.uploads;

import io.pintle.server.problem.PintleException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.concurrent.ThreadLocalRandom;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes one upload into its directory the way relayd needs it: the body is streamed to a hidden temporary name
 * ({@value #TEMP_PREFIX}{@code <random>}{@value #TEMP_SUFFIX}: relayd skips dot files and unknown extensions),
 * fsync'd, then renamed to its final name in the same directory, and the directory fsync'd. relayd's
 * {@code CLOSE_WRITE|MOVED_TO} watch therefore sees a name only when the whole body is on disk. Anything that
 * stops the upload before the rename (the client gone or too slow, a short body, the size limit, a full disk)
 * removes the temporary file and leaves nothing under the final name. Stateless: one instance serves every
 * request.
 */
public final class UploadStore {
    /** Start of every temporary name. */
    public static final String TEMP_PREFIX = ".pintle-upload-";
    /** End of every temporary name. */
    public static final String TEMP_SUFFIX = ".tmp";
    /** Longest name, in UTF-8 bytes: the file system's limit for one name. */
    public static final int MAX_NAME_BYTES = 255;

    private static final Logger LOG = LoggerFactory.getLogger(UploadStore.class);
    private static final int BUFFER_BYTES = 64 * 1024;

    /**
     * What an upload did.
     *
     * @param replaced whether a file of that name was there before (HTTP 204), or not (201)
     * @param bytes how many bytes were written
     */
    public record Stored(boolean replaced, long bytes) {}

    /**
     * Checks a name as it appears after the route's prefix (percent-decoded): one plain file name.
     *
     * @param name the name
     * @return the name
     * @throws PintleException.InvalidRequest saying what is wrong with it
     */
    public static String checkName(String name) {
        if (name == null || name.isEmpty()) {
            throw new PintleException.InvalidRequest("name-missing", "the URL names no file: upload to "
                    + "<route>/<file name> (curl --upload-file FILE https://server/reports/ appends the name)");
        }
        if (name.getBytes(StandardCharsets.UTF_8).length > MAX_NAME_BYTES) {
            throw new PintleException.InvalidRequest("name-too-long", "a file name is at most " + MAX_NAME_BYTES
                    + " bytes");
        }
        if (name.indexOf('/') >= 0 || name.indexOf('\\') >= 0) {
            throw new PintleException.InvalidRequest("invalid-name", "a file name may not contain '/' or '\\' "
                    + "(uploads go into one directory)");
        }
        if (name.startsWith(".")) {
            throw new PintleException.InvalidRequest("invalid-name", "a file name may not start with a dot");
        }
        name.codePoints().filter(Character::isISOControl).findFirst().ifPresent(c -> {
            throw new PintleException.InvalidRequest("invalid-name", "a file name may not contain control "
                    + "characters (found U+" + String.format("%04X", c) + ")");
        });
        return name;
    }

    /**
     * @param kind the route, for log lines
     * @param directory where the file goes
     * @param name its checked name ({@link #checkName})
     * @param body the request body
     * @param declaredLength the request's Content-Length, or -1 when it sent none (chunked)
     * @param maxBytes the largest body taken
     * @return what was done
     * @throws DiskFailure when the disk fails in a way that is the server's problem
     * @throws IOException when the client's body fails (the client went away); in every case of failure nothing is
     *     left under the final name
     * @throws PintleException.TooLarge past {@code maxBytes}
     * @throws PintleException.InvalidRequest when the body is shorter than its Content-Length
     * @throws PintleException.InsufficientStorage when the disk is full
     */
    public Stored store(UploadKind kind, Path directory, String name, InputStream body, long declaredLength,
            long maxBytes) throws IOException {
        return store(kind, directory, name, body, declaredLength, maxBytes, temp -> { });
    }

    /**
     * What is checked of a whole body before it takes its name: a refusal ({@link PintleException}) leaves nothing.
     */
    @FunctionalInterface
    public interface Check {
        /**
         * @param temporary the complete body, fsync'd, under its temporary name
         * @throws IOException when it cannot be read
         */
        void check(Path temporary) throws IOException;
    }

    /**
     * As {@link #store(UploadKind, Path, String, InputStream, long, long)}, with a check of the complete body before
     * the rename.
     *
     * @param check run on the complete temporary file; what it throws leaves nothing under the final name
     * @return what was done
     * @throws IOException as the other form
     */
    public Stored store(UploadKind kind, Path directory, String name, InputStream body, long declaredLength,
            long maxBytes, Check check) throws IOException {
        if (declaredLength > maxBytes) {
            throw tooLarge(maxBytes);
        }
        Path target = directory.resolve(name);
        if (Files.isDirectory(target, LinkOption.NOFOLLOW_LINKS)) {
            throw new PintleException.InvalidRequest("invalid-name", "'" + name + "' is a directory in "
                    + kind.label() + "'s upload directory");
        }
        Path temp = directory.resolve(TEMP_PREFIX + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong())
                + TEMP_SUFFIX);
        boolean renamed = false;
        try {
            long total = 0;
            try (FileChannel out = disk(directory, () -> FileChannel.open(temp, StandardOpenOption.CREATE_NEW,
                    StandardOpenOption.WRITE))) {
                byte[] buffer = new byte[BUFFER_BYTES];
                while (true) {
                    int read = body.read(buffer);
                    if (read < 0) {
                        break;
                    }
                    total += read;
                    if (total > maxBytes) {
                        throw tooLarge(maxBytes);
                    }
                    ByteBuffer chunk = ByteBuffer.wrap(buffer, 0, read);
                    disk(directory, () -> {
                        while (chunk.hasRemaining()) {
                            out.write(chunk);
                        }
                        return null;
                    });
                }
                if (declaredLength >= 0 && total != declaredLength) {
                    throw new PintleException.InvalidRequest("upload-incomplete", "the body had " + total
                            + " bytes, its Content-Length said " + declaredLength);
                }
                disk(directory, () -> {
                    out.force(true);
                    return null;
                });
            }
            check.check(temp);
            // Two uploads of one name at once may both be told 201: which one replaced the other is the renames'
            // order, and relayd reads the file, not the status.
            boolean replaced = Files.exists(target, LinkOption.NOFOLLOW_LINKS);
            disk(directory, () -> Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE));
            renamed = true;
            syncDirectory(directory);
            return new Stored(replaced, total);
        } finally {
            if (!renamed) {
                try {
                    Files.deleteIfExists(temp);
                } catch (IOException e) {
                    LOG.warn("cannot remove the temporary file {} of a failed upload: {}", temp, e.getMessage());
                }
            }
        }
    }

    /**
     * Removes temporary files a stopped process left behind (killed mid-upload). Only names of this class's form,
     * and only older than {@code olderThan}: a process being replaced may still be finishing its uploads.
     *
     * @param directory an upload directory
     * @param olderThan the age from which a temporary file is left over
     * @param now the current time
     * @return how many were removed
     */
    public static int removeLeftovers(Path directory, Duration olderThan, Instant now) {
        int removed = 0;
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(directory, TEMP_PREFIX + "*" + TEMP_SUFFIX)) {
            for (Path entry : entries) {
                try {
                    if (Files.getLastModifiedTime(entry, LinkOption.NOFOLLOW_LINKS).toInstant()
                            .isBefore(now.minus(olderThan)) && Files.deleteIfExists(entry)) {
                        removed++;
                    }
                } catch (NoSuchFileException e) {
                    // Renamed or removed meanwhile.
                }
            }
        } catch (IOException e) {
            LOG.warn("cannot clean temporary uploads in {}: {}", directory, e.getMessage());
        }
        return removed;
    }

    private static PintleException.TooLarge tooLarge(long maxBytes) {
        return new PintleException.TooLarge("upload-too-large", "an upload is at most " + maxBytes
                + " bytes ([uploads] max_bytes)");
    }

    /** A step on the disk: a full disk becomes a 507, any other failure stays an I/O error of the server's. */
    private static <T> T disk(Path directory, DiskStep<T> step) throws IOException {
        try {
            return step.run();
        } catch (IOException e) {
            if (isNoSpace(e)) {
                throw new PintleException.InsufficientStorage("insufficient-storage", "no space left in "
                        + directory + " for this upload; nothing was kept");
            }
            throw new DiskFailure("cannot write the upload in " + directory + ": " + e.getMessage(), e);
        }
    }

    /** The server failed to write an upload to its disk (not the client's failure). */
    public static final class DiskFailure extends IOException {
        private static final long serialVersionUID = 1L;

        DiskFailure(String message, IOException cause) {
            super(message, cause);
        }
    }

    /**
     * @param failure an I/O error of a write
     * @return whether it says the file system is full (or the quota reached)
     */
    static boolean isNoSpace(IOException failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            String message = cause.getMessage();
            if (message != null && (message.contains("No space left on device")
                    || message.contains("Disk quota exceeded"))) {
                return true;
            }
        }
        return false;
    }

    private static void syncDirectory(Path directory) {
        // The rename is durable only once the directory is; Linux lets a directory be opened and fsync'd.
        try (FileChannel dir = FileChannel.open(directory, StandardOpenOption.READ)) {
            dir.force(true);
        } catch (IOException e) {
            LOG.debug("cannot fsync {}: {}", directory, e.getMessage());
        }
    }

    @FunctionalInterface
    private interface DiskStep<T> {
        T run() throws IOException;
    }
}
