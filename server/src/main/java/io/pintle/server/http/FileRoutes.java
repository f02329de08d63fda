package io.pintle.server.http;

import io.pintle.api.MediaTypes;
import io.pintle.api.Routes;
import io.pintle.server.acl.Caller;
import io.pintle.server.acl.Decision;
import io.pintle.server.nodes.NodeId;
import io.pintle.server.policy.ChangeWaits;
import io.pintle.server.policy.DigestCache;
import io.pintle.server.policy.FileStat;
import io.pintle.server.policy.FileVersion;
import io.pintle.server.policy.SafePaths;
import io.pintle.server.policy.TreeArchive;
import io.pintle.server.policy.TreeScanner;
import io.pintle.server.policy.TreeVersion;
import io.pintle.server.policy.UnsafePathException;
import io.pintle.server.problem.PintleException;
import io.pintle.server.reload.ServerSnapshot;
import io.pintle.server.reload.SnapshotHolder;
import jakarta.ws.rs.container.AsyncResponse;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.core.EntityTag;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Request;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.StreamingOutput;
import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.function.BiFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What Rudder's file routes answer, shared by the plain routes ({@link PolicyResource}) and the waiting ones
 * ({@link WaitResource}): the access decision, safe path resolution, then a file, a directory's manifest or a
 * directory's archive, with strong ETags and conditional requests; and parking a request whose ETag is still the
 * one it has until it changes.
 */
final class FileRoutes {
    private static final Logger LOG = LoggerFactory.getLogger(FileRoutes.class);

    /** {@code Retry-After} when every waiter slot is taken: waits end within minutes, so come back soon. */
    static final long WAITERS_RETRY_AFTER_SECONDS = 5;

    private final SnapshotHolder snapshots;
    private final Clock clock;
    private final TreeScanner scanner;
    private final DigestCache digests;
    private final ChangeWaits waits;

