package io.pintle.server.http.edge;

import io.pintle.server.http.Exchange;
import io.pintle.server.access.Route;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.pintle.server.acl.Caller;
import io.pintle.server.acl.Decision;
import io.pintle.server.config.ServerConfig;
import io.pintle.server.metrics.RouteClass;
import io.pintle.server.metrics.ServerMetrics;
import io.pintle.server.nodes.Identification;
import io.pintle.server.nodes.NodeTrust;
import io.pintle.server.reload.SnapshotHolder;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Locale;
import org.eclipse.jetty.http.HttpURI;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.RequestLog;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.NanoTime;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Jetty calls this once per completed request, on both listeners, including requests Jetty itself refused (bad
 * requests, URIs it rejects) that never reached Jersey: it counts the request in the metrics and, when {@code
 * [log] access} is on, writes one access log line through the SLF4J logger {@code io.pintle.access}. Who the
 * caller was, its route and what was decided come from the request's own {@link Exchange}, never from the snapshot
 * live by the time the response ends; a request Jetty refused before any handler ran has none.
 */
final class RequestObserver implements RequestLog {
    /** The access log's logger: route it with Logback (its own appender, file or level). */
    static final String ACCESS_LOGGER = "io.pintle.access";

    private static final Logger ACCESS = LoggerFactory.getLogger(ACCESS_LOGGER);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final DateTimeFormatter COMMON_TIME =
            DateTimeFormatter.ofPattern("dd/MMM/yyyy:HH:mm:ss Z", Locale.US).withZone(ZoneOffset.UTC);

    private final ServerMetrics metrics;
    private final SnapshotHolder snapshots;
    private final String adminConnector;
    /** The last second the common form formatted. */
    private volatile Stamp stamp;

    RequestObserver(ServerMetrics metrics, SnapshotHolder snapshots, String adminConnector) {
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
        int status = response.getStatus();
        long bytes = Response.getContentBytesWritten(response);
        Decision decision = exchange != null ? exchange.decision() : null;

        metrics.request(route, status, bytes, nanos);
        if (decision instanceof Decision.Deny deny) {
            metrics.denied(deny.reason());
        }

        // Read per request so that a reload can turn the access log on or off.
        ServerConfig.Log log = snapshots.current().config().log();
        if (log.access() && ACCESS.isInfoEnabled()) {
            long millis = Request.getTimeStamp(request);
            boolean json = log.accessFormat() == ServerConfig.AccessFormat.JSON;
            // The ISO time is the JSON form's only; the common form formats its own, once per second.
            Line line = new Line(json ? Instant.ofEpochMilli(millis).toString() : null,
                    Request.getRemoteAddr(request), node(exchange), request.getMethod(), path,
                    uri != null ? uri.getQuery() : null, request.getConnectionMetaData().getProtocol(), status, bytes,
                    nanos / 1_000_000.0, admin ? adminConnector : "tls", route.label(), verdict(decision),
                    decision instanceof Decision.Deny deny ? deny.reason() : null,
                    decision instanceof Decision.Allow allow ? allow.rule() : null,
                    exchange != null ? exchange.incident() : null, auth(exchange));
            ACCESS.info(json ? json(line) : common(line, millis, nanos));
        }
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

    /**
     * Apache's common log format (client, identity, node id as the user, time, request line, status, bytes), then
     * duration, decision, the trust mode that vouched for the certificate ({@code auth=}) and, when there is one,
     * the incident id.
     */
    private String common(Line line, long millis, long nanos) {
        StringBuilder text = new StringBuilder(200);
        text.append(line.client()).append(" - ").append(line.node() != null ? line.node() : "-")
                .append(" [").append(commonTime(millis)).append("] \"");
        quoted(text, line.method());
        text.append(' ');
        quoted(text, line.path() != null ? line.path() : "-");
        if (line.query() != null) {
            text.append('?');
            quoted(text, line.query());
        }
        text.append(' ').append(line.protocol()).append("\" ").append(line.status()).append(' ')
                .append(line.bytes() > 0 ? Long.toString(line.bytes()) : "-").append(' ');
        milliseconds(text, nanos);
        text.append("ms ");
        if (line.decision() == null) {
            text.append('-');
        } else if (line.reason() != null) {
            text.append(line.decision()).append(':').append(line.reason());
        } else {
            text.append(line.decision()).append(" \"");
            quoted(text, line.rule());
            text.append('"');
        }
        if (line.auth() != null) {
            text.append(" auth=").append(line.auth());
        }
        if (line.incident() != null) {
            text.append(" incident=").append(line.incident());
        }
        return text.toString();
    }

    /**
     * @param millis a request's time
     * @return its second as the common log format writes it, formatted once per second (a formatter's call
     *     costs more than the rest of the line)
     */
    private String commonTime(long millis) {
        long second = Math.floorDiv(millis, 1000);
        Stamp last = stamp;
        if (last == null || last.second() != second) {
            last = new Stamp(second, COMMON_TIME.format(Instant.ofEpochSecond(second)));
            stamp = last;
        }
        return last.text();
    }

    /** A duration in milliseconds with three decimals, as {@code %.3f} writes it but without a formatter. */
    static void milliseconds(StringBuilder text, long nanos) {
        long micros = (Math.max(nanos, 0) + 500) / 1000;
        long fraction = micros % 1000;
        text.append(micros / 1000).append('.');
        if (fraction < 100) {
            text.append('0');
        }
        if (fraction < 10) {
            text.append('0');
        }
        text.append(fraction);
    }

    /** The common log format's time of one second; a race only formats twice. */
    private record Stamp(long second, String text) {}

    /** Request lines come from the network: quotes, backslashes and control characters are escaped. */
    private static void quoted(StringBuilder text, String value) {
        if (value == null) {
            text.append('-');
            return;
        }
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c == '"' || c == '\\') {
                text.append('\\').append(c);
            } else if (c < 0x20 || c == 0x7f) {
                text.append(String.format(Locale.ROOT, "\\x%02x", (int) c));
            } else {
                text.append(c);
            }
        }
    }

    private static String json(Line line) {
        try {
            return JSON.writeValueAsString(line);
        } catch (JsonProcessingException e) {
            return "{\"error\":\"access line not serialisable\"}";
        }
    }

    /** One access log entry; null fields are left out of the JSON form. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record Line(
            String time,
            String client,
            String node,
            String method,
            String path,
            String query,
            String protocol,
            int status,
            long bytes,
            @JsonProperty("duration_ms") double durationMs,
            String listener,
            String route,
            String decision,
            String reason,
            String rule,
            String incident,
            String auth) {}
}
