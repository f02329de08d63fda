package io.pintle.server.delivery;

import io.pintle.server.nodes.NodeId;
import io.pintle.server.policy.PolicyArchives;
import io.pintle.server.policy.StateFile;
import io.pintle.server.threads.Lane;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps, per node, a copy of the policy tree it last fetched ({@code rules/cfengine-community}, the tree Linux
 * archives pack and CFEngine agents copy), so that {@link TreeDiff} can say what changed for it since: in {@code
 * [paths] state}/{@value #DIRECTORY}/&lt;id&gt;/, the tree ({@link TreeCopy}: hard links where allowed) and the
 * entity tag it was fetched as. Copies are made after the fetch, one at a time on their own lane, and only when the
 * node's entry still has the tag it fetched after the copy is made: a tree Rudder replaced in between is not
 * mistaken for what the node got (the diff then says the copy is missing).
 */
public final class FetchedTrees {
    /** Directory in the state directory. */
    public static final String DIRECTORY = "fetched";
    private static final String TREE = "tree";
    private static final String TAG = "etag";
    private static final Logger LOG = LoggerFactory.getLogger(FetchedTrees.class);

    /** How often the object store is swept of what replaced copies left. */
    static final java.time.Duration SWEEP = java.time.Duration.ofHours(1);

    private final Lane lane;
    private final ObjectStore objects;
    private final Set<NodeId> pending = ConcurrentHashMap.newKeySet();
    /** The tag of each node's kept copy, so that a fetch of an unchanged version reads no file. */
    private final java.util.Map<NodeId, String> keptTags = new ConcurrentHashMap<>();
    private long lastSweep = System.nanoTime() - SWEEP.toNanos();

    /**
     * @param objects where the bytes of files that cannot be linked go
     * @param workers where copies run, one at a time
     */
    public FetchedTrees(ObjectStore objects, Executor workers) {
        this.objects = objects;
        this.lane = Lane.serial("fetched trees", workers);
    }

    /**
     * The copy kept of what a node fetched.
     *
     * @param tree the tree
     * @param etag the tag of the entry it was fetched as
     */
    public record Kept(Path tree, String etag) {}

    /**
     * @param state {@code [paths] state}
     * @param node a node
     * @return what is kept of its last fetch, or null when nothing is
     */
    public static Kept kept(Path state, NodeId node) {
        Path directory = state.resolve(DIRECTORY).resolve(node.value());
        try {
            String etag = Files.readString(directory.resolve(TAG), StandardCharsets.UTF_8).strip();
            Path tree = directory.resolve(TREE);
            return Files.isDirectory(tree, LinkOption.NOFOLLOW_LINKS) ? new Kept(tree, etag) : null;
        } catch (IOException absent) {
            return null;
        }
    }

    /**
     * Queues a copy of the node's tree, unless the one kept is of this tag already or one is queued for the node.
     *
     * @param state {@code [paths] state}
     * @param node the node
     * @param nodeRoot its directory as served to it
     * @param entry the {@link PolicyEntry} it fetched
     * @param etag the tag it holds now
     * @param archives the Linux archives Pintle builds, whose tags say what was served, or null
     */
    public void fetched(Path state, NodeId node, Path nodeRoot, String entry, String etag, PolicyArchives archives) {
        if (etag.equals(keptTags.get(node))) {
            return;
        }
        Kept kept = kept(state, node);
        if (kept != null && kept.etag().equals(etag)) {
            keptTags.put(node, etag);
            return;
        }
        if (!pending.add(node)) {
            return;
        }
        lane.execute(() -> {
            try {
                if (keep(state, node, nodeRoot, entry, etag, objects, archives)) {
                    keptTags.put(node, etag);
                }
                if (System.nanoTime() - lastSweep >= SWEEP.toNanos()) {
                    lastSweep = System.nanoTime();
                    objects.sweep(state, java.time.Duration.ZERO, java.time.Instant.now());
                }
            } catch (IOException | RuntimeException e) {
                LOG.warn("cannot keep a copy of what node {} fetched ({}): {}", node.value(), etag, e.toString());
            } finally {
                pending.remove(node);
            }
        });
    }

    /** Package-private for tests: the copy itself, on the calling thread. */
    static boolean keep(Path state, NodeId node, Path nodeRoot, String entry, String etag, ObjectStore objects,
            PolicyArchives archives) throws IOException {
        if (!etag.equals(PolicyEntry.currentEtag(nodeRoot, entry, archives))) {
            return false; // replaced since it was served
        }
        Path directory = state.resolve(DIRECTORY).resolve(node.value());
        Path fresh = state.resolve(DIRECTORY).resolve("." + node.value() + ".new");
        TreeCopy.delete(fresh);
        Files.createDirectories(fresh, StateFile.PRIVATE_DIRECTORY);
        Path source = nodeRoot.resolve(PolicyEntry.CFENGINE_TREE);
        if (Files.isDirectory(source, LinkOption.NOFOLLOW_LINKS)) {
            TreeCopy.copy(source, fresh.resolve(TREE), objects, state);
        } else {
            Files.createDirectory(fresh.resolve(TREE));
        }
        if (!etag.equals(PolicyEntry.currentEtag(nodeRoot, entry, archives))) {
            TreeCopy.delete(fresh);
            return false; // replaced while it was copied
        }
        Files.writeString(fresh.resolve(TAG), etag + "\n", StandardCharsets.UTF_8);
        Path old = state.resolve(DIRECTORY).resolve("." + node.value() + ".old");
        TreeCopy.delete(old);
        if (Files.exists(directory, LinkOption.NOFOLLOW_LINKS)) {
            Files.move(directory, old, StandardCopyOption.ATOMIC_MOVE);
        }
        Files.move(fresh, directory, StandardCopyOption.ATOMIC_MOVE);
        TreeCopy.delete(old);
        return true;
    }

    /** Stops taking copies; lets the one under way finish (bounded). */
    public void stop() throws InterruptedException {
        lane.shutdown();
        if (!lane.awaitTermination(java.time.Duration.ofSeconds(10))) {
            lane.shutdownNow();
        }
    }
}
