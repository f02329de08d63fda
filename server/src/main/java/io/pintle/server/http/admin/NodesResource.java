package io.pintle.server.http.admin;

import io.pintle.api.Routes;
import io.pintle.api.dto.NodeDelivery;
import io.pintle.api.dto.NodeDiff;
import io.pintle.api.dto.NodeList;
import io.pintle.server.delivery.Delivery;
import io.pintle.server.delivery.FetchedTrees;
import io.pintle.server.delivery.NodeRecord;
import io.pintle.server.delivery.NodeState;
import io.pintle.server.delivery.TreeDiff;
import io.pintle.server.nodes.NodeId;
import io.pintle.server.problem.PintleException;
import io.pintle.server.reload.ServerSnapshot;
import io.pintle.server.reload.SnapshotHolder;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import java.io.IOException;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Who has what: the nodes this server serves, what each last fetched of its policies and whether that is what is
 * served now ({@code behind}), when each was last heard from, its uploads, and what changed for it since its last
 * fetch.
 */
@Path(Routes.NODES)
@Produces(MediaType.APPLICATION_JSON)
public final class NodesResource {
    private final SnapshotHolder snapshots;
    private final Delivery delivery;
    private final Clock clock;

    /**
     * @param snapshots the live snapshot
     * @param delivery the delivery state
     * @param clock the clock of {@code silent_for}
     */
    public NodesResource(SnapshotHolder snapshots, Delivery delivery, Clock clock) {
        this.snapshots = snapshots;
        this.delivery = delivery;
        this.clock = clock;
    }

    /**
     * @param behind {@code true} or {@code false} to keep only nodes behind or current; absent for all
     * @param silentFor keep only nodes with no request for at least this many seconds (and those never seen)
     * @return the nodes
     */
    @GET
    public NodeList nodes(@QueryParam(Routes.BEHIND) String behind, @QueryParam(Routes.SILENT_FOR) String silentFor) {
        Boolean wanted = behind == null ? null : switch (behind) {
            case "true" -> Boolean.TRUE;
            case "false" -> Boolean.FALSE;
            default -> throw new PintleException.InvalidRequest("bad-filter", "behind must be true or false");
        };
        Long silentSeconds = null;
        if (silentFor != null) {
            try {
                silentSeconds = Long.parseLong(silentFor);
            } catch (NumberFormatException e) {
                silentSeconds = -1L;
            }
            if (silentSeconds < 0) {
                throw new PintleException.InvalidRequest("bad-filter", "silent_for must be a number of seconds");
            }
        }
        ServerSnapshot snapshot = snapshots.current();
        Instant now = clock.instant();
        List<NodeState> states = delivery.nodes(snapshot);
        List<NodeDelivery> shown = new ArrayList<>();
        int behindCount = 0;
        for (NodeState state : states) {
            behindCount += state.behind() ? 1 : 0;
            if (wanted != null && state.behind() != wanted) {
                continue;
            }
            if (silentSeconds != null) {
                NodeRecord.Seen last = state.record().lastRequest();
                if (last != null && last.time().isAfter(now.minusSeconds(silentSeconds))) {
                    continue;
                }
            }
            shown.add(view(state));
        }
        double share = states.isEmpty() ? 1.0 : (states.size() - behindCount) / (double) states.size();
        return new NodeList(now.toString(), states.size(), behindCount, share, shown);
    }

    /**
     * @param id a node
     * @return its delivery state
     */
    @GET
    @Path("{id}")
    public NodeDelivery node(@PathParam("id") String id) {
        return view(state(snapshots.current(), id));
    }

    /**
     * @param id a node
     * @return what changed for it between what it last fetched and what is served to it now
     */
    @GET
    @Path("{id}/diff")
    public NodeDiff diff(@PathParam("id") String id) {
        ServerSnapshot snapshot = snapshots.current();
        NodeState state = state(snapshot, id);
        NodeId node = state.node().id();
        NodeRecord.Fetch fetch = state.record().policies();
        FetchedTrees.Kept kept = FetchedTrees.kept(snapshot.config().paths().state(), node);
        TreeDiff.Result result;
        try {
            result = delivery.diff(snapshot, node, kept);
        } catch (IOException e) {
            throw new PintleException.Unavailable("diff-failed", "cannot compare node " + node.value()
                    + "'s policy trees: " + e.getMessage(), 0);
        }
        String note = null;
        if (fetch == null) {
            note = "the node never fetched its policies from this server: every file is shown as added";
        } else if (kept == null) {
            note = "no copy of what the node fetched is kept (it was replaced before it could be copied, or it was "
                    + "fetched before this server kept copies): every file is shown as added";
        } else if (!kept.etag().equals(fetch.etag())) {
            note = "the copy kept is of " + kept.etag() + ", not of the last fetch (" + fetch.etag()
                    + "), which was replaced before it could be copied";
        }
        List<NodeDiff.Change> changed = new ArrayList<>();
        for (TreeDiff.Change change : result.changed()) {
            changed.add(new NodeDiff.Change(change.path(), change.binary(), change.diff(), change.truncated()));
        }
        return new NodeDiff(node.value(), fetch != null ? fetch.etag() : null,
                fetch != null ? fetch.time().toString() : null, kept != null ? kept.etag() : null,
                state.currentEtag(), state.behind(), result.added(), result.removed(), changed, result.unchanged(),
                result.truncated(), note);
    }

    private NodeState state(ServerSnapshot snapshot, String id) {
        NodeId node;
        try {
            node = new NodeId(id);
        } catch (IllegalArgumentException e) {
            throw new PintleException.NotFound("unknown-node", "not a node id");
        }
        NodeState state = delivery.node(snapshot, node);
        if (state == null) {
            throw new PintleException.NotFound("unknown-node", "node " + node.value() + " is not served by this "
                    + "server (nodeslist.json lists no such node with this server as its policy server)");
        }
        return state;
    }

    static NodeDelivery view(NodeState state) {
        NodeRecord record = state.record();
        NodeRecord.Fetch fetch = record.policies();
        NodeRecord.Seen last = record.lastRequest();
        Map<String, NodeDelivery.Upload> uploads = new LinkedHashMap<>();
        record.uploads().forEach((kind, seen) -> uploads.put(kind, new NodeDelivery.Upload(seen.time().toString(),
                seen.address(), seen.what(), seen.status())));
        return new NodeDelivery(state.node().id().value(), state.node().hostname(), state.behind(), state.silent(),
                state.frozen(), state.channel(), state.currentEtag(),
                fetch == null ? null : new NodeDelivery.Fetch(fetch.path(), fetch.etag(), fetch.status(),
                        fetch.time().toString(), fetch.door()),
                last == null ? null : new NodeDelivery.Request(last.time().toString(), last.address(), last.what(),
                        last.status()),
                uploads);
    }
}
