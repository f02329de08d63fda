package io.pintle.server.cfengine;

/**
 * The path a request names, checked before the file system sees it: absolute, no NUL, no {@code ..}, bounded;
 * repeated and trailing slashes and {@code .} segments are dropped. cf-serverd hands such a path to
 * {@code realpath}, which also resolves {@code ..}; agents never send one, so here it is refused with a log line.
 */
final class RequestPath {
    /** cf-serverd's bound on a path ({@code CF_BUFSIZE}). */
    static final int MAX_LENGTH = 4096;

    private RequestPath() {}

    /**
     * @param requested the path as received
     * @return the normalised path ({@code /} for the root), or null when refused
     */
    static String normalise(String requested) {
        if (requested == null || requested.isEmpty() || requested.length() > MAX_LENGTH
                || requested.charAt(0) != '/' || requested.indexOf('\0') >= 0) {
            return null;
        }
        StringBuilder path = new StringBuilder(requested.length());
        int i = 0;
        int length = requested.length();
        while (i < length) {
            while (i < length && requested.charAt(i) == '/') {
                i++;
            }
            int end = requested.indexOf('/', i);
            if (end < 0) {
                end = length;
            }
            if (end > i) {
                String segment = requested.substring(i, end);
                if (segment.equals("..")) {
                    return null;
                }
                if (!segment.equals(".")) {
                    path.append('/').append(segment);
                }
            }
            i = end;
        }
        return path.length() == 0 ? "/" : path.toString();
    }

    /**
     * @param requested the path as received
     * @return why {@link #normalise} refuses it, for the log
     */
    static String refusal(String requested) {
        if (requested == null || requested.isEmpty()) {
            return "an empty path";
        }
        if (requested.length() > MAX_LENGTH) {
            return "a path longer than " + MAX_LENGTH + " characters";
        }
        if (requested.charAt(0) != '/') {
            return "a relative path (cf-serverd serves absolute paths only)";
        }
        if (requested.indexOf('\0') >= 0) {
            return "a path with a NUL character";
        }
        return "a path with a '..' segment";
    }
}
