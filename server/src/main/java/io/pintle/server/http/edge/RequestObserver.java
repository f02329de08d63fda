package io.pintle.server.http.edge;

import io.pintle.server.http.AccessLine;
import io.pintle.server.http.Exchange;
import io.pintle.server.access.Route;
import io.pintle.server.acl.Caller;
import io.pintle.server.acl.Decision;
import io.pintle.server.config.ServerConfig;
import io.pintle.server.delivery.Delivery;
import io.pintle.server.delivery.PolicyEntry;
import io.pintle.server.metrics.RouteClass;
import io.pintle.server.nodes.NodeId;
import io.pintle.server.metrics.ServerMetrics;
import io.pintle.server.nodes.Identification;
import io.pintle.server.nodes.NodeTrust;
import io.pintle.server.reload.SnapshotHolder;
import java.time.Instant;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.http.HttpURI;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.RequestLog;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.NanoTime;

/**
 * Jetty calls this once per completed request, on both listeners, including requests Jetty itself refused (bad
 * requests, URIs it rejects) that never reached Jersey: it counts the request in the metrics and, when {@code
 * [log] access} is on, writes one access log line through the SLF4J logger {@code io.pintle.access}. Who the
 * caller was, its route and what was decided come from the request's own {@link Exchange}, never from the snapshot
 * live by the time the response ends; a request Jetty refused before any handler ran has none.
 */
final class RequestObserver implements RequestLog {
    private final ServerMetrics metrics;
    private final SnapshotHolder snapshots;
    private final String adminConnector;
    private final AccessLine access = new AccessLine();
    private final Delivery delivery;

    RequestObserver(ServerMetrics metrics, SnapshotHolder snapshots, String adminConnector, Delivery delivery) {
        this.delivery = delivery;
        this.metrics = metrics;
        this.snapshots = snapshots;
        this.adminConnector = adminConnector;
    }

    @Override
    public void log(Request request, Response response) {
        long nanos = NanoTime.since(request.getBeginNanoTime());
        HttpURI uri = request.getHttpURI();
        String path = uri != null ? uri.getPath() : null;
        boolean admin = adminConnector.equals(request.getConnectionMetaData().getConnector().getName());
        Exchange exchange = Exchange.find(request);
        RouteClass route = (exchange != null ? exchange.route() : Route.of(admin, path)).metricClass();
        int status = exchange != null ? exchange.loggedStatus(response.getStatus()) : response.getStatus();
        long bytes = Response.getContentBytesWritten(response);
        Decision decision = exchange != null ? exchange.decision() : null;

        metrics.request(route, status, bytes, nanos);
        if (exchange != null && !admin) {
            delivered(exchange, request, response, status, bytes);
        }
        if (decision instanceof Decision.Deny deny) {
            metrics.denied(deny.reason());
        }

        // Read per request so that a reload can turn the access log on or off.
        ServerConfig.Log log = snapshots.current().config().log();
        if (log.access() && AccessLine.enabled()) {
            long millis = Request.getTimeStamp(request);
            boolean json = log.accessFormat() == ServerConfig.AccessFormat.JSON;
            // The ISO time is the JSON form's only; the common form formats its own, once per second.
            AccessLine.Line line = new AccessLine.Line(json ? Instant.ofEpochMilli(millis).toString() : null,
                    Request.getRemoteAddr(request), node(exchange), request.getMethod(), path,
                    uri != null ? uri.getQuery() : null, request.getConnectionMetaData().getProtocol(), status, bytes,
                    nanos / 1_000_000.0, admin ? adminConnector : "tls", route.label(), verdict(decision),
                    decision instanceof Decision.Deny deny ? deny.reason() : null,
                    decision instanceof Decision.Allow allow ? allow.rule() : null,
                    exchange != null ? exchange.incident() : null, auth(exchange), null, null);
            access.write(line, millis, nanos, json);
        }
    }

    /**
     * Tells the delivery state of an authenticated node's request and, when it was a GET of one of its own
     * {@link PolicyEntry policy entries} answered whole (200 with every byte written) or not modified (304), of
     * the version it holds now: the ETag answered.
     */
    private void delivered(Exchange exchange, Request request, Response response, int status, long bytes) {
        if (!(exchange.caller().identification() instanceof Identification.Authenticated authenticated)) {
            return;
        }
        NodeId node = authenticated.node();
        delivery.request(node, Request.getRemoteAddr(request), exchange.route().metricClass().label(), status);
        if (exchange.route() != Route.POLICIES || !HttpMethod.GET.is(request.getMethod())
                || status != HttpStatus.OK_200 && status != HttpStatus.NOT_MODIFIED_304) {
            return;
        }
        String etag = response.getHeaders().get(HttpHeader.ETAG);
        String below = Route.POLICIES.below(request.getHttpURI().getPath());
        if (etag == null || below == null || !below.startsWith(node.value() + "/")
                || !PolicyEntry.is(below.substring(node.value().length() + 1))) {
            return;
        }
        if (status == HttpStatus.OK_200 && bytes != response.getHeaders().getLongField(HttpHeader.CONTENT_LENGTH)) {
            return; // cut short: the node does not hold it
        }
        delivery.fetched(exchange.snapshot(), node, below.substring(node.value().length() + 1), etag, status,
                "https");
    }

    private static String node(Exchange exchange) {
        Caller caller = exchange != null ? exchange.caller() : null;
        if (caller != null && caller.identification() instanceof Identification.Authenticated authenticated) {
            return authenticated.node().value();
        }
        return null;
    }

    /**
     * Which of Rudder's trust modes vouched for the client certificate: {@code cert_pinning} or {@code
     * cert_validation} (also for a verified certificate of a node not listed yet), so that a migration from one to
     * the other can be followed in the log; null when neither did.
     */
    private static String auth(Exchange exchange) {
        Caller caller = exchange != null ? exchange.caller() : null;
        if (caller == null) {
            return null;
        }
        if (caller.identification() instanceof Identification.Authenticated authenticated) {
            return authenticated.via().text();
        }
        return ((Identification.Anonymous) caller.identification()).verified() != null
                ? NodeTrust.Mode.CERT_VALIDATION.text() : null;
    }

    private static String verdict(Decision decision) {
        if (decision instanceof Decision.Allow) {
            return "allowed";
        }
        return decision instanceof Decision.Deny ? "denied" : null;
    }

}
