package io.pintle.server.http;

import io.pintle.server.policy.FileVersion;
import jakarta.ws.rs.core.EntityTag;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.Request;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.StreamingOutput;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Date;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * HTTP semantics of a static file: strong ETag, {@code Last-Modified}, conditional requests (304/412), a single
 * byte range (206/416), explicit {@code Content-Length}, and a body streamed with bounded memory from exactly the
 * version the headers describe.
 */
final class FileResponses {
    /** Copy buffer per streaming response. */
    static final int BUFFER_BYTES = 64 * 1024;

    private static final Pattern SINGLE_RANGE = Pattern.compile("bytes=(\\d{0,19})-(\\d{0,19})");

    private static final Map<String, String> TYPES = Map.ofEntries(
            Map.entry("zip", "application/zip"),
            Map.entry("bz2", "application/x-bzip2"),
            Map.entry("gz", "application/gzip"),
            Map.entry("tgz", "application/gzip"),
            Map.entry("xz", "application/x-xz"),
            Map.entry("tar", "application/x-tar"),
            Map.entry("json", "application/json"),
            Map.entry("xml", "application/xml"),
            Map.entry("cf", "text/plain"),
            Map.entry("st", "text/plain"),
            Map.entry("csv", "text/plain"),
            Map.entry("txt", "text/plain"),
            Map.entry("pem", "text/plain"),
            Map.entry("cert", "text/plain"),
            Map.entry("ps1", "text/plain"),
            Map.entry("psm1", "text/plain"),
            Map.entry("sh", "text/plain"),
            Map.entry("hive", "text/plain"));

    private FileResponses() {}

    /**
     * @param version the file version to serve
     * @param request the JAX-RS request (for preconditions)
     * @param headers the request headers
     * @return 200, 206, 304, 412 or 416 with the file's headers
     */
    static Response serve(FileVersion version, Request request, HttpHeaders headers) {
        String quoted = version.etag();
        EntityTag tag = new EntityTag(quoted.substring(1, quoted.length() - 1));
        Date lastModified = Date.from(version.lastModified());
        Response.ResponseBuilder precondition = request.evaluatePreconditions(lastModified, tag);
        if (precondition != null) {
            return precondition.lastModified(lastModified).build();
        }
        long size = version.size();
        Response.ResponseBuilder response = Response.ok()
                .type(mediaType(version.path().getFileName().toString()))
                .tag(tag)
                .lastModified(lastModified)
                .header("Accept-Ranges", "bytes")
                .header(HttpHeaders.CACHE_CONTROL, "no-cache");
        String range = headers.getHeaderString("Range");
        if (range != null && ifRangeMatches(headers.getHeaderString("If-Range"), version)) {
            Matcher matcher = SINGLE_RANGE.matcher(range.strip());
            // Multiple or malformed ranges are ignored and the whole file sent, as RFC 9110 allows.
            if (matcher.matches() && !(matcher.group(1).isEmpty() && matcher.group(2).isEmpty())) {
                long[] bounds = bounds(matcher.group(1), matcher.group(2), size);
                if (bounds == null) {
                    return Response.status(416)
                            .header("Content-Range", "bytes */" + size)
                            .tag(tag)
                            .build();
                }
                long length = bounds[1] - bounds[0] + 1;
                return response.status(206)
                        .header("Content-Range", "bytes " + bounds[0] + "-" + bounds[1] + "/" + size)
                        .header(HttpHeaders.CONTENT_LENGTH, length)
                        .entity(body(version, bounds[0], length))
                        .build();
            }
        }
        return response.header(HttpHeaders.CONTENT_LENGTH, size).entity(body(version, 0, size)).build();
    }

    /** @return {first, last} inclusive, or null when unsatisfiable */
    private static long[] bounds(String first, String last, long size) {
        try {
            if (first.isEmpty()) {
                long suffix = Long.parseLong(last);
                if (suffix == 0 || size == 0) {
                    return null;
                }
                return new long[] {Math.max(0, size - suffix), size - 1};
            }
            long start = Long.parseLong(first);
            if (start >= size) {
                return null;
            }
            long end = last.isEmpty() ? size - 1 : Math.min(Long.parseLong(last), size - 1);
            return end < start ? null : new long[] {start, end};
        } catch (NumberFormatException overflow) {
            return null;
        }
    }

    private static boolean ifRangeMatches(String ifRange, FileVersion version) {
        if (ifRange == null) {
            return true;
        }
        String value = ifRange.strip();
        if (value.startsWith("\"")) {
            return value.equals(version.etag());
        }
        return value.equals(DateTimeFormatter.RFC_1123_DATE_TIME.format(
                version.lastModified().atOffset(ZoneOffset.UTC).withNano(0)));
    }

    static String mediaType(String fileName) {
        int dot = fileName.lastIndexOf('.');
        String extension = dot < 0 ? "" : fileName.substring(dot + 1).toLowerCase(Locale.ROOT);
        return TYPES.getOrDefault(extension, "application/octet-stream");
    }

    private static StreamingOutput body(FileVersion version, long offset, long length) {
        return output -> {
            try (FileChannel channel = version.open()) {
                copy(channel, offset, length, output);
            }
        };
    }

    private static void copy(FileChannel channel, long offset, long length, OutputStream output) throws IOException {
        ByteBuffer buffer = ByteBuffer.allocate((int) Math.min(BUFFER_BYTES, Math.max(1, length)));
        long position = offset;
        long remaining = length;
        while (remaining > 0) {
            buffer.clear();
            if (remaining < buffer.capacity()) {
                buffer.limit((int) remaining);
            }
            int read = channel.read(buffer, position);
            if (read < 0) {
                throw new IOException("file shrank while it was being served");
            }
            output.write(buffer.array(), 0, read);
            position += read;
            remaining -= read;
        }
    }
}
