package io.pintle.server.http.files;

import io.pintle.server.http.Exchange;
import io.pintle.server.http.Problems;
import io.pintle.api.MediaTypes;
import io.pintle.api.Routes;
import io.pintle.server.access.Access;
import io.pintle.server.access.Credentials;
import io.pintle.server.access.Route;
import io.pintle.server.acl.Caller;
import io.pintle.server.acl.Decision;
import io.pintle.server.nodes.NodeId;
import io.pintle.server.policy.PolicyArchives;
import io.pintle.server.policy.ChangeWaits;
import io.pintle.server.policy.DigestCache;
import io.pintle.server.policy.FileCache;
import io.pintle.server.policy.FileStat;
import io.pintle.server.policy.FileVersion;
import io.pintle.server.policy.ManifestHistory;
import io.pintle.server.policy.SafePaths;
import io.pintle.server.policy.TreeArchive;
import io.pintle.server.policy.Spool;
import io.pintle.server.policy.TreeManifest;
import io.pintle.server.policy.TreeScanner;
import io.pintle.server.policy.TreeVersion;
import io.pintle.server.policy.UnsafePathException;
import io.pintle.server.problem.PintleException;
import io.pintle.server.reload.ServerSnapshot;
import io.pintle.server.reload.SnapshotHolder;
import io.pintle.server.sharedfiles.SharedFileId;
import io.pintle.server.sharedfiles.SharedFileStore;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Pattern;
import org.eclipse.jetty.http.DateGenerator;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.http.PreEncodedHttpField;
import org.eclipse.jetty.io.ByteBufferPool;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.Fields;
import org.eclipse.jetty.util.URIUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The file pipeline: every {@code GET} and {@code HEAD} an agent or a relay makes — {@code /policies/{node}/...},
 * {@code /common/...}, {@code /uuid}, relayd's {@code shared-folder/...} (with its {@code HEAD ?hash=}) and the
 * {@code GET} of a shared file — with the directory views {@code ?view=manifest|archive} and the change wait
 * {@code ?wait=}, answered on Jetty's core API. Everything else ({@link Route#filePipeline} false) goes on to
 * Jersey.
 *
 * <p>Each request is decided before the file system is touched (a denial never reveals whether a path exists),
 * then resolved by {@link SafePaths}, then answered through {@link FileConditions}. A plain download is answered
 * on the thread that read the request (a selector, as nginx's worker): an unchanged small file costs one {@code
 * lstat} with the {@link FileCache}. What takes longer — a tree scan for a view, a digest for {@code ?hash=}, an
 * archive — runs on a worker. A request that waits for a change is parked in {@link ChangeWaits} and holds no
 * thread and no worker: its callback is completed when the change arrives or its time is up.
 */
public final class FileHandler extends Handler.Abstract {
    private static final Logger LOG = LoggerFactory.getLogger(FileHandler.class);

    /**
     * Bodies up to this size are read in one go and written with the headers (and kept by the {@link FileCache});
     * larger ones are streamed.
     */
    static final int INLINE_BODY_BYTES = FileCache.MAX_BODY_BYTES;
    /** Buffer of a streamed body (pooled by Jetty). */
    static final int STREAM_BUFFER_BYTES = 64 * 1024;
    /** A hexadecimal digest, as relayd's hex decoder reads one (either case). */
    private static final Pattern HEX = Pattern.compile("[0-9a-fA-F]+");
    private static final HttpField ACCEPT_RANGES = new PreEncodedHttpField(HttpHeader.ACCEPT_RANGES, "bytes");
    private static final HttpField NO_CACHE = new PreEncodedHttpField(HttpHeader.CACHE_CONTROL, "no-cache");
    private static final HttpField ALLOW = new PreEncodedHttpField(HttpHeader.ALLOW, "GET, HEAD");
    private static final HttpField TEXT = new PreEncodedHttpField(HttpHeader.CONTENT_TYPE, "text/plain");
    private static final HttpField JSON_TYPE = new PreEncodedHttpField(HttpHeader.CONTENT_TYPE, "application/json");

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

    private final SnapshotHolder snapshots;
    private final Clock clock;
    private final FileCache files;
    private final TreeScanner scanner;
    private final DigestCache digests;
    private final ChangeWaits waits;
    private final SharedFileStore sharedFiles;
    private final TreeManifest manifests = new TreeManifest();
    private final PolicyArchives archives;

    /**
     * @param snapshots the live snapshot (a woken request is authorised again on the current one)
     * @param clock the clock for certificate validity
     * @param files what earlier downloads found, checked by one stat per request
     * @param scanner builds manifests and archives
     * @param digests file digests (relayd's shared-folder {@code HEAD ?hash=})
     * @param waits parks {@code ?wait} requests
     * @param sharedFiles node-to-node shared files
     * @param archives builds a node's Linux archive that Rudder's hook has not written yet
     */
    public FileHandler(SnapshotHolder snapshots, Clock clock, FileCache files, TreeScanner scanner,
            DigestCache digests, ChangeWaits waits, SharedFileStore sharedFiles, PolicyArchives archives) {
        this.archives = archives;
        this.snapshots = snapshots;
        this.clock = clock;
        this.files = files;
        this.scanner = scanner;
        this.digests = digests;
        this.waits = waits;
        this.sharedFiles = sharedFiles;
    }

    @Override
    public InvocationType getInvocationType() {
        // Plain downloads never wait; everything that may is handed to a worker below, and Jersey behind
        // WorkerDispatch.
        return InvocationType.NON_BLOCKING;
    }

    /** Which representation of a path is asked for. */
    enum View {
        /** The file itself (no {@code view}). */
        FILE,
        /** {@code ?view=manifest} of a directory. */
        MANIFEST,
        /** {@code ?view=archive} of a directory. */
        ARCHIVE;

