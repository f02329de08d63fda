package io.pintle.server.http.edge;

import io.pintle.server.http.Exchange;
import io.pintle.server.access.Route;
import io.pintle.server.reload.ServerSnapshot;
import io.pintle.server.reload.SnapshotHolder;
import io.pintle.server.tls.PeerCertificates;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.time.Clock;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * The edge: the first handler of every request on both listeners. It reads the snapshot once, finds the request's
 * {@link Route}, establishes on the TLS listener who the caller is (address, and the node its client certificate
 * authenticates, or why none), and hands the {@link Exchange} it made to everything after it.
 */
final class ExchangeHandler extends Handler.Wrapper {
    private final SnapshotHolder snapshots;
    private final Clock clock;
    private final String adminConnector;

    /**
     * @param next the rest of the handler tree
     * @param snapshots the live snapshot
     * @param clock the clock for certificate validity
     * @param adminConnector the name of the admin listener's connector
     */
    ExchangeHandler(Handler next, SnapshotHolder snapshots, Clock clock, String adminConnector) {
        super(next);
        this.snapshots = snapshots;
        this.clock = clock;
        this.adminConnector = adminConnector;
    }

    @Override
    public InvocationType getInvocationType() {
        return InvocationType.NON_BLOCKING;
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback) throws Exception {
        boolean admin = adminConnector.equals(request.getConnectionMetaData().getConnector().getName());
        ServerSnapshot snapshot = snapshots.current();
        Route route = Route.of(admin, request.getHttpURI().getPath());
        Exchange exchange;
        if (admin) {
            exchange = new Exchange(snapshot, route, null, null, request);
        } else {
            PeerCertificates peer = PeerCertificates.of(request);
            SocketAddress remote = request.getConnectionMetaData().getRemoteSocketAddress();
            if (!(remote instanceof InetSocketAddress inet) || inet.getAddress() == null) {
                throw new IllegalStateException("request without an IP peer address: " + remote);
            }
            exchange = new Exchange(snapshot, route, Exchange.identify(inet.getAddress(), peer, snapshot, clock), peer,
                    request);
        }
        request.setAttribute(Exchange.ATTRIBUTE, exchange);
        return super.handle(request, response, callback);
    }
}
