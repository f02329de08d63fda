package io.pintle.server.http;

import io.pintle.api.Routes;
import io.pintle.server.access.Access;
import io.pintle.server.access.Credentials;
import io.pintle.server.access.Route;
import io.pintle.server.access.Rule;
import io.pintle.server.acl.Caller;
import io.pintle.server.acl.Decision;
import io.pintle.server.problem.PintleException;
import io.pintle.server.reload.ServerSnapshot;
import io.pintle.server.tls.PeerCertificates;
import jakarta.ws.rs.container.ContainerRequestContext;
import java.net.InetAddress;
import java.time.Clock;
import java.util.concurrent.atomic.AtomicReference;
import org.eclipse.jetty.server.Request;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One request, as Pintle sees it from the edge to the access log: the snapshot it runs on (read once, when the
 * request arrived), its route, the caller, and what happened to it (the access decision, the incident id of a
 * server error). {@code ExchangeHandler} creates it before anything else runs and every later step is handed it:
 * the overload gate installs the worker release, the file pipeline decides and answers, Jersey's resources read it
 * from their request's properties, and {@code RequestObserver} reads it when the response is complete.
 *
 * <p>Written by the threads that run the request one after another, read by the one that logs it after the
 * response completed: the mutable fields are volatile, and the worker release is given back once.
 */
public final class Exchange {
    /** The Jetty request attribute, and the Jersey request property, that holds it. */
    public static final String ATTRIBUTE = Exchange.class.getName();

    private static final Logger LOG = LoggerFactory.getLogger(Exchange.class);
    private static final Runnable NOTHING = () -> { };

    /**
     * The access log's and the metrics' status of a request whose client went away before it was answered (a parked
     * wait, an order poll, a request queued for a worker): nginx's 499, "client closed request". No response
     * carries it.
     */
    public static final int CLIENT_CLOSED = 499;

    private final ServerSnapshot snapshot;
    private final Route route;
    private final Caller caller;
    private final PeerCertificates peer;
    private final Request request;
    private final AtomicReference<Runnable> release = new AtomicReference<>(NOTHING);
    private volatile Decision decision;
    private volatile String incident;
    private volatile boolean closedByClient;

    /**
     * @param snapshot the snapshot read for this request
     * @param route its route
     * @param caller address and identification, or null on the admin listener
     * @param peer the TLS facts, or null on the admin listener
     * @param request the Jetty request as it arrived
     */
    public Exchange(ServerSnapshot snapshot, Route route, Caller caller, PeerCertificates peer, Request request) {
        this.snapshot = snapshot;
        this.route = route;
        this.caller = caller;
        this.peer = peer;
        this.request = request;
    }

    /**
     * @param request a Jetty request, or a wrapper of one
     * @return its exchange, or null for a request Jetty refused before any handler ran
     */
    public static Exchange find(Request request) {
        return request.getAttribute(ATTRIBUTE) instanceof Exchange exchange ? exchange : null;
    }

    /**
     * @param request a Jetty request that went through {@code ExchangeHandler}
     * @return its exchange
     */
    public static Exchange of(Request request) {
        Exchange exchange = find(request);
        if (exchange == null) {
            throw new IllegalStateException("no exchange for " + request.getHttpURI());
        }
        return exchange;
    }

    /**
     * @param context a Jersey request
     * @return its exchange
     */
    public static Exchange of(ContainerRequestContext context) {
        if (context.getProperty(ATTRIBUTE) instanceof Exchange exchange) {
            return exchange;
        }
        throw new IllegalStateException("no exchange for " + context.getUriInfo().getPath());
    }

    /** @return the snapshot this request runs on */
    public ServerSnapshot snapshot() {
        return snapshot;
    }

    /** @return its route */
    public Route route() {
        return route;
    }

    /** @return the caller (address and identification); null on the admin listener */
    public Caller caller() {
        return caller;
    }

    /** @return the client's address (what per-address limits count); the loopback address on the admin listener */
    public InetAddress clientAddress() {
        return caller != null ? caller.address() : InetAddress.getLoopbackAddress();
    }

    /** @return the TLS facts (protocol, client certificate); null on the admin listener */
    public PeerCertificates peer() {
        return peer;
    }

    /** @return the Jetty request as it arrived (for its executor, its idle timeout, its log lines) */
    public Request request() {
        return request;
    }

    /** @param value the access decision, for the access log and the denial counter */
    public void decision(Decision value) {
        decision = value;
    }

    /**
     * Decides the request by its route's rule ({@link Access#decide}) with no credentials, records the decision
     * for the access log and, when it denies, logs it and refuses the request.
     *
     * @throws PintleException.AccessDenied when it denies
     * @throws PintleException.NotFound when the request names nothing there is
     */
    public void authorize() {
        authorize(Credentials.NONE);
    }

