package io.pintle.server.http;

import io.pintle.api.Routes;
import io.pintle.server.acl.Decision;
import io.pintle.server.nodes.NodeId;
import io.pintle.server.policy.FileCache;
import io.pintle.server.policy.FileVersion;
import io.pintle.server.policy.SafePaths;
import io.pintle.server.policy.UnsafePathException;
import io.pintle.server.reload.ServerSnapshot;
import io.pintle.server.reload.SnapshotHolder;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.regex.Pattern;
import org.eclipse.jetty.http.DateGenerator;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.http.HttpURI;
import org.eclipse.jetty.http.PreEncodedHttpField;
import org.eclipse.jetty.io.ByteBufferPool;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * Answers the agents' common case straight from Jetty, ahead of Jersey: a plain {@code GET} or {@code HEAD} of a
 * file under {@code /policies/{node}/} or {@code /common/} that the caller may read, with no precondition or only
 * {@code If-None-Match}. It runs what {@link PolicyResource} runs for it (identification on the snapshot read once,
 * the access decision, {@link SafePaths}, {@link FileVersion}) and writes the same status and headers; Jersey and
 * HK2 cost several times that per request. A repeated download of an unchanged file skips the path walk, the open
 * and the read: the {@link FileCache} answers it after one {@code lstat}; the identification and the access
 * decision still run on every request.
 *
 * <p>Everything else goes on to Jersey untouched, which answers it as before: another method or route, a query
 * ({@code ?view}, {@code ?wait}), a percent-encoded or otherwise unusual path, a {@code Range}, any other
 * precondition, a denial, a path {@link SafePaths} refuses, a missing file, a directory, a file that changed while
 * it was opened. So this handler never writes an error of its own, and a denial is decided, logged and rendered in
 * one place. When it hands a request on, the identity it established goes with it, so the request still runs on
 * one snapshot.
 */
final class DirectFileHandler extends Handler.Wrapper {
    /**
     * Bodies up to this size are read in one go and written with the headers (and kept by the {@link FileCache});
     * larger ones are streamed.
     */
    static final int INLINE_BODY_BYTES = FileCache.MAX_BODY_BYTES;
    /** Buffer of a streamed body (pooled by Jetty). */
    static final int STREAM_BUFFER_BYTES = 64 * 1024;

    private static final String POLICIES = Routes.POLICIES + "/";
    private static final String COMMON = Routes.COMMON + "/";
    private static final Pattern NODE_ID = Pattern.compile(Routes.NODE_ID_PATTERN);
    private static final HttpField ACCEPT_RANGES = new PreEncodedHttpField(HttpHeader.ACCEPT_RANGES, "bytes");
    private static final HttpField NO_CACHE = new PreEncodedHttpField(HttpHeader.CACHE_CONTROL, "no-cache");
    /** Request headers whose semantics are left to Jersey ({@link FileResponses}). */
    private static final List<HttpHeader> HANDED_ON = List.of(HttpHeader.RANGE, HttpHeader.IF_RANGE,
            HttpHeader.IF_MATCH, HttpHeader.IF_UNMODIFIED_SINCE, HttpHeader.IF_MODIFIED_SINCE);

    private final SnapshotHolder snapshots;
    private final Clock clock;
    private final FileCache files;