        static View parse(String value) {
            if (value == null) {
                return FILE;
            }
            return switch (value) {
                case Routes.VIEW_MANIFEST -> MANIFEST;
                case Routes.VIEW_ARCHIVE -> ARCHIVE;
                default -> throw new PintleException.InvalidRequest("bad-view", "unknown view '"
                        + Problems.printable(value)
                        + "'; expected '" + Routes.VIEW_MANIFEST + "' or '" + Routes.VIEW_ARCHIVE + "'");
            };
        }
    }

    /**
     * A path the caller asked for, with how its access is decided.
     *
     * @param root the tree it is below
     * @param share what a change watch is anchored to
     * @param relative the percent-encoded path below the root
     */
    private record Target(Path root, Path share, String relative) {}

    /**
     * One file request, parsed: what it names, which view, and its conditions.
     *
     * @param since a manifest's {@code ?since=} (empty when given empty), null when absent
     */
    private record Ask(Exchange exchange, Target target, View view, boolean get, FileConditions.Headers conditions,
            String since) {}

    @Override
    public boolean handle(Request request, Response response, Callback callback) throws Exception {
        Exchange exchange = Exchange.of(request);
        Route route = exchange.route();
        String method = request.getMethod();
        if (!route.filePipeline(method)) {
            // A method the file routes do not serve (the dispatch step sends them here all of their methods).
            response.getHeaders().put(ALLOW);
            Problems.write(Problems.plain(HttpStatus.METHOD_NOT_ALLOWED_405, "method not allowed on this route; "
                    + "allowed: GET, HEAD", request.getHttpURI().getPath()), response, callback);
            return true;
        }
        try {
            answer(exchange, request, response, callback);
        } catch (PintleException refusal) {
            Problems.write(refusal, request, response, callback);
        } catch (RuntimeException failure) {
            fail(failure, exchange, request, response, callback);
        }
        return true;
    }

    private void answer(Exchange exchange, Request request, Response response, Callback callback) {
        boolean get = HttpMethod.GET.is(request.getMethod());
        String path = request.getHttpURI().getPath();
        ServerSnapshot snapshot = exchange.snapshot();
        Route route = exchange.route();
        if (route == Route.UUID) {
            exchange.authorize();
            byte[] self = snapshot.self().value().getBytes(StandardCharsets.UTF_8);
            response.setStatus(HttpStatus.OK_200);
            response.getHeaders().put(TEXT);
            response.getHeaders().put(HttpHeader.CONTENT_LENGTH, self.length);
            response.write(true, get ? ByteBuffer.wrap(self) : null, callback);
            return;
        }
        if (route == Route.SHARED_FILES) {
            sharedFile(exchange, route.below(path), request, response, callback);
            return;
        }
        Fields query = query(request);
        Target target = switch (route) {
            case POLICIES -> policies(route.below(path), snapshot, exchange);
            case COMMON -> new Target(snapshot.share().commonRoot(), snapshot.share().root(), route.below(path));
            case SHARED_FOLDER -> new Target(snapshot.config().paths().sharedFolder(),
                    snapshot.config().paths().sharedFolder(), route.below(path));
            default -> throw new IllegalStateException("not a file route: " + route);
        };
        View view = View.parse(query.getValue(Routes.VIEW));
        String since = query.getValue(Routes.SINCE);
        List<String> only = query.getValues(Routes.ONLY);
        if (only == null) {
            only = List.of();
        }
        checkViewParameters(view, since, only, query.getValue(Routes.WAIT));
        Ask ask = new Ask(exchange, target, view, get, conditions(request.getHeaders()), since);
        exchange.authorize();
        if (!only.isEmpty()) {
            List<String> names = onlyNames(only);
            onWorker(request, response, callback, exchange, () -> serveSubtrees(ask, names, request, response,
                    callback));
            return;
        }
        if (route == Route.SHARED_FOLDER && !get) {
            String hash = query.getValue(Routes.HASH);
            // relayd reads an absent and an empty hash alike, as "no hash": the file's plain HEAD (200 or 404),
            // hash_type unread (download-shared-file sends "hash_type=sha256&hash=" without a local copy).
            if (hash != null && !hash.isEmpty()) {
                String hashType = query.getValue(Routes.HASH_TYPE);
                onWorker(request, response, callback, exchange, () -> headWithHash(ask, hash, hashType, response,
                        callback));
                return;
            }
        }
        int waitSeconds = Exchange.waitSeconds(query.getValue(Routes.WAIT));
        if (view == View.MANIFEST && since != null && !since.isEmpty()) {
            onWorker(request, response, callback, exchange, () -> serveChanges(ask, waitSeconds, request, response,
                    callback));
            return;
        }
        if (waitSeconds > 0 && ask.conditions().ifNoneMatch() != null) {
            onWorker(request, response, callback, exchange, () -> respondOrPark(ask, waitSeconds, request, response,
                    callback));
            return;
        }
        if (view == View.FILE && route == Route.POLICIES && toBuild(ask, snapshot) != null) {
            String why = toBuild(ask, snapshot);
            onWorker(request, response, callback, exchange, () -> serveFile(ask, new Found(built(ask, snapshot, why),
                    null, null), response, callback));
        } else if (view == View.FILE) {
            serveFile(ask, lookup(ask, request), response, callback);
        } else {
            onWorker(request, response, callback, exchange, () -> serveTree(ask, tree(ask, request, false),
                    response, callback));
        }
    }

    private static Target policies(String below, ServerSnapshot snapshot, Exchange exchange) {
        NodeId owner = Access.owner(below);
        if (owner == null) {
            exchange.authorize(); // names no node directory: the rule's 404
            throw new IllegalStateException("no node in " + below + ", yet allowed");
        }
        return new Target(snapshot.nodeRoot(owner), snapshot.share().root(),
                below.substring(below.indexOf('/') + 1));
    }

    // ---- files

