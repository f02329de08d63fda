package io.pintle.server.http.edge;

import io.pintle.server.http.Exchange;
import io.pintle.server.http.Problems;
import io.pintle.server.config.ServerConfig;
import io.pintle.server.metrics.ServerMetrics;
import io.pintle.server.nodes.Identification;
import io.pintle.server.nodes.NodeId;
import io.pintle.server.overload.Gate;
import io.pintle.server.overload.PerAddress;
import io.pintle.server.overload.PerKey;
import io.pintle.server.problem.PintleException;
import io.pintle.server.overload.RetryAfter;
import io.pintle.server.overload.WorkClass;
import io.pintle.server.uploads.UploadKind;
import io.pintle.server.uploads.UploadNames;
import java.net.InetAddress;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.URIUtil;
import org.eclipse.jetty.util.thread.Scheduler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Bounded worker concurrency per {@link WorkClass} on the TLS listener: a request runs when its class has a free
 * worker, waits (suspended, holding no thread) while its class's queue has room, and otherwise gets a 503
 * problem+json with a randomised {@code Retry-After} at once. A request that waits past the queue timeout gets the
 * same 503. A worker is held until the response is complete, so a long download counts for its whole length;
 * a response whose client stops taking bytes is aborted by its {@link ProgressFloor}, which frees the worker. One
 * client address has at most its share ({@code per_address}) of a class running or waiting, and one node at most
 * {@code max_requests_per_node} downloads and uploads, whatever its address ({@link #node}).
 * Requests on the admin listener are never limited: it stays reachable when the TLS listener is saturated.
 *
 * <p>Jetty's {@code QoSHandler} was the alternative: it has one limit per handler, no per-class bookkeeping to
 * expose, and a read-write lock on every request; this is one short lock per class ({@link Gate}).
 */
final class OverloadHandler extends Handler.Wrapper {
    private static final Logger LOG = LoggerFactory.getLogger(OverloadHandler.class);

    private final String limitedConnector;
    private final Map<WorkClass, Gate<Pending>> gates;
    private final Map<WorkClass, PerAddress> shares;
    /** Requests per node, across the classes: nodes behind one address each have their own. */
    private final PerKey<NodeId> perNode;
    private final Duration queueTimeout;
    private final long minResponseBytesPerSecond;
    private final Duration rateCheck;
    private final RetryAfter retryAfter;
    private final ServerMetrics metrics;

    /**
     * @param handler the handler it guards
     * @param limitedConnector the name of the connector whose requests are limited
     * @param limits the configured limits
     * @param metrics where rejections are counted (the gates' gauges are registered here too)
     */
    OverloadHandler(Handler handler, String limitedConnector, ServerConfig.Limits limits, ServerMetrics metrics) {
        super(handler);
        this.limitedConnector = limitedConnector;
        Map<WorkClass, Gate<Pending>> byClass = new EnumMap<>(WorkClass.class);
        Map<WorkClass, PerAddress> shareByClass = new EnumMap<>(WorkClass.class);
        for (WorkClass work : WorkClass.values()) {
            ServerConfig.Pool pool = pool(work, limits);
            byClass.put(work, new Gate<>(pool.concurrency(), pool.queue()));
            shareByClass.put(work, new PerAddress(pool.perAddress()));
        }
        this.gates = Map.copyOf(byClass);
        this.shares = Map.copyOf(shareByClass);
        this.perNode = new PerKey<>(limits.maxRequestsPerNode());
        this.queueTimeout = limits.queueTimeout();
        this.minResponseBytesPerSecond = limits.minResponseBytesPerSecond();
        this.rateCheck = limits.rateCheck();
        this.retryAfter = new RetryAfter(limits.retryAfter(), limits.retryAfterJitter());
        this.metrics = metrics;
        metrics.gates(Map.copyOf(gates));
    }

    /** @return the class's workers and queue: its {@code [limits.<class>]} table */
    private static ServerConfig.Pool pool(WorkClass work, ServerConfig.Limits limits) {
        return switch (work) {
            case FILES -> limits.files();
            case API -> limits.api();
            case UPLOADS -> limits.uploads();
            case WEBAPP -> limits.webapp();
        };
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback) throws Exception {
        if (!limitedConnector.equals(request.getConnectionMetaData().getConnector().getName())) {
            return super.handle(request, response, callback);
        }
        Exchange exchange = Exchange.of(request);
        WorkClass work = exchange.route().work(request.getMethod());
        Gate<Pending> gate = gates.get(work);
        PerAddress share = shares.get(work);
        InetAddress client = exchange.clientAddress();
        if (!share.tryAcquire(client)) {
            refuse(new Pending(work, gate, request, response, callback, null), "client-limit", "client-limit",
                    "this client address already has " + share.limit() + " " + work.label()
                            + " requests running or waiting (limits." + work.label() + ".per_address)");
            return true;
        }
        NodeId node = node(exchange, request, work);
        if (node != null && !perNode.tryAcquire(node)) {
            share.release(client);
            refuse(new Pending(work, gate, request, response, callback, null), "node-busy", "node-busy",
                    "node " + node + " already has " + perNode.limit() + " requests in flight (downloads and "
                            + "uploads, from any address; limits.max_requests_per_node)");
            return true;
        }
        Runnable leave = node == null ? () -> share.release(client) : () -> {
            perNode.release(node);
            share.release(client);
        };
        Pending pending = new Pending(work, gate, request, response, callback, leave);
        Gate.Admission<Pending> admission = gate.enter(pending);
        if (admission instanceof Gate.Admission.Admitted<Pending>) {
            return handleWithWorker(pending);
        }
        if (admission instanceof Gate.Admission.Queued<Pending> queued) {
            Scheduler scheduler = getServer().getScheduler();
            pending.expiry = scheduler.schedule(() -> expire(queued.ticket()), queueTimeout);
            // A client that goes away while waiting (stream reset, connection closed) gives its place back at once.
            request.addFailureListener(failure -> gone(queued.ticket(), failure));
            return true;
        }
        pending.leaveShare();
        refuse(pending, "overloaded", "overloaded",
                "all " + gate.concurrency() + " " + work.label() + " workers are busy and the queue is full");
        return true;
    }

    /**
     * The node a request is counted for, apart from its address: a download's authenticated caller (its client
     * certificate), an upload's node as its file name says ({@link UploadNames}; its credentials are a password
     * every node shares). Other requests, anonymous downloads and uploads whose name names no node count by their
     * address only.
     *
     * @return the node, or null
     */
    private static NodeId node(Exchange exchange, Request request, WorkClass work) {
        UploadKind upload = exchange.route().upload();
        if (upload != null) {
            if (!"PUT".equals(request.getMethod())) {
                return null; // refused by the route's rule (PUT only): nothing to bound
            }
            String below = exchange.route().below(request.getHttpURI().getPath());
            if (below == null || below.isEmpty()) {
                return null;
            }
            try {
                // Decoded as the upload resource's path parameter is, so that an escaped name counts as itself.
                return UploadNames.node(URIUtil.decodePath(below));
            } catch (IllegalArgumentException badEscape) {
                return null; // no node to count; the upload resource refuses the name
            }
        }
        if (work == WorkClass.FILES && exchange.caller() != null
                && exchange.caller().identification() instanceof Identification.Authenticated authenticated) {
            return authenticated.node();
        }
        return null;
    }

    /**
     * Runs the request; its worker goes back to the gate when the response is complete, however it ends, or
     * earlier when the request runs {@link Exchange#releaseWorker} (a request parked until a change).
     */
    private boolean handleWithWorker(Pending pending) throws Exception {
        AtomicBoolean released = new AtomicBoolean();
        Runnable release = () -> {
            if (released.compareAndSet(false, true)) {
                pending.leaveShare();
                release(pending.gate);
            }
        };
        Exchange.of(pending.request).onRelease(release);
        Request.addCompletionListener(pending.request, failure -> release.run());
        if (minResponseBytesPerSecond <= 0) {
            return super.handle(pending.request, pending.response, pending.callback);
        }
        ProgressFloor.Once once = new ProgressFloor.Once(pending.callback);
        Response floored = new ProgressFloor(pending.request, pending.response, once, minResponseBytesPerSecond,
                rateCheck, () -> metrics.connectionClosed("slow-client"));
        return super.handle(pending.request, floored, once);
    }

    private void release(Gate<Pending> gate) {
        Pending next = gate.leave();
        if (next != null) {
            Scheduler.Task expiry = next.expiry;
            if (expiry != null) {
                expiry.cancel();
            }
            // Always dispatch: this runs where the previous response completed (possibly a selector thread).
            next.request.getComponents().getExecutor().execute(() -> resume(next));
        }
    }

    private void resume(Pending pending) {
        try {
            if (!handleWithWorker(pending)) {
                Response.writeError(pending.request, pending.response, pending.callback, HttpStatus.NOT_FOUND_404);
            }
        } catch (Throwable failure) {
            Response.writeError(pending.request, pending.response, pending.callback, failure);
        }
    }

    private void expire(Gate.Ticket<Pending> ticket) {
        Pending pending = ticket.waiter();
        if (pending.gate.abandon(ticket)) {
            pending.leaveShare();
            pending.request.getComponents().getExecutor().execute(() -> refuse(pending, "overloaded", "queue-timeout",
                    "waited " + queueTimeout.toSeconds() + " s for one of the " + pending.gate.concurrency() + " "
                            + pending.work.label() + " workers"));
        }
    }

    private void gone(Gate.Ticket<Pending> ticket, Throwable failure) {
        Pending pending = ticket.waiter();
        if (pending.gate.abandon(ticket)) {
            Scheduler.Task expiry = pending.expiry;
            if (expiry != null) {
                expiry.cancel();
            }
            pending.leaveShare();
            Exchange exchange = Exchange.find(pending.request);
            if (exchange != null) {
                exchange.closedByClient();
            }
            pending.callback.failed(failure);
        }
    }

    /**
     * @param reason the problem's reason code
     * @param counted the metric's reason label (a queue timeout is an {@code overloaded} problem, counted apart)
     */
    private void refuse(Pending pending, String reason, String counted, String detail) {
        metrics.overloaded(pending.work, counted);
        long seconds = retryAfter.nextSeconds();
        LOG.debug("{}: {} {} refused: {}", reason, pending.request.getMethod(), pending.request.getHttpURI(), detail);
        Response response = pending.response;
        // Not a server error: no incident id, nothing to look up in the log.
        Problems.write(new PintleException.Unavailable(reason, detail + "; retry in " + seconds + " s", seconds),
                pending.request, response, pending.callback);
    }

    /** A request and its class, while it waits or runs. */
    private static final class Pending {
        private final WorkClass work;
        private final Gate<Pending> gate;
        private final Request request;
        private final Response response;
        private final Callback callback;
        /** Gives the client address's share (and the node's, if it holds one) back; null when it holds none. */
        private final Runnable share;
        /** The queue timeout, while waiting; set once, just after the request was queued. */
        private volatile Scheduler.Task expiry;

        Pending(WorkClass work, Gate<Pending> gate, Request request, Response response, Callback callback,
                Runnable share) {
            this.work = work;
            this.gate = gate;
            this.request = request;
            this.response = response;
            this.callback = callback;
            this.share = share;
        }

        /** Gives the shares back; called once, where the request stops running or waiting. */
        void leaveShare() {
            if (share != null) {
                share.run();
            }
        }
    }
}
