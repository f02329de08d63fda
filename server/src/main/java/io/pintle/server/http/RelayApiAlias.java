package io.pintle.server.http;

import io.pintle.api.Routes;
import jakarta.annotation.Priority;
import jakarta.ws.rs.Priorities;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerRequestFilter;
import jakarta.ws.rs.container.PreMatching;
import java.net.URI;

/**
 * Rudder's Apache exposes relayd's API to nodes as {@code /rudder/relay-api/...} and proxies it to relayd's
 * {@code /rudder/relay-api/1/...}; nodes use the former, relayd's own clients the latter. This does what that
 * {@code ProxyPass} does, before matching, so every relay-api route is written once, under its versioned path.
 */
@PreMatching
@Priority(Priorities.AUTHENTICATION + 5)
final class RelayApiAlias implements ContainerRequestFilter {
    private static final String VERSIONED = Routes.RELAY_API + "/";
    private static final String ALIAS = Routes.RELAY_API_ALIAS + "/";

    @Override
    public void filter(ContainerRequestContext context) {
        URI uri = context.getUriInfo().getRequestUri();
        String path = uri.getRawPath();
        if (path == null || !path.startsWith(ALIAS) || path.startsWith(VERSIONED)) {
            return;
        }
        replacePath(context, VERSIONED + path.substring(ALIAS.length()));
    }

    /**
     * Points a request at another path before matching, keeping its query (both raw, as received).
     *
     * @param context the request, in a pre-matching filter
     * @param rawPath the new path, percent-encoded as the old one was
     */
    static void replacePath(ContainerRequestContext context, String rawPath) {
        URI uri = context.getUriInfo().getRequestUri();
        context.setRequestUri(context.getUriInfo().getBaseUri(), URI.create(uri.getScheme() + "://"
                + uri.getRawAuthority() + rawPath + (uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery())));
    }
}