    /**
     * @return why Pintle builds the node's Linux archive ({@code absent}) when this request is for it,
     *     {@code [delivery] build_archives} is on and Rudder's is not good; else null
     */
    private static String toBuild(Ask ask, ServerSnapshot snapshot) {
        if (!PolicyArchives.ARCHIVE.equals(ask.target().relative())
                || !snapshot.config().delivery().buildArchives()) {
            return null;
        }
        return PolicyArchives.needed(ask.target().root());
    }

    /** The archive built from the node's tree (on a worker), or a 503 saying why not. */
    private FileVersion built(Ask ask, ServerSnapshot snapshot, String why) {
        Path root = ask.target().root();
        try {
            return archives.archive(snapshot.config().paths().state(), root.getFileName().toString(), root, why);
        } catch (IOException e) {
            LOG.warn("cannot build the policy archive from {}: {}", root.resolve(PolicyArchives.TREE), e.toString());
            throw new PintleException.Unavailable("archive-build-failed", "rules/rudder.tar.bz2 is missing and "
                    + "could not be built from rules/cfengine-community (" + (e instanceof NoSuchFileException
                            ? "a file vanished while it was read: a generation is under way"
                            : "see the server log") + "); try again shortly", 10);
        }
    }

    /** A file found, with what the cache knows of it. */
    private record Found(FileVersion version, Path named, FileCache.Entry entry) {}

    /** Safe resolution of a file, through the cache when the named path is a plain file below the root. */
    private Found lookup(Ask ask, Request request) {
        Path root = ask.target().root();
        String relative = ask.target().relative();
        try {
            if (relative.isEmpty() || relative.endsWith("/")) {
                return new Found(file(SafePaths.resolve(root, relative)), null, null);
            }
            Path named = SafePaths.lexical(root, relative);
            FileCache.Stamp stamp = null;
            if (files.enabled()) {
                stamp = FileCache.stamp(named);
                if (stamp.regular()) {
                    FileCache.Entry entry = files.get(named, stamp);
                    if (entry != null) {
                        return new Found(entry.version(), named, entry);
                    }
                }
            }
            Path real = SafePaths.real(root, named);
            FileVersion version = file(real);
            FileCache.Entry entry = null;
            // A regular file's stamp, not a link's or a directory's; only then can linkFree be true cheaply.
            if (stamp != null && stamp.regular() && SafePaths.linkFree(root, named, real)) {
                entry = files.keep(named, stamp, version);
            }
            return new Found(version, named, entry);
        } catch (UnsafePathException e) {
            throw pathRejected(ask.exchange(), request, e);
        } catch (IOException e) {
            throw unresolved(ask, request, e);
        }
    }

    /**
     * @param e why a path could not be resolved or read
     * @return what to answer: 404 for a missing file and for a link out of its tree (logged: an escape attempt
     *     or a broken share), else a server error
     */
    private static RuntimeException unresolved(Ask ask, Request request, IOException e) {
        if (e instanceof SafePaths.EscapeException) {
            refusedPath(ask.exchange(), request, e.getMessage());
            return notFound();
        }
        if (e instanceof NoSuchFileException) {
            return notFound();
        }
        return new IllegalStateException("cannot read " + ask.target().root() + "/" + ask.target().relative(), e);
    }

    private static FileVersion file(Path real) throws IOException {
        FileVersion version = FileVersion.of(real);
        if (version.directory()) {
            throw new PintleException.NotFound("directory", "this path is a directory; only files are served "
                    + "(add ?view=" + Routes.VIEW_MANIFEST + " or ?view=" + Routes.VIEW_ARCHIVE + ")");
        }
        return version;
    }

    /** The log line of a path refused as an escape attempt or a broken share. */
    private static void refusedPath(Exchange exchange, Request request, String why) {
        LOG.warn("refused path {} from {} ({}): {}", request.getHttpURI().getPath(),
                exchange.caller().address().getHostAddress(), exchange.caller().describe(), why);
    }

    private static PintleException pathRejected(Exchange exchange, Request request, UnsafePathException e) {
        if (e instanceof SafePaths.NameTooLongException) {
            // Names no file can have: a wrong request, not an escape attempt.
            return new PintleException.InvalidRequest("name-too-long", e.getMessage());
        }
        refusedPath(exchange, request, e.getMessage());
        Decision.Deny deny = new Decision.Deny("path-rejected", "path refused: " + e.getMessage());
        exchange.decision(deny);
        return new PintleException.AccessDenied(deny.reason(), deny.detail());
    }

