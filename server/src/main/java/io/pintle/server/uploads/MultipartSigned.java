package io.pintle.server.uploads;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Base64;
import java.util.Locale;

/**
 * A clear-signed S/MIME message ({@code multipart/signed}, RFC 1847) as {@code openssl smime -sign} writes it: the
 * signed entity, byte for byte, and the detached signature. A strict reader of exactly that shape (two parts, the
 * second a base64 {@code application/(x-)pkcs7-signature}), not a MIME library: what it does not expect, it refuses.
 *
 * @param signed the first part's bytes, from after its delimiter line to before the line break that precedes the
 *     next delimiter: what the signature covers (OpenSSL's {@code SMIME_read_PKCS7} splits the same way)
 * @param signature the second part's body, base64-decoded: a DER CMS {@code SignedData}
 */
record MultipartSigned(byte[] signed, byte[] signature) {
    /** Headers of a message or part: openssl writes three lines; more than this is not what an agent sent. */
    static final int MAX_HEADER_BYTES = 16 * 1024;
    /** RFC 2046: a boundary has 1 to 70 characters. */
    private static final int MAX_BOUNDARY = 70;

    /** The message is not the S/MIME an agent writes; the message says why, in an operator's words. */
    static final class Malformed extends Exception {
        private static final long serialVersionUID = 1L;

        Malformed(String message) {
            super(message, null, false, false);
        }
    }

    /**
     * @param message the whole message
     * @param length how many bytes of {@code message} are the message
     * @return its signed part and signature
     * @throws Malformed when it is not a two-part {@code multipart/signed} message with a base64 PKCS#7 signature
     */
    static MultipartSigned parse(byte[] message, int length) throws Malformed {
        Headers top = Headers.read(message, 0, length);
        if (top == null || top.contentType == null) {
            throw new Malformed("it has no MIME headers");
        }
        String type = mediaType(top.contentType);
        if (!type.equals("multipart/signed")) {
            throw new Malformed("its Content-Type is " + printable(type) + ", not multipart/signed");
        }
        String boundary = parameter(top.contentType, "boundary");
        if (boundary == null || boundary.isEmpty() || boundary.length() > MAX_BOUNDARY) {
            throw new Malformed("its multipart/signed Content-Type has no valid boundary parameter");
        }
        byte[] dashBoundary = ("--" + boundary).getBytes(StandardCharsets.ISO_8859_1);

        Delimiter first = nextDelimiter(message, top.end, length, dashBoundary);
        if (first == null || first.close) {
            throw new Malformed("it has no signed part (no boundary line)");
        }
        Delimiter second = nextDelimiter(message, first.lineEnd, length, dashBoundary);
        if (second == null || second.close) {
            throw new Malformed("it has no signature part");
        }
        Delimiter last = nextDelimiter(message, second.lineEnd, length, dashBoundary);
        if (last == null) {
            throw new Malformed("its signature part is not closed (truncated?)");
        }
        if (!last.close) {
            throw new Malformed("it has more than two parts");
        }
        byte[] signed = Arrays.copyOfRange(message, first.lineEnd, second.contentEnd);

        Headers part = Headers.read(message, second.lineEnd, last.contentEnd);
        if (part == null || part.contentType == null) {
            throw new Malformed("its signature part has no Content-Type");
        }
        String signatureType = mediaType(part.contentType);
        if (!signatureType.equals("application/pkcs7-signature")
                && !signatureType.equals("application/x-pkcs7-signature")) {
            throw new Malformed("its second part is " + printable(signatureType) + ", not a PKCS#7 signature");
        }
        if (part.transferEncoding == null || !part.transferEncoding.trim().equalsIgnoreCase("base64")) {
            throw new Malformed("its signature part is not base64-encoded");
        }
        byte[] signature;
        try {
            // The MIME decoder skips line breaks (and anything else outside the alphabet): CMS parsing judges the rest.
            signature = Base64.getMimeDecoder().decode(Arrays.copyOfRange(message, part.end, last.contentEnd));
        } catch (IllegalArgumentException e) {
            throw new Malformed("its signature part is not valid base64");
        }
        if (signature.length == 0) {
            throw new Malformed("its signature part is empty");
        }
        return new MultipartSigned(signed, signature);
    }

    /**
     * A delimiter line ({@code --boundary} or the close delimiter {@code --boundary--}, then optional blanks).
     *
     * @param contentEnd where the content before it ends: before the line break that precedes the line, which
     *     belongs to the delimiter (RFC 2046)
     * @param lineEnd just after the line's LF
     * @param close whether it is the close delimiter
     */
    private record Delimiter(int contentEnd, int lineEnd, boolean close) {}

    /** @return the first delimiter line starting at or after {@code from} (at a line start), or null */
    private static Delimiter nextDelimiter(byte[] message, int from, int length, byte[] dashBoundary) {
        int line = from;
        while (line < length) {
            int lf = indexOf(message, (byte) '\n', line, length);
            int lineEnd = lf < 0 ? length : lf + 1;
            int textEnd = lf < 0 ? length : lf;
            if (startsWith(message, line, textEnd, dashBoundary)) {
                int at = line + dashBoundary.length;
                boolean close = at + 1 < textEnd && message[at] == '-' && message[at + 1] == '-';
                if (close) {
                    at += 2;
                }
                if (blank(message, at, textEnd)) {
                    int contentEnd = line;
                    if (line > from && message[line - 1] == '\n') {
                        contentEnd--;
                        if (contentEnd > from && message[contentEnd - 1] == '\r') {
                            contentEnd--;
                        }
                    }
                    return new Delimiter(contentEnd, lineEnd, close);
                }
            }
            line = lineEnd;
        }
        return null;
    }

