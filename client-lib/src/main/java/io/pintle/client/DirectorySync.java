package io.pintle.client;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.pintle.api.Routes;
import io.pintle.api.dto.Manifest;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.apache.commons.compress.compressors.gzip.GzipCompressorInputStream;

/**
 * Makes a local directory an exact copy of a directory served by Pintle, in as few requests as the change needs.
 * Obtained from {@link PintleClient#directorySync}; thread-safe, and holds no state between calls (what it
 * remembers is in a sidecar file on disk).
 *
 * <p>One sync:
 * <ol>
 *   <li>{@code GET <remote>/?view=manifest} with {@code If-None-Match:} the ETag last applied (kept in
 *       {@code .<name>.pintle-sync.json} beside the local directory, never inside it). {@code 304}: done, in
 *       exactly one request whatever the tree's size.</li>
 *   <li>The manifest is checked whole ({@link ManifestTree}): a path or link target that would leave the tree
 *       refuses it, before anything is written.</li>
 *   <li>The local tree is compared: a file is kept when its size and SHA-256 are the manifest's (the previous
 *       manifest's SHA-256 is trusted while size and mtime are unchanged; otherwise it is hashed). If nothing
 *       differs, nothing is staged or swapped.</li>
 *   <li>The new tree is built in {@code .<name>.pintle-staging-<random>} beside the local directory: kept files
 *       hard-linked (or copied), the others downloaded, either as one {@code ?view=archive} {@code tar.gz} when
 *       the local tree has nothing to reuse or more than half of the bytes changed, or file by file, several at
 *       a time (multiplexed over one HTTP/2 connection). Every file's size and SHA-256 are checked against the
 *       manifest as it arrives.</li>
 *   <li>The staged tree is swapped in ({@link TreeSwap}: atomic exchange on Linux, two renames elsewhere), the
 *       old one deleted, the sidecar rewritten. What the manifest does not list is simply not in the new tree.</li>
 * </ol>
 *
 * <p>When the server's tree changes during the download (a size or SHA-256 differs, a file is gone, the archive
 * is of another version or is cut off) or the connection breaks, the attempt is abandoned and the sync starts
 * again from a fresh manifest, up to {@value #MAX_ATTEMPTS} attempts, each retry told to the
 * {@link RetryListener}. A request gets no longer than the request timeout for its answer's headers (plus the wait
 * for a manifest the server holds) and for each part of its body. Whatever fails (network, verification,
 * a refused manifest, an interrupt) the staging directory is deleted and the local directory is left exactly as
 * it was. Leftovers of a crashed sync are cleaned up by the next one. Two syncs into one directory exclude each
 * other through {@code .<name>.pintle-sync.lock}; the second fails at once.
 *
 * <p>A local directory that is a symbolic link is followed: the directory it points to is synced, and the
 * sidecar and staging directory live beside that one.
 */
public final class DirectorySync {
    /** Downloads running at once when syncing file by file. */
    public static final int DEFAULT_PARALLELISM = 8;

    /** Attempts, each from a fresh manifest, before a sync gives up. */
    public static final int MAX_ATTEMPTS = 3;

    /** Longest pause between attempts, whatever {@code Retry-After} the server sent. */
    private static final Duration MAX_RETRY_DELAY = Duration.ofSeconds(5);

    /** Pause before a new attempt when the server gave no {@code Retry-After}, times the attempt number. */
    private static final Duration RETRY_STEP = Duration.ofMillis(250);

    /**
     * Most bytes read past the end of an archive's last entry (the tar's end blocks and record padding, the gzip
     * trailer) to reach the end of the response, so that the stream ends instead of being cancelled.
     */
    static final int ARCHIVE_TAIL_BYTES = 64 * 1024;

    /** Largest manifest accepted: about 200 bytes an entry, so room for a million entries. */
    private static final int MAX_MANIFEST_BYTES = 256 * 1024 * 1024;