    /** 200, 206, 304, 412 or 416 for one file version, its body from exactly that version. */
    private void serveFile(Ask ask, Found found, Response response, Callback callback) {
        FileVersion version = found.version();
        FileConditions.Outcome outcome = FileConditions.evaluate(ask.get(), ask.conditions(),
                new FileConditions.Representation(version.etag(), version.lastModified(), version.size()));
        HttpFields.Mutable out = response.getHeaders();
        out.put(HttpHeader.ETAG, version.etag());
        out.put(HttpHeader.LAST_MODIFIED, DateGenerator.formatDate(version.lastModified()));
        out.put(NO_CACHE);
        long size = version.size();
        long first = 0;
        long length = size;
        if (answeredWithoutBody(outcome, response, callback)) {
            return;
        }
        if (outcome instanceof FileConditions.Outcome.Unsatisfiable) {
            response.setStatus(HttpStatus.RANGE_NOT_SATISFIABLE_416);
            out.put(HttpHeader.CONTENT_RANGE, "bytes */" + size);
            out.put(HttpHeader.CONTENT_LENGTH, 0);
            response.write(true, null, callback);
            return;
        }
        if (outcome instanceof FileConditions.Outcome.Partial partial) {
            response.setStatus(HttpStatus.PARTIAL_CONTENT_206);
            out.put(HttpHeader.CONTENT_RANGE, "bytes " + partial.first() + "-" + partial.last() + "/" + size);
            first = partial.first();
            length = partial.length();
        } else {
            response.setStatus(HttpStatus.OK_200);
        }
        out.put(HttpHeader.CONTENT_TYPE, mediaType(version.path().getFileName().toString()));
        out.put(ACCEPT_RANGES);
        out.put(HttpHeader.CONTENT_LENGTH, length);
        if (!ask.get()) {
            response.write(true, null, callback);
            return;
        }
        byte[] cached = found.entry() != null ? found.entry().body() : null;
        if (cached != null) {
            response.write(true, ByteBuffer.wrap(cached, (int) first, (int) length), callback);
            return;
        }
        FileChannel channel = null;
        try {
            channel = version.open();
            if (size <= INLINE_BODY_BYTES) {
                byte[] body = readAll(channel, (int) size);
                channel.close();
                if (found.entry() != null) {
                    files.withBody(found.named(), found.entry(), body);
                }
                response.write(true, ByteBuffer.wrap(body, (int) first, (int) length), callback);
                return;
            }
            ByteBufferPool.Sized buffers = new ByteBufferPool.Sized(
                    ask.exchange().request().getComponents().getByteBufferPool(), true, STREAM_BUFFER_BYTES);
            Content.copy(Content.Source.from(buffers, channel, first, length), response, callback);
        } catch (IOException e) {
            close(channel);
            changed(e, ask, response, callback);
        }
    }

    /** 304 or 412, with the validators already set: whether the outcome was one of them. */
    private static boolean answeredWithoutBody(FileConditions.Outcome outcome, Response response, Callback callback) {
        if (outcome instanceof FileConditions.Outcome.NotModified) {
            response.setStatus(HttpStatus.NOT_MODIFIED_304);
        } else if (outcome instanceof FileConditions.Outcome.PreconditionFailed) {
            response.setStatus(HttpStatus.PRECONDITION_FAILED_412);
            response.getHeaders().put(HttpHeader.CONTENT_LENGTH, 0);
        } else {
            return false;
        }
        response.write(true, null, callback);
        return true;
    }

    /**
     * The file was replaced between describing it and opening it (a rename racing the request): nothing was sent
     * yet, so the client gets a 503 to retry at once.
     */
    private static void changed(IOException e, Ask ask, Response response, Callback callback) {
        Request request = ask.exchange().request();
        if (e instanceof FileVersion.FileChangedException) {
            LOG.warn("aborted {}: {}", request.getHttpURI().getPath(), e.getMessage());
            response.getHeaders().remove(HttpHeader.CONTENT_LENGTH);
            Problems.write(new PintleException.Unavailable("file-changed",
                    "the file was replaced while it was being served; retry", 1), request, response, callback);
            return;
        }
        response.getHeaders().remove(HttpHeader.CONTENT_LENGTH);
        fail(e, ask.exchange(), request, response, callback);
    }

    private static byte[] readAll(FileChannel channel, int size) throws IOException {
        ByteBuffer buffer = ByteBuffer.allocate(size);
        long position = 0;
        while (buffer.hasRemaining()) {
            int read = channel.read(buffer, position);
            if (read < 0) {
                throw new FileVersion.FileChangedException("file shrank while it was being read");
            }
            position += read;
        }
        return buffer.array();
    }

    // ---- directory views

    /**
     * @param watched whether the version must list its directories (for a change wait)
     */
    private TreeVersion tree(Ask ask, Request request, boolean watched) {
        Path directory = real(ask, request);
        try {
            return scanner.scan(directory, watched);
        } catch (IOException e) {
            throw unreadTree(e, directory, ask.view().name().toLowerCase(Locale.ROOT));
        }
    }

    /** What a tree view's failure to read its tree answers: 404, 400 {@code tree-too-large}, 503 or a 500. */
    private static RuntimeException unreadTree(IOException e, Path directory, String what) {
        if (e instanceof TreeScanner.NotADirectoryException) {
            return notADirectory();
        }
        if (e instanceof TreeScanner.TreeTooLargeException) {
            LOG.warn("refused a {}: {}", what, e.getMessage());
            return new PintleException.InvalidRequest("tree-too-large", e.getMessage().replace(directory.toString(),
                    "this directory") + " on this server; ask for a subdirectory, or raise that limit in its "
                    + "configuration (a relay's share: about 50 entries a Rudder node)");
        }
        if (e instanceof Spool.TooLargeException) {
            LOG.warn("refused a {} of {}: {}", what, directory, e.getMessage());
            return new PintleException.InvalidRequest("tree-too-large", "the change list of this directory since "
                    + "that version has " + e.getMessage() + " on this server; ask without since= for the whole "
                    + "manifest, or for a subdirectory");
        }
        if (e instanceof NoSuchFileException) {
            return notFound();
        }
        if (e instanceof FileVersion.FileChangedException) {
            return treeChanged();
        }
        return new IllegalStateException("cannot scan " + directory, e);
    }

    /** The real path of what a request names (a file or a directory), refusals mapped. */
    private static Path real(Ask ask, Request request) {
        try {
            return SafePaths.resolve(ask.target().root(), ask.target().relative());
        } catch (UnsafePathException e) {
            throw pathRejected(ask.exchange(), request, e);
        } catch (IOException e) {
            throw unresolved(ask, request, e);
        }
    }

