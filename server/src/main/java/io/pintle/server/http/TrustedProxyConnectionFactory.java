package io.pintle.server.http;

import io.pintle.server.acl.Cidr;
import io.pintle.server.metrics.ServerMetrics;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.io.ssl.SslConnection;
import org.eclipse.jetty.io.ssl.SslHandshakeListener;
import org.eclipse.jetty.server.AbstractConnectionFactory;
import org.eclipse.jetty.server.ConnectionFactory;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.ProxyConnectionFactory;
import org.eclipse.jetty.server.SslConnectionFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node-facing listener's first connection factory when {@code [general] proxy_protocol_from} lists load
 * balancers (HAProxy in TCP mode, TLS end to end): it picks, by the address the connection comes from, how the
 * connection starts.
 * <ul>
 *   <li>From a listed address, a PROXY protocol header is <em>required</em> (v2, HAProxy's {@code send-proxy-v2},
 *       or the v1 text line of {@code send-proxy}), read by Jetty's {@link ProxyConnectionFactory}; the TLS
 *       connection then runs on Jetty's {@link ProxyConnectionFactory.ProxyEndPoint}, whose remote address is the
 *       header's source, so every reader of the address (network rules, per-address limits, {@code ?wait}
 *       waiters, the access log, log lines) sees the agent's. A connection whose first bytes are not a PROXY
 *       header is closed (Jetty's own factory would pass it on as if direct, which would make the proxy's address
 *       the client's); one whose header is malformed or cut short is closed by Jetty. A {@code LOCAL} header (a
 *       proxy's own health check) keeps the proxy's address, as the protocol says.</li>
 *   <li>From any other address the bytes go straight to the TLS factory, exactly as without this factory: no
 *       header is accepted, so a client cannot choose its address; a header it sends fails the TLS handshake,
 *       logged at debug.</li>
 * </ul>
 * Refusals are counted ({@code pintle_connections_closed_total}, reasons {@code proxy-header-missing} and {@code
 * proxy-header-invalid}) and logged at most once per {@link #LOG_PERIOD_SECONDS} per reason, with the count of those
 * not logged: a proxy set up without {@code send-proxy-v2} would otherwise log a line per agent connection.
 */
final class TrustedProxyConnectionFactory extends AbstractConnectionFactory {
    /** This factory's protocol name in the connector's list; never negotiated, only the connector's default. */
    static final String PROTOCOL = "pintle-proxy-protocol";
    /** The protocol name of {@link #proxiedTls()}, which Jetty's header reader hands the connection to. */
    static final String PROXIED_TLS = "pintle-proxied-tls";
    /** At most one log line per refusal reason in this many seconds. */
    static final long LOG_PERIOD_SECONDS = 10;

    private static final Logger LOG = LoggerFactory.getLogger(TrustedProxyConnectionFactory.class);

    private final List<Cidr> proxies;
    private final SslConnectionFactory tls;
    private final RequiredHeader header;
    private final ConnectionFactory proxiedTls = new ProxiedTls();
    private final ServerMetrics metrics;
    private final LogBudget missingLog = new LogBudget();
    private final LogBudget invalidLog = new LogBudget();

    /**
     * @param proxies the addresses that must send a PROXY header (not empty)
     * @param tls the TLS factory that follows the header (and serves every other address directly)
     * @param metrics where refused connections are counted
     */
    TrustedProxyConnectionFactory(List<Cidr> proxies, SslConnectionFactory tls, ServerMetrics metrics) {
        super(PROTOCOL);
        if (proxies.isEmpty()) {
            throw new IllegalArgumentException("no proxy address");
        }
        this.proxies = List.copyOf(proxies);
        this.tls = tls;
        this.metrics = metrics;
        this.header = new RequiredHeader(PROXIED_TLS);
        // Jetty's v1 and v2 readers are the header factory's beans: their connections get this listener, which
        // sees those that end before the header was read.
        Connection.Listener invalid = new InvalidHeaderWatch();
        for (ConnectionFactory reader : header.getBeans(ConnectionFactory.class)) {
            if (reader instanceof AbstractConnectionFactory factory) {
                factory.addEventListener(invalid);
            }
        }
        installBean(header);
    }

    /**
     * @return the factory Jetty's header reader hands a connection to once the header is read: TLS, for a source
     *     that is an IP address (the header can also carry a Unix socket path); to be added to the connector
     */
    ConnectionFactory proxiedTls() {
        return proxiedTls;
    }

    @Override
    public Connection newConnection(Connector connector, EndPoint endPoint) {
        if (isProxy(endPoint.getRemoteSocketAddress())) {
            return header.newConnection(connector, endPoint);
        }
        Connection connection = tls.newConnection(connector, endPoint);
        if (connection instanceof SslConnection ssl && LOG.isDebugEnabled()) {
            ssl.addHandshakeListener(new UnlistedHandshakeWatch(endPoint.getRemoteSocketAddress()));
        }
        return connection;
    }

    /**
     * @param remote a connection's network peer
     * @return whether it is a listed proxy
     */
    boolean isProxy(SocketAddress remote) {
        if (!(remote instanceof InetSocketAddress inet) || inet.getAddress() == null) {
            return false;
        }
        InetAddress address = inet.getAddress();
        for (Cidr proxy : proxies) {
            if (proxy.contains(address)) {
                return true;
            }
        }
        return false;
    }

    /** Jetty's PROXY v1/v2 reader, but a connection that does not start with a header is closed, not passed on. */
    private final class RequiredHeader extends ProxyConnectionFactory {
        RequiredHeader(String nextProtocol) {
            super(nextProtocol);
        }

        @Override
        protected void nextProtocol(Connector connector, EndPoint endPoint, ByteBuffer buffer) {
            metrics.connectionClosed(ServerMetrics.PROXY_HEADER_MISSING);
            long skipped = missingLog.take();
            if (skipped >= 0) {
                LOG.warn("closed a connection from {}, an address of general.proxy_protocol_from, that did not "
                        + "start with a PROXY protocol header (is the proxy set to send-proxy-v2?){}",
                        endPoint.getRemoteSocketAddress(), LogBudget.since(skipped));
            }
            endPoint.close(new IOException("no PROXY protocol header from " + endPoint.getRemoteSocketAddress()));
        }
    }

    /** TLS after a header, for an IP source only: every reader of the address expects one. */
    private final class ProxiedTls extends AbstractConnectionFactory {
        ProxiedTls() {
            super(PROXIED_TLS);
        }

        @Override
        public Connection newConnection(Connector connector, EndPoint endPoint) {
            SocketAddress remote = endPoint.getRemoteSocketAddress();
            if (!(remote instanceof InetSocketAddress inet) || inet.getAddress() == null) {
                // Jetty's reader logs this and closes the connection; InvalidHeaderWatch counts it.
                throw new IllegalStateException("the PROXY header's source is not an IP address: " + remote);
            }
            return tls.newConnection(connector, endPoint);
        }
    }

    /**
     * Sees the end of Jetty's v1/v2 header connections: one that ends with its network connection closed never
     * handed over to TLS (an upgrade closes it with the network connection still open). The proxy's address is
     * taken at the start: a closed socket has none.
     */
    private final class InvalidHeaderWatch implements Connection.Listener {
        private final Map<Connection, SocketAddress> open = new ConcurrentHashMap<>();

        @Override
        public void onOpened(Connection connection) {
            SocketAddress remote = connection.getEndPoint().getRemoteSocketAddress();
            if (remote != null) {
                open.put(connection, remote);
            }
        }

        @Override
        public void onClosed(Connection connection) {
            SocketAddress remote = open.remove(connection);
            if (connection.getEndPoint().isOpen()) {
                return;
            }
            metrics.connectionClosed(ServerMetrics.PROXY_HEADER_INVALID);
            long skipped = invalidLog.take();
            if (skipped >= 0) {
                LOG.warn("closed a connection from {}, an address of general.proxy_protocol_from, before a "
                        + "complete PROXY protocol header: malformed (Jetty's 'Proxy v1/v2 error' line says why), "
                        + "cut short, or none within the idle timeout{}", remote, LogBudget.since(skipped));
            }
        }
    }

    /** Debug only: says why a client that is not a listed proxy may have failed its handshake. */
    private static final class UnlistedHandshakeWatch implements SslHandshakeListener {
        private final SocketAddress remote;

        UnlistedHandshakeWatch(SocketAddress remote) {
            this.remote = remote;
        }

        @Override
        public void handshakeFailed(Event event, Throwable failure) {
            LOG.debug("TLS handshake from {} failed ({}); it is not in general.proxy_protocol_from, so a PROXY "
                    + "header it sends is not read but fails the handshake", remote, failure.toString());
        }
    }

    /** At most one log line per period; those refused are counted and reported by the next one. */
    private static final class LogBudget {
        private final AtomicLong next = new AtomicLong(Long.MIN_VALUE);
        private final AtomicLong skipped = new AtomicLong();

        /** @return the lines skipped since the last one if this one may be logged, else -1 */
        long take() {
            long now = System.nanoTime();
            long due = next.get();
            if ((due == Long.MIN_VALUE || now - due >= 0)
                    && next.compareAndSet(due, now + TimeUnit.SECONDS.toNanos(LOG_PERIOD_SECONDS))) {
                return skipped.getAndSet(0);
            }
            skipped.incrementAndGet();
            return -1;
        }

        static String since(long skipped) {
            return skipped == 0 ? "" : " (" + skipped + " more since the last such line)";
        }
    }
}
