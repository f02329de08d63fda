package io.pintle.server.http;

import io.pintle.server.acl.Caller;
import io.pintle.server.reload.ServerSnapshot;
import io.pintle.server.reload.SnapshotHolder;
import io.pintle.server.tls.PeerCertificates;
import jakarta.annotation.Priority;
import jakarta.inject.Inject;
import jakarta.inject.Provider;
import jakarta.ws.rs.Priorities;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerRequestFilter;
import jakarta.ws.rs.container.PreMatching;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.time.Clock;
import org.eclipse.jetty.server.Request;

/**
 * Establishes, once per request, the snapshot the request runs on and who the caller is (address and the node
 * its client certificate authenticates, or why none). Runs before matching, so every route, including unknown
 * ones, sees the same state.
 */
@PreMatching
@Priority(Priorities.AUTHENTICATION)
final class PeerIdentityFilter implements ContainerRequestFilter {
    private final SnapshotHolder snapshots;
    private final Clock clock;

    // The Jetty request is request-scoped; Jersey's jetty-http container only offers it through injection.
    @Inject
    private Provider<Request> jettyRequest;

    PeerIdentityFilter(SnapshotHolder snapshots, Clock clock) {
        this.snapshots = snapshots;
        this.clock = clock;
    }

    @Override
    public void filter(ContainerRequestContext context) {
        Request request = jettyRequest.get();
        // DirectFileHandler may have identified the caller already, on the snapshot this request runs on.
        RequestState state = request.getAttribute(RequestState.PROPERTY) instanceof RequestState established
                ? established
                : identify(request, snapshots.current(), clock);
        context.setProperty(RequestState.PROPERTY, state);
        // The access log reads who the caller was from the request itself, never from a later snapshot.
        AccessRecord record = AccessRecord.of(request);
        record.caller(state.caller());
        context.setProperty(AccessRecord.ATTRIBUTE, record);
    }

    /**
     * @param request a Jetty request on the TLS listener
     * @param snapshot the snapshot the request runs on
     * @param clock the clock for certificate validity
     * @return who the caller is on that snapshot
     * @throws IllegalStateException when the request has no IP peer address
     */
    static RequestState identify(Request request, ServerSnapshot snapshot, Clock clock) {
        PeerCertificates peer = PeerCertificates.of(request);
        SocketAddress remote = request.getConnectionMetaData().getRemoteSocketAddress();
        if (!(remote instanceof InetSocketAddress inet) || inet.getAddress() == null) {
            throw new IllegalStateException("request without an IP peer address: " + remote);
        }
        Caller caller = new Caller(inet.getAddress(), snapshot.nodes().identifyClient(peer.client(), clock.instant()));
        return new RequestState(snapshot, caller, peer);
    }
}