    /**
     * A manifest or an archive of a tree already scanned (on a worker), its body written as the tree is walked
     * again: what a view holds is a walk's state, never the tree. If the tree is no longer the version scanned,
     * the client gets a 503 {@code file-changed} when nothing was sent yet, a cut response otherwise.
     */
    private void serveTree(Ask ask, TreeVersion tree, Response response, Callback callback) throws IOException {
        if (!startView(ask, tree.root(), tree.etag(), response, callback)) {
            return;
        }
        HttpFields.Mutable out = response.getHeaders();
        // Not closed after a failure: closing ends the response as if it were whole.
        OutputStream body = Content.Sink.asOutputStream(response);
        try {
            if (ask.view() == View.MANIFEST && ask.since() != null) {
                manifests.writeRemembered(scanner, tree, body);
            } else if (ask.view() == View.MANIFEST) {
                manifests.write(scanner, tree, body);
            } else {
                TreeArchive.write(scanner, tree, body);
            }
        } catch (FileVersion.FileChangedException e) {
            if (response.isCommitted()) {
                throw e;
            }
            LOG.debug("tree {} changed before its {} was sent: {}", tree.root(), ask.view(), e.getMessage());
            out.remove(HttpHeader.ETAG);
            out.remove("Content-Disposition");
            throw treeChanged();
        }
        body.close();
        callback.succeeded();
    }

    /** {@code since} is a manifest's, {@code only} an archive's that does not wait; anything else is refused. */
    private static void checkViewParameters(View view, String since, List<String> only, String wait) {
        if (since != null && view != View.MANIFEST) {
            throw new PintleException.InvalidRequest("bad-query", "'" + Routes.SINCE + "' goes with ?"
                    + Routes.VIEW + "=" + Routes.VIEW_MANIFEST + " only");
        }
        if (!only.isEmpty() && view != View.ARCHIVE) {
            throw new PintleException.InvalidRequest("bad-query", "'" + Routes.ONLY + "' goes with ?"
                    + Routes.VIEW + "=" + Routes.VIEW_ARCHIVE + " only");
        }
        if (!only.isEmpty() && wait != null) {
            throw new PintleException.InvalidRequest("bad-query", "an archive of '" + Routes.ONLY
                    + "' names has no ETag to wait on; drop '" + Routes.WAIT + "'");
        }
    }

    /** The names of {@code ?only=}: each one top-level name, at most {@link Routes#MAX_ONLY}; sorted, once each. */
    private static List<String> onlyNames(List<String> only) {
        if (only.size() > Routes.MAX_ONLY) {
            throw new PintleException.InvalidRequest("too-many-names", only.size() + " '" + Routes.ONLY
                    + "' names; at most " + Routes.MAX_ONLY + " in one request");
        }
        java.util.TreeSet<String> names = new java.util.TreeSet<>();
        for (String name : only) {
            if (name.isEmpty() || name.equals(".") || name.equals("..") || name.indexOf('/') >= 0
                    || name.indexOf('\\') >= 0 || name.indexOf('\0') >= 0) {
                throw new PintleException.InvalidRequest("bad-name", "'" + Routes.ONLY + "' takes names of "
                        + "directories directly below this one, not '" + Problems.printable(name) + "'");
            }
            names.add(name);
        }
        return List.copyOf(names);
    }

    /**
     * {@code ?view=archive&only=}: the named directories below the requested one, each scanned just before it is
     * written and checked to be that version as it goes; a name that is no directory there is left out. Once a
     * byte is sent, a directory that changed during its write cuts the response (those before it are whole).
     */
    private void serveSubtrees(Ask ask, List<String> names, Request request, Response response, Callback callback)
            throws IOException {
        Path directory = real(ask, request);
        if (!Files.isDirectory(directory)) {
            throw notADirectory();
        }
        if (!startView(ask, directory, null, response, callback)) {
            return;
        }
        HttpFields.Mutable out = response.getHeaders();
        String relative = ask.target().relative();
        String base = relative.isEmpty() || relative.endsWith("/") ? relative : relative + "/";
        OutputStream body = Content.Sink.asOutputStream(response);
        try {
            TreeArchive.Writer archive = new TreeArchive.Writer(body);
            for (String name : names) {
                Path subtree;
                try {
                    subtree = SafePaths.resolve(ask.target().root(), base + URIUtil.encodePath(name) + "/");
                } catch (UnsafePathException e) {
                    throw pathRejected(ask.exchange(), request, e);
                } catch (SafePaths.EscapeException e) {
                    refusedPath(ask.exchange(), request, e.getMessage());
                    continue; // left out, as a missing directory: the others are still served
                } catch (NoSuchFileException | java.nio.file.NotDirectoryException gone) {
                    continue;
                }
                TreeVersion tree;
                try {
                    tree = scanner.scan(subtree, false);
                } catch (NoSuchFileException | TreeScanner.NotADirectoryException gone) {
                    continue;
                } catch (TreeScanner.TreeTooLargeException e) {
                    throw new PintleException.InvalidRequest("tree-too-large", "'" + Problems.printable(name)
                            + "' is too large for an archive: " + e.getMessage().replace(subtree.toString(),
                                    "that directory"));
                }
                archive.add(scanner, tree, name + "/");
            }
            archive.finish();
        } catch (FileVersion.FileChangedException e) {
            if (response.isCommitted()) {
                throw e;
            }
            out.remove("Content-Disposition");
            throw treeChanged();
        }
        body.close();
        callback.succeeded();
    }

    /**
     * {@code ?view=manifest&since=<etag>}: when the version is held, a change list read in one pass with each
     * top-level directory one version of its own ({@link TreeManifest#changes}), so that a share whose node
     * directories are being replaced one after the other during a generation still gets an answer, where a whole
     * manifest would find the tree changed and fail; with {@code wait}, parked as any manifest while nothing
     * changed. A version no longer held: the whole manifest, as any manifest request.
     */
    private void serveChanges(Ask ask, int waitSeconds, Request request, Response response, Callback callback)
            throws IOException {
        Path directory = real(ask, request);
        String ifNoneMatch = ask.conditions().ifNoneMatch();
        boolean waiting = waitSeconds > 0 && ifNoneMatch != null;
        ManifestHistory.Fingerprints before = manifests.held(directory, ask.since());
        if (before == null) {
            if (waiting) {
                respondOrPark(ask, waitSeconds, request, response, callback);
            } else {
                serveTree(ask, tree(ask, request, false), response, callback);
            }
            return;
        }
        TreeManifest.ChangeList changes = changes(ask, directory, before, waiting);
        try {
            if (waiting && FileConditions.matches(ifNoneMatch, changes.version().etag(), false)) {
                parkChanges(ask, directory, changes, waitSeconds, request, response, callback);
                return;
            }
            answerChanges(ask, directory, changes, response, callback);
        } finally {
            changes.release();
        }
    }

