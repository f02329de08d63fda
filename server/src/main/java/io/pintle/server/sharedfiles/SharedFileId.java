package io.pintle.server.sharedfiles;

import java.nio.file.Path;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * Where a shared file lives: {@code {root}/{target}/files/{source}/{fileId}}. Each part matches relayd's rule,
 * {@code ^[A-Za-z0-9\-_.]+$} and never {@code .} or {@code ..}, so none can leave its directory.
 *
 * @param target the node the file is for
 * @param source the node that sent it
 * @param fileId the file's name, chosen by the sender
 */
public record SharedFileId(String target, String source, String fileId) {
    private static final Pattern ID = Pattern.compile("[A-Za-z0-9\\-_.]{1,255}");

    public SharedFileId {
        check("target", target);
        check("source", source);
        check("file id", fileId);
    }

    private static void check(String what, String value) {
        Objects.requireNonNull(value, what);
        if (!ID.matcher(value).matches() || value.equals(".") || value.equals("..")) {
            throw new IllegalArgumentException("invalid " + what + ": it must match ^[A-Za-z0-9\\-_.]+$ (at most "
                    + "255 characters) and not be '.' or '..'");
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