    /**
     * @param jersey the node-facing Jersey container, which answers everything this does not
     * @param snapshots the live snapshot
     * @param clock the clock for certificate validity
     * @param files what earlier downloads found, checked by one stat per request
     */
    DirectFileHandler(Handler jersey, SnapshotHolder snapshots, Clock clock, FileCache files) {
        super(jersey);
        this.snapshots = snapshots;
        this.clock = clock;
        this.files = files;
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback) throws Exception {
        String method = request.getMethod();
        boolean head = HttpMethod.HEAD.is(method);
        if (!head && !HttpMethod.GET.is(method)) {
            return super.handle(request, response, callback);
        }
        HttpURI uri = request.getHttpURI();
        String path = uri.getPath();
        if (uri.getQuery() != null || path == null || !plain(path)) {
            return super.handle(request, response, callback);
        }
        NodeId owner = null;
        String relative;
        if (path.startsWith(POLICIES)) {
            int slash = path.indexOf('/', POLICIES.length());
            if (slash < 0) {
                return super.handle(request, response, callback);
            }
            String node = path.substring(POLICIES.length(), slash);
            if (!NODE_ID.matcher(node).matches()) {
                return super.handle(request, response, callback);
            }
            owner = new NodeId(node);
            relative = path.substring(slash + 1);
        } else if (path.startsWith(COMMON)) {
            relative = path.substring(COMMON.length());
        } else {
            return super.handle(request, response, callback);
        }
        HttpFields headers = request.getHeaders();
        if (relative.isEmpty() || relative.endsWith("/") || handedOn(headers)) {
            return super.handle(request, response, callback);
        }

        RequestState state;
        try {
            state = PeerIdentityFilter.identify(request, snapshots.current(), clock);
        } catch (RuntimeException unusual) {
            return super.handle(request, response, callback);
        }
        // Jersey, if it gets this request after all, runs on the same snapshot and caller.
        request.setAttribute(RequestState.PROPERTY, state);
        ServerSnapshot snapshot = state.snapshot();
        Decision decision = owner != null ? snapshot.acl().policies(state.caller(), owner)
                : snapshot.acl().common(state.caller());
        if (!(decision instanceof Decision.Allow)) {
            return super.handle(request, response, callback);
        }
        Path root = owner != null ? snapshot.share().nodeRoot(owner) : snapshot.share().commonRoot();
        Path named;
        try {
            named = SafePaths.lexical(root, relative);
        } catch (UnsafePathException e) {
            return super.handle(request, response, callback);
        }
        FileCache.Stamp stamp = null;
        FileCache.Entry entry = null;
        if (files.enabled()) {
            try {
                stamp = FileCache.stamp(named);
            } catch (IOException absentOrUnreadable) {
                return super.handle(request, response, callback);
            }
            if (stamp.regular()) {
                entry = files.get(named, stamp);
            }
        }
        FileVersion version;
        if (entry != null) {
            version = entry.version();
        } else {
            try {
                Path real = SafePaths.real(root, named);
                version = FileVersion.of(real);
                // A regular file's stamp, not a link's or a directory's; only then can linkFree be true cheaply.
                if (stamp != null && stamp.regular() && SafePaths.linkFree(root, named, real)) {
                    entry = files.keep(named, stamp, version);
                }
            } catch (IOException e) {
                return super.handle(request, response, callback);
            }
            if (version.directory()) {
                return super.handle(request, response, callback);
            }
        }

        String ifNoneMatch = headers.get(HttpHeader.IF_NONE_MATCH);
        Match match = ifNoneMatch == null ? Match.NO : match(ifNoneMatch, version.etag());
        if (match == Match.UNKNOWN || headers.getFields(HttpHeader.IF_NONE_MATCH).size() > 1) {
            return super.handle(request, response, callback);
        }
        if (match == Match.YES) {
            record(request, state, decision);
            response.setStatus(HttpStatus.NOT_MODIFIED_304);
            HttpFields.Mutable out = response.getHeaders();
            out.put(HttpHeader.ETAG, version.etag());
            out.put(HttpHeader.LAST_MODIFIED, DateGenerator.formatDate(version.lastModified()));
            response.write(true, null, callback);
            return true;
        }

        long size = version.size();
        FileChannel channel = null;
        ByteBuffer inline = null;
        if (!head && entry != null && entry.body() != null) {
            inline = ByteBuffer.wrap(entry.body());
        } else if (!head) {
            try {
                channel = version.open();
                if (size <= INLINE_BODY_BYTES) {
                    inline = readAll(channel, (int) size);
                    channel.close();
                    channel = null;
                    if (entry != null) {
                        files.withBody(named, entry, inline.array());
                    }
                }
            } catch (IOException changedOrGone) {
                if (channel != null) {
                    channel.close();
                }
                return super.handle(request, response, callback);
            }
        }
        record(request, state, decision);
        response.setStatus(HttpStatus.OK_200);
        HttpFields.Mutable out = response.getHeaders();
        out.put(HttpHeader.CONTENT_TYPE, FileResponses.mediaType(version.path().getFileName().toString()));
        out.put(HttpHeader.ETAG, version.etag());
        out.put(HttpHeader.LAST_MODIFIED, DateGenerator.formatDate(version.lastModified()));
        out.put(ACCEPT_RANGES);
        out.put(NO_CACHE);
        out.put(HttpHeader.CONTENT_LENGTH, size);
        if (channel != null) {
            ByteBufferPool.Sized buffers =
                    new ByteBufferPool.Sized(request.getComponents().getByteBufferPool(), true, STREAM_BUFFER_BYTES);
            Content.copy(Content.Source.from(buffers, channel, 0, size), response, callback);
        } else {
            response.write(true, inline, callback);
        }
        return true;
    }