    /**
     * As {@link #authorize()}, with what the request carries for the rules (an upload's credentials, the webapp's
     * API version).
     *
     * @param credentials the request's credentials
     * @throws PintleException.Unauthorized when it denies for want of credentials
     */
    public void authorize(Credentials credentials) {
        authorize(decide(snapshot, caller, credentials), caller);
    }

    /**
     * @param on a snapshot (this request's, or the current one for a request woken from a change wait)
     * @param who the caller as that snapshot identifies it
     * @param credentials the request's credentials
     * @return the decision of this request's route's rule ({@link Access#decide}), on that snapshot
     */
    public Decision decide(ServerSnapshot on, Caller who, Credentials credentials) {
        return Access.decide(route.rule(), request.getMethod(), below(), on, who, peer != null ? peer.leaf() : null,
                credentials);
    }

    /** @return the path below the route's prefix, as {@link Access#decide} reads it for the route's rule */
    private String below() {
        if (route.rule() == Rule.WEBAPP) {
            return request.getHttpURI().getCanonicalPath();
        }
        return route.below(request.getHttpURI().getPath());
    }

    /**
     * As {@link #authorize(Decision)}, for a decision taken for this request's peer as another snapshot sees it
     * (a request woken from a change wait).
     *
     * @param value the access decision
     * @param who the caller it was taken for
     * @throws PintleException.AccessDenied when it denies
     */
    public void authorize(Decision value, Caller who) {
        if (value instanceof Decision.Deny deny && deny.absent()) {
            // As a missing file: no decision to log, nothing said beyond "not found".
            throw new PintleException.NotFound(deny.reason(), deny.detail());
        }
        if (who == null) {
            // The admin listener: its one door is this machine; its requests carry no decision in the access log.
            if (value instanceof Decision.Deny deny) {
                throw new PintleException.AccessDenied(deny.reason(), deny.detail());
            }
            return;
        }
        decision = value;
        if (value instanceof Decision.Deny deny) {
            LOG.info("denied {} {} to {} ({}): {}", request.getMethod(), request.getHttpURI().getPath(),
                    who.address().getHostAddress(), who.describe(), deny.detail());
            if (deny.realm() != null) {
                throw new PintleException.Unauthorized(deny.reason(), deny.detail(), deny.realm());
            }
            throw new PintleException.AccessDenied(deny.reason(), deny.detail());
        }
    }

    /**
     * @param address the peer's address
     * @param peer the peer's TLS facts
     * @param snapshot the snapshot that identifies it
     * @param clock the clock for certificate validity
     * @return who the caller is on that snapshot
     */
    public static Caller identify(InetAddress address, PeerCertificates peer, ServerSnapshot snapshot, Clock clock) {
        return new Caller(address, snapshot.trust().identify(snapshot.nodes(), peer.client(), clock.instant()));
    }

    /** @return the access decision, or null for routes without one */
    public Decision decision() {
        return decision;
    }

    /** @param value the incident id of the server error this request got */
    public void incident(String value) {
        incident = value;
    }

    /** @return the incident id of a server error, or null */
    public String incident() {
        return incident;
    }

    /**
     * The client went away while the request waited for an answer (its HTTP/2 stream reset, its connection closed):
     * logged and counted as {@link #CLIENT_CLOSED}, not as the server error Jetty records for a request that ends
     * unanswered.
     */
    public void closedByClient() {
        closedByClient = true;
    }

    /** @return the status to log and count: {@link #CLIENT_CLOSED} when the client went away, else {@code status} */
    public int loggedStatus(int status) {
        return closedByClient ? CLIENT_CLOSED : status;
    }

    /**
     * @param value gives this request's worker back to its gate (run once, by {@link #releaseWorker} or when
     *     the response completes)
     */
    public void onRelease(Runnable value) {
        release.set(value);
    }

    /** Gives the request's worker back now (a request parked until a change holds none); later calls do nothing. */
    public void releaseWorker() {
        release.getAndSet(NOTHING).run();
    }

    /**
     * The request waits for an event with no bytes flowing: it holds no worker, and its connection's idle timeout
     * must not fail it (the wait itself is bounded).
     */
    public void park() {
        releaseWorker();
        request.addIdleTimeoutListener(timeout -> false);
    }

    /**
     * @param text a {@code wait} value
     * @return the seconds, 0 to {@link Routes#MAX_WAIT_SECONDS}
     */
    public static int waitSeconds(String text) {
        if (text == null || text.isEmpty()) {
            return 0;
        }
        try {
            int seconds = Integer.parseInt(text);
            if (seconds >= 0 && seconds <= Routes.MAX_WAIT_SECONDS) {
                return seconds;
            }
        } catch (NumberFormatException notANumber) {
            // Reported below.
        }
        throw new PintleException.InvalidRequest("bad-wait", "'" + Routes.WAIT + "' must be a whole number of "
                + "seconds from 0 to " + Routes.MAX_WAIT_SECONDS + ", not '" + Problems.printable(text) + "'");
    }
}
