package io.pintle.api.dto;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;
import java.util.Objects;

/**
 * The recursive manifest of a directory, answered to {@code GET <directory URL>/?view=manifest}. Entries are
 * sorted by path (UTF-8 byte order, so a parent comes before its children) and describe one consistent version
 * of the tree; {@code etag} is the response's strong ETag (quoted), derived from the entries alone.
 *
 * @param format the manifest format version ({@link #FORMAT})
 * @param etag the strong entity tag of this version, quoted, as in the {@code ETag} header
 * @param files number of regular files
 * @param bytes total size of the regular files
 * @param entries every file, directory and symbolic link below the directory (not the directory itself)
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Manifest(int format, String etag, int files, long bytes, List<Entry> entries) {
    /** Current format version. */
    public static final int FORMAT = 1;

    public Manifest {
        Objects.requireNonNull(etag, "etag");
        entries = List.copyOf(entries);
    }

    /** Kind of an entry, as written in JSON. */
    public static final class Types {
        /** A regular file: {@code size} and {@code sha256} are set. */
        public static final String FILE = "file";

        /** A directory. */
        public static final String DIRECTORY = "directory";

        /** A symbolic link: {@code target} is set, as stored in the link (relative, inside the tree). */
        public static final String SYMLINK = "symlink";

        private Types() {}
    }

    /**
     * One entry.
     *
     * @param path the path relative to the manifest's directory, {@code /}-separated, never {@code .}, {@code ..}
     *     or absolute
     * @param type {@link Types#FILE}, {@link Types#DIRECTORY} or {@link Types#SYMLINK}
     * @param size size in bytes (files only)
     * @param mode permission bits in octal, for example {@code 0644}
     * @param mtime modification time, ISO-8601 UTC with the file system's precision
     * @param sha256 lower-case hex SHA-256 of the content (files only)
     * @param target the link's target as stored (symbolic links only)
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Entry(
            String path, String type, Long size, String mode, String mtime, String sha256, String target) {
        public Entry {
            Objects.requireNonNull(path, "path");
            Objects.requireNonNull(type, "type");
        }

        /** @return whether this is a regular file */
        @JsonIgnore
        public boolean isFile() {
            return Types.FILE.equals(type);
        }

        /** @return whether this is a directory */
        @JsonIgnore
        public boolean isDirectory() {
            return Types.DIRECTORY.equals(type);
        }

        /** @return whether this is a symbolic link */
        @JsonIgnore
        public boolean isSymlink() {
            return Types.SYMLINK.equals(type);
        }
    }
}
