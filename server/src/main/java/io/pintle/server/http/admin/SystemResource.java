package io.pintle.server.http.admin;

import io.pintle.api.Routes;
import io.pintle.api.dto.RelayApiResponse;
import io.pintle.api.dto.SystemInfo;
import io.pintle.api.dto.SystemStatus;
import io.pintle.server.PintleVersion;
import io.pintle.server.RudderVersion;
import io.pintle.server.reload.ReloadHistory;
import io.pintle.server.reload.ReloadOutcome;
import io.pintle.server.reload.Reloader;
import io.pintle.server.reload.SnapshotHolder;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * relayd's system API on the admin listener, same paths and envelope ({@code result}, {@code action},
 * {@code data} or {@code errorDetails}), so Rudder's hooks and {@code rudder relay reload} work unchanged.
 */
@Path("/rudder/relay-api/1/system")
@Produces(MediaType.APPLICATION_JSON)
public final class SystemResource {
    /** A reload of 20,000 nodes takes well under a second; past this something is wrong. */
    static final long RELOAD_TIMEOUT_SECONDS = 60;
    /**
     * The {@code details} of the database part. relayd pings its PostgreSQL there, and on a relay, which has none,
     * leaves the part out; its API document requires it. Pintle has none to fail: {@code success}, saying why.
     */
    static final String NO_DATABASE = "none: Pintle keeps no database (relayd, which processes reports and "
            + "inventories, answers for its own on its API port)";

    private final SnapshotHolder snapshots;
    private final Reloader reloader;

    public SystemResource(SnapshotHolder snapshots, Reloader reloader) {
        this.snapshots = snapshots;
        this.reloader = reloader;
    }

    /**
     * relayd answers the version it was built as, shipped with each Rudder release; Pintle, shipped apart, answers
     * the Rudder version installed on this machine, read from Rudder's own version files ({@code [admin]
     * rudder_version_files}) on each call, so that an upgrade shows at once. Left out when no file gives one, never
     * guessed.
     */
    @GET
    @Path("info")
    public RelayApiResponse<SystemInfo> info() {
        SystemInfo.Version rudder = RudderVersion.read(snapshots.current().config().admin().rudderVersionFiles())
                .map(version -> new SystemInfo.Version(version.major(), version.full()))
                .orElse(null);
        return RelayApiResponse.success("getSystemInfo", SystemInfo.of(rudder, PintleVersion.current()));
    }

    /** Pintle's configuration is its inputs: their state is the last reload's. */
    @GET
    @Path("status")
    public RelayApiResponse<SystemStatus> status() {
        ReloadHistory history = reloader.history();
        ReloadOutcome last = history.last();
        SystemStatus.State configuration = last != null && last.result() == ReloadOutcome.Result.FAILED
                ? new SystemStatus.State(RelayApiResponse.ERROR, last.error())
                : new SystemStatus.State(RelayApiResponse.SUCCESS, null);
        return RelayApiResponse.success("getStatus", new SystemStatus(
                new SystemStatus.State(RelayApiResponse.SUCCESS, NO_DATABASE), configuration));
    }

    /**
     * Synchronous, as relayd's: answers once the new snapshot is live, or with the reason it was refused. The body
     * is relayd's, to the byte: {@code rudder relay reload} (rudder-agent {@code share/commands/relay-reload})
     * compares it whole with {@code {"result":"success","action":"reloadConfiguration"}}, so Pintle's own details
     * go in headers ({@link Routes#RELOAD_GENERATION_HEADER}, {@link Routes#RELOAD_OUTCOME_HEADER}) and in
     * {@code /v1/status}. A refusal is relayd's too: 500 with {@code errorDetails}.
     */
    @POST
    @Path("reload")
    public Response reload() throws InterruptedException {
        String action = "reloadConfiguration";
        ReloadOutcome outcome;
        try {
            outcome = reloader.reload("api").get(RELOAD_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            return Response.serverError()
                    .entity(RelayApiResponse.error(action, "reload still running after " + RELOAD_TIMEOUT_SECONDS + " s"))
                    .build();
        } catch (ExecutionException e) {
            throw new IllegalStateException("reload failed unexpectedly", e.getCause());
        }
        Response.ResponseBuilder answer = outcome.succeeded()
                ? Response.ok(RelayApiResponse.success(action, null))
                : Response.serverError().entity(RelayApiResponse.error(action, outcome.error()));
        return answer.header(Routes.RELOAD_GENERATION_HEADER, outcome.generation())
                .header(Routes.RELOAD_OUTCOME_HEADER, outcome.result().text())
                .build();
    }
}
