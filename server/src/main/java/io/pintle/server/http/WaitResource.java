package io.pintle.server.http;

import io.pintle.api.Routes;
import jakarta.inject.Inject;
import jakarta.inject.Provider;
import jakarta.ws.rs.Encoded;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.container.AsyncResponse;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.Suspended;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.Request;
import java.util.concurrent.Executor;
import java.util.function.Supplier;

/**
 * The file routes with {@code ?wait=SECONDS}: the same URLs as {@link PolicyResource} (rewritten to an internal
 * prefix by {@link WaitRouting}, which is how JAX-RS tells them apart), answered asynchronously so that a request
 * waiting for its ETag to change holds no thread. The internal prefix is not a public route: a request that
 * names it directly gets a 404.
 */
@Path("/")
public final class WaitResource {
    private final FileRoutes routes;

    // The Jetty request is request-scoped; Jersey's jetty-http container only offers it through injection.
    @Inject
    private Provider<org.eclipse.jetty.server.Request> jettyRequest;

    /** @param routes what the routes answer */
    WaitResource(FileRoutes routes) {
        this.routes = routes;
    }

    @GET
    @Path(WaitRouting.PREFIX + Routes.POLICIES + "/{node: " + Routes.NODE_ID_PATTERN + "}/{path: .*}")
    public void policy(
            @PathParam("node") String node,
            @Encoded @PathParam("path") String path,
            @QueryParam(Routes.VIEW) String view,
            @QueryParam(Routes.WAIT) String wait,
            @Context ContainerRequestContext context,
            @Context Request request,
            @Context HttpHeaders headers,
            @Suspended AsyncResponse async) {
        serve(node, path, view, wait, context, request, headers, async);
    }

    @GET
    @Path(WaitRouting.PREFIX + Routes.COMMON + "/{path: .*}")
    public void common(
            @Encoded @PathParam("path") String path,
            @QueryParam(Routes.VIEW) String view,
            @QueryParam(Routes.WAIT) String wait,
            @Context ContainerRequestContext context,
            @Context Request request,
            @Context HttpHeaders headers,
            @Suspended AsyncResponse async) {
        serve(null, path, view, wait, context, request, headers, async);
    }

    @GET
    @Path(WaitRouting.PREFIX + Routes.RELAY_API + Routes.SHARED_FOLDER + "/{path: .*}")
    public void sharedFolder(
            @Encoded @PathParam("path") String path,
            @QueryParam(Routes.VIEW) String view,
            @QueryParam(Routes.WAIT) String wait,
            @Context ContainerRequestContext context,
            @Context Request request,
            @Context HttpHeaders headers,
            @Suspended AsyncResponse async) {
        serve(() -> routes.sharedFolderTarget(path, context), view, wait, context, request, headers, async);
    }

    private void serve(String node, String path, String view, String wait, ContainerRequestContext context,
            Request request, HttpHeaders headers, AsyncResponse async) {
        serve(() -> routes.target(node, path, context), view, wait, context, request, headers, async);
    }

    private void serve(Supplier<FileRoutes.Target> resolve, String view, String wait,
            ContainerRequestContext context, Request request, HttpHeaders headers, AsyncResponse async) {
        try {
            WaitRouting.requireRewritten(context);
            FileRoutes.View parsed = FileRoutes.View.parse(view);
            int seconds = FileRoutes.waitSeconds(wait);
            FileRoutes.Target target = resolve.get();
            routes.respondOrPark(target, parsed, seconds, context, request, headers, async,
                    parking(jettyRequest.get()));
        } catch (RuntimeException e) {
            async.resume(e);
        }
    }

    private static FileRoutes.Parking parking(org.eclipse.jetty.server.Request request) {
        return new FileRoutes.Parking() {
            @Override
            public void parked() {
                // A parked request is bounded by [limits] max_waiters, not by the files workers: give its worker
                // back, so that waiting agents never starve downloads.
                if (request.getAttribute(OverloadHandler.RELEASE_WORKER) instanceof Runnable release) {
                    release.run();
                }
                // No bytes flow while parked: the connection's idle timeout must not fail the request. The wait
                // itself is bounded (Routes.MAX_WAIT_SECONDS).
                request.addIdleTimeoutListener(timeout -> false);
            }

            @Override
            public Executor executor() {
                return request.getComponents().getExecutor();
            }
        };
    }
}
