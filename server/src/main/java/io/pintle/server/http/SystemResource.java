package io.pintle.server.http;

import io.pintle.api.Routes;
import io.pintle.api.dto.RelayApiResponse;
import io.pintle.server.PintleVersion;
import io.pintle.server.reload.ReloadHistory;
import io.pintle.server.reload.ReloadOutcome;
import io.pintle.server.reload.Reloader;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.util.LinkedHashMap;
import java.util.Map;
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

    private final Reloader reloader;

    SystemResource(Reloader reloader) {
        this.reloader = reloader;
    }

    @GET
    @Path("info")
    public RelayApiResponse<Map<String, Object>> info() {
        return RelayApiResponse.success("getSystemInfo",
                Map.of("pintle", Map.of("full-version", PintleVersion.current())));
    }

    @GET
    @Path("status")
    public RelayApiResponse<Map<String, Object>> status() {
        ReloadHistory history = reloader.history();
        Map<String, Object> configuration = new LinkedHashMap<>();
        ReloadOutcome last = history.last();
        if (last != null && last.result() == ReloadOutcome.Result.FAILED) {
            configuration.put("status", RelayApiResponse.ERROR);
            configuration.put("details", last.error());
        } else {
            configuration.put("status", RelayApiResponse.SUCCESS);
        }
        return RelayApiResponse.success("getStatus", Map.of("configuration", configuration));
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
