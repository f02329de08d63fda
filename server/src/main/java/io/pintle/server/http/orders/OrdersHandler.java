package io.pintle.server.http.orders;

import io.pintle.server.http.BodyStream;
import io.pintle.server.http.Exchange;
import io.pintle.server.http.Problems;
import io.pintle.server.access.Route;
import io.pintle.api.Routes;
import io.pintle.api.dto.RemoteRunEvent;
import io.pintle.server.nodes.Identification;
import io.pintle.server.nodes.NodeId;
import io.pintle.server.problem.PintleException;
import io.pintle.server.remoterun.PullChannels;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Pattern;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.http.PreEncodedHttpField;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The pull channel's two routes, on Jetty's core API so that a parked poll holds no thread and no worker: a node's
 * poll for orders ({@code GET /rudder/relay-api/remote-run/orders?wait=N}: one order as a {@code text/plain} line,
 * or 204 when the wait runs out) and its report on one order ({@code PUT .../orders/<order>}: the agent's output,
 * read as it comes, then an empty line and {@code <order> exit <code>}). Both need the node's pinned certificate,
 * from an allowed network, on the server that is its policy server (the order channel's rule of {@link
 * io.pintle.server.access.Access}). The dispatch step hands it its two routes only.
 */
public final class OrdersHandler extends Handler.Abstract {
    /** A report larger than this is refused (an agent run's output is a few hundred KiB). */
    static final long MAX_REPORT_BYTES = 64L << 20;

    private static final Logger LOG = LoggerFactory.getLogger(OrdersHandler.class);
    private static final Pattern ORDER_ID = Pattern.compile("[0-9a-f]{32}");
    private static final HttpField NO_STORE = new PreEncodedHttpField(HttpHeader.CACHE_CONTROL, "no-store");
    private static final HttpField TEXT = new PreEncodedHttpField(HttpHeader.CONTENT_TYPE,
            "text/plain; charset=utf-8");

    private final PullChannels channels;

    /**
     * @param channels the order channels
     */
    public OrdersHandler(PullChannels channels) {
        this.channels = channels;
    }

    @Override
    public InvocationType getInvocationType() {
        return InvocationType.NON_BLOCKING;
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback) throws Exception {
        Exchange exchange = Exchange.of(request);
        Route route = exchange.route();
        String method = route == Route.REMOTE_RUN_ORDERS ? "GET" : "PUT";
        if (!method.equals(request.getMethod())) {
            response.getHeaders().put(HttpHeader.ALLOW, method);
            Problems.write(Problems.plain(HttpStatus.METHOD_NOT_ALLOWED_405, "method not allowed on this route; "
                    + "allowed: " + method, request.getHttpURI().getPath()), response, callback);
            return true;
        }
        try {
            NodeId node = authorize(exchange);
            if (route == Route.REMOTE_RUN_ORDERS) {
                poll(exchange, node, request, response, callback);
            } else {
                report(exchange, node, request, response, callback);
            }
        } catch (PintleException refusal) {
            Problems.write(refusal, request, response, callback);
        }
        return true;
    }

    /** @return the calling node, allowed to use its order channel here */
    private static NodeId authorize(Exchange exchange) {
        exchange.authorize();
        return ((Identification.Authenticated) exchange.caller().identification()).node();
    }

    private void poll(Exchange exchange, NodeId node, Request request, Response response, Callback callback) {
        String waitText = Request.extractQueryParameters(request).getValue(Routes.WAIT);
        int wait = waitText == null ? Routes.MAX_WAIT_SECONDS : Exchange.waitSeconds(waitText);
        PullChannels.Parked parked;
        try {
            parked = channels.park(node, Duration.ofSeconds(wait), new PullChannels.Poll() {
                @Override
                public void order(PullChannels.Order order) {
                    response.setStatus(HttpStatus.OK_200);
                    response.getHeaders().put(TEXT);
                    response.getHeaders().put(NO_STORE);
                    // The node stops its agent when this server stops waiting for it ([remote_run] timeout).
                    response.getHeaders().put(Routes.RUN_TIMEOUT_HEADER, order.timeout().toSeconds());
                    response.write(true, ByteBuffer.wrap((order.line() + "\n").getBytes(StandardCharsets.US_ASCII)),
                            Callback.from(callback::succeeded, failure -> {
                                // Not proof that the node missed it: curl closes its connection as soon as it has
                                // the answer, and over HTTP/2 the last write's callback can fail then, the order
                                // received (seen in NodeOrdersScriptIT). A node that has it reports at once; one
                                // that has not is ended by the order's own deadline.
                                LOG.info("remote run: order {} to node {}: its poll's connection failed after the "
                                        + "order was written ({}); awaiting the node's report", order.id(), node,
                                        failure.toString());
                                callback.failed(failure);
                            }));
                }

                @Override
                public void nothing() {
                    response.setStatus(HttpStatus.NO_CONTENT_204);
                    response.getHeaders().put(NO_STORE);
                    response.write(true, null, callback);
                }

                @Override
                public void replaced() {
                    Problems.write(new PintleException.Conflict("poll-replaced", "a newer poll of node " + node
                            + " replaced this one: one client per node (a second one, or a clone with the same key, "
                            + "must back off)"), request, response, callback);
                }
            });
        } catch (PullChannels.Full full) {
            throw new PintleException.Unavailable("too-many-channels", full.getMessage(), 60);
        }
        if (parked != null) {
            exchange.park();
            request.addFailureListener(failure -> {
                // An answered poll completes its callback with its answer's write: complete it once only.
                if (parked.cancel()) {
                    exchange.closedByClient();
                    callback.failed(failure);
                }
            });
        }
    }

