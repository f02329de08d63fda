package io.pintle.server.http;

import io.pintle.api.Routes;
import jakarta.ws.rs.Encoded;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.Request;
import jakarta.ws.rs.core.Response;

/**
 * Rudder's file routes: {@code /policies/{node}/{path}} and {@code /common/{path}} (GET; HEAD is derived by
 * Jersey and sends the same headers), and their directory views {@code ?view=manifest} and {@code ?view=archive}.
 * Access is decided before the file system is touched, so a denial never reveals whether a path exists. Requests
 * with {@code ?wait} are routed to {@link WaitResource} instead (by {@link WaitRouting}), so that only they pay for
 * asynchronous processing.
 */
@Path("/")
public final class PolicyResource {
    private final FileRoutes routes;

    /** @param routes what the routes answer */
    PolicyResource(FileRoutes routes) {
        this.routes = routes;
    }

    @GET
    @Path(Routes.POLICIES + "/{node: " + Routes.NODE_ID_PATTERN + "}/{path: .*}")
    public Response policy(
            @PathParam("node") String node,
            @Encoded @PathParam("path") String path,
            @QueryParam(Routes.VIEW) String view,
            @Context ContainerRequestContext context,
            @Context Request request,
            @Context HttpHeaders headers) {
        FileRoutes.View parsed = FileRoutes.View.parse(view);
        return routes.respond(routes.target(node, path, context), parsed, request, headers);
    }

    @GET
    @Path(Routes.COMMON + "/{path: .*}")
    public Response common(
            @Encoded @PathParam("path") String path,
            @QueryParam(Routes.VIEW) String view,
            @Context ContainerRequestContext context,
            @Context Request request,
            @Context HttpHeaders headers) {
        FileRoutes.View parsed = FileRoutes.View.parse(view);
        return routes.respond(routes.target(null, path, context), parsed, request, headers);
    }
}
