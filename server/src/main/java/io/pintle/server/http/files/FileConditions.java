package io.pintle.server.http.files;

import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;

/**
 * RFC 9110's conditional requests and byte ranges for a {@code GET} or {@code HEAD} of one representation, as a
 * pure function of the request's header values and the representation's validators: {@code If-Match}, {@code
 * If-Unmodified-Since}, {@code If-None-Match}, {@code If-Modified-Since} (evaluated in that order, section 13.2.2),
 * then {@code Range} with {@code If-Range} (section 14). Every file route answers through this one function.
 *
 * <p>Client input is never an error here: a header that does not parse is treated as RFC 9110 asks (an invalid
 * date is ignored) or, for entity-tag lists, as matching nothing, which sends the representation; curl's
 * {@code --etag-compare} with an empty or foreign ETag file then simply downloads the file again, as from nginx.
 */
final class FileConditions {
    /** Longest header value looked at; anything longer matches nothing (ETags here are 66 characters). */
    static final int MAX_HEADER_CHARS = 8 * 1024;

    private FileConditions() {}

    /**
     * The request's precondition and range header values, each null when absent (several fields of a list header
     * joined with {@code ", "}, as RFC 9110 section 5.3 allows).
     *
     * @param ifMatch {@code If-Match}
     * @param ifNoneMatch {@code If-None-Match}
     * @param ifModifiedSince {@code If-Modified-Since}
     * @param ifUnmodifiedSince {@code If-Unmodified-Since}
     * @param ifRange {@code If-Range}
     * @param range {@code Range}
     */
    record Headers(String ifMatch, String ifNoneMatch, String ifModifiedSince, String ifUnmodifiedSince,
            String ifRange, String range) {
        /** No conditional header at all. */
        static final Headers NONE = new Headers(null, null, null, null, null, null);
    }

    /**
     * The validators and size of the representation being served.
     *
     * @param etag its strong entity tag, quoted
     * @param lastModified its modification time, or null when it has none (directory views)
     * @param size its length in bytes, or -1 when ranges do not apply (generated views)
     */
    record Representation(String etag, Instant lastModified, long size) {}

    /** What to answer. */
    sealed interface Outcome {
        /** 200 with the whole representation. */
        record Full() implements Outcome {}

        /** 304: the client's copy is current. */
        record NotModified() implements Outcome {}

        /** 412: a precondition the client set does not hold. */
        record PreconditionFailed() implements Outcome {}

        /**
         * 206 with one range.
         *
         * @param first first byte, inclusive
         * @param last last byte, inclusive
         */
        record Partial(long first, long last) implements Outcome {
            /** @return how many bytes the range holds */
            long length() {
                return last - first + 1;
            }
        }

        /** 416: the one range asked for holds no byte of the representation. */
        record Unsatisfiable() implements Outcome {}
    }

    private static final Outcome FULL = new Outcome.Full();
    private static final Outcome NOT_MODIFIED = new Outcome.NotModified();
    private static final Outcome PRECONDITION_FAILED = new Outcome.PreconditionFailed();
    private static final Outcome UNSATISFIABLE = new Outcome.Unsatisfiable();

    /**
     * @param get true for {@code GET}, false for {@code HEAD} (ranges are defined for {@code GET} only)
     * @param headers the request's header values
     * @param representation what would be served
     * @return what to answer
     */
    static Outcome evaluate(boolean get, Headers headers, Representation representation) {
        String etag = representation.etag();
        Instant modified = representation.lastModified() == null ? null
                : Instant.ofEpochSecond(representation.lastModified().getEpochSecond());
        if (headers.ifMatch() != null) {
            if (!matches(headers.ifMatch(), etag, true)) {
                return PRECONDITION_FAILED;
            }
        } else if (headers.ifUnmodifiedSince() != null && modified != null) {
            Instant date = date(headers.ifUnmodifiedSince());
            if (date != null && modified.isAfter(date)) {
                return PRECONDITION_FAILED;
            }
        }
        if (headers.ifNoneMatch() != null) {
            if (matches(headers.ifNoneMatch(), etag, false)) {
                return NOT_MODIFIED;
            }
        } else if (headers.ifModifiedSince() != null && modified != null) {
            Instant date = date(headers.ifModifiedSince());
            if (date != null && !modified.isAfter(date)) {
                return NOT_MODIFIED;
            }
        }
        if (!get || headers.range() == null || representation.size() < 0
                || !ifRangeHolds(headers.ifRange(), etag, modified)) {
            return FULL;
        }
        return range(headers.range(), representation.size());
    }

