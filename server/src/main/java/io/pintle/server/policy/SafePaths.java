package io.pintle.server.policy;

import java.io.IOException;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Locale;
import java.nio.ByteBuffer;
import java.io.ByteArrayOutputStream;

/**
 * The single place where a request path becomes a file. The path arrives still percent-encoded, so that encoded
 * separators and dots can be refused instead of being decoded into something else.
 *
 * <p>Refused, as {@link UnsafePathException}: encoded {@code /}, {@code \}, {@code .} or NUL; a literal
 * {@code \} or NUL; control characters; {@code .} and {@code ..} segments; empty segments ({@code //}); an
 * absolute path; invalid percent-encoding or UTF-8; unencoded non-ASCII characters. A trailing slash must name a
 * directory. Then the path is resolved against the root and its real path
 * (symlinks followed) must stay inside the root's real path; otherwise, or when it does not exist, the result is
 * {@link java.nio.file.NoSuchFileException}, so an escape looks like a missing file from outside.
 */
public final class SafePaths {
    /** Longest accepted relative path, in characters; Linux's PATH_MAX. */
    public static final int MAX_PATH_LENGTH = 4096;
    /** Longest accepted path segment, in bytes (UTF-8); Linux's NAME_MAX: no longer name can exist. */
    public static final int MAX_NAME_BYTES = 255;

    private SafePaths() {}

    /** A path whose real location (after symlinks) is outside its root; looks like a missing file from outside. */
    public static final class EscapeException extends NoSuchFileException {
        private static final long serialVersionUID = 1L;

        EscapeException(String message) {
            super(message);
        }
    }

    /**
     * @param root the tree's root directory
     * @param encodedRelative the path below the root as it appeared in the URL (percent-encoded, no leading
     *     slash); a trailing slash is allowed and names a directory
     * @return the real path of the file or directory
     * @throws UnsafePathException when the path breaks a rule (the message names it)
     * @throws java.nio.file.NoSuchFileException when it does not exist or resolves outside the root
     * @throws IOException on other file system errors
     */
    public static Path resolve(Path root, String encodedRelative) throws UnsafePathException, IOException {
        String relative = decode(encodedRelative);
        boolean directory = relative.endsWith("/");
        if (directory) {
            relative = relative.substring(0, relative.length() - 1);
        }
        if (relative.isEmpty()) {
            return real(root, root);
        }
        Path candidate = below(root, relative);
        Path real = real(root, candidate);
        if (directory && !Files.isDirectory(real)) {
            throw new NoSuchFileException(candidate + "/", null, "not a directory");
        }
        return real;
    }

    /**
     * The path a request names below its root, checked by the same rules as {@link #resolve}, before any link is
     * followed: what {@link #real} then resolves, and what {@link FileCache} is keyed by.
     *
     * @param root the tree's root directory
     * @param encodedRelative the path below the root as it appeared in the URL, naming a file (no trailing slash)
     * @return the root with the decoded path appended, not yet checked against links
     * @throws UnsafePathException when the path breaks a rule, is empty or ends with a slash
     */
    public static Path lexical(Path root, String encodedRelative) throws UnsafePathException {
        String relative = decode(encodedRelative);
        if (relative.isEmpty() || relative.endsWith("/")) {
            throw new UnsafePathException("a file's path must not be empty or end with '/'");
        }
        return below(root, relative);
    }

    /**
     * The real path of a path from {@link #lexical} (or of the root itself), which must stay inside the root.
     *
     * @param root the tree's root directory
     * @param lexical a path from {@link #lexical} for the same root, or the root
     * @return its real path (links followed)
     * @throws java.nio.file.NoSuchFileException when it does not exist or resolves outside the root
     * @throws IOException on other file system errors
     */
    public static Path real(Path root, Path lexical) throws IOException {
        Path real = lexical.toRealPath();
        if (real.startsWith(root)) {
            // Every leading part of a real path is real (realpath resolved each one), so the root is its own
            // real path and the file is inside it: the root's own realpath, a readlink per component, is spared.
            return real;
        }
        Path realRoot = root.toRealPath();
        if (!real.startsWith(realRoot)) {
            // A symlink pointing outside the tree: refuse as if it were absent.
            throw new EscapeException(lexical + " resolves to " + real + ", outside " + realRoot);
        }
        return real;
    }

