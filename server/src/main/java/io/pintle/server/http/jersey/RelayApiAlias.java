package io.pintle.server.http.jersey;

import io.pintle.server.http.Exchange;
import io.pintle.server.access.Route;
import io.pintle.api.Routes;
import jakarta.annotation.Priority;
import jakarta.ws.rs.Priorities;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerRequestFilter;
import jakarta.ws.rs.container.PreMatching;
import java.net.URI;

/**
 * What Rudder's Apache does in front of relayd, before matching: {@code ProxyPass /rudder/relay-api/
 * http://127.0.0.1:3030/rudder/relay-api/1/} maps the unversioned path nodes use to relayd's versioned one, under
 * which every relay-api resource is written once; and {@code <Location /rudder/relay-api/> Require all denied}
 * refuses the rest of that prefix on the TLS listener ({@link Route#RELAY_API_DENIED}: relayd's own
 * {@code /rudder/relay-api/1/...}, {@code system/...}), with 403 as Apache does, without saying whether the path
 * exists. On the admin listener, relayd's own port, both prefixes are served.
 */
@PreMatching
@Priority(Priorities.AUTHENTICATION + 5)
final class RelayApiAlias implements ContainerRequestFilter {
    private static final String VERSIONED = Routes.RELAY_API + "/";
    private static final String ALIAS = Routes.RELAY_API_ALIAS + "/";

    @Override
    public void filter(ContainerRequestContext context) {
        if (context.getProperty(Exchange.ATTRIBUTE) instanceof Exchange exchange
                && exchange.route() == Route.RELAY_API_DENIED) {
            exchange.authorize(); // refused by its rule
            throw new IllegalStateException("relayd's API allowed on the TLS listener: " + exchange.route());
        }
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
