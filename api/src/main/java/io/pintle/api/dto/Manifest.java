package io.pintle.api.dto;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;
import java.util.Objects;

/**
 * The recursive manifest of a directory, answered to {@code GET <directory URL>/?view=manifest}. Entries are
 * sorted by path (UTF-8 byte order, so a parent comes before its children) and describe one consistent version
 * of the tree; {@code etag} is the response's strong ETag (quoted), derived from the entries alone ({@link
 * ManifestEtag}).
 *
 * <p>Asked with {@code ?since=<etag>} ({@link io.pintle.api.Routes#SINCE}), a server that still knows that version
 * answers a <em>change list</em> instead: {@code since} is set, {@code entries} holds only what is below the
 * top-level entries that differ from that version (each such top-level entry with everything below it, whole),
 * and {@code removed} names the top-level entries gone since. A server that no longer knows the version answers
 * the whole manifest ({@code since} and {@code removed} absent).
 *
 * @param format the manifest format version ({@link #FORMAT})
 * @param etag the strong entity tag of this version, quoted, as in the {@code ETag} header
 * @param since in a change list, the version it is relative to (quoted); absent in a whole manifest
 * @param files number of regular files of the whole version (in a change list too)
 * @param bytes total size of the regular files of the whole version (in a change list too)
 * @param entries every file, directory and symbolic link below the directory (not the directory itself); in a
 *     change list, those below the top-level entries that changed
 * @param removed in a change list, the names of the top-level entries gone since {@code since}, sorted; absent in
 *     a whole manifest
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Manifest(
        int format, String etag, String since, int files, long bytes, List<Entry> entries, List<String> removed) {
    /** Current format version. */
    public static final int FORMAT = 1;

    public Manifest {
        Objects.requireNonNull(etag, "etag");
        entries = List.copyOf(entries);
        removed = removed == null ? null : List.copyOf(removed);
        if ((since == null) != (removed == null)) {
            throw new IllegalArgumentException("a change list has both since and removed, a whole manifest neither");
        }
    }

    /** A whole manifest. */
    public Manifest(int format, String etag, int files, long bytes, List<Entry> entries) {
        this(format, etag, null, files, bytes, entries, null);
    }

    /** @return whether this is a change list ({@code since} set) rather than the whole manifest */
    @JsonIgnore
    public boolean isChangeList() {
        return since != null;
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
