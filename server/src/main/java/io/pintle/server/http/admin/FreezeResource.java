package io.pintle.server.http.admin;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.pintle.api.Routes;
import io.pintle.api.dto.FreezeRequest;
import io.pintle.api.dto.FreezeState;
import io.pintle.server.delivery.Freezer;
import io.pintle.server.nodes.NodeId;
import io.pintle.server.policy.Freeze;
import io.pintle.server.problem.PintleException;
import io.pintle.server.reload.SnapshotHolder;
import jakarta.ws.rs.DELETE;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * Freeze and roll back: {@code POST /v1/freeze} holds nodes (all, or a list) on the bytes of this moment, or on
 * their previous generation ({@code "rollback": true}); {@code DELETE /v1/freeze} releases them (all, or those of
 * {@code ?node=}); {@code GET} says what is frozen since when.
 */
@Path(Routes.FREEZE)
@Produces(MediaType.APPLICATION_JSON)
public final class FreezeResource {
    /** Nodes one request may name. */
    static final int MAX_NODES = 100_000;
    private static final ObjectMapper JSON = new ObjectMapper()
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);

    private final SnapshotHolder snapshots;
    private final Freezer freezer;

    /**
     * @param snapshots the live snapshot
     * @param freezer takes and releases freezes
     */
    public FreezeResource(SnapshotHolder snapshots, Freezer freezer) {
        this.snapshots = snapshots;
        this.freezer = freezer;
    }

    /** @return the freeze in force */
    @GET
    public FreezeState state() {
        return view(snapshots.current().freeze(), null, null);
    }

    /**
     * @param body a {@link FreezeRequest} as JSON, or nothing to freeze every node on its current policies
     * @return the freeze now in force
     */
    @POST
    public FreezeState freeze(String body) {
        FreezeRequest request = parse(body);
        List<NodeId> nodes = nodes(request.nodes());
        Freezer.Outcome outcome = freezer.freeze(snapshots.current(), nodes,
                Boolean.TRUE.equals(request.rollback()), request.reason());
        return view(outcome.freeze(), outcome.generation(), outcome);
    }

    /**
     * @param node nodes to release (repeated); none to release all
     * @return the freeze left in force
     */
    @DELETE
    public FreezeState release(@QueryParam("node") List<String> node) {
        Set<NodeId> released = new TreeSet<>(nodes(node));
        Freezer.Outcome outcome = freezer.release(snapshots.current(), released);
        return view(outcome.freeze(), outcome.generation(), null);
    }

    private static FreezeRequest parse(String body) {
        if (body == null || body.isBlank()) {
            return new FreezeRequest(null, null, null);
        }
        try {
            FreezeRequest request = JSON.readValue(body, FreezeRequest.class);
            if (request == null) {
                return new FreezeRequest(null, null, null);
            }
            if (request.reason() != null && request.reason().length() > 1000) {
                throw new PintleException.InvalidRequest("bad-freeze", "reason is longer than 1000 characters");
            }
            return request;
        } catch (JsonProcessingException e) {
            throw new PintleException.InvalidRequest("bad-freeze", "the body must be JSON like {\"nodes\": "
                    + "[\"<id>\", ...], \"rollback\": false, \"reason\": \"...\"} (every field optional); line "
                    + e.getLocation().getLineNr() + " column " + e.getLocation().getColumnNr() + " is not");
        }
    }

    private static List<NodeId> nodes(List<String> ids) {
        List<NodeId> nodes = new ArrayList<>();
        if (ids == null) {
            return nodes;
        }
        if (ids.size() > MAX_NODES) {
            throw new PintleException.InvalidRequest("bad-freeze", "more than " + MAX_NODES + " nodes");
        }
        for (String id : ids) {
            try {
                nodes.add(new NodeId(id));
            } catch (IllegalArgumentException | NullPointerException e) {
                throw new PintleException.InvalidRequest("bad-freeze", "'" + (id == null ? "null"
                        : io.pintle.server.http.Problems.printable(id)) + "' is not a node id");
            }
        }
        return nodes;
    }

    static FreezeState view(Freeze freeze, Long generation, Freezer.Outcome outcome) {
        if (!freeze.active()) {
            return new FreezeState(false, null, null, null, null, List.of(), null, generation, null, null);
        }
        List<String> nodes = new TreeSet<>(freeze.nodes()).stream().map(NodeId::value).toList();
        return new FreezeState(true, freeze.id(), freeze.since().toString(), freeze.rollback(), freeze.all(), nodes,
                freeze.reason(), generation, outcome != null ? outcome.copied().files() : null,
                outcome != null ? outcome.copied().linked() : null);
    }
}
