package io.pintle.client;

import io.pintle.api.Routes;
import io.pintle.api.dto.Manifest;
import io.pintle.api.dto.ManifestEtag;
import java.io.IOException;
import java.io.InputStream;
import java.net.URLEncoder;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;

/**
 * {@link DirectorySync#syncSubtrees}: many sibling directories from a manifest of their parent that the caller
 * holds, their files in one {@code ?view=archive&only=} request per {@value Routes#MAX_ONLY} directories — or, for
 * a directory that needs at most half of its bytes and reuses the rest (a Rudder node whose generation changed a
 * few of its files), file by file as {@link DirectorySync#sync} would, so that the server sends just those. Each
 * directory is still its own sync — its lock, its staging tree, its swap, its sidecar, exactly as {@link
 * DirectorySync#sync} leaves them — and succeeds or fails on its own: one that the archive shows to have changed on
 * the server since the manifest (a file of another size or digest, a file more or less) is left as it was and told
 * as stale; one completed before the response was cut stays done. The trees swapped out are deleted by a {@link
 * TreeDeleter} while the next directories are fetched.
 */
final class SubtreeSync {
    /**
     * Archive requests for one batch whose responses were cut part-way: each costs the server a walk of what it
     * sends, and a cut costs at least the directory being sent; past this, the rest wait for the next round.
     */
    static final int MAX_CUT_ARCHIVES = 4;

    private final DirectorySync sync;
    /** Deletes the swapped-out trees while the next directories are fetched; closed (waited for) by {@link #run}. */
    private final TreeDeleter deleter = new TreeDeleter();

    SubtreeSync(DirectorySync sync) {
        this.sync = sync;
    }

    /** One directory being synced: where, its manifest, and, once prepared, its staging tree. */
    private static final class Node {
        final String name;
        final String remote;
        final Path local;
        final Manifest manifest;
        ManifestTree tree;
        FileChannel lockChannel;
        FileLock lock;
        SyncState state;
        SyncPlanner.Plan plan;
        StagingTree staging;
        Set<TreePath> linked;
        final Set<TreePath> needed = new HashSet<>();
        final Set<TreePath> seen = new HashSet<>();
        int files;
        long bytes;
        SubtreeOutcome outcome;

        Node(String name, String remote, Path local, Manifest manifest) {
            this.name = name;
            this.remote = remote;
            this.local = local;
            this.manifest = manifest;
        }
    }

    /** Syncs the named directories; returns once their swapped-out trees are deleted too. Called once. */
    List<SubtreeOutcome> run(String remoteParent, Path localParent, Manifest parent, Collection<String> names)
            throws IOException, InterruptedException {
        return run(remoteParent, localParent, split(parent, new TreeSet<>(names)));
    }

    /**
     * Syncs the named directories from their own manifests (null for a name that is no directory of the parent),
     * in the map's order; returns once their swapped-out trees are deleted too. Called once.
     */
    List<SubtreeOutcome> run(String remoteParent, Path localParent, Map<String, Manifest> manifests)
            throws IOException, InterruptedException {
        try (deleter) {
            return syncAll(remoteParent, localParent, manifests);
        }
    }

    private List<SubtreeOutcome> syncAll(String remoteParent, Path localParent, Map<String, Manifest> manifests)
            throws IOException, InterruptedException {
        String remote = DirectorySync.directoryPath(remoteParent);
        Path parentDir = localParent.toAbsolutePath().normalize();
        Files.createDirectories(parentDir);
        List<SubtreeOutcome> outcomes = new ArrayList<>();
        List<Node> chunk = new ArrayList<>();
        for (Map.Entry<String, Manifest> each : manifests.entrySet()) {
            String name = each.getKey();
            if (each.getValue() == null) {
                outcomes.add(SubtreeOutcome.failed(name, "'" + name + "' is no directory of the manifest of "
                        + remote, true));
                continue;
            }
            chunk.add(new Node(name, remote + PintleClient.encodeSegment(name) + "/", parentDir.resolve(name),
                    each.getValue()));
            if (chunk.size() == Routes.MAX_ONLY) {
                outcomes.addAll(batch(remote, chunk));
                chunk = new ArrayList<>();
            }
        }
        if (!chunk.isEmpty()) {
            outcomes.addAll(batch(remote, chunk));
        }
        return outcomes;
    }

