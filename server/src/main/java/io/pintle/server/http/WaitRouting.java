package io.pintle.server.http;

import io.pintle.api.Routes;
import io.pintle.server.problem.PintleException;
import jakarta.annotation.Priority;
import jakarta.ws.rs.Priorities;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerRequestFilter;
import jakarta.ws.rs.container.PreMatching;

/**
 * Sends file requests that carry {@code ?wait} to {@link WaitResource}, by prefixing their path with an internal
 * segment before matching. JAX-RS matches on paths, not query parameters; this keeps the common case (no wait) on
 * the synchronous {@link PolicyResource}, which costs less per request than an asynchronous one.
 */
@PreMatching
@Priority(Priorities.AUTHENTICATION + 10) // after RelayApiAlias
final class WaitRouting implements ContainerRequestFilter {
    /** The internal prefix; never a public route. */
    static final String PREFIX = "/.pintle-wait";

    private static final String REWRITTEN = WaitRouting.class.getName();

    @Override
    public void filter(ContainerRequestContext context) {
        if (!context.getUriInfo().getQueryParameters(false).containsKey(Routes.WAIT)) {
            return;
        }
        String path = context.getUriInfo().getRequestUri().getRawPath();
        if (path == null || !(path.startsWith(Routes.POLICIES + "/") || path.startsWith(Routes.COMMON + "/")
                || path.startsWith(Routes.RELAY_API + Routes.SHARED_FOLDER + "/"))) {
            return;
        }
        context.setProperty(REWRITTEN, Boolean.TRUE);
        RelayApiAlias.replacePath(context, PREFIX + path);
    }

    /**
     * @param context a request matched to {@link WaitResource}
     * @throws PintleException.NotFound when it named the internal prefix itself
     */
    static void requireRewritten(ContainerRequestContext context) {
        if (!Boolean.TRUE.equals(context.getProperty(REWRITTEN))) {
            throw new PintleException.NotFound("no-such-route", "no such route");
        }
    }
}
