package io.pintle.server.delivery;

import io.pintle.server.nodes.Node;
import io.pintle.server.nodes.NodeId;
import io.pintle.server.policy.Freeze;
import io.pintle.server.policy.FreezeFile;
import io.pintle.server.problem.PintleException;
import io.pintle.server.reload.Reloader;
import io.pintle.server.reload.ServerSnapshot;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ThreadLocalRandom;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Takes and releases freezes. A freeze copies each frozen node's directory ({@link TreeCopy}: hard links where
 * allowed) into {@code [paths] state}/freezes/&lt;id&gt;/, writes {@link FreezeFile}, then puts it in force through
 * the reload lane ({@link Reloader#freeze}); from that snapshot on, every door serves those nodes from their copy.
 * A rollback copies each node's previous generation instead: Rudder's backup ({@code [delivery] rudder_backup}/&lt;id&gt;,
 * where the webapp moves a node's directory before it puts the new one in place) or, without one, the copy of
 * the last released freeze, which a release keeps in {@code freezes/previous/}. Operations are rare and made by an
 * operator: they are serialised by this object's lock and never touch the request path.
 */
public final class Freezer {
    /** Where a released freeze's copies are kept for a later rollback. */
    public static final String PREVIOUS = "previous";
    private static final Logger LOG = LoggerFactory.getLogger(Freezer.class);
    private static final DateTimeFormatter ID = DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'")
            .withZone(ZoneOffset.UTC);

    private final Reloader reloader;
    private final ObjectStore objects;
    private final Clock clock;

    /**
     * @param reloader puts freezes in force
     * @param objects where the bytes of files that cannot be linked go
     * @param clock stamps freezes
     */
    public Freezer(Reloader reloader, ObjectStore objects, Clock clock) {
        this.reloader = reloader;
        this.objects = objects;
        this.clock = clock;
    }

    /**
     * What a freeze or a release did.
     *
     * @param freeze the freeze in force afterwards
     * @param generation the snapshot that put it in force
     * @param copied what was copied (freeze only)
     * @param sources where each frozen node's copy came from (freeze only)
     */
    public record Outcome(Freeze freeze, long generation, TreeCopy.Outcome copied, Map<NodeId, Path> sources) {}

    /**
     * @param snapshot the live snapshot
     * @param asked the nodes to freeze; empty for every node with a directory in the share
     * @param rollback hold them on their previous generation instead of the current one
     * @param reason what the operator says, or null
     * @return what was done
     * @throws PintleException when something is already frozen (409), a node is unknown (404) or has nothing to
     *     hold it on (409), or the copy cannot be made (503)
     */
    public synchronized Outcome freeze(ServerSnapshot snapshot, List<NodeId> asked, boolean rollback, String reason) {
        Freeze current = snapshot.freeze();
        if (current.active()) {
            throw new PintleException.Conflict("already-frozen", (current.all() ? "every node is" : current.nodes()
                    .size() + " node(s) are") + " frozen since " + current.since() + " (freeze " + current.id()
                    + "); release it first (DELETE /v1/freeze)");
        }
        Path state = snapshot.config().paths().state();
        Map<NodeId, Path> sources = sources(snapshot, asked, rollback, state);
        Instant since = clock.instant();
        String id = ID.format(since) + "-" + Integer.toHexString(ThreadLocalRandom.current().nextInt(0x1000, 0x10000));
        FreezeFile file = new FreezeFile(state);
        Path directory = file.freezes().resolve(id);
        TreeCopy.Outcome copied = TreeCopy.Outcome.NONE;
        long started = System.nanoTime();
        try {
            for (Map.Entry<NodeId, Path> source : sources.entrySet()) {
                copied = copied.plus(TreeCopy.copy(source.getValue(), directory.resolve(source.getKey().value()),
                        objects, state));
            }
            Freeze freeze = new Freeze(id, since, rollback, asked.isEmpty(), sources.keySet(), directory, reason);
            file.write(freeze);
            long generation = publish(freeze);
            LOG.info("freeze {}: {} node(s){} held, {} files ({} linked, {} bytes copied) in {} ms{}", id,
                    sources.size(), rollback ? " rolled back and" : "", copied.files(), copied.linked(),
                    copied.copiedBytes(), (System.nanoTime() - started) / 1_000_000,
                    reason != null ? ": " + reason : "");
            return new Outcome(freeze, generation, copied, sources);
        } catch (IOException e) {
            discard(directory);
            try {
                objects.sweep(state, java.time.Duration.ZERO, clock.instant());
            } catch (IOException sweepFailed) {
                LOG.warn("cannot sweep the object store after a failed freeze: {}", sweepFailed.getMessage());
            }
            throw new PintleException.Unavailable("freeze-failed", "cannot copy the frozen policies into "
                    + directory + ": " + e.getMessage() + "; nothing was frozen", 0);
        }
    }

    /**
     * @param snapshot the live snapshot
     * @param released the nodes to release; empty for all
     * @return what was done
     * @throws PintleException when nothing is frozen (409) or a node is not frozen (404)
     */
    public synchronized Outcome release(ServerSnapshot snapshot, Set<NodeId> released) {
        Freeze current = snapshot.freeze();
        if (!current.active()) {
            throw new PintleException.Conflict("not-frozen", "nothing is frozen");
        }
        for (NodeId node : released) {
            if (!current.covers(node)) {
                throw new PintleException.NotFound("not-frozen", "node " + node.value() + " is not frozen");
            }
        }
        Freeze next = released.isEmpty() ? Freeze.NONE : current.without(released);
        FreezeFile file = new FreezeFile(snapshot.config().paths().state());
        try {
            file.write(next);
        } catch (IOException e) {
            throw new PintleException.Unavailable("release-failed", "cannot write " + file.freezes() + ": "
                    + e.getMessage() + "; the freeze stays in force", 0);
        }
        long generation = publish(next);
        keepAsPrevious(file.freezes(), current, released.isEmpty() ? current.nodes() : released, !next.active());
        try {
            objects.sweep(snapshot.config().paths().state(), java.time.Duration.ZERO, clock.instant());
        } catch (IOException e) {
            LOG.warn("freeze {}: released, but the object store could not be swept: {}", current.id(), e.getMessage());
        }
        LOG.info("freeze {}: {} released", current.id(), next.active() ? released.size() + " node(s)" : "all nodes");
        return new Outcome(next, generation, TreeCopy.Outcome.NONE, Map.of());
    }

    private Map<NodeId, Path> sources(ServerSnapshot snapshot, List<NodeId> asked, boolean rollback, Path state) {
        List<NodeId> nodes = new ArrayList<>();
        if (asked.isEmpty()) {
            for (Node node : snapshot.nodesList().nodes()) {
                if (Files.isDirectory(snapshot.share().nodeRoot(node.id()), LinkOption.NOFOLLOW_LINKS)) {
                    nodes.add(node.id());
                }
            }
            if (nodes.isEmpty()) {
                throw new PintleException.Conflict("nothing-to-freeze", "no node of nodeslist.json has a directory "
                        + "in " + snapshot.share().root());
            }
        } else {
            Set<NodeId> listed = new TreeSet<>();
            snapshot.nodesList().nodes().forEach(node -> listed.add(node.id()));
            for (NodeId node : new TreeSet<>(asked)) {
                if (!listed.contains(node)) {
                    throw new PintleException.NotFound("unknown-node", "node " + node.value() + " is not in "
                            + "nodeslist.json; nothing was frozen");
                }
                nodes.add(node);
            }
        }
        Map<NodeId, Path> sources = new LinkedHashMap<>();
        Path backup = snapshot.config().delivery().rudderBackup();
        Path previous = new FreezeFile(state).freezes().resolve(PREVIOUS);
        List<String> missing = new ArrayList<>();
        for (NodeId node : nodes) {
            Path source;
            if (!rollback) {
                source = snapshot.share().nodeRoot(node);
            } else if (backup != null && Files.isDirectory(backup.resolve(node.value()).resolve("rules"),
                    LinkOption.NOFOLLOW_LINKS)) {
                source = backup.resolve(node.value());
            } else {
                source = previous.resolve(node.value());
            }
            if (!Files.isDirectory(source, LinkOption.NOFOLLOW_LINKS)) {
                missing.add(node.value());
            } else {
                sources.put(node, source);
            }
        }
        if (!missing.isEmpty()) {
            String which = String.join(", ", missing.subList(0, Math.min(10, missing.size())))
                    + (missing.size() > 10 ? " and " + (missing.size() - 10) + " more" : "");
            throw new PintleException.Conflict(rollback ? "no-previous-generation" : "no-policies", rollback
                    ? "no previous generation for " + which + ": Rudder's backup (" + (backup != null ? backup
                            + "/<id>/rules" : "[delivery] rudder_backup is off") + ") has none and no released "
                            + "freeze kept one; nothing was frozen"
                    : "no policies directory for " + which + " in " + snapshot.share().root()
                            + "; nothing was frozen");
        }
        return sources;
    }

    private long publish(Freeze freeze) {
        try {
            return reloader.freeze(freeze).join().generation();
        } catch (CompletionException e) {
            throw new IllegalStateException("the reload lane refused the freeze", e.getCause());
        }
    }

    /**
     * A released node's copy becomes its "previous" copy, for a rollback once Rudder has written a bad generation
     * after the release; the released freeze's directory goes when none of its copies is left in force.
     */
    private static void keepAsPrevious(Path freezes, Freeze released, Set<NodeId> nodes, boolean whole) {
        Path previous = freezes.resolve(PREVIOUS);
        try {
            Files.createDirectories(previous);
            for (NodeId node : nodes) {
                Path copy = released.directory().resolve(node.value());
                Path kept = previous.resolve(node.value());
                TreeCopy.delete(kept);
                if (Files.isDirectory(copy, LinkOption.NOFOLLOW_LINKS)) {
                    Files.move(copy, kept, StandardCopyOption.ATOMIC_MOVE);
                }
            }
            if (whole) {
                TreeCopy.delete(released.directory());
            }
        } catch (IOException e) {
            LOG.warn("freeze {}: released, but its copies could not be kept in {} for a later rollback: {}",
                    released.id(), previous, e.getMessage());
        }
    }

    private static void discard(Path directory) {
        try {
            TreeCopy.delete(directory);
        } catch (IOException e) {
            LOG.warn("cannot remove the incomplete freeze copy {}: {}", directory, e.getMessage());
        }
    }
}