    /**
     * Each named directory's own manifest, from the parent's entries below it (paths made relative, the ETag
     * computed as the server computes its manifest's); null for a name that is no directory of the parent.
     */
    static Map<String, Manifest> split(Manifest parent, Set<String> names) {
        Map<String, List<Manifest.Entry>> entries = new HashMap<>();
        for (Manifest.Entry entry : parent.entries()) {
            String path = entry.path();
            int slash = path.indexOf('/');
            String top = slash < 0 ? path : path.substring(0, slash);
            if (!names.contains(top)) {
                continue;
            }
            if (slash < 0) {
                if (entry.isDirectory()) {
                    entries.putIfAbsent(top, new ArrayList<>());
                }
                continue;
            }
            List<Manifest.Entry> below = entries.get(top);
            if (below != null) {
                below.add(new Manifest.Entry(path.substring(slash + 1), entry.type(), entry.size(), entry.mode(),
                        entry.mtime(), entry.sha256(), entry.target()));
            }
        }
        Map<String, Manifest> manifests = new LinkedHashMap<>();
        for (String name : names) {
            List<Manifest.Entry> below = entries.get(name);
            if (below == null) {
                manifests.put(name, null);
                continue;
            }
            ManifestEtag etag = new ManifestEtag();
            int files = 0;
            long bytes = 0;
            for (Manifest.Entry entry : below) {
                etag.add(entry);
                if (entry.isFile() && entry.size() != null) {
                    files++;
                    bytes += entry.size();
                }
            }
            manifests.put(name, new Manifest(Manifest.FORMAT, etag.value(), files, bytes, below));
        }
        return manifests;
    }

    private List<SubtreeOutcome> batch(String remote, List<Node> nodes) throws IOException, InterruptedException {
        try {
            List<Node> fetch = new ArrayList<>();
            List<Node> fileByFile = new ArrayList<>();
            for (Node node : nodes) {
                prepare(node);
                if (node.outcome == null && node.needed.isEmpty()) {
                    complete(node, false);
                }
                if (node.outcome == null) {
                    (DirectorySync.byArchive(node.plan, node.tree) ? fetch : fileByFile).add(node);
                } else {
                    release(node);
                }
            }
            if (!fileByFile.isEmpty()) {
                fetchFiles(fileByFile);
            }
            if (!fetch.isEmpty()) {
                fetch(remote, fetch);
            }
            List<SubtreeOutcome> outcomes = new ArrayList<>();
            for (Node node : nodes) {
                outcomes.add(node.outcome != null ? node.outcome
                        : SubtreeOutcome.failed(node.name, "not in the archive of " + remote
                                + " (gone from the server since its manifest)", true));
            }
            return outcomes;
        } finally {
            for (Node node : nodes) {
                release(node);
            }
        }
    }

    /** Ends a directory's sync, whatever its outcome: its staging tree deleted, its lock released. */
    private static void release(Node node) throws IOException {
        if (node.staging != null) {
            DirectorySync.deleteQuietly(node.staging.root());
            node.staging = null;
        }
        if (node.lock != null) {
            node.lock.release();
            node.lock = null;
        }
        if (node.lockChannel != null) {
            node.lockChannel.close();
            node.lockChannel = null;
        }
    }