    /**
     * Whether an {@code If-Match} or {@code If-None-Match} value lists the entity tag: {@code *} matches any
     * current representation; otherwise a comma-separated list of entity tags, compared strongly for {@code
     * If-Match} (a weak tag never matches) and weakly for {@code If-None-Match}. Empty list elements are allowed
     * (RFC 9110 section 5.6.1); a value that is not such a list matches nothing.
     *
     * @param value the header value
     * @param etag the representation's strong entity tag, quoted
     * @param strong strong comparison
     * @return whether it matches
     */
    static boolean matches(String value, String etag, boolean strong) {
        if (value.length() > MAX_HEADER_CHARS) {
            return false;
        }
        String trimmed = value.strip();
        if (trimmed.equals("*")) {
            return true;
        }
        boolean found = false;
        int i = 0;
        int n = trimmed.length();
        while (i < n) {
            char c = trimmed.charAt(i);
            if (c == ',' || c == ' ' || c == '\t') {
                i++;
                continue;
            }
            boolean weak = false;
            if (c == 'W' && i + 1 < n && trimmed.charAt(i + 1) == '/') {
                weak = true;
                i += 2;
            }
            if (i >= n || trimmed.charAt(i) != '"') {
                return false;
            }
            int close = trimmed.indexOf('"', i + 1);
            if (close < 0) {
                return false;
            }
            if (!(strong && weak) && trimmed.regionMatches(i, etag, 0, etag.length())
                    && close + 1 - i == etag.length()) {
                found = true;
            }
            i = close + 1;
            while (i < n && (trimmed.charAt(i) == ' ' || trimmed.charAt(i) == '\t')) {
                i++;
            }
            if (i < n && trimmed.charAt(i) != ',') {
                return false;
            }
        }
        return found;
    }

    /**
     * @param ifRange the {@code If-Range} value, or null
     * @param etag the current strong entity tag
     * @param modified the current modification time (whole seconds), or null
     * @return whether the range applies: no {@code If-Range}, or an equal strong tag, or exactly the date
     */
    private static boolean ifRangeHolds(String ifRange, String etag, Instant modified) {
        if (ifRange == null) {
            return true;
        }
        String value = ifRange.strip();
        if (value.startsWith("\"")) {
            return value.equals(etag);
        }
        if (value.startsWith("W/")) {
            return false;
        }
        Instant date = date(value);
        return date != null && date.equals(modified);
    }

    /**
     * One {@code bytes} range (RFC 9110 section 14.1.2). A position past what a {@code long} holds is as good as
     * the end of the file: {@code bytes=0-99999999999999999999} is the whole file, and so is {@code
     * bytes=-9999999999999999999}. Several ranges, another unit or a syntax error: the whole representation, as
     * RFC 9110 allows.
     */
    static Outcome range(String value, long size) {
        String spec = value.strip();
        if (spec.length() > MAX_HEADER_CHARS || spec.length() < 7
                || !spec.regionMatches(true, 0, "bytes=", 0, 6)) {
            return FULL;
        }
        String set = spec.substring(6).strip();
        if (set.indexOf(',') >= 0) {
            return FULL;
        }
        int dash = set.indexOf('-');
        if (dash < 0) {
            return FULL;
        }
        String first = set.substring(0, dash).strip();
        String last = set.substring(dash + 1).strip();
        if (!digits(first) || !digits(last) || first.isEmpty() && last.isEmpty()) {
            return FULL;
        }
        if (first.isEmpty()) {
            long suffix = number(last);
            if (suffix == 0 || size == 0) {
                return UNSATISFIABLE;
            }
            return new Outcome.Partial(Math.max(0, size - suffix), size - 1);
        }
        long start = number(first);
        if (!last.isEmpty() && number(last) < start) {
            return FULL;
        }
        if (start >= size) {
            return UNSATISFIABLE;
        }
        long end = last.isEmpty() ? size - 1 : Math.min(number(last), size - 1);
        return new Outcome.Partial(start, end);
    }

    private static boolean digits(String text) {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c < '0' || c > '9') {
                return false;
            }
        }
        return true;
    }

    /** @return the decimal value, or {@link Long#MAX_VALUE} when it does not fit */
    private static long number(String digits) {
        long value = 0;
        for (int i = 0; i < digits.length(); i++) {
            int digit = digits.charAt(i) - '0';
            if (value > (Long.MAX_VALUE - digit) / 10) {
                return Long.MAX_VALUE;
            }
            value = value * 10 + digit;
        }
        return value;
    }

    /** @return an HTTP date (IMF-fixdate, or the obsolete forms Java's RFC 1123 parser reads), or null */
    static Instant date(String value) {
        if (value.length() > 64) {
            return null;
        }
        try {
            return ZonedDateTime.parse(value.strip(), DateTimeFormatter.RFC_1123_DATE_TIME).toInstant();
        } catch (DateTimeParseException invalid) {
            return null;
        }
    }
}