    /**
     * Whether no link lies between a root and a file inside it: the file's real path is the root's real path
     * followed by the path the request named. A link in the root's own path (a linked {@code /var/rudder}) does not
     * count.
     *
     * @param root the tree's root directory
     * @param lexical a path from {@link #lexical} for the same root
     * @param real its real path, from {@link #real}
     * @return whether the named path reaches the file with no link below the root
     * @throws IOException if the root's real path cannot be read
     */
    public static boolean linkFree(Path root, Path lexical, Path real) throws IOException {
        return real.equals(lexical) || real.equals(root.toRealPath().resolve(root.normalize().relativize(lexical)));
    }

    private static Path below(Path root, String relative) throws UnsafePathException {
        if (relative.startsWith("/")) {
            throw new UnsafePathException("absolute paths are not allowed");
        }
        for (String segment : relative.split("/", -1)) {
            if (segment.isEmpty()) {
                throw new UnsafePathException("empty path segments ('//') are not allowed");
            }
            if (segment.equals(".") || segment.equals("..")) {
                throw new UnsafePathException("'" + segment + "' path segments are not allowed");
            }
            int bytes = segment.getBytes(StandardCharsets.UTF_8).length;
            if (bytes > MAX_NAME_BYTES) {
                throw new NameTooLongException(bytes);
            }
        }
        Path candidate = root.resolve(relative).normalize();
        if (!candidate.startsWith(root.normalize())) {
            throw new UnsafePathException("path leaves its root");
        }
        return candidate;
    }


    /**
     * Percent-decodes a URL path, refusing encodings that would change its structure.
     *
     * @param encoded the raw path
     * @return the decoded path
     * @throws UnsafePathException when an encoding or character is refused
     */
    static String decode(String encoded) throws UnsafePathException {
        if (encoded.length() > MAX_PATH_LENGTH) {
            throw new UnsafePathException("path longer than " + MAX_PATH_LENGTH + " characters");
        }
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(encoded.length());
        for (int i = 0; i < encoded.length(); i++) {
            char c = encoded.charAt(i);
            if (c == '%') {
                if (i + 2 >= encoded.length()) {
                    throw new UnsafePathException("truncated percent-encoding");
                }
                int high = Character.digit(encoded.charAt(i + 1), 16);
                int low = Character.digit(encoded.charAt(i + 2), 16);
                if (high < 0 || low < 0) {
                    throw new UnsafePathException("invalid percent-encoding '" + encoded.substring(i, i + 3) + "'");
                }
                int value = high * 16 + low;
                String code = encoded.substring(i, i + 3).toUpperCase(Locale.ROOT);
                switch (value) {
                    case '/', '\\', '.', 0 -> throw new UnsafePathException(
                            "encoded '" + code + "' is not allowed in paths");
                    default -> bytes.write(value);
                }
                i += 2;
            } else {
                if (c == '\\') {
                    throw new UnsafePathException("backslashes are not allowed in paths");
                }
                if (c < 0x20 || c == 0x7f) {
                    throw new UnsafePathException("control characters are not allowed in paths");
                }
                if (c > 0x7f) {
                    // A URL path is ASCII; non-ASCII names arrive percent-encoded as UTF-8.
                    throw new UnsafePathException("unencoded non-ASCII characters are not allowed in paths");
                }
                bytes.write(c);
            }
        }
        String decoded;
        try {
            decoded = StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes.toByteArray()))
                    .toString();
        } catch (CharacterCodingException e) {
            throw new UnsafePathException("path is not valid UTF-8");
        }
        for (int i = 0; i < decoded.length(); i++) {
            char c = decoded.charAt(i);
            if (Character.isISOControl(c)) {
                throw new UnsafePathException("control characters are not allowed in paths");
            }
        }
        return decoded;
    }

    /** A path segment longer than any file name can be: not an attack, a request for what cannot exist. */
    public static final class NameTooLongException extends UnsafePathException {
        private static final long serialVersionUID = 1L;

        NameTooLongException(int bytes) {
            super("a path segment is " + bytes + " bytes long; file names are at most " + MAX_NAME_BYTES
                    + " bytes");
        }
    }
}