    /** Locks, plans and stages one directory; sets its outcome when there is nothing to fetch or it failed. */
    private void prepare(Node node) throws IOException {
        try {
            SyncNames.prefix(node.local);
            node.lockChannel = FileChannel.open(SyncNames.sibling(node.local, SyncNames.LOCK),
                    StandardOpenOption.CREATE, StandardOpenOption.WRITE);
            node.lock = DirectorySync.tryLock(node.lockChannel, node.local);
            node.state = SyncState.read(node.local, node.remote);
            boolean exists = Files.isDirectory(node.local, LinkOption.NOFOLLOW_LINKS);
            if (node.state != null && exists && node.state.manifest().etag().equals(node.manifest.etag())) {
                // What a 304 to this directory's own manifest request would say: nothing to do.
                node.outcome = SubtreeOutcome.done(node.name, node.manifest.etag(), false, 0, 0);
                return;
            }
            try {
                node.tree = ManifestTree.of(node.manifest);
            } catch (IllegalArgumentException e) {
                node.outcome = SubtreeOutcome.failed(node.name, "refused the manifest of " + node.remote + ": "
                        + e.getMessage(), false);
                return;
            }
            node.plan = SyncPlanner.plan(node.tree, LocalTree.scan(node.local),
                    node.state == null || !exists ? null : node.state.manifest(), sync.sharedInodes);
            if (node.plan.identical()) {
                new SyncState(SyncState.FORMAT, node.remote, node.manifest).write(node.local);
                node.outcome = SubtreeOutcome.done(node.name, node.manifest.etag(), false, 0, 0);
                return;
            }
            node.staging = StagingTree.create(node.local, sync.random);
            node.linked = node.staging.prepare(node.tree, node.plan, node.local);
            node.needed.addAll(node.plan.download());
        } catch (SyncException | AttemptFailure e) {
            node.outcome = SubtreeOutcome.failed(node.name, e.getMessage(), e instanceof AttemptFailure);
        } catch (IOException e) {
            node.outcome = SubtreeOutcome.failed(node.name, "syncing " + node.local + " failed: " + e, false);
        }
    }

    /**
     * The archive of the directories that need files, each completed as soon as the next one starts. A response
     * cut after it started is what the server does when a directory changes while it is written (during a
     * generation): the directory being received then is stale, and those not yet started are asked for again in a
     * new archive, up to {@value #MAX_CUT_ARCHIVES} archives in all. A response refused, or cut before its first
     * entry (or the last archive cut), fails every directory not completed.
     */
    private void fetch(String remote, List<Node> nodes) throws IOException, InterruptedException {
        List<Node> left = nodes;
        for (int archive = 1; !left.isEmpty(); archive++) {
            Node cut = fetchOnce(remote, left, archive == MAX_CUT_ARCHIVES);
            if (cut == null) {
                return;
            }
            left = left.stream().filter(node -> node.outcome == null && node != cut).toList();
            if (cut.outcome == null) {
                cut.outcome = stale(cut, "was cut while this directory was sent (the server's copy changed while "
                        + "it was read)");
            }
            release(cut);
        }
    }

    /**
     * One archive request for {@code nodes}.
     *
     * @return the directory being received when the response was cut after its first entry (the rest not
     *     started yet, to ask for again), or null when the response was whole, or failed (the directories not
     *     completed are then failed)
     */
    private Node fetchOnce(String remote, List<Node> nodes, boolean last) throws IOException, InterruptedException {
        StringBuilder query = new StringBuilder("?" + Routes.VIEW + "=" + Routes.VIEW_ARCHIVE);
        Map<String, Node> byName = new HashMap<>();
        for (Node node : nodes) {
            query.append('&').append(Routes.ONLY).append('=').append(URLEncoder.encode(node.name,
                    StandardCharsets.UTF_8).replace("+", "%20"));
            byName.put(node.name, node);
        }
        String what = "the archive of " + nodes.size() + " directories of " + remote;
        HttpRequest request = HttpRequest.newBuilder(sync.base.resolve(remote + query))
                .timeout(sync.requestTimeout)
                .GET()
                .build();
        Node current = null;
        try {
            HttpResponse<InputStream> response = sync.send(request, new AtomicInteger(), what);
            try (InputStream body = response.body()) {
                DirectorySync.expectOk(response, body, what);
                InputStream gzip = DirectorySync.gunzip(body, what);
                try (TarArchiveInputStream tar = new TarArchiveInputStream(gzip)) {
                    for (TarArchiveEntry entry = DirectorySync.next(tar, what); entry != null;
                            entry = DirectorySync.next(tar, what)) {
                        String name = entry.getName().startsWith("./") ? entry.getName().substring(2)
                                : entry.getName();
                        int slash = name.indexOf('/');
                        Node node = slash < 0 ? null : byName.get(name.substring(0, slash));
                        if (node == null || node.outcome != null && node != current) {
                            throw new AttemptFailure(what + " has '" + TreePath.printable(name)
                                    + "', which is in no directory asked for, or out of order", null);
                        }
                        if (node != current) {
                            if (current != null) {
                                complete(current, true);
                                release(current);
                            }
                            current = node;
                        }
                        if (node.outcome == null) {
                            receive(node, name.substring(slash + 1), entry, tar);
                        }
                        if (Thread.interrupted()) {
                            throw new InterruptedException("interrupted while extracting " + what);
                        }
                    }
                    if (current != null) {
                        complete(current, true);
                        release(current);
                        current = null;
                    }
                    DirectorySync.readToEnd(gzip, DirectorySync.ARCHIVE_TAIL_BYTES, what);
                    DirectorySync.readToEnd(body, DirectorySync.ARCHIVE_TAIL_BYTES, what);
                }
            }
        } catch (AttemptFailure | ProblemException e) {
            if (current != null && current.outcome == null && isCut(e) && !last) {
                return current;
            }
            // The response failed as a whole (refused, cut, not an archive): what was completed stays done.
            for (Node node : nodes) {
                if (node.outcome == null) {
                    node.outcome = SubtreeOutcome.failed(node.name, e.getMessage(), false);
                }
            }
        }
        return null;
    }

