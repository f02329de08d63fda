package io.pintle.server.http.admin;

import io.pintle.api.MediaTypes;
import io.pintle.api.dto.Health;
import io.pintle.api.dto.Problem;
import io.pintle.server.reload.ServerSnapshot;
import io.pintle.server.reload.SnapshotHolder;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

/**
 * Liveness and readiness on the admin listener, for systemd watchdogs, load balancers and orchestrators.
 * {@code /health} answers 200 whenever the process answers at all; {@code /ready} answers 200 once a snapshot is
 * live and the listeners are started, 503 (problem+json) while starting or stopping.
 */
@Path("/")
public final class HealthResource {
    private final SnapshotHolder snapshots;
    private final Readiness readiness;

    public HealthResource(SnapshotHolder snapshots, Readiness readiness) {
        this.snapshots = snapshots;
        this.readiness = readiness;
    }

    @GET
    @Path("health")
    @Produces(MediaType.APPLICATION_JSON)
    public Health health() {
        return new Health("live", null);
    }

    @GET
    @Path("ready")
    @Produces({MediaType.APPLICATION_JSON, MediaTypes.PROBLEM_JSON})
    public Response ready() {
        ServerSnapshot snapshot = snapshots.current();
        if (snapshot != null && readiness.up()) {
            return Response.ok(new Health("ready", snapshot.generation()), MediaType.APPLICATION_JSON).build();
        }
        // An expected state, not a fault: no incident id, nothing logged.
        String detail = snapshot == null ? "no snapshot is loaded" : "the listeners are not started (starting or stopping)";
        return Response.status(Response.Status.SERVICE_UNAVAILABLE)
                .type(MediaTypes.PROBLEM_JSON)
                .entity(new Problem("urn:pintle:problem:not-ready", "Not ready", 503, detail, "/ready", "not-ready",
                        null))
                .build();
    }
}