    private void report(Exchange exchange, NodeId node, Request request, Response response, Callback callback) {
        String id = exchange.route().below(request.getHttpURI().getPath());
        PullChannels.Order order = id != null && ORDER_ID.matcher(id).matches() ? channels.awaited(id, node) : null;
        if (order == null) {
            throw new PintleException.NotFound("unknown-order", "no order " + (id == null ? "" : id.length() > 64
                    ? id.substring(0, 64) + "…" : id) + " awaits a report from node " + node + " (unknown, "
                    + "another node's, already reported, or past its deadline)");
        }
        if (!order.claimReport()) {
            throw new PintleException.Conflict("report-in-progress", "another request reports on order " + id
                    + " already");
        }
        exchange.releaseWorker();
        // An agent may be silent for minutes (a package manager): the order's own deadline bounds the report, not
        // the idle timeout. Jetty hands a reader an idle timeout as a transient failure (read() below goes on); once
        // the order has ended, the next idle timeout or the next byte ends the report.
        request.addIdleTimeoutListener(timeout -> order.ended() != null);
        read(request, response, callback, order, order.reader(), new AtomicLong());
    }

    /** Reads the report as it comes, with no thread held between chunks. */
    private void read(Request request, Response response, Callback callback, PullChannels.Order order,
            PullChannels.Reader reader, AtomicLong total) {
        while (true) {
            Content.Chunk chunk = request.read();
            if (chunk == null) {
                request.demand(() -> read(request, response, callback, order, reader, total));
                return;
            }
            RemoteRunEvent ended = order.ended();
            if (ended != null) {
                // Past its deadline (the run's timeout and the report grace) or the server is stopping: its status
                // is given, and nothing more of this report is read.
                chunk.release();
                LOG.info("remote run: the report on order {} from node {} went on after the order ended ({}); cut",
                        order.id(), order.node(), ended.detail());
                Problems.write(new PintleException.TooSlow("order-ended", "order " + order.id() + " ended before "
                        + "its report did (" + ended.detail() + "); the rest of the report was not read"), request,
                        response, callback);
                return;
            }
            if (Content.Chunk.isFailure(chunk)) {
                if (!chunk.isLast()) {
                    // An idle timeout while the order runs: the node is silent, not gone. Read on.
                    continue;
                }
                Throwable failure = chunk.getFailure();
                channels.finish(order, RemoteRunEvent.ERROR, null, false, "node " + order.node()
                        + "'s report was cut before its end (" + failure + ")");
                LOG.info("remote run: the report on order {} from node {} was cut: {}", order.id(), order.node(),
                        failure.toString());
                if (BodyStream.cutByTheClient(failure)) {
                    // The node's doing (a cut connection, a reset stream): a 400, not a server error.
                    Problems.write(BodyStream.bodyIncomplete(), request, response, callback);
                } else {
                    callback.failed(failure);
                }
                return;
            }
            ByteBuffer buffer = chunk.getByteBuffer();
            if (total.addAndGet(buffer.remaining()) > MAX_REPORT_BYTES) {
                chunk.release();
                channels.finish(order, RemoteRunEvent.ERROR, null, false, "node " + order.node() + "'s report is "
                        + "larger than " + (MAX_REPORT_BYTES >> 20) + " MiB");
                Problems.write(new PintleException.TooLarge("report-too-large", "a report is at most "
                        + MAX_REPORT_BYTES + " bytes"), request, response, callback);
                return;
            }
            reader.feed(buffer);
            boolean last = chunk.isLast();
            chunk.release();
            if (last) {
                channels.reported(order, reader.finish());
                response.setStatus(HttpStatus.NO_CONTENT_204);
                response.write(true, null, callback);
                return;
            }
        }
    }

}