    /**
     * The files of directories that need a few of theirs (at most half of their bytes; the rest is reused), each
     * file its own request, {@link DirectorySync#parallelism} at once over the client's connection (multiplexed on
     * HTTP/2): the server reads and sends those files only, where an archive would walk, read and compress every
     * file of the directory. A directory is completed once all its files are in; one whose file is gone or not its
     * manifest's (the server's copy changed since) is stale; a transfer that failed (no answer, a refusal, a cut
     * body) fails its directory and, without waiting for theirs, every directory not completed yet.
     */
    private void fetchFiles(List<Node> nodes) throws IOException, InterruptedException {
        int downloads = nodes.stream().mapToInt(node -> node.needed.size()).sum();
        ExecutorService pool = DirectorySync.downloadPool(Math.min(sync.parallelism(), downloads));
        try {
            Map<Node, List<Future<Long>>> pending = new LinkedHashMap<>();
            for (Node node : nodes) {
                List<Future<Long>> files = new ArrayList<>();
                for (TreePath path : node.needed) {
                    Manifest.Entry entry = node.tree.entries().get(path);
                    files.add(pool.submit(() -> sync.downloadFile(node.remote, path, entry, node.staging,
                            new AtomicInteger())));
                }
                pending.put(node, files);
            }
            SubtreeOutcome broken = null;
            for (Map.Entry<Node, List<Future<Long>>> each : pending.entrySet()) {
                Node node = each.getKey();
                // Every file of a directory is waited for (a stale one's too) before its staging tree is deleted;
                // once the transfers are broken, what is still running is stopped with the pool first.
                for (Future<Long> file : each.getValue()) {
                    if (broken != null) {
                        break;
                    }
                    try {
                        long bytes = file.get();
                        if (node.outcome == null) {
                            node.files++;
                            node.bytes += bytes;
                        }
                    } catch (ExecutionException e) {
                        if (node.outcome == null) {
                            node.outcome = fileFailed(node, e.getCause());
                        }
                        if (!node.outcome.stale()) {
                            // The transfer failed, not this directory's copy: the connection or the server is in
                            // trouble, and each request left would wait as long. The rest fail with it, at once.
                            broken = node.outcome;
                            pool.shutdownNow();
                        }
                    }
                }
                if (node.outcome == null && broken != null) {
                    node.outcome = SubtreeOutcome.failed(node.name, broken.failure(), false);
                }
                if (node.outcome == null) {
                    node.needed.clear();
                    complete(node, false);
                }
                if (broken == null) {
                    release(node);
                }
                // Else released by the batch once the pool has stopped (below).
            }
        } finally {
            // On an interrupt or a broken transfer the rest are abandoned; all must have stopped before the
            // staging trees are deleted.
            pool.shutdownNow();
            DirectorySync.awaitStopped(pool);
        }
    }

