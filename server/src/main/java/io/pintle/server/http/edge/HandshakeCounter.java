package io.pintle.server.http.edge;

import io.pintle.server.metrics.ServerMetrics;
import org.eclipse.jetty.io.ssl.SslHandshakeListener;

/** Counts TLS handshakes on the node-facing listener, completed (by protocol) and failed. */
final class HandshakeCounter implements SslHandshakeListener {
    private final ServerMetrics metrics;

    HandshakeCounter(ServerMetrics metrics) {
        this.metrics = metrics;
    }

    @Override
    public void handshakeSucceeded(Event event) {
        metrics.handshake(true, event.getSSLEngine().getSession().getProtocol());
    }

    @Override
    public void handshakeFailed(Event event, Throwable failure) {
        metrics.handshake(false, null);
    }
}