    /** What the access log and the metrics read, as {@link PeerIdentityFilter} and {@link FileRoutes} record it. */
    private static void record(Request request, RequestState state, Decision decision) {
        AccessRecord record = AccessRecord.of(request);
        record.caller(state.caller());
        record.decision(decision);
    }

    /** @return whether the path has only characters that read the same encoded and decoded, for Jetty and Jersey */
    private static boolean plain(String path) {
        for (int i = 0; i < path.length(); i++) {
            char c = path.charAt(i);
            boolean ok = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
                    || c == '/' || c == '.' || c == '-' || c == '_' || c == '~' || c == '+' || c == '@'
                    || c == '=' || c == ',';
            if (!ok) {
                return false;
            }
        }
        return true;
    }

    private static boolean handedOn(HttpFields headers) {
        for (HttpHeader header : HANDED_ON) {
            if (headers.contains(header)) {
                return true;
            }
        }
        return false;
    }

    /** Whether an {@code If-None-Match} matches the current ETag; UNKNOWN for anything this does not parse. */
    enum Match {
        YES,
        NO,
        UNKNOWN
    }

    /**
     * JAX-RS's weak comparison for GET and HEAD: {@code *}, or a listed tag whose opaque value is the file's,
     * strong or weak.
     *
     * @param ifNoneMatch the header value
     * @param etag the file's strong ETag, quoted
     * @return whether it matches, or UNKNOWN when the header is not a plain list of entity tags
     */
    static Match match(String ifNoneMatch, String etag) {
        String value = ifNoneMatch.strip();
        if (value.equals("*")) {
            return Match.YES;
        }
        if (value.isEmpty()) {
            return Match.UNKNOWN;
        }
        Match result = Match.NO;
        int start = 0;
        while (start <= value.length()) {
            int comma = value.indexOf(',', start);
            int end = comma < 0 ? value.length() : comma;
            String tag = value.substring(start, end).strip();
            if (tag.startsWith("W/")) {
                tag = tag.substring(2);
            }
            if (tag.length() < 2 || tag.charAt(0) != '"' || tag.indexOf('"', 1) != tag.length() - 1) {
                return Match.UNKNOWN;
            }
            if (tag.equals(etag)) {
                result = Match.YES;
            }
            if (comma < 0) {
                break;
            }
            start = comma + 1;
        }
        return result;
    }

    private static ByteBuffer readAll(FileChannel channel, int size) throws IOException {
        ByteBuffer buffer = ByteBuffer.allocate(size);
        long position = 0;
        while (buffer.hasRemaining()) {
            int read = channel.read(buffer, position);
            if (read < 0) {
                throw new FileVersion.FileChangedException("file shrank while it was being read");
            }
            position += read;
        }
        return buffer.flip();
    }
}