    /**
     * Parks a change list's request. Each look at the tree while it waits is a change list since the same version,
     * which the woken request answers with: one walk of the tree per change, not a walk to see that it changed and
     * another for the answer. (Waits on one directory with another {@code since} are another group.)
     */
    private void parkChanges(Ask ask, Path directory, TreeManifest.ChangeList changes, int waitSeconds,
            Request request, Response response, Callback callback) {
        String key = "changes:" + ask.since() + ":" + directory;
        ChangeWaits.Probe probe = () -> {
            ManifestHistory.Fingerprints before = manifests.held(directory, ask.since());
            if (before == null) {
                return observe(ask, directory); // no longer held: the woken request gets the whole manifest
            }
            TreeManifest.ChangeList now = changes(ask, directory, before, true);
            return observation(ask, directory, now.version(), now);
        };
        park(ask, key, directory, observation(ask, directory, changes.version(), null), probe, waitSeconds,
                request, response, callback, now -> {
                    if (now != null && now.answer() instanceof TreeManifest.ChangeList found) {
                        answerChanges(ask, directory, found, response, callback);
                    } else {
                        serveChanges(ask, 0, request, response, callback);
                    }
                });
    }

    /** Answers with a change list: its ETag and the request's conditions, then its entries. Not released here. */
    private void answerChanges(Ask ask, Path directory, TreeManifest.ChangeList changes, Response response,
            Callback callback) throws IOException {
        if (!startView(ask, directory, changes.version().etag(), response, callback)) {
            return;
        }
        manifests.remember(changes);
        OutputStream body = Content.Sink.asOutputStream(response);
        manifests.write(changes, body);
        body.close();
        callback.succeeded();
    }

    /** {@link TreeManifest#changes}, its refusals mapped as {@link #tree}'s. */
    private TreeManifest.ChangeList changes(Ask ask, Path directory, ManifestHistory.Fingerprints before,
            boolean watched) {
        try {
            return manifests.changes(scanner, directory, ask.since(), before, watched);
        } catch (IOException e) {
            throw unreadTree(e, directory, "change list");
        }
    }

    /**
     * A directory view's status and headers: its ETag and the request's conditions (when it has one: an archive of
     * {@code only} names has none), no-cache, the view's type.
     *
     * @return whether the body is to be written (false: a 304, a 412 or a HEAD already answered)
     */
    private static boolean startView(Ask ask, Path directory, String etag, Response response, Callback callback) {
        HttpFields.Mutable out = response.getHeaders();
        out.put(NO_CACHE);
        if (etag != null) {
            out.put(HttpHeader.ETAG, etag);
            FileConditions.Outcome outcome = FileConditions.evaluate(ask.get(), ask.conditions(),
                    new FileConditions.Representation(etag, null, -1));
            if (answeredWithoutBody(outcome, response, callback)) {
                return false;
            }
        }
        response.setStatus(HttpStatus.OK_200);
        if (ask.view() == View.MANIFEST) {
            out.put(JSON_TYPE);
        } else {
            String name = directory.getFileName() == null ? "archive" : directory.getFileName().toString();
            out.put(HttpHeader.CONTENT_TYPE, MediaTypes.TAR_GZIP);
            out.put("Content-Disposition", "attachment; filename=\"" + Problems.printable(name) + ".tar.gz\"");
        }
        if (!ask.get()) {
            response.write(true, null, callback);
            return false;
        }
        return true;
    }

    private static PintleException notADirectory() {
        return new PintleException.NotFound("not-a-directory", "this path is a file; views '" + Routes.VIEW_MANIFEST
                + "' and '" + Routes.VIEW_ARCHIVE + "' are for directories");
    }

    private static PintleException treeChanged() {
        return new PintleException.Unavailable("file-changed", "the tree kept changing while it was being read; "
                + "retry", 1);
    }

    // ---- relayd's shared folder HEAD ?hash=

    /**
     * relayd's {@code Hash::new(hash_type, hash)}: {@code hash_type} absent means sha256, but an empty or unknown one
     * is refused; the hash must be hexadecimal and exactly the digest's length.
     *
     * @return the JCA algorithm name
     */
    private static String algorithm(String hash, String hashType) {
        String algorithm = hashType == null || hashType.equals("sha256") ? "SHA-256"
                : hashType.equals("sha512") ? "SHA-512"
                : null;
        if (algorithm == null) {
            throw new PintleException.InvalidRequest("bad-hash-type",
                    "hash_type must be 'sha256' or 'sha512', not '" + Problems.printable(hashType) + "'");
        }
        int digits = algorithm.equals("SHA-256") ? 64 : 128;
        if (hash.length() != digits || !HEX.matcher(hash).matches()) {
            throw new PintleException.InvalidRequest("bad-hash", "hash must be the " + digits
                    + " hexadecimal digits of a " + (digits == 64 ? "sha256" : "sha512") + " digest");
        }
        return algorithm;
    }

