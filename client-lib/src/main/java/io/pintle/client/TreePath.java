package io.pintle.client;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * A path inside a synced tree as a manifest names it: relative, {@code /}-separated. It cannot exist unless it is
 * safe to resolve below a root: never empty or absolute, no empty, {@code .} or {@code ..} segment, no NUL,
 * backslash or other control character. So {@link #under} always names a path below its root, whatever a
 * hostile manifest says (symbolic links inside the root aside, which {@link ManifestTree} rules on).
 *
 * @param value the path, as in the manifest
 */
record TreePath(String value) implements Comparable<TreePath> {
    TreePath {
        Objects.requireNonNull(value, "path");
        if (value.isEmpty()) {
            throw new IllegalArgumentException("empty path");
        }
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c < 0x20 || c == 0x7f || c == '\\') {
                throw new IllegalArgumentException(
                        "path '" + printable(value) + "' has a NUL, control character or backslash");
            }
        }
        if (value.startsWith("/")) {
            throw new IllegalArgumentException("path '" + value + "' is absolute");
        }
        for (String segment : value.split("/", -1)) {
            if (segment.isEmpty()) {
                throw new IllegalArgumentException("path '" + value + "' has an empty segment");
            }
            if (segment.equals(".") || segment.equals("..")) {
                throw new IllegalArgumentException("path '" + value + "' has a '" + segment + "' segment");
            }
        }
    }

    /** @return the segments, at least one */
    List<String> segments() {
        return Arrays.asList(value.split("/"));
    }

    /** @return the parent path, or null for a top-level entry */
    TreePath parent() {
        int slash = value.lastIndexOf('/');
        return slash < 0 ? null : new TreePath(value.substring(0, slash));
    }

    /** @return the number of segments */
    int depth() {
        return segments().size();
    }

    /**
     * @param root a directory
     * @return this path below {@code root}, one segment at a time (a segment never contains a separator)
     */
    Path under(Path root) {
        Path path = root;
        for (String segment : segments()) {
            path = path.resolve(segment);
        }
        return path;
    }

    /** Sorted as the manifest is: by UTF-16 code units, which puts a parent before its children. */
    @Override
    public int compareTo(TreePath other) {
        return value.compareTo(other.value);
    }

    @Override
    public String toString() {
        return value;
    }

    /** Control characters in an error message would garble a terminal: show them escaped. */
    static String printable(String text) {
        StringBuilder out = new StringBuilder(text.length());
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c < 0x20 || c == 0x7f) {
                out.append(String.format("\\x%02x", (int) c));
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }
}