    /** A directory's outcome when one of its files failed: stale when the server's copy changed, else failed. */
    private static SubtreeOutcome fileFailed(Node node, Throwable failure) {
        if (failure instanceof AttemptFailure attempt && attempt.getCause() == null) {
            return SubtreeOutcome.failed(node.name, node.remote + " changed on the server since its manifest: "
                    + attempt.getMessage(), true);
        }
        return SubtreeOutcome.failed(node.name, failure.getMessage() != null ? failure.getMessage()
                : failure.toString(), false);
    }

    /** Whether a response failed because its stream ended early (not a refusal, nor an archive out of order). */
    private static boolean isCut(Exception e) {
        return e instanceof AttemptFailure failure && failure.cut();
    }

    /** One archive entry of a directory being fetched; a file that is not the manifest's makes it stale. */
    private static void receive(Node node, String relative, TarArchiveEntry entry, InputStream tar)
            throws AttemptFailure {
        if (entry.isDirectory() || entry.isSymbolicLink()) {
            return; // made from the manifest, already checked
        }
        TreePath path;
        try {
            path = new TreePath(relative);
        } catch (IllegalArgumentException e) {
            node.outcome = stale(node, "has an entry its manifest cannot have: " + e.getMessage());
            return;
        }
        Manifest.Entry expected = node.tree.entries().get(path);
        if (expected == null || !expected.isFile() || !entry.isFile() || entry.isLink()
                || entry.getSize() != expected.size()) {
            node.outcome = stale(node, "has '" + path + "' differing from its manifest");
            return;
        }
        if (!node.seen.add(path)) {
            node.outcome = stale(node, "has '" + path + "' twice");
            return;
        }
        node.bytes += entry.getSize();
        if (node.needed.remove(path)) {
            try {
                VerifiedWrite.write(tar, node.staging.resolve(path), path, expected, "the server");
                node.files++;
            } catch (AttemptFailure e) {
                if (e.getCause() != null) {
                    throw e; // the response could not be read: the whole archive fails
                }
                node.outcome = stale(node, e.getMessage());
            } catch (IOException e) {
                node.outcome = SubtreeOutcome.failed(node.name, "writing " + node.staging.resolve(path)
                        + " failed: " + e, false);
            }
        }
    }

    private static SubtreeOutcome stale(Node node, String why) {
        return SubtreeOutcome.failed(node.name, node.remote + " changed on the server since its manifest: the "
                + "archive " + why, true);
    }

    /**
     * Swaps a directory's staged tree in once every file it needed is there; else it is stale.
     *
     * @param archive whether its files came in an archive, which brings every file of the directory (each seen);
     *     file by file, or with nothing to fetch, only those needed come
     */
    private void complete(Node node, boolean archive) throws IOException {
        if (node.outcome != null) {
            return;
        }
        long expectedFiles = node.tree.entries().values().stream().filter(Manifest.Entry::isFile).count();
        boolean fetched = archive && (node.seen.size() > 0 || !node.plan.download().isEmpty());
        if (!node.needed.isEmpty() || fetched && node.seen.size() != expectedFiles) {
            node.outcome = stale(node, "ended with " + node.seen.size() + " of its manifest's " + expectedFiles
                    + " files");
            return;
        }
        try {
            DirectorySync.Swapped swapped =
                    sync.swapIn(node.staging, node.tree, node.linked, node.local, node.state);
            node.staging = null;
            try {
                new SyncState(SyncState.FORMAT, node.remote, node.manifest).write(node.local);
            } finally {
                List<Path> aside = swapped.aside();
                if (!aside.isEmpty()) {
                    deleter.delete(aside);
                }
            }
            node.outcome = SubtreeOutcome.done(node.name, node.manifest.etag(), true, node.files, node.bytes);
        } catch (IOException e) {
            node.outcome = SubtreeOutcome.failed(node.name, "syncing " + node.local + " failed: " + e, false);
        }
    }
}