    private static final ObjectMapper JSON =
            new ObjectMapper().configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);

    private final HttpClient http;
    final URI base;
    final Duration requestTimeout;
    private final int parallelism;
    private final TreeSwap swap;
    final SecureRandom random = new SecureRandom();
    private final boolean staleScan;
    final boolean sharedInodes;
    private final RetryListener retries;

    DirectorySync(HttpClient http, URI base, Duration requestTimeout, int parallelism, TreeSwap swap) {
        this(http, base, requestTimeout, parallelism, swap, true, false, retry -> {});
    }

    private DirectorySync(HttpClient http, URI base, Duration requestTimeout, int parallelism, TreeSwap swap,
            boolean staleScan, boolean sharedInodes, RetryListener retries) {
        if (parallelism < 1) {
            throw new IllegalArgumentException("parallelism must be at least 1, not " + parallelism);
        }
        this.http = Objects.requireNonNull(http);
        this.base = Objects.requireNonNull(base);
        this.requestTimeout = Objects.requireNonNull(requestTimeout);
        this.parallelism = parallelism;
        this.swap = Objects.requireNonNull(swap);
        this.staleScan = staleScan;
        this.sharedInodes = sharedInodes;
        this.retries = Objects.requireNonNull(retries);
    }

    /**
     * Told before each new attempt of a sync (a failed attempt that a fresh one may fix), so that a caller can log
     * it: a retry costs a new manifest and the download again, and a request that got no answer costs its whole
     * timeout.
     */
    @FunctionalInterface
    public interface RetryListener {
        /**
         * @param retry the attempt about to start and why
         */
        void retrying(Retry retry);
    }

    /**
     * An attempt about to start.
     *
     * @param remote the directory on the server
     * @param attempt the attempt's number (2 for the first retry)
     * @param attempts the most attempts a sync makes
     * @param delay the pause before it
     * @param reason why the previous attempt failed (what was asked, and what happened)
     */
    public record Retry(String remote, int attempt, int attempts, Duration delay, String reason) {}

    /**
     * @param listener told before each retried attempt
     * @return the same sync, telling {@code listener}
     */
    public DirectorySync withRetryListener(RetryListener listener) {
        return new DirectorySync(http, base, requestTimeout, parallelism, swap, staleScan, sharedInodes, listener);
    }

    /**
     * This sync, without the look for what an interrupted earlier sync left next to the directory (a staging tree,
     * a swapped-out tree), which lists the directory's parent at every sync. For a caller that syncs many
     * directories of one parent and has called {@link #removeStaleIn} on it first (a relay's share at start): a
     * sync interrupted later in the same process cleans up after itself, and one cut by a crash is cleaned by the
     * next process's {@code removeStaleIn}.
     *
     * @return the same sync without the per-sync look
     */
    public DirectorySync withoutStaleScan() {
        return new DirectorySync(http, base, requestTimeout, parallelism, swap, false, sharedInodes, retries);
    }

    /**
     * This sync, hard-linking a local file whose content and mode are the manifest's but whose mtime is not, then
     * setting the mtime on the inode the current tree shares with the new one, instead of copying it. For a caller
     * whose server rewrites unchanged files at every change (Rudder's generation writes every file of a node anew:
     * 28 of a node's 37 files are then copied, most of a relay's file system work): the current tree's copy of
     * such a file takes its new mtime a moment before the swap, its content unchanged. An inode with a name beyond
     * the current tree's and the new one's (a frozen or fetched copy of a server's state, which must not change)
     * is copied as before. Not for a tree whose readers take an mtime change for a new version and mind seeing it
     * before the rest.
     *
     * @return the same sync, sharing inodes across an mtime change
     */
    public DirectorySync withSharedInodes() {
        return new DirectorySync(http, base, requestTimeout, parallelism, swap, staleScan, true, retries);
    }

    /**
     * Removes what interrupted syncs left next to every directory of {@code parent}, in one listing: staging trees
     * are deleted, a swapped-out tree whose directory is missing is put back (else deleted).
     *
     * @param parent the directory holding synced directories
     * @throws IOException if it cannot be listed or a leftover removed
     */
    public static void removeStaleIn(Path parent) throws IOException {
        StagingTree.removeStaleIn(parent.toAbsolutePath().normalize());
    }

    /**
     * @param localDir a local directory
     * @return whether a sync made it (its state is kept beside it)
     */
    public static boolean isSynced(Path localDir) {
        return Files.exists(SyncState.file(localDir), LinkOption.NOFOLLOW_LINKS);
    }

    /**
     * Removes a directory a sync made, with what the sync keeps beside it (its state and lock), for example when
     * the remote directory is gone. Not to be called while a sync of the same directory runs.
     *
     * @param localDir the synced directory
     * @throws IOException when something cannot be deleted
     */
    public static void remove(Path localDir) throws IOException {
        StagingTree.delete(localDir);
        Path state = SyncState.file(localDir);
        Files.deleteIfExists(state);
        Files.deleteIfExists(SyncState.temporary(state));
        Files.deleteIfExists(SyncState.retired(state));
        Files.deleteIfExists(SyncNames.sibling(localDir, SyncNames.LOCK));
    }

    /**
     * Syncs now.
     *
     * @param remoteDirPath the directory on the server, as a URL path (already percent-encoded where needed), for
     *     example {@code /policies/<uuid>/rules}; a trailing slash is optional
     * @param localDir the local directory to make a copy of it; created when missing (and its parent too)
     * @return what was done
     * @throws ProblemException when the server refuses the request (for example 404 {@code not-a-directory},
     *     403); the local tree is unchanged
     * @throws SyncException when the manifest is refused or every attempt failed; the local tree is unchanged
     * @throws IOException on a local file system error; the local tree is unchanged
     * @throws InterruptedException when interrupted; the local tree is unchanged
     */
    public SyncResult sync(String remoteDirPath, Path localDir)
            throws ProblemException, IOException, InterruptedException {
        return run(remoteDirPath, localDir, null);
    }

    /**
     * Syncs as soon as the server's tree differs from the local one, or returns unchanged after {@code wait}
     * (the server holds the manifest request: {@code ?wait=SECONDS} with {@code If-None-Match}). Without a
     * previous sync of this directory, syncs at once. Call it in a loop to follow a tree.
     *
     * @param remoteDirPath the directory on the server, as for {@link #sync}
     * @param localDir the local directory
     * @param wait how long the server may hold the request, from one second to
     *     {@value io.pintle.api.Routes#MAX_WAIT_SECONDS} seconds
     * @return what was done ({@code changed()} false after a timeout)
     * @throws ProblemException as for {@link #sync}
     * @throws SyncException as for {@link #sync}
     * @throws IOException as for {@link #sync}
     * @throws InterruptedException as for {@link #sync}
     */
    public SyncResult syncWhenChanged(String remoteDirPath, Path localDir, Duration wait)
            throws ProblemException, IOException, InterruptedException {
        if (wait.isNegative() || wait.getSeconds() < 1 || wait.getSeconds() > Routes.MAX_WAIT_SECONDS) {
            throw new IllegalArgumentException(
                    "wait must be from 1 to " + Routes.MAX_WAIT_SECONDS + " seconds, not " + wait);
        }
        return run(remoteDirPath, localDir, wait);
    }

    /**
     * Syncs many directories of one remote parent from a manifest of that parent the caller already holds (whole,
     * or a change list of {@code ?since=}), as a relay follows its share: no manifest request per directory, and
     * their files in one {@code ?view=archive&only=} request per {@value Routes#MAX_ONLY} directories that need any
     * — file by file instead for a directory that reuses more than half of its bytes, as {@link #sync} chooses.
     * Each directory is synced as {@link #sync} would (its lock, a staging tree, an atomic swap, its sidecar state,
     * which a later {@link #sync} of it trusts) and succeeds or fails on its own, with no retry: one the server
     * changed since the manifest is told as {@link SubtreeOutcome#stale}, and a next manifest brings it. A directory
     * whose sidecar already names its version is not looked at. No look for what an interrupted sync left (see
     * {@link #removeStaleIn}).
     *
     * @param remoteParentPath the parent on the server, as a URL path (as for {@link #sync})
     * @param localParent the local parent; created when missing
     * @param parent the parent's manifest (or change list), holding every entry below each name
     * @param names the directories to sync, each a top-level directory of {@code parent}
     * @return one outcome per name, in name order
     * @throws IOException when the local parent cannot be created or a lock file opened
     * @throws InterruptedException when interrupted; directories not yet swapped in are as they were
     */
    public List<SubtreeOutcome> syncSubtrees(String remoteParentPath, Path localParent, Manifest parent,
            java.util.Collection<String> names) throws IOException, InterruptedException {
        return new SubtreeSync(this).run(remoteParentPath, localParent, parent, names);
    }

    /**
     * {@link #syncSubtrees(String, Path, Manifest, java.util.Collection)} from each directory's own manifest, as
     * {@link #subtreeManifests} cuts them: for a caller that cut them already (a relay reading its share's
     * manifest a node at a time).
     *
     * @param remoteParentPath the parent on the server, as a URL path (as for {@link #sync})
     * @param localParent the local parent; created when missing
     * @param manifests each directory's own manifest, by name
     * @return one outcome per name, in name order
     * @throws IOException when the local parent cannot be created or a lock file opened
     * @throws InterruptedException when interrupted; directories not yet swapped in are as they were
     */
    public List<SubtreeOutcome> syncSubtrees(String remoteParentPath, Path localParent,
            java.util.SortedMap<String, Manifest> manifests) throws IOException, InterruptedException {
        return new SubtreeSync(this).run(remoteParentPath, localParent, manifests);
    }

    /**
     * Each named top-level directory's own manifest, cut from a manifest of its parent (whole or change list):
     * the entries below it with their paths made relative to it, and its ETag, the one the server's manifest of
     * that directory has.
     *
     * @param parent a manifest of the parent
     * @param names top-level names
     * @return by name, in name order; a name that is no directory of {@code parent} is left out
     */
    public static java.util.SortedMap<String, Manifest> subtreeManifests(Manifest parent, Set<String> names) {
        java.util.SortedMap<String, Manifest> manifests = new java.util.TreeMap<>();
        SubtreeSync.split(parent, new java.util.TreeSet<>(names)).forEach((name, manifest) -> {
            if (manifest != null) {
                manifests.put(name, manifest);
            }
        });
        return manifests;
    }

    private SyncResult run(String remoteDirPath, Path localDir, Duration wait)
            throws ProblemException, IOException, InterruptedException {
        String remote = directoryPath(remoteDirPath);
        Path local = localDir.toAbsolutePath().normalize();
        if (Files.isSymbolicLink(local)) {
            local = local.toRealPath();
        }
        SyncNames.prefix(local); // refuses the root directory before anything is created
        Files.createDirectories(local.getParent());
        Path lockFile = SyncNames.sibling(local, SyncNames.LOCK);
        try (FileChannel channel = FileChannel.open(lockFile, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
            FileLock lock = tryLock(channel, local);
            try {
                return locked(remote, local, wait);
            } finally {
                lock.release();
            }
        }
    }

    private SyncResult locked(String remote, Path local, Duration wait)
            throws ProblemException, IOException, InterruptedException {
        if (staleScan) {
            StagingTree.removeStale(local);
        }
        SyncState state = SyncState.read(local, remote);
        if (state != null && !Files.isDirectory(local, LinkOption.NOFOLLOW_LINKS)) {
            state = null; // the tree it describes is gone: nothing to be conditional on
        }
        AtomicInteger requests = new AtomicInteger();
        for (int attempt = 1; ; attempt++) {
            try {
                return attempt(remote, local, state, attempt == 1 ? wait : null, requests, attempt);
            } catch (AttemptFailure failure) {
                throwIfInterrupted(remote, failure);
                if (attempt == MAX_ATTEMPTS) {
                    throw new SyncException("sync of " + remote + " into " + local + " failed after " + MAX_ATTEMPTS
                            + " attempts, local tree unchanged: " + failure.getMessage(), failure);
                }
                Duration delay = retryDelay(failure, attempt + 1);
                retries.retrying(new Retry(remote, attempt + 1, MAX_ATTEMPTS, delay, failure.getMessage()));
                Thread.sleep(delay.toMillis());
            } catch (IOException e) {
                throwIfInterrupted(remote, e); // a file channel closed by the interrupt, for example
                throw e;
            }
        }
    }

    /** An interrupt often surfaces as an I/O error (a read or a file channel it stopped): then stop, do not retry. */
    private static void throwIfInterrupted(String remote, Exception failure) throws InterruptedException {
        if (Thread.interrupted()) {
            InterruptedException interrupted =
                    new InterruptedException("sync of " + remote + " interrupted, local tree unchanged");
            interrupted.initCause(failure);
            throw interrupted;
        }
    }

    static FileLock tryLock(FileChannel channel, Path local) throws SyncException, IOException {
        FileLock lock;
        try {
            lock = channel.tryLock();
        } catch (OverlappingFileLockException heldInThisJvm) {
            lock = null;
        }
        if (lock == null) {
            throw new SyncException("another sync into " + local + " is running", null);
        }
        return lock;
    }

    private static Duration retryDelay(AttemptFailure last, int attempt) {
        Duration delay = last.retryAfter().isZero() ? RETRY_STEP.multipliedBy(attempt - 1) : last.retryAfter();
        return delay.compareTo(MAX_RETRY_DELAY) > 0 ? MAX_RETRY_DELAY : delay;
    }

    private SyncResult attempt(String remote, Path local, SyncState state, Duration wait, AtomicInteger requests,
            int attempt) throws AttemptFailure, ProblemException, IOException, InterruptedException {
        Manifest manifest = fetchManifest(remote, state, wait, requests);
        if (manifest == null) {
            return new SyncResult(state.manifest().etag(), false, 0, 0, 0, requests.get(), false, attempt);
        }
        ManifestTree tree;
        try {
            tree = ManifestTree.of(manifest);
        } catch (IllegalArgumentException e) {
            throw new SyncException("refused the manifest of " + remote + ": " + e.getMessage(), e);
        }
        SyncPlanner.Plan plan =
                SyncPlanner.plan(tree, LocalTree.scan(local), state == null ? null : state.manifest(), sharedInodes);
        SyncState next = new SyncState(SyncState.FORMAT, remote, manifest);
        if (plan.identical()) {
            next.write(local);
            return new SyncResult(tree.etag(), false, 0, 0, 0, requests.get(), false, attempt);
        }
        StagingTree staging = StagingTree.create(local, random);
        boolean swapped = false;
        try {
            Set<TreePath> linked = staging.prepare(tree, plan, local);
            boolean archive = byArchive(plan, tree);
            Transfer transfer = archive
                    ? downloadArchive(remote, tree, plan, staging, requests)
                    : downloadFiles(remote, tree, plan, staging, requests);
            Swapped done = swapIn(staging, tree, linked, local, state);
            swapped = true;
            try {
                next.write(local);
            } finally {
                done.aside().forEach(DirectorySync::deleteQuietly);
            }
            return new SyncResult(tree.etag(), true, transfer.files(), transfer.bytes(), plan.removed(),
                    requests.get(), archive, attempt);
        } finally {
            if (!swapped) {
                deleteQuietly(staging.root());
            }
        }
    }

    /**
     * What {@link #swapIn} put aside, for the caller to delete once the new state is written.
     *
     * @param old where the previous tree now is, or null when there was none
     * @param retiredState the previous sidecar, renamed out of the way ({@link SyncState#retire}), or null
     */
    record Swapped(Path old, Path retiredState) {
        /** @return what is to be deleted: the retired sidecar, then the previous tree, each when there is one */
        List<Path> aside() {
            List<Path> aside = new ArrayList<>(2);
            if (retiredState != null) {
                aside.add(retiredState);
            }
            if (old != null) {
                aside.add(old);
            }
            return aside;
        }
    }

    /**
     * Swaps a complete staged tree in for {@code local}: its metadata applied, then, with no sidecar while the trees
     * trade places (a crash in between must not leave a state that describes the old tree under the new one's
     * name, or the reverse), the swap. The previous sidecar is renamed out of the way rather than deleted, so that a
     * relay's {@link TreeDeleter} can delete it off the sync's thread (under a generation's writes an unlink waited
     * for the file system's journal several times as long as a rename). The caller then writes the new state and
     * deletes what is put aside.
     *
     * @param previous the state of the tree being replaced, put back if the swap fails; or null
     * @return where the previous tree and sidecar now are
     * @throws IOException when the metadata or the swap fails: {@code local} and its state are then as they were
     */
    Swapped swapIn(StagingTree staging, ManifestTree tree, Set<TreePath> linked, Path local, SyncState previous)
            throws IOException {
        staging.applyMetadata(tree, linked);
        Path retired = SyncState.retire(local);
        try {
            return new Swapped(swap.swap(staging.root(), local, random), retired);
        } catch (IOException | RuntimeException e) {
            if (!SyncState.restore(retired, local) && previous != null) {
                restoreQuietly(previous, local);
            }
            throw e;
        }
    }

    /**
     * Whether a plan's downloads come as one archive: when the local tree has nothing to reuse, or more than half of
     * the tree's bytes are new; otherwise file by file (a relay's Rudder node whose generation changed a few of its
     * files: the server reads and sends those only, not the whole tree).
     */
    static boolean byArchive(SyncPlanner.Plan plan, ManifestTree tree) {
        return !plan.download().isEmpty() && (!plan.reusesSomething() || plan.downloadBytes() > tree.fileBytes() / 2);
    }

    /** @return how many files one sync downloads at once, file by file */
    int parallelism() {
        return parallelism;
    }

    /** What a download brought. */
    private record Transfer(int files, long bytes) {}

    /** @return the manifest, or null when the server answered 304 (the local tree is its current version) */
    private Manifest fetchManifest(String remote, SyncState state, Duration wait, AtomicInteger requests)
            throws AttemptFailure, ProblemException, IOException, InterruptedException {
        String query = "?" + Routes.VIEW + "=" + Routes.VIEW_MANIFEST;
        boolean waiting = wait != null && state != null;
        if (waiting) {
            query += "&" + Routes.WAIT + "=" + wait.getSeconds();
        }
        HttpRequest.Builder request = HttpRequest.newBuilder(base.resolve(remote + query))
                .timeout(waiting ? requestTimeout.plus(wait) : requestTimeout)
                .header("Accept", "application/json")
                .GET();
        if (state != null) {
            request.header("If-None-Match", state.manifest().etag());
        }
        HttpResponse<InputStream> response = send(request.build(), requests, "the manifest of " + remote);
        try (InputStream body = response.body()) {
            if (response.statusCode() == 304 && state != null) {
                readToEnd(body, 0, "the manifest of " + remote);
                return null;
            }
            expectOk(response, body, "the manifest of " + remote);
            byte[] json;
            try {
                json = body.readNBytes(MAX_MANIFEST_BYTES + 1);
            } catch (IOException e) {
                throw new AttemptFailure("reading the manifest of " + remote + " failed: " + e, e);
            }
            if (json.length > MAX_MANIFEST_BYTES) {
                throw new SyncException("the manifest of " + remote + " is larger than " + MAX_MANIFEST_BYTES
                        + " bytes", null);
            }
            try {
                return JSON.readValue(json, Manifest.class);
            } catch (IOException | RuntimeException e) {
                throw new SyncException("the manifest of " + remote + " is not a valid manifest: " + e.getMessage(),
                        e);
            }
        }
    }

    private Transfer downloadArchive(String remote, ManifestTree tree, SyncPlanner.Plan plan, StagingTree staging,
            AtomicInteger requests) throws AttemptFailure, ProblemException, IOException, InterruptedException {
        String what = "the archive of " + remote;
        HttpRequest request = HttpRequest.newBuilder(
                        base.resolve(remote + "?" + Routes.VIEW + "=" + Routes.VIEW_ARCHIVE))
                .timeout(requestTimeout)
                .GET()
                .build();
        HttpResponse<InputStream> response = send(request, requests, what);
        try (InputStream body = response.body()) {
            expectOk(response, body, what);
            String etag = response.headers().firstValue("ETag").orElse(null);
            if (!tree.etag().equals(etag)) {
                throw new AttemptFailure(what + " is version " + etag + ", the manifest " + tree.etag()
                        + " (the server's tree changed)", null);
            }
            Set<TreePath> needed = new HashSet<>(plan.download());
            Set<TreePath> seen = new HashSet<>();
            int files = 0;
            long bytes = 0;
            InputStream gzip = gunzip(body, what);
            try (TarArchiveInputStream tar = new TarArchiveInputStream(gzip)) {
                for (TarArchiveEntry entry = next(tar, what); entry != null; entry = next(tar, what)) {
                    if (entry.isDirectory() || entry.isSymbolicLink()) {
                        continue; // made from the manifest, already checked
                    }
                    String name = entry.getName().startsWith("./") ? entry.getName().substring(2) : entry.getName();
                    TreePath path = fileOf(tree, name, entry, what);
                    if (!seen.add(path)) {
                        throw new AttemptFailure(what + " has '" + path + "' twice", null);
                    }
                    bytes += entry.getSize();
                    if (needed.remove(path)) {
                        VerifiedWrite.write(tar, staging.resolve(path), path, tree.entries().get(path), what);
                        files++;
                    }
                    if (Thread.interrupted()) {
                        throw new InterruptedException("interrupted while extracting " + what);
                    }
                }
                // The tar ends before the response does: read the rest so that the stream ends, not cancelled.
                readToEnd(gzip, ARCHIVE_TAIL_BYTES, what);
                readToEnd(body, ARCHIVE_TAIL_BYTES, what);
            }
            long expectedFiles = tree.entries().values().stream().filter(Manifest.Entry::isFile).count();
            if (!needed.isEmpty() || seen.size() != expectedFiles) {
                throw new AttemptFailure(what + " ended with " + seen.size() + " of the manifest's " + expectedFiles
                        + " files (cut off, or another version)", null);
            }
            return new Transfer(files, bytes);
        }
    }

    static InputStream gunzip(InputStream body, String what) throws AttemptFailure {
        try {
            return new GzipCompressorInputStream(body);
        } catch (IOException e) {
            throw new AttemptFailure("reading " + what + " failed: " + e, e);
        }
    }

    static TarArchiveEntry next(TarArchiveInputStream tar, String what) throws AttemptFailure {
        try {
            return tar.getNextEntry();
        } catch (IOException e) {
            throw new AttemptFailure("reading " + what + " failed: " + e, e);
        }
    }

    /** The manifest file an archive entry is; anything else means the archive is not the manifest's version. */
    private static TreePath fileOf(ManifestTree tree, String name, TarArchiveEntry entry, String what)
            throws AttemptFailure {
        TreePath path;
        try {
            path = new TreePath(name);
        } catch (IllegalArgumentException e) {
            throw new AttemptFailure(what + " has an entry the manifest cannot have: " + e.getMessage(), null);
        }
        Manifest.Entry expected = tree.entries().get(path);
        if (expected == null || !expected.isFile() || !entry.isFile() || entry.isLink()) {
            throw new AttemptFailure(what + " has '" + path + "', which is no file of the manifest", null);
        }
        if (entry.getSize() != expected.size()) {
            throw new AttemptFailure(what + " has '" + path + "' with " + entry.getSize() + " bytes, the manifest "
                    + expected.size() + " (another version)", null);
        }
        return path;
    }

    private Transfer downloadFiles(String remote, ManifestTree tree, SyncPlanner.Plan plan, StagingTree staging,
            AtomicInteger requests) throws AttemptFailure, ProblemException, IOException, InterruptedException {
        if (plan.download().isEmpty()) {
            return new Transfer(0, 0);
        }
        ExecutorService pool = downloadPool(Math.min(parallelism, plan.download().size()));
        try {
            List<Future<Long>> downloads = new ArrayList<>();
            for (TreePath path : plan.download()) {
                downloads.add(pool.submit(() -> downloadFile(remote, path, tree.entries().get(path), staging,
                        requests)));
            }
            long bytes = 0;
            for (Future<Long> download : downloads) {
                bytes += outcome(download);
            }
            return new Transfer(downloads.size(), bytes);
        } finally {
            // On failure the others are abandoned; all must have stopped before the staging tree is deleted.
            pool.shutdownNow();
            awaitStopped(pool);
        }
    }

    /** @return a pool of {@code threads} daemon threads for downloads ({@code pintle-sync-N}) */
    static ExecutorService downloadPool(int threads) {
        AtomicInteger count = new AtomicInteger();
        return Executors.newFixedThreadPool(threads, task -> {
            Thread thread = new Thread(task, "pintle-sync-" + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        });
    }

    private static long outcome(Future<Long> download)
            throws AttemptFailure, ProblemException, IOException, InterruptedException {
        try {
            return download.get();
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof AttemptFailure failure) {
                throw failure;
            }
            if (cause instanceof ProblemException problem) {
                throw problem;
            }
            if (cause instanceof IOException io) {
                throw io;
            }
            if (cause instanceof InterruptedException interrupted) {
                throw interrupted;
            }
            if (cause instanceof RuntimeException runtime) {
                throw runtime;
            }
            throw new IllegalStateException("download failed", cause);
        }
    }

    /**
     * One file into the staging tree, checked against its manifest entry as it arrives.
     *
     * @return its bytes
     * @throws AttemptFailure without a cause when the server's file is gone (404) or not the manifest's (the tree
     *     changed); with one when the transfer failed
     */
    long downloadFile(String remote, TreePath path, Manifest.Entry entry, StagingTree staging,
            AtomicInteger requests) throws AttemptFailure, ProblemException, IOException, InterruptedException {
        String what = remote + path;
        HttpRequest request = HttpRequest.newBuilder(base.resolve(remote + encode(path)))
                .timeout(requestTimeout)
                .GET()
                .build();
        HttpResponse<InputStream> response = send(request, requests, what);
        try (InputStream body = response.body()) {
            if (response.statusCode() == 404) {
                throw new AttemptFailure(what + " is gone from the server (its tree changed)", null);
            }
            expectOk(response, body, what);
            return VerifiedWrite.write(body, staging.resolve(path), path, entry, "the server");
        }
    }

    HttpResponse<InputStream> send(HttpRequest request, AtomicInteger requests, String what)
            throws AttemptFailure, InterruptedException {
        requests.incrementAndGet();
        try {
            return http.send(request, InterruptibleBody.handler(requestTimeout));
        } catch (HttpTimeoutException e) {
            throw new AttemptFailure("GET " + what + " got no answer within "
                    + request.timeout().orElse(requestTimeout).toSeconds() + " s (its request timeout): " + e, e);
        } catch (IOException e) {
            throw new AttemptFailure("GET " + what + " failed: " + e, e);
        }
    }

    /**
     * Reads what is left of a body, at most {@code limit} bytes, so that it ends rather than being cancelled by
     * its close (see {@link InterruptibleBody}); more than that is left to the cancel.
     */
    static void readToEnd(InputStream body, int limit, String what) throws AttemptFailure {
        byte[] buffer = new byte[8192];
        long left = limit;
        try {
            while (true) {
                int n = body.read(buffer, 0, (int) Math.min(buffer.length, left + 1));
                if (n < 0) {
                    return;
                }
                left -= n;
                if (left < 0) {
                    return;
                }
            }
        } catch (IOException e) {
            throw new AttemptFailure("reading " + what + " failed: " + e, e);
        }
    }

    /** Anything but 200 ends the attempt: 503 (overload, a file changing) is retried, other errors are final. */
    static void expectOk(HttpResponse<InputStream> response, InputStream body, String what)
            throws AttemptFailure, ProblemException {
        int status = response.statusCode();
        if (status == 200) {
            return;
        }
        byte[] problem;
        try {
            problem = body.readNBytes(64 * 1024);
        } catch (IOException e) {
            problem = new byte[0];
        }
        ProblemException error = PintleClient.problem(status, problem);
        if (status == 503) {
            throw new AttemptFailure("GET " + what + ": " + error.getMessage(), error,
                    PintleClient.retryAfter(response).orElse(Duration.ZERO));
        }
        throw error;
    }

    /**
     * Waits until a pool that was shut down has stopped, through interrupts (kept for the caller): what it runs
     * writes or deletes files the caller is about to rely on.
     */
    static void awaitStopped(ExecutorService pool) {
        boolean interrupted = false;
        while (true) {
            try {
                if (pool.awaitTermination(1, TimeUnit.MINUTES)) {
                    break;
                }
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** The swap failed: the old tree stays, and so does its state (without it, the next sync rehashes). */
    private static void restoreQuietly(SyncState state, Path local) {
        try {
            state.write(local);
        } catch (IOException e) {
            // Only costs the next sync a full comparison.
        }
    }

    static void deleteQuietly(Path tree) {
        try {
            StagingTree.delete(tree);
        } catch (IOException leftForTheNextSync) {
            // StagingTree.removeStale deletes it at the next sync.
        }
    }

    /**
     * @param remoteDirPath a directory path as given
     * @return it with a leading and a trailing slash
     */
    static String directoryPath(String remoteDirPath) {
        String path = remoteDirPath.startsWith("/") ? remoteDirPath : "/" + remoteDirPath;
        return path.endsWith("/") ? path : path + "/";
    }

    /**
     * @param path a manifest path
     * @return it as a relative URL path: each segment's UTF-8 bytes percent-encoded except unreserved characters
     */
    static String encode(TreePath path) {
        StringBuilder out = new StringBuilder();
        for (String segment : path.segments()) {
            if (out.length() > 0) {
                out.append('/');
            }
            out.append(PintleClient.encodeSegment(segment));
        }
        return out.toString();
    }
}