    /** The headers of a message or part that matter here. */
    private static final class Headers {
        String contentType;
        String transferEncoding;
        /** Just after the blank line that ends the headers. */
        int end;

        /**
         * @return the headers from {@code from} to the first blank line, or null when they are not headers (a line
         *     that is not {@code Name: value} nor a continuation, no blank line within {@link #MAX_HEADER_BYTES})
         */
        static Headers read(byte[] message, int from, int limit) {
            Headers headers = new Headers();
            int bound = (int) Math.min(limit, (long) from + MAX_HEADER_BYTES);
            StringBuilder current = null;
            int line = from;
            while (line < bound) {
                int lf = indexOf(message, (byte) '\n', line, bound);
                if (lf < 0) {
                    return null;
                }
                int textEnd = lf > line && message[lf - 1] == '\r' ? lf - 1 : lf;
                String text = new String(message, line, textEnd - line, StandardCharsets.ISO_8859_1);
                line = lf + 1;
                if (text.isEmpty()) {
                    headers.take(current);
                    headers.end = line;
                    return headers;
                }
                if (text.charAt(0) == ' ' || text.charAt(0) == '\t') {
                    if (current == null) {
                        return null;
                    }
                    current.append(' ').append(text.strip());
                } else {
                    int colon = text.indexOf(':');
                    if (colon <= 0 || !token(text, colon)) {
                        return null;
                    }
                    headers.take(current);
                    current = new StringBuilder(text);
                }
            }
            return null;
        }

        private void take(StringBuilder header) {
            if (header == null) {
                return;
            }
            String text = header.toString();
            int colon = text.indexOf(':');
            String name = text.substring(0, colon).toLowerCase(Locale.ROOT);
            String value = text.substring(colon + 1).strip();
            if (name.equals("content-type")) {
                contentType = value;
            } else if (name.equals("content-transfer-encoding")) {
                transferEncoding = value;
            }
        }

        /** @return whether the header name (before {@code colon}) has only printable non-blank ASCII */
        private static boolean token(String text, int colon) {
            for (int i = 0; i < colon; i++) {
                char c = text.charAt(i);
                if (c <= ' ' || c >= 127) {
                    return false;
                }
            }
            return true;
        }
    }

    /** @return the {@code type/subtype} of a Content-Type value, lower case */
    private static String mediaType(String contentType) {
        int semicolon = contentType.indexOf(';');
        return (semicolon < 0 ? contentType : contentType.substring(0, semicolon)).strip().toLowerCase(Locale.ROOT);
    }

    /** @return a parameter of a Content-Type value (quoted or not), or null */
    static String parameter(String contentType, String name) {
        int at = contentType.indexOf(';');
        while (at >= 0 && at < contentType.length()) {
            int start = at + 1;
            int equals = contentType.indexOf('=', start);
            if (equals < 0) {
                return null;
            }
            String key = contentType.substring(start, equals).strip();
            int valueStart = equals + 1;
            while (valueStart < contentType.length() && contentType.charAt(valueStart) == ' ') {
                valueStart++;
            }
            String value;
            int next;
            if (valueStart < contentType.length() && contentType.charAt(valueStart) == '"') {
                int close = contentType.indexOf('"', valueStart + 1);
                if (close < 0) {
                    return null;
                }
                value = contentType.substring(valueStart + 1, close);
                next = contentType.indexOf(';', close);
            } else {
                next = contentType.indexOf(';', valueStart);
                value = contentType.substring(valueStart, next < 0 ? contentType.length() : next).strip();
            }
            if (key.equalsIgnoreCase(name)) {
                return value;
            }
            at = next;
        }
        return null;
    }

    private static int indexOf(byte[] bytes, byte b, int from, int to) {
        for (int i = from; i < to; i++) {
            if (bytes[i] == b) {
                return i;
            }
        }
        return -1;
    }

    private static boolean startsWith(byte[] bytes, int from, int to, byte[] prefix) {
        if (to - from < prefix.length) {
            return false;
        }
        for (int i = 0; i < prefix.length; i++) {
            if (bytes[from + i] != prefix[i]) {
                return false;
            }
        }
        return true;
    }

    private static boolean blank(byte[] bytes, int from, int to) {
        for (int i = from; i < to; i++) {
            if (bytes[i] != ' ' && bytes[i] != '\t' && bytes[i] != '\r') {
                return false;
            }
        }
        return true;
    }

    /** @return text from an upload, safe to put in a message: bounded, control characters replaced */
    static String printable(String text) {
        String cut = text.length() > 80 ? text.substring(0, 80) + "..." : text;
        StringBuilder out = new StringBuilder(cut.length() + 2).append('\'');
        for (int i = 0; i < cut.length(); i++) {
            char c = cut.charAt(i);
            out.append(c < ' ' || c >= 127 ? '?' : c);
        }
        return out.append('\'').toString();
    }
}
