package io.pintle.server.upstream;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.pintle.api.Routes;
import io.pintle.api.dto.Manifest;
import io.pintle.client.DirectorySync;
import io.pintle.client.PintleClient;
import io.pintle.client.ProblemException;
import io.pintle.client.SubtreeOutcome;
import io.pintle.client.SyncException;
import io.pintle.client.SyncResult;
import io.pintle.server.config.ServerConfig;
import io.pintle.server.policy.ShareTree;
import io.pintle.server.policy.Spool;
import io.pintle.server.reload.RelaySyncTargets;
import io.pintle.server.reload.ServerSnapshot;
import java.io.IOException;
import java.io.InputStream;
import java.net.URLEncoder;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A relay's HTTPS replacement for rsync and {@code propagate_promises}: keeps, in step with its policy server,
 *
 * <ul>
 *   <li>its nodes' policies: the root's {@code /policies/<relay>/share/<node>/} into {@code {share}/<node>}, each
 *       node's directory synced and swapped in atomically on its own (client-lib's {@code syncSubtrees}: what
 *       changed, from the share's change list; the files of up to 64 nodes per archive request; verified, staged,
 *       swapped), a node that cannot be synced holding up no other, node directories gone upstream removed here;
 *   <li>{@code /common/} into {@code {share}/common};
 *   <li>the shared folder into {@code [paths] shared_folder}.
 * </ul>
 *
 * Each runs on its own thread as a long poll: the request waits on the server ({@code ?wait}) until the tree's
 * manifest changes, so a new generation reaches the relay within a round trip or two, not at the next agent run.
 * A request that does not wait gets {@link UpstreamClient#answerTimeout} for its answer, a long poll its wait on
 * top. Failures (an {@link Error} too) are logged and retried with a growing delay, each retry with a warning; a
 * request that got no answer also gets the next round a new client, hence new connections. A failed or interrupted
 * sync leaves the previous state serving. Only {@link #stop} ends a loop. The relay needs no reload: it serves
 * files straight from disk.
 */
public final class RelaySync {
    private static final Logger LOG = LoggerFactory.getLogger(RelaySync.class);
    private static final ObjectMapper JSON =
            new ObjectMapper().configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);
    private static final Pattern NODE_DIRECTORY = Pattern.compile(Routes.NODE_ID_PATTERN);

    /**
     * The largest share manifest read: 20,000 Rudder nodes of ~50 entries at ~200 bytes an entry are 200 MB (spooled,
     * not held).
     */
    static final long MAX_SHARE_MANIFEST_BYTES = 1L << 30;

    /** The most of an error's body read for its problem details. */
    private static final int MAX_PROBLEM_BYTES = 64 * 1024;

    /** An input file absent upstream is asked for again this often. */
    static final Duration ABSENT_RECHECK = Duration.ofSeconds(5);

    private final Supplier<ServerSnapshot> snapshots;
    private final UpstreamClient upstream;
    private final Duration wait;
    private final Duration firstRetry;
    private final Duration lastRetry;
    private final List<Thread> threads = new ArrayList<>();
    /**
     * Whether the share follows change lists and fetches many nodes per archive; false only for benchmarks
     * ({@code -Dpintle.bench.relayBatch=false}: each node its own manifest and archive, as before issue 39).
     */
    private final boolean batched = !"false".equals(System.getProperty("pintle.bench.relayBatch"));
    /**
     * The share's version last answered (the next round's {@code since}, and its {@code If-None-Match}), each node
     * directory's ETag (of its own manifest) as last synced here, and the node directories that are not that
     * version here (left behind: stale, or failed), which the next round syncs whatever its change list says
     * (share thread only).
     */
    private String shareEtag;
    private final Map<String, String> nodeFingerprints = new HashMap<>();
    private Set<String> behind = Set.of();
    /** The share whose leftovers were removed (share thread only). */
    private Path cleanedShare;
    private volatile boolean running;

    /**
     * @param snapshots the current snapshot (configuration and paths, read at each round)
     * @param upstream the policy server's client
     * @param wait how long one long poll waits on the server
     * @param firstRetry the delay after a first failure (doubled up to {@code lastRetry})
     * @param lastRetry the longest delay between attempts
     */
    public RelaySync(Supplier<ServerSnapshot> snapshots, UpstreamClient upstream, Duration wait, Duration firstRetry,
            Duration lastRetry) {
        this.snapshots = snapshots;
        this.upstream = upstream;
        this.wait = wait;
        this.firstRetry = firstRetry;
        this.lastRetry = lastRetry;
    }

    /** Starts the three sync loops. */
    public synchronized void start() {
        if (running) {
            return;
        }
        running = true;
        threads.add(loop("share", this::syncShare));
        threads.add(loop("common", () -> syncTree(Routes.COMMON + "/",
                snapshots.get().share().commonRoot())));
        threads.add(loop("shared-folder", () -> syncTree(Routes.RELAY_API_ALIAS + Routes.SHARED_FOLDER + "/",
                snapshots.get().config().paths().sharedFolder())));
        ServerConfig config = snapshots.get().config();
        if (RelaySyncTargets.copiesNodesList(config)) {
            threads.add(loop("nodes-list", new InputCopy(config.upstream().nodesList(), () -> snapshots.get().config()
                    .nodes().list())::round));
        }
        if (RelaySyncTargets.copiesCertificates(config)) {
            threads.add(loop("nodes-certificates", new InputCopy(config.upstream().nodesCertificates(),
                    () -> snapshots.get().config().nodes().certificates().get(0))::round));
        }
        LOG.info("relay sync from {} started (share, common, shared folder, nodes list and certificates)",
                config.upstream().url());
    }

    /** Stops the loops; a sync in progress is interrupted and leaves the previous state. */
    public synchronized void stop() throws InterruptedException {
        running = false;
        for (Thread thread : threads) {
            thread.interrupt();
        }
        for (Thread thread : threads) {
            thread.join(10_000);
        }
        threads.clear();
    }

    @FunctionalInterface
    private interface Round {
        void run() throws Exception;
    }

    private Thread loop(String name, Round round) {
        // A thread of its own, not the server's workers: each loop lives as long as the server and spends it
        // blocked, in a long poll of up to {@code wait} on the policy server or in the sleep before a retry;
        // stop() interrupts and joins exactly these.
        Thread thread = new Thread(() -> {
            Duration delay = firstRetry;
            while (running) {
                try {
                    round.run();
                    delay = firstRetry;
                } catch (InterruptedException e) {
                    return;
                } catch (Throwable failure) {
                    // An Error too (out of memory, a bug): the thread is the only one keeping this tree in step, and
                    // dying would leave it stale without another word.
                    if (!running) {
                        return;
                    }
                    boolean noAnswer = timedOut(failure);
                    if (noAnswer) {
                        upstream.renew();
                    }
                    String next = "next attempt in " + delay.toMillis() + " ms"
                            + (noAnswer ? ", on new connections" : "");
                    if (failure instanceof Error) {
                        LOG.error("relay sync of {} failed ({})", name, next, failure);
                    } else {
                        LOG.warn("relay sync of {} failed ({}): {}", name, next, failure.toString());
                    }
                    try {
                        Thread.sleep(delay.toMillis());
                    } catch (InterruptedException stopped) {
                        return;
                    }
                    delay = delay.multipliedBy(2).compareTo(lastRetry) > 0 ? lastRetry : delay.multipliedBy(2);
                }
            }
        }, "pintle-relay-sync-" + name);
        thread.setDaemon(true);
        thread.start();
        return thread;
    }

    private PintleClient client() throws IOException, GeneralSecurityException {
        return upstream.client(snapshots.get());
    }

    /** @return whether a request of this failure got no answer within its timeout */
    private static boolean timedOut(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (cause instanceof HttpTimeoutException) {
                return true;
            }
        }
        return false;
    }

    /** Sends one of this class's own requests; one that got no answer says so as client-lib's syncs do. */
    private static HttpResponse<byte[]> send(PintleClient client, HttpRequest request)
            throws IOException, InterruptedException {
        try {
            return client.httpClient().send(request, HttpResponse.BodyHandlers.ofByteArray());
        } catch (HttpTimeoutException e) {
            throw noAnswer(request, e);
        }
    }

    private static HttpTimeoutException noAnswer(HttpRequest request, HttpTimeoutException e) {
        HttpTimeoutException named = new HttpTimeoutException("GET " + request.uri().getRawPath()
                + " got no answer within " + request.timeout().map(Duration::toSeconds).orElse(0L)
                + " s (its request timeout)");
        named.initCause(e);
        return named;
    }

    /** A request timeout for a request that waits on the server ({@code ?wait}) or not. */
    private Duration timeout(boolean waits) {
        return waits ? wait.plus(upstream.answerTimeout()) : upstream.answerTimeout();
    }

    /**
     * Client-lib's syncs retry an attempt on their own: each retry is worth a line. Inodes are shared across an
     * mtime change ({@link DirectorySync#withSharedInodes}): Rudder's generation rewrites every file of a node, most
     * with their content unchanged, which the relay would otherwise copy (28 of a Rudder node's 37 files).
     */
    private DirectorySync directorySync(PintleClient client) {
        return client.directorySync().withSharedInodes().withRetryListener(retry -> LOG.warn(
                "relay sync: retrying the sync of {} (attempt {} of {}, in {} ms): {}", retry.remote(),
                retry.attempt(), retry.attempts(), retry.delay().toMillis(), retry.reason()));
    }

    /**
     * Keeps one input file (the relay's {@code nodeslist.json}, its nodes' certificates) equal to the policy
     * server's copy below {@code /policies/<self>/}: a long poll on the file's ETag; a new version is written next
     * to the input and renamed over it, which the input watch turns into a reload. An absent file upstream
     * changes nothing here.
     */
    private final class InputCopy {
        private final String remote;
        private final Supplier<Path> local;
        private String etag;

        InputCopy(String remote, Supplier<Path> local) {
            this.remote = remote;
            this.local = local;
        }

        void round() throws Exception {
            ServerSnapshot snapshot = snapshots.get();
            PintleClient client = client();
            String path = Routes.POLICIES + "/" + snapshot.self().value() + "/" + remote
                    + (etag != null ? "?" + Routes.WAIT + "=" + wait.toSeconds() : "");
            HttpRequest.Builder request = HttpRequest.newBuilder(client.uri(path)).timeout(timeout(etag != null));
            if (etag != null) {
                request.header("If-None-Match", etag);
            }
            HttpResponse<byte[]> response = send(client, request.build());
            if (response.statusCode() == 304) {
                return;
            }
            if (response.statusCode() == 404) {
                // Nothing to wait on (a wait needs an ETag): look again a little later; a 404 costs little.
                etag = null;
                Thread.sleep(ABSENT_RECHECK.toMillis());
                return;
            }
            if (response.statusCode() != 200) {
                throw PintleClient.problem(response.statusCode(), response.body());
            }
            Path file = local.get();
            byte[] current = Files.exists(file) ? Files.readAllBytes(file) : null;
            if (!java.util.Arrays.equals(current, response.body())) {
                Path temporary = file.resolveSibling("." + file.getFileName() + ".pintle-sync.new");
                Files.write(temporary, response.body());
                Files.move(temporary, file, java.nio.file.StandardCopyOption.ATOMIC_MOVE,
                        java.nio.file.StandardCopyOption.REPLACE_EXISTING);
                LOG.info("relay sync: {} updated from upstream {} ({} bytes); the input watch reloads it", file,
                        remote, response.body().length);
            }
            etag = response.headers().firstValue("ETag").orElse(null);
        }
    }

    /** One long poll of a whole tree: returns when it changed upstream (and was synced) or the wait ran out. */
    private void syncTree(String remote, Path local) throws Exception {
        SyncResult result = directorySync(client()).syncWhenChanged(remote, local, wait);
        if (result.changed()) {
            LOG.info("relay sync: {} updated from upstream {} ({} files, {} bytes, {} removed)", local, remote,
                    result.filesDownloaded(), result.bytesDownloaded(), result.removed());
        }
    }

    /**
     * One long poll of {@code /policies/<self>/share/}: when it changes, the node directories whose entries changed
     * are synced and those gone upstream are removed here. The poll asks for a change list ({@code ?since=} the
     * version last answered): only the nodes that changed, not the whole share's manifest again (6.8 MB for 5,000
     * small nodes, 50 MB for Rudder's). A node a round left behind (changed again upstream meanwhile, or failed) is
     * synced by the next round, which does not wait: from the change list when it is on it, else on its own (its
     * manifest, then its files), as a whole manifest once was asked for after such a round. A version the root no
     * longer holds gets the whole manifest, compared node by node with what this relay holds. The answer is
     * spooled ({@link Spool}: past 1 MiB in an unlinked temporary file), then read as a stream one node at a time
     * ({@link ShareManifestReader}), the changed ones synced as they come, {@value Routes#MAX_ONLY} per archive: the
     * relay holds a batch of nodes' entries, not the share's.
     */
    private void syncShare() throws Exception {
        ServerSnapshot snapshot = snapshots.get();
        PintleClient client = client();
        String remote = Routes.POLICIES + "/" + snapshot.self().value() + "/share/";
        String since = batched && shareEtag != null ? shareEtag : "";
        // With nodes behind, the answer is wanted at once, changed or not.
        boolean waits = shareEtag != null && behind.isEmpty();
        HttpRequest.Builder request = HttpRequest.newBuilder(client.uri(remote + "?" + Routes.VIEW + "="
                        + Routes.VIEW_MANIFEST
                        + (batched ? "&" + Routes.SINCE + "=" + URLEncoder.encode(since, StandardCharsets.UTF_8) : "")
                        + (waits ? "&" + Routes.WAIT + "=" + wait.toSeconds() : "")))
                .timeout(timeout(waits));
        if (waits) {
            request.header("If-None-Match", shareEtag);
        }
        Spool manifest = Spool.temporary(MAX_SHARE_MANIFEST_BYTES);
        try {
            int status = fetch(client, request.build(), manifest);
            if (status == 304) {
                return;
            }
            if (status == 404) {
                // Nothing below this relay yet: there is no share directory upstream. Wait before asking again.
                Thread.sleep(firstRetry.toMillis());
                return;
            }
            syncShare(client, remote, snapshot, manifest);
        } finally {
            manifest.release();
        }
    }

    private void syncShare(PintleClient client, String remote, ServerSnapshot snapshot, Spool manifest)
            throws Exception {
        Path share = snapshot.share().root();
        if (!share.equals(cleanedShare)) {
            // Once per share (per process): what a sync cut by a crash left; each node's sync then skips its own
            // look, a listing of the whole share (one per node: quadratic in the nodes of the relay).
            DirectorySync.removeStaleIn(share);
            cleanedShare = share;
        }
        ShareRound round = new ShareRound(client, remote, share);
        Set<String> upstream = new TreeSet<>();
        ShareManifestReader.Header header;
        try (InputStream json = manifest.open()) {
            header = new ShareManifestReader(JSON).read(json, name -> NODE_DIRECTORY.matcher(name).matches(),
                    (node, own) -> {
                        upstream.add(node);
                        if (!own.etag().equals(nodeFingerprints.get(node))) {
                            round.changed(node, own);
                        }
                    });
        } catch (ShareManifestReader.InvalidManifestException | JsonProcessingException e) {
            // The manifest's own fault; a sync's failure (from the visitor) goes on as it is.
            throw new SyncException("the manifest of " + remote + " is not a valid manifest: " + e.getMessage(), e);
        }
        round.flush();
        if (header.isChangeList()) {
            // Left behind by an earlier round and unchanged upstream since: not on the list, synced on their own.
            Set<String> removedNames = new TreeSet<>(header.removed());
            for (String node : behind) {
                if (!upstream.contains(node) && !removedNames.contains(node)) {
                    round.alone(node);
                }
            }
        }
        round.finish(header.isChangeList());
        Set<String> gone = header.isChangeList()
                ? removedSince(share, header.removed(), snapshot.self().value())
                : removed(share, upstream, snapshot.self().value());
        for (String node : gone) {
            DirectorySync.remove(share.resolve(node));
            nodeFingerprints.remove(node);
            LOG.info("relay sync: policies of {} removed (gone upstream)", node);
        }
        // In step with this version but for the nodes left behind, which the next round syncs.
        shareEtag = header.etag();
        behind = Set.copyOf(round.behind);
        if (round.failure != null) {
            throw round.failure;
        }
    }

    /**
     * Sends the share's request and spools a 200's body; a status other than 200, 304 or 404 is thrown as the
     * server's problem.
     *
     * @return the status
     */
    private int fetch(PintleClient client, HttpRequest request, Spool into)
            throws IOException, InterruptedException, ProblemException {
        HttpResponse<InputStream> response;
        try {
            response = client.httpClient().send(request, PintleClient.interruptibleBody(upstream.answerTimeout()));
        } catch (HttpTimeoutException e) {
            throw noAnswer(request, e);
        }
        try (InputStream body = response.body()) {
            int status = response.statusCode();
            if (status == 200) {
                try {
                    body.transferTo(into);
                } catch (Spool.TooLargeException e) {
                    throw new SyncException("the manifest of " + request.uri().getRawPath() + " is larger than "
                            + MAX_SHARE_MANIFEST_BYTES + " bytes: this relay does not read it", e);
                }
                into.close();
            } else if (status != 304 && status != 404) {
                throw PintleClient.problem(status, body.readNBytes(MAX_PROBLEM_BYTES));
            }
            return status;
        }
    }

    /**
     * One round's syncing of changed node directories, as the manifest is read: with batches (the default), their
     * files in one archive request per {@value Routes#MAX_ONLY} nodes. Every node is its own sync (its lock,
     * staging tree and swap): one that failed keeps its previous state and its old fingerprint, and is left behind
     * for the next round; a node the root changed again meanwhile (stale) is no failure worth a warning. Without
     * batches ({@code -Dpintle.bench.relayBatch=false}, for
     * benchmarks: the previous way), each changed node is a sync of its own (its manifest, then its files or
     * archive); a node whose every attempt got no answer ends the round at once: the connection or the policy
     * server is not answering, and each node after it would wait as long.
     */
    private final class ShareRound {
        private final PintleClient client;
        private final String remote;
        private final Path share;
        private final DirectorySync sync;
        /** The batch in hand: changed nodes' own manifests. */
        private final SortedMap<String, Manifest> nodes = new TreeMap<>();
        /** The first failure (not stale), or null. */
        Exception failure;
        /** The nodes this round left behind (stale or failed). */
        final Set<String> behind = new TreeSet<>();
        private int synced;
        private int files;
        private long bytes;

        ShareRound(PintleClient client, String remote, Path share) {
            this.client = client;
            this.remote = remote;
            this.share = share;
            this.sync = batched ? directorySync(client) : directorySync(client).withoutStaleScan();
        }

        void changed(String node, Manifest own) throws IOException, InterruptedException {
            if (!batched) {
                one(node, sync);
                return;
            }
            nodes.put(node, own);
            if (nodes.size() == Routes.MAX_ONLY) {
                batch();
            }
        }

        /** Syncs the batch in hand. */
        void flush() throws IOException, InterruptedException {
            if (!nodes.isEmpty()) {
                batch();
            }
        }

        /**
         * Syncs a node left behind that the manifest in hand does not list: on its own, its manifest asked for.
         */
        void alone(String node) throws IOException, InterruptedException {
            if (batched) {
                one(node, directorySync(client).withoutStaleScan());
            }
        }

        void finish(boolean changeList) throws IOException, InterruptedException {
            flush();
            if (synced > 0) {
                LOG.info("relay sync: policies of {} node(s) updated ({} files, {} bytes){}", synced, files, bytes,
                        changeList ? "" : ", from the whole share's manifest");
            }
        }

        private void batch() throws IOException, InterruptedException {
            List<SubtreeOutcome> outcomes = sync.syncSubtrees(remote, share, nodes);
            nodes.clear();
            for (SubtreeOutcome outcome : outcomes) {
                if (outcome.ok()) {
                    nodeFingerprints.put(outcome.name(), outcome.etag());
                    if (outcome.changed()) {
                        synced++;
                        files += outcome.filesDownloaded();
                        bytes += outcome.bytesDownloaded();
                    }
                    continue;
                }
                behind.add(outcome.name());
                if (outcome.stale()) {
                    LOG.debug("relay sync: {} is behind (next round): {}", outcome.name(), outcome.failure());
                } else if (failure == null) {
                    failure = new SyncException("relay sync of the policies of " + outcome.name() + " failed: "
                            + outcome.failure(), null);
                } else {
                    LOG.warn("relay sync of the policies of {} failed: {}", outcome.name(), outcome.failure());
                }
            }
        }

        /** A node's own sync (its manifest, then its files or archive). */
        private void one(String node, DirectorySync sync) throws IOException, InterruptedException {
            // A sync's failure is this node's; an interrupt, or no answer at all, ends the round.
            try {
                SyncResult result = sync.sync(remote + node + "/", share.resolve(node));
                nodeFingerprints.put(node, result.etag());
                if (result.changed()) {
                    LOG.info("relay sync: policies of {} updated ({} files, {} bytes, {} removed)", node,
                            result.filesDownloaded(), result.bytesDownloaded(), result.removed());
                }
            } catch (IOException e) {
                if (timedOut(e)) {
                    throw e;
                }
                failed(node, e);
            } catch (ProblemException | RuntimeException e) {
                failed(node, e);
            }
        }

        private void failed(String node, Exception e) {
            behind.add(node);
            if (failure == null) {
                failure = e;
            }
        }
    }

    /** Of the names a change list says are gone, the node directories this sync made. */
    private static Set<String> removedSince(Path share, List<String> removed, String self) {
        Set<String> gone = new TreeSet<>();
        for (String name : removed) {
            Path entry = share.resolve(name);
            if (NODE_DIRECTORY.matcher(name).matches() && !name.equals(ShareTree.COMMON) && !name.equals(self)
                    && Files.isDirectory(entry) && DirectorySync.isSynced(entry)) {
                gone.add(name);
            }
        }
        return gone;
    }

    /**
     * Node directories this sync created (they have its state file) that are no longer upstream; never
     * {@code common} or this server's own directory.
     */
    private static Set<String> removed(Path share, Set<String> upstream, String self) throws IOException {
        Set<String> gone = new TreeSet<>();
        if (!Files.isDirectory(share)) {
            return gone;
        }
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(share)) {
            for (Path entry : entries) {
                String name = entry.getFileName().toString();
                if (Files.isDirectory(entry) && NODE_DIRECTORY.matcher(name).matches() && !upstream.contains(name)
                        && !name.equals(ShareTree.COMMON) && !name.equals(self)
                        && DirectorySync.isSynced(entry)) {
                    gone.add(name);
                }
            }
        }
        return gone;
    }
}
