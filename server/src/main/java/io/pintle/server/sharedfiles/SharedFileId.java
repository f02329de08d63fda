package io.pintle.server.sharedfiles;

import java.nio.file.Path;
import java.util.Locale;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * Where a shared file lives: {@code {root}/{target}/files/{source}/{fileId}}, its metadata beside it in
 * {@code {fileId}.metadata}. Each part matches relayd's rule, {@code ^[A-Za-z0-9\-_.]+$} and never {@code .} or
 * {@code ..}, so none can leave its directory. Every name derived from a valid id fits a file name
 * ({@code NAME_MAX}, 255 bytes), and no valid file id names the metadata of another
 * ({@code x.metadata}, refused as relayd refuses it) or an upload's temporary file (those contain
 * {@link #NOT_IN_IDS}).
 *
 * @param target the node the file is for
 * @param source the node that sent it
 * @param fileId the file's name, chosen by the sender
 */
public record SharedFileId(String target, String source, String fileId) {
    /** The longest file name on the file systems Rudder runs on ({@code NAME_MAX}); ids are ASCII, one byte each. */
    static final int NAME_MAX = 255;

    /** The longest file id: {@code {fileId}.metadata} must fit {@link #NAME_MAX}. */
    public static final int MAX_FILE_ID_LENGTH = NAME_MAX - SharedFileMetadata.EXTENSION.length();

    /** A character no id may contain: what marks the store's own temporary names. */
    static final char NOT_IN_IDS = '~';

    private static final Pattern ID = Pattern.compile("[A-Za-z0-9\\-_.]+");

    public SharedFileId {
        check("target", target, NAME_MAX);
        check("source", source, NAME_MAX);
        check("file id", fileId, MAX_FILE_ID_LENGTH);
        // Case-insensitively: on a case-insensitive file system "x.METADATA" is x's metadata too.
        if (fileId.toLowerCase(Locale.ROOT).endsWith(SharedFileMetadata.EXTENSION)) {
            throw new IllegalArgumentException("invalid file id: it must not end with '"
                    + SharedFileMetadata.EXTENSION + "' (that name holds a shared file's metadata)");
        }
    }

    private static void check(String what, String value, int maxLength) {
        Objects.requireNonNull(value, what);
        if (value.length() > maxLength) {
            throw new IllegalArgumentException("invalid " + what + ": it is " + value.length() + " characters long; at "
                    + "most " + maxLength + " are accepted, so that every file name derived from it fits the file "
                    + "system's " + NAME_MAX + "-byte limit");
        }
        if (!ID.matcher(value).matches() || value.equals(".") || value.equals("..")) {
            throw new IllegalArgumentException("invalid " + what + ": it must match ^[A-Za-z0-9\\-_.]+$ and not be "
                    + "'.' or '..'");
        }
    }

    /**
     * @param root the shared files directory ({@code [paths] shared_files})
     * @return the file
     */
    public Path file(Path root) {
        return root.resolve(target).resolve("files").resolve(source).resolve(fileId);
    }

    /**
     * @param root the shared files directory
     * @return the file's metadata ({@code <fileId>.metadata})
     */
    public Path metadata(Path root) {
        return file(root).resolveSibling(fileId + SharedFileMetadata.EXTENSION);
    }

    /** @return {@code target/source/fileId}, as in the URL */
    public String url() {
        return target + "/" + source + "/" + fileId;
    }
}
