package io.pintle.server.http;

import io.pintle.api.Routes;
import jakarta.ws.rs.Encoded;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HEAD;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.Request;
import jakarta.ws.rs.core.Response;

/**
 * relayd's shared folder on the TLS listener: {@code /rudder/relay-api/1/shared-folder/{path}} (and the
 * {@code /rudder/relay-api/shared-folder/{path}} that Rudder's Apache exposes, by {@link RelayApiAlias}), served from
 * {@code [paths] shared_folder}. {@code HEAD} with {@code hash} (and {@code hash_type}) answers 304 when the file
 * has that digest, 200 when it differs or no hash is given, 404 when absent — what the Windows agent and
 * {@code download-shared-file} rely on. {@code GET} serves the file, or with {@code ?view=} a directory's
 * manifest or archive (the recursive copy HTTPS-only mode lacked). Access: an allowed network and a client
 * certificate of a known node, as Apache requires.
 */
@Path("/")
public final class SharedFolderResource {
    private final FileRoutes routes;

    /** @param routes what the routes answer */
    SharedFolderResource(FileRoutes routes) {
        this.routes = routes;
    }

    @GET
    @Path(Routes.RELAY_API + Routes.SHARED_FOLDER + "/{path: .*}")
    public Response get(
            @Encoded @PathParam("path") String path,
            @QueryParam(Routes.VIEW) String view,
            @Context ContainerRequestContext context,
            @Context Request request,
            @Context HttpHeaders headers) {
        FileRoutes.View parsed = FileRoutes.View.parse(view);
        return routes.respond(routes.sharedFolderTarget(path, context), parsed, request, headers);
    }

    @HEAD
    @Path(Routes.RELAY_API + Routes.SHARED_FOLDER + "/{path: .*}")
    public Response head(
            @Encoded @PathParam("path") String path,
            @QueryParam(Routes.HASH) String hash,
            @QueryParam(Routes.HASH_TYPE) String hashType,
            @Context ContainerRequestContext context,
            @Context Request request,
            @Context HttpHeaders headers) {
        return routes.headWithHash(routes.sharedFolderTarget(path, context), hash, hashType, request, headers);
    }

}