    /**
     * @param snapshots the live snapshot (a woken request is authorised again on the current one)
     * @param clock the clock for certificate validity
     * @param scanner builds manifests
     * @param digests file digests (relayd's shared-folder HEAD)
     * @param waits parks {@code ?wait} requests
     */
    FileRoutes(SnapshotHolder snapshots, Clock clock, TreeScanner scanner, DigestCache digests, ChangeWaits waits) {
        this.snapshots = snapshots;
        this.clock = clock;
        this.scanner = scanner;
        this.digests = digests;
        this.waits = waits;
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
                default -> throw new PintleException.InvalidRequest("bad-view", "unknown view '" + printable(value)
                        + "'; expected '" + Routes.VIEW_MANIFEST + "' or '" + Routes.VIEW_ARCHIVE + "'");
            };
        }
    }

    /**
     * A path that the caller may read, resolved safely.
     *
     * @param path the real path
     * @param share the share root (what a change watch is anchored to)
     * @param decide the access decision of this route, for a caller on a snapshot
     */
    record Target(Path path, Path share, BiFunction<ServerSnapshot, Caller, Decision> decide) {}

    /**
     * Decides, then resolves: a denial never depends on what exists.
     *
     * @param node the node id of {@code /policies/{node}/...}, or null for {@code /common/...}
     * @param path the encoded path below the route root
     * @param context the request
     * @return the target
     */
    Target target(String node, String path, ContainerRequestContext context) {
        ServerSnapshot snapshot = RequestState.of(context).snapshot();
        BiFunction<ServerSnapshot, Caller, Decision> decide;
        Path root;
        if (node != null) {
            NodeId owner = nodeId(node);
            decide = (s, caller) -> s.acl().policies(caller, owner);
            root = snapshot.share().nodeRoot(owner);
        } else {
            decide = (s, caller) -> s.acl().common(caller);
            root = snapshot.share().commonRoot();
        }
        return target(decide, root, snapshot.share().root(), path, context);
    }

    /**
     * @param path the encoded path below the shared folder
     * @param context the request
     * @return the target under {@code [paths] shared_folder}
     */
    Target sharedFolderTarget(String path, ContainerRequestContext context) {
        Path root = RequestState.of(context).snapshot().config().paths().sharedFolder();
        return target((s, caller) -> s.acl().sharedFolder(caller), root, root, path, context);
    }

    private Target target(BiFunction<ServerSnapshot, Caller, Decision> decide, Path root, Path share, String path,
            ContainerRequestContext context) {
        RequestState state = RequestState.of(context);
        authorize(decide.apply(state.snapshot(), state.caller()), state, context);
        return new Target(resolve(root, path, state, context), share, decide);
    }

    /**
     * relayd's {@code HEAD shared-folder/{path}?hash=&hash_type=}: 304 when the file's digest is {@code hash},
     * 200 (with the file's headers) when it differs or no hash is given, 404 when there is no such file.
     *
     * @param target the file
     * @param hash the client's digest (hex), or null
     * @param hashType {@code sha256} (default) or {@code sha512}
     * @param request the JAX-RS request
     * @param headers the request headers
     * @return the response (no body)
     */
    Response headWithHash(Target target, String hash, String hashType, Request request, HttpHeaders headers) {
        String algorithm = hashType == null || hashType.isEmpty() || hashType.equals("sha256") ? "SHA-256"
                : hashType.equals("sha512") ? "SHA-512"
                : null;
        if (algorithm == null) {
            throw new PintleException.InvalidRequest("bad-hash-type",
                    "hash_type must be 'sha256' or 'sha512', not '" + printable(hashType) + "'");
        }
        if (hash != null && !hash.matches("[0-9a-fA-F]{1,128}")) {
            throw new PintleException.InvalidRequest("bad-hash", "hash must be hexadecimal");
        }
        FileVersion version = file(target.path());
        if (hash == null) {
            return FileResponses.serve(version, request, headers);
        }
        String actual;
        try {
            FileStat stat = FileStat.of(target.path());
            actual = algorithm.equals("SHA-256") ? digests.sha256(stat).get() : digests.compute(stat, algorithm);
        } catch (NoSuchFileException gone) {
            throw notFound();
        } catch (IOException e) {
            throw new IllegalStateException("cannot hash " + target.path(), e);
        } catch (java.util.concurrent.ExecutionException e) {
            if (e.getCause() instanceof NoSuchFileException) {
                throw notFound();
            }
            throw new IllegalStateException("cannot hash " + target.path(), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while hashing " + target.path(), e);
        }
        if (actual.equalsIgnoreCase(hash)) {
            return Response.notModified(tag(version.etag())).build();
        }
        return FileResponses.serve(version, request, headers);
    }

    /**
     * @param target what to serve
     * @param view which representation
     * @param request the JAX-RS request (preconditions)
     * @param headers the request headers
     * @return the response
     */
    Response respond(Target target, View view, Request request, HttpHeaders headers) {
        if (view == View.FILE) {
            return FileResponses.serve(file(target.path()), request, headers);
        }
        return respond(target, view, tree(target.path()), request, headers);
    }

    /** A directory view of a tree already scanned. */
    private static Response respond(Target target, View view, TreeVersion tree, Request request,
            HttpHeaders headers) {
        EntityTag tag = tag(tree.etag());
        Response.ResponseBuilder notModified = request.evaluatePreconditions(tag);
        if (notModified != null) {
            return notModified.header(HttpHeaders.CACHE_CONTROL, "no-cache").build();
        }
        Response.ResponseBuilder response = Response.ok().tag(tag).header(HttpHeaders.CACHE_CONTROL, "no-cache");
        if (view == View.MANIFEST) {
            return response.type(MediaType.APPLICATION_JSON_TYPE).entity(tree.manifest()).build();
        }
        String name = target.path().getFileName() == null ? "archive" : target.path().getFileName().toString();
        StreamingOutput body = output -> TreeArchive.write(tree, output);
        return response.type(MediaTypes.TAR_GZIP)
                .header("Content-Disposition", "attachment; filename=\"" + printable(name) + ".tar.gz\"")
                .entity(body)
                .build();
    }

    /**
     * Answers at once, unless the request's {@code If-None-Match} is the current ETag and it asked to wait: then
     * it is parked (holding no thread and no worker) until the ETag changes (200, authorised again on the then
     * current snapshot) or the wait is over (304).
     *
     * @param target what to serve
     * @param view which representation
     * @param waitSeconds the requested wait
     * @param context the request
     * @param request the JAX-RS request (preconditions)
     * @param headers the request headers
     * @param async where the answer goes
     * @param parked the Jetty side of parking: worker release, idle timeout, executor
     */
    void respondOrPark(Target target, View view, int waitSeconds, ContainerRequestContext context, Request request,
            HttpHeaders headers, AsyncResponse async, Parking parked) {
        String ifNoneMatch = headers.getHeaderString(HttpHeaders.IF_NONE_MATCH);
        if (waitSeconds == 0 || ifNoneMatch == null) {
            async.resume(respond(target, view, request, headers));
            return;
        }
        ChangeWaits.Observation now;
        if (view == View.FILE) {
            now = observe(target, view);
            if (now.etag() == null || !matches(ifNoneMatch, now.etag())) {
                async.resume(respond(target, view, request, headers));
                return;
            }
        } else {
            // One scan serves the comparison, and the answer when the tree already differs.
            TreeVersion tree = tree(target.path());
            if (!matches(ifNoneMatch, tree.etag())) {
                async.resume(respond(target, view, tree, request, headers));
                return;
            }
            now = observation(target, tree);
        }
        RequestState state = RequestState.of(context);
        String etag = now.etag();
        ChangeWaits.Listener listener = new ChangeWaits.Listener() {
            @Override
            public void changed() {
                parked.executor().execute(() -> {
                    try {
                        reauthorize(target, state, context);
                        async.resume(respond(target, view, request, headers));
                    } catch (RuntimeException e) {
                        async.resume(e);
                    }
                });
            }

            @Override
            public void timedOut() {
                parked.executor().execute(() -> async.resume(Response.notModified(tag(etag))
                        .header(HttpHeaders.CACHE_CONTROL, "no-cache")
                        .build()));
            }
        };
        boolean accepted = waits.park(view + ":" + target.path(), etag, now, () -> observe(target, view),
                Duration.ofSeconds(waitSeconds), listener);
        if (!accepted) {
            throw new PintleException.Unavailable("too-many-waiters", "all " + waits.maxWaiters()
                    + " change-wait slots are taken; retry in " + WAITERS_RETRY_AFTER_SECONDS + " s",
                    WAITERS_RETRY_AFTER_SECONDS);
        }
        parked.parked();
    }

    /** The Jetty side of a parked request. */
    interface Parking {
        /** The request is parked: give its worker back, and keep idle timeouts from failing it. */
        void parked();

        /** @return where the answer of a woken request is computed and written */
        Executor executor();
    }

    private ChangeWaits.Observation observe(Target target, View view) {
        List<Path> directories = new ArrayList<>(ChangeWaits.ancestors(target.path(), target.share(), false));
        try {
            if (view == View.FILE) {
                FileVersion version = FileVersion.of(target.path());
                return new ChangeWaits.Observation(version.directory() ? null : version.etag(), directories);
            }
            return observation(target, scanner.scan(target.path()));
        } catch (IOException gone) {
            // Removed, replaced by a file, or unreadable: the ETag the request has is no longer current.
            return new ChangeWaits.Observation(null, directories);
        }
    }

    /** A tree's ETag, and what it depends on: every directory in it and the ones above it up to the share. */
    private static ChangeWaits.Observation observation(Target target, TreeVersion tree) {
        List<Path> directories = new ArrayList<>(ChangeWaits.ancestors(target.path(), target.share(), false));
        directories.addAll(tree.directories());
        return new ChangeWaits.Observation(tree.etag(), directories);
    }

    /** Authorises a woken request again when the snapshot changed while it waited (the node may be gone). */
    private void reauthorize(Target target, RequestState state, ContainerRequestContext context) {
        ServerSnapshot current = snapshots.current();
        if (current == state.snapshot()) {
            return;
        }
        Caller caller = new Caller(state.caller().address(),
                current.nodes().identifyClient(state.peer().client(), clock.instant()));
        authorize(target.decide().apply(current, caller), new RequestState(current, caller, state.peer()), context);
    }

    private static boolean matches(String ifNoneMatch, String etag) {
        for (String candidate : ifNoneMatch.split(",")) {
            String value = candidate.strip();
            if (value.equals("*") || value.equals(etag) || value.equals("W/" + etag)) {
                return true;
            }
        }
        return false;
    }

    private TreeVersion tree(Path directory) {
        try {
            return scanner.scan(directory);
        } catch (TreeScanner.NotADirectoryException e) {
            throw new PintleException.NotFound("not-a-directory",
                    "this path is a file; views '" + Routes.VIEW_MANIFEST + "' and '" + Routes.VIEW_ARCHIVE
                            + "' are for directories");
        } catch (TreeScanner.TreeTooLargeException e) {
            LOG.warn("refused a manifest: {}", e.getMessage());
            throw new PintleException.InvalidRequest("tree-too-large", e.getMessage().replace(directory.toString(),
                    "this directory") + "; ask for a subdirectory");
        } catch (NoSuchFileException e) {
            throw notFound();
        } catch (IOException e) {
            // A tree that kept changing (FileChangedException) is found in the cause by the exception mapper: 503.
            throw new IllegalStateException("cannot scan " + directory, e);
        }
    }

    private static EntityTag tag(String quoted) {
        return new EntityTag(quoted.substring(1, quoted.length() - 1));
    }

    private static NodeId nodeId(String text) {
        try {
            return new NodeId(text);
        } catch (IllegalArgumentException e) {
            throw new PintleException.NotFound("no-such-node", "no such node directory");
        }
    }

    /**
     * Records the decision for the access log and, when it denies, logs it and refuses the request.
     *
     * @param decision the access decision
     * @param state the request's state
     * @param context the request
     */
    static void authorize(Decision decision, RequestState state, ContainerRequestContext context) {
        AccessRecord.of(context).decision(decision);
        if (decision instanceof Decision.Deny deny) {
            LOG.info("denied {} {} to {} ({}): {}", context.getMethod(), context.getUriInfo().getPath(),
                    state.caller().address().getHostAddress(), state.caller().describe(), deny.detail());
            throw new PintleException.AccessDenied(deny.reason(), deny.detail());
        }
    }

    private static Path resolve(Path root, String path, RequestState state, ContainerRequestContext context) {
        try {
            return SafePaths.resolve(root, path);
        } catch (UnsafePathException e) {
            LOG.warn("refused path {} from {} ({}): {}", context.getUriInfo().getPath(false),
                    state.caller().address().getHostAddress(), state.caller().describe(), e.getMessage());
            Decision.Deny deny = new Decision.Deny("path-rejected", "path refused: " + e.getMessage());
            AccessRecord.of(context).decision(deny);
            throw new PintleException.AccessDenied(deny.reason(), deny.detail());
        } catch (SafePaths.EscapeException e) {
            LOG.warn("refused path {} from {} ({}): {}", context.getUriInfo().getPath(false),
                    state.caller().address().getHostAddress(), state.caller().describe(), e.getMessage());
            throw notFound();
        } catch (NoSuchFileException e) {
            throw notFound();
        } catch (IOException e) {
            throw new IllegalStateException("cannot resolve " + root + "/" + path, e);
        }
    }

    private static FileVersion file(Path file) {
        try {
            FileVersion version = FileVersion.of(file);
            if (version.directory()) {
                throw new PintleException.NotFound("directory", "this path is a directory; only files are served "
                        + "(add ?view=" + Routes.VIEW_MANIFEST + " or ?view=" + Routes.VIEW_ARCHIVE + ")");
            }
            return version;
        } catch (NoSuchFileException e) {
            throw notFound();
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + file, e);
        }
    }

    /**
     * @param text a {@code wait} value
     * @return the seconds, 0 to {@link Routes#MAX_WAIT_SECONDS}
     */
    static int waitSeconds(String text) {
        if (text == null || text.isEmpty()) {
            return 0;
        }
        try {
            int seconds = Integer.parseInt(text);
            if (seconds >= 0 && seconds <= Routes.MAX_WAIT_SECONDS) {
                return seconds;
            }
        } catch (NumberFormatException notANumber) {
            // Reported below.
        }
        throw new PintleException.InvalidRequest("bad-wait", "'" + Routes.WAIT + "' must be a whole number of "
                + "seconds from 0 to " + Routes.MAX_WAIT_SECONDS + ", not '" + printable(text) + "'");
    }

    private static PintleException notFound() {
        return new PintleException.NotFound("no-such-file", "no such file");
    }

    /** Keeps client-supplied text short and free of control characters in problem details. */
    static String printable(String text) {
        String shortened = text.length() > 64 ? text.substring(0, 64) + "..." : text;
        StringBuilder out = new StringBuilder(shortened.length());
        shortened.codePoints().forEach(c -> out.appendCodePoint(Character.isISOControl(c) || c == '"' ? '?' : c));
        return out.toString();
    }
}