    /**
     * relayd's {@code HEAD shared-folder/{path}?hash=&hash_type=}, in relayd's order: 404 when there is no such
     * file (whatever the hash), 400 when the hash or its type is malformed, then 304 when the file's digest is
     * {@code hash} and 200 (with the file's headers) when it differs.
     */
    private void headWithHash(Ask ask, String hash, String hashType, Response response, Callback callback) {
        Request request = ask.exchange().request();
        Path real = real(ask, request);
        FileVersion version;
        try {
            version = file(real);
        } catch (NoSuchFileException e) {
            throw notFound();
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + real, e);
        }
        String algorithm = algorithm(hash, hashType);
        String actual;
        try {
            FileStat stat = FileStat.of(real);
            actual = algorithm.equals("SHA-256") ? digests.sha256(stat).get() : digests.compute(stat, algorithm);
        } catch (NoSuchFileException gone) {
            throw notFound();
        } catch (IOException e) {
            throw new IllegalStateException("cannot hash " + real, e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof NoSuchFileException) {
                throw notFound();
            }
            throw new IllegalStateException("cannot hash " + real, e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while hashing " + real, e);
        }
        if (actual.equalsIgnoreCase(hash)) {
            response.setStatus(HttpStatus.NOT_MODIFIED_304);
            response.getHeaders().put(HttpHeader.ETAG, version.etag());
            response.write(true, null, callback);
            return;
        }
        serveFile(ask, new Found(version, null, null), response, callback);
    }

    // ---- shared files: the target node's download

