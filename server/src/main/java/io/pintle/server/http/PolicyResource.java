package io.pintle.server.http;

import io.pintle.api.Routes;
import io.pintle.server.acl.Decision;
import io.pintle.server.nodes.NodeId;
import io.pintle.server.policy.FileVersion;
import io.pintle.server.policy.SafePaths;
import io.pintle.server.policy.UnsafePathException;
import io.pintle.server.problem.PintleException;
import io.pintle.server.reload.ServerSnapshot;
import jakarta.ws.rs.Encoded;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.Request;
import jakarta.ws.rs.core.Response;
import java.io.IOException;
import java.nio.file.NoSuchFileException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Rudder's file routes: {@code /policies/{node}/{path}} and {@code /common/{path}} (GET; HEAD is derived by
 * Jersey and sends the same headers). Access is decided before the file system is touched, so a denial never
 * reveals whether a path exists.
 */
@Path("/")
public final class PolicyResource {
    private static final Logger LOG = LoggerFactory.getLogger(PolicyResource.class);

    @GET
    @Path(Routes.POLICIES + "/{node: " + Routes.NODE_ID_PATTERN + "}/{path: .*}")
    public Response policy(
            @PathParam("node") String node,
            @Encoded @PathParam("path") String path,
            @Context ContainerRequestContext context,
            @Context Request request,
            @Context HttpHeaders headers) {
        RequestState state = RequestState.of(context);
        ServerSnapshot snapshot = state.snapshot();
        NodeId owner = nodeId(node);
        return serve(snapshot.acl().policies(state.caller(), owner), snapshot.share().nodeRoot(owner), path, state,
                context, request, headers);
    }

    @GET
    @Path(Routes.COMMON + "/{path: .*}")
    public Response common(
            @Encoded @PathParam("path") String path,
            @Context ContainerRequestContext context,
            @Context Request request,
            @Context HttpHeaders headers) {
        RequestState state = RequestState.of(context);
        ServerSnapshot snapshot = state.snapshot();
        return serve(snapshot.acl().common(state.caller()), snapshot.share().commonRoot(), path, state, context,
                request, headers);
    }

    /** Decide first, touch the file system only when allowed: a denial never depends on what exists. */
    private static Response serve(Decision decision, java.nio.file.Path root, String path, RequestState state,
            ContainerRequestContext context, Request request, HttpHeaders headers) {
        authorize(decision, state, context);
        java.nio.file.Path file = resolve(root, path, state, context);
        return FileResponses.serve(file(file, context), request, headers);
    }

    private static NodeId nodeId(String text) {
        try {
            return new NodeId(text);
        } catch (IllegalArgumentException e) {
            throw new PintleException.NotFound("no-such-node", "no such node directory");
        }
    }

    private static void authorize(Decision decision, RequestState state, ContainerRequestContext context) {
        AccessRecord.of(context).decision(decision);
        if (decision instanceof Decision.Deny deny) {
            LOG.info("denied {} {} to {} ({}): {}", context.getMethod(), context.getUriInfo().getPath(),
                    state.caller().address().getHostAddress(), state.caller().describe(), deny.detail());
            throw new PintleException.AccessDenied(deny.reason(), deny.detail());
        }
    }

    private static java.nio.file.Path resolve(
            java.nio.file.Path root, String path, RequestState state, ContainerRequestContext context) {
        try {
            return SafePaths.resolve(root, path);
        } catch (UnsafePathException e) {
            LOG.warn("refused path {} from {} ({}): {}", context.getUriInfo().getPath(false),
                    state.caller().address().getHostAddress(), state.caller().describe(), e.getMessage());
            Decision.Deny deny = new Decision.Deny("path-rejected", "path refused: " + e.getMessage());
            AccessRecord.of(context).decision(deny);
            throw new PintleException.AccessDenied(deny.reason(), deny.detail());
        } catch (SafePaths.EscapeException e) {
            LOG.warn("refused path {} from {} ({}): {}", context.getUriInfo().getPath(false),
                    state.caller().address().getHostAddress(), state.caller().describe(), e.getMessage());
            throw notFound();
        } catch (NoSuchFileException e) {
            throw notFound();
        } catch (IOException e) {
            throw new IllegalStateException("cannot resolve " + root + "/" + path, e);
        }
    }

    private static FileVersion file(java.nio.file.Path file, ContainerRequestContext context) {
        try {
            FileVersion version = FileVersion.of(file);
            if (version.directory()) {
                throw new PintleException.NotFound("directory", "this path is a directory; only files are served");
            }
            return version;
        } catch (NoSuchFileException e) {
            throw notFound();
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + file + " for " + context.getUriInfo().getPath(), e);
        }
    }

    private static PintleException notFound() {
        return new PintleException.NotFound("no-such-file", "no such file");
    }
}