    private void sharedFile(Exchange exchange, String below, Request request, Response response,
            Callback callback) {
        String[] parts = below.split("/", -1);
        if (parts.length != 3) {
            throw new PintleException.NotFound("no-such-route", "no such route");
        }
        String target = URIUtil.decodePath(parts[0]);
        String source = URIUtil.decodePath(parts[1]);
        String fileId = URIUtil.decodePath(parts[2]);
        try {
            new NodeId(target);
        } catch (IllegalArgumentException e) {
            throw new PintleException.InvalidRequest("bad-id", "invalid target: " + e.getMessage());
        }
        ServerSnapshot snapshot = exchange.snapshot();
        exchange.authorize();
        SharedFileId id;
        try {
            id = new SharedFileId(target, source, fileId);
        } catch (IllegalArgumentException e) {
            throw new PintleException.InvalidRequest("bad-id", e.getMessage());
        }
        Path root = snapshot.config().paths().sharedFiles();
        FileVersion version;
        try {
            // The version whose hash is the metadata's: serveFile opens exactly that one, or answers 503.
            version = sharedFiles.current(root, id).orElseThrow(() -> new PintleException.NotFound("no-such-file",
                    "no such shared file (or it expired)")).version();
        } catch (SharedFileStore.RejectedException e) {
            LOG.warn("shared file refused ({}): {}", e.reason(), e.getMessage());
            throw e.refusal();
        } catch (NoSuchFileException e) {
            throw new PintleException.NotFound("no-such-file", "no such shared file (or it expired)");
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + id.file(root), e);
        }
        Ask ask = new Ask(exchange, null, View.FILE, HttpMethod.GET.is(request.getMethod()),
                conditions(request.getHeaders()), null);
        serveFile(ask, new Found(version, null, null), response, callback);
    }

    // ---- change waits

    /**
     * Answers at once, unless the request's {@code If-None-Match} is the current ETag: then it is parked, holding
     * no thread and no worker, until the ETag changes (200, authorised again on the then current snapshot) or the
     * wait is over (304).
     */
    private void respondOrPark(Ask ask, int waitSeconds, Request request, Response response, Callback callback)
            throws IOException {
        String ifNoneMatch = ask.conditions().ifNoneMatch();
        Path path = real(ask, request);
        ChangeWaits.Observation now;
        if (ask.view() == View.FILE) {
            now = observe(ask, path);
            if (now.etag() == null || !FileConditions.matches(ifNoneMatch, now.etag(), false)) {
                serveFile(ask, lookup(ask, request), response, callback);
                return;
            }
        } else {
            // One scan serves the comparison, and the answer when the tree already differs.
            TreeVersion tree = tree(ask, request, true);
            if (!FileConditions.matches(ifNoneMatch, tree.etag(), false)) {
                serveTree(ask, tree, response, callback);
                return;
            }
            now = observation(ask, path, tree, null);
        }
        park(ask, ask.view() + ":" + path, path, now, () -> observe(ask, path), waitSeconds, request, response,
                callback, woken -> {
                    if (ask.view() == View.FILE) {
                        serveFile(ask, lookup(ask, request), response, callback);
                    } else {
                        serveTree(ask, tree(ask, request, false), response, callback);
                    }
                });
    }

    /**
     * Parks a request whose {@code If-None-Match} is the current ETag, holding no thread and no worker, until the
     * ETag changes ({@code answer} runs, authorised again on the then current snapshot) or the wait is over (304).
     */
    private void park(Ask ask, String key, Path path, ChangeWaits.Observation now, ChangeWaits.Probe probe,
            int waitSeconds, Request request, Response response, Callback callback, Answer answer) {
        String etag = now.etag();
        Exchange exchange = ask.exchange();
        AtomicReference<Throwable> gone = new AtomicReference<>();
        ChangeWaits.Listener listener = new ChangeWaits.Listener() {
            @Override
            public void changed(ChangeWaits.Observation found) {
                onWorker(request, response, callback, exchange, () -> {
                    try {
                        reauthorize(ask);
                        answer.run(found);
                    } finally {
                        // The reference ChangeWaits took for this request (a request it could not hand to a
                        // worker, at stop, leaves it to the spool's cleaner).
                        if (found != null && found.answer() instanceof ChangeWaits.Shared shared) {
                            shared.release();
                        }
                    }
                });
            }

            @Override
            public void timedOut() {
                onWorker(request, response, callback, exchange, () -> {
                    response.setStatus(HttpStatus.NOT_MODIFIED_304);
                    response.getHeaders().put(HttpHeader.ETAG, etag);
                    response.getHeaders().put(NO_CACHE);
                    response.write(true, null, callback);
                });
            }

            @Override
            public void cancelled() {
                callback.failed(gone.get());
            }
        };
        ChangeWaits.Parked parked = waits.park(key, etag, now, probe, Duration.ofSeconds(waitSeconds),
                exchange.clientAddress(), listener);
        exchange.park();
        // A client that resets its stream or closes its connection frees its slot now, not at the wait's end.
        request.addFailureListener(failure -> {
            gone.set(failure);
            exchange.closedByClient();
            parked.cancel();
        });
    }

    private ChangeWaits.Observation observe(Ask ask, Path path) {
        List<Path> directories = new ArrayList<>(ChangeWaits.ancestors(path, ask.target().share(), false));
        try {
            if (ask.view() == View.FILE) {
                FileVersion version = FileVersion.of(path);
                return new ChangeWaits.Observation(version.directory() ? null : version.etag(), directories);
            }
            return observation(ask, path, scanner.scan(path, true), null);
        } catch (IOException gone) {
            // Removed, replaced by a file, or unreadable: the ETag the request has is no longer current.
            return new ChangeWaits.Observation(null, directories);
        }
    }

    /**
     * A tree's ETag, and what it depends on: every directory in it and the ones above it up to the share; with what
     * a woken request answers with, when the look computed it.
     */
    private static ChangeWaits.Observation observation(Ask ask, Path path, TreeVersion tree, Object answer) {
        List<Path> directories = new ArrayList<>(ChangeWaits.ancestors(path, ask.target().share(), false));
        directories.addAll(tree.directories());
        return new ChangeWaits.Observation(tree.etag(), directories, answer);
    }

    /**
     * A woken request is authorised again when the snapshot changed while it waited (the node may be gone).
     */
    private void reauthorize(Ask ask) {
        Exchange exchange = ask.exchange();
        ServerSnapshot current = snapshots.current();
        if (current != exchange.snapshot()) {
            Caller caller = Exchange.identify(exchange.caller().address(), exchange.peer(), current, clock);
            exchange.authorize(exchange.decide(current, caller, Credentials.NONE), caller);
        }
    }

    // ---- plumbing

    /** A step that may block or fail, run on a worker with its failures answered. */
    @FunctionalInterface
    private interface Step {
        void run() throws IOException;
    }

    /** A woken request's answer, given the look that found its resource changed (null when none did). */
    @FunctionalInterface
    private interface Answer {
        void run(ChangeWaits.Observation found) throws IOException;
    }

    private static void onWorker(Request request, Response response, Callback callback, Exchange exchange,
            Step step) {
        request.getComponents().getExecutor().execute(() -> run(step, exchange, request, response, callback));
    }

    private static void run(Step step, Exchange exchange, Request request, Response response, Callback callback) {
        try {
            step.run();
        } catch (PintleException refusal) {
            Problems.write(refusal, request, response, callback);
        } catch (IOException | RuntimeException failure) {
            fail(failure, exchange, request, response, callback);
        } catch (Error error) {
            // Out of memory, a stack overflow: the request still ends (a 500, or a cut response) and gives its
            // worker back; the error then goes on to the pool's thread as before.
            callback.failed(error);
            throw error;
        }
    }

    private static void fail(Throwable failure, Exchange exchange, Request request, Response response,
            Callback callback) {
        if (response.isCommitted()) {
            // Headers went out: all that is left is to cut the response, which tells the client it is incomplete.
            LOG.debug("aborted {} {}: {}", request.getMethod(), request.getHttpURI().getPath(), failure.toString());
            callback.failed(failure);
            return;
        }
        Problems.write(Problems.incident(failure, exchange, request.getHttpURI().getPath()), response, callback);
    }

    private static Fields query(Request request) {
        if (request.getHttpURI().getQuery() == null) {
            return Fields.EMPTY;
        }
        try {
            return Request.extractQueryParameters(request, StandardCharsets.UTF_8);
        } catch (RuntimeException malformed) {
            throw new PintleException.InvalidRequest("bad-query", "the query string is not valid "
                    + "percent-encoded UTF-8");
        }
    }

    private static FileConditions.Headers conditions(HttpFields headers) {
        if (!headers.contains(HttpHeader.IF_NONE_MATCH) && !headers.contains(HttpHeader.IF_MATCH)
                && !headers.contains(HttpHeader.IF_MODIFIED_SINCE) && !headers.contains(HttpHeader.IF_UNMODIFIED_SINCE)
                && !headers.contains(HttpHeader.RANGE)) {
            return FileConditions.Headers.NONE;
        }
        return new FileConditions.Headers(list(headers, HttpHeader.IF_MATCH), list(headers, HttpHeader.IF_NONE_MATCH),
                single(headers, HttpHeader.IF_MODIFIED_SINCE), single(headers, HttpHeader.IF_UNMODIFIED_SINCE),
                single(headers, HttpHeader.IF_RANGE), single(headers, HttpHeader.RANGE));
    }

    /** A list header's fields joined, or null. */
    private static String list(HttpFields headers, HttpHeader name) {
        List<String> values = headers.getValuesList(name);
        return values.isEmpty() ? null : values.size() == 1 ? values.get(0) : String.join(", ", values);
    }

    /** A single-valued header, or null; several fields of it are invalid, which a condition then ignores. */
    private static String single(HttpFields headers, HttpHeader name) {
        List<String> values = headers.getValuesList(name);
        return values.isEmpty() ? null : values.size() == 1 ? values.get(0) : "";
    }

    static String mediaType(String fileName) {
        int dot = fileName.lastIndexOf('.');
        String extension = dot < 0 ? "" : fileName.substring(dot + 1).toLowerCase(Locale.ROOT);
        return TYPES.getOrDefault(extension, "application/octet-stream");
    }

    private static PintleException notFound() {
        return new PintleException.NotFound("no-such-file", "no such file");
    }

    private static void close(FileChannel channel) {
        if (channel != null) {
            try {
                channel.close();
            } catch (IOException ignored) {
                // Nothing was read from it that matters any more.
            }
        }
    }
}
