package io.pintle.server.http.edge;

import io.pintle.server.acl.Cidr;
import io.pintle.server.metrics.ServerMetrics;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.eclipse.jetty.io.AbstractConnection;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.io.ssl.SslConnection;
import org.eclipse.jetty.io.ssl.SslHandshakeListener;
import org.eclipse.jetty.server.AbstractConnectionFactory;
import org.eclipse.jetty.server.ConnectionFactory;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.DetectorConnectionFactory;
import org.eclipse.jetty.server.ProxyConnectionFactory;
import org.eclipse.jetty.server.SslConnectionFactory;
import org.eclipse.jetty.util.BufferUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node-facing listener's first connection factory when {@code [general] proxy_protocol_from} lists load
 * balancers (HAProxy in TCP mode, TLS end to end): it picks, by the address the connection comes from, how the
 * connection starts.
 * <ul>
 *   <li>From a listed address, a PROXY protocol header is <em>required</em> (v2, HAProxy's {@code send-proxy-v2},
 *       read by Jetty's reader, or the v1 text line of {@code send-proxy}, read by {@link ProxyV1Line}); the TLS
 *       connection then runs on Jetty's {@link ProxyConnectionFactory.ProxyEndPoint}, whose remote address is the
 *       header's source, so every reader of the address (network rules, per-address limits, {@code ?wait}
 *       waiters, the access log, log lines) sees the agent's. A connection whose first bytes are not a PROXY
 *       header is closed (Jetty's own factory would pass it on as if direct, which would make the proxy's address
 *       the client's); one whose header is malformed or cut short is closed. No header is ever resolved: v2
 *       carries address bytes, and a v1 line must carry IP literals (Jetty's v1 reader would look a host name up
 *       in DNS, so it is never used). A {@code LOCAL} header, or v1's {@code UNKNOWN} (a proxy's own health
 *       check), keeps the proxy's address, as the protocol says.</li>
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
    private static final byte[] V1_SIGNATURE = "PROXY".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] V2_SIGNATURE =
            {0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A};

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
        StrictV1 v1 = new StrictV1();
        AbstractConnectionFactory v2 = jettyV2(PROXIED_TLS);
        this.header = new RequiredHeader(v1, (ConnectionFactory.Detecting) v2);
        // The readers' connections get this listener, which sees those that end before the header was read.
        Connection.Listener invalid = new InvalidHeaderWatch();
        v1.addEventListener(invalid);
        v2.addEventListener(invalid);
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

    /**
     * @param next the protocol that follows the header
     * @return Jetty's v2 reader alone, taken from its {@link ProxyConnectionFactory} (which pairs it with its v1
     *     reader, a private class): the one that recognizes the v2 signature
     */
    private static AbstractConnectionFactory jettyV2(String next) {
        ProxyConnectionFactory jetty = new ProxyConnectionFactory(next);
        for (ConnectionFactory.Detecting reader : jetty.getBeans(ConnectionFactory.Detecting.class)) {
            if (reader.detect(ByteBuffer.wrap(V2_SIGNATURE)) == ConnectionFactory.Detecting.Detection.RECOGNIZED
                    && reader instanceof AbstractConnectionFactory factory) {
                jetty.removeBean(factory);
                return factory;
            }
        }
        throw new IllegalStateException("Jetty's ProxyConnectionFactory has no v2 reader");
    }

    /** The v1 and v2 readers, but a connection that does not start with a header is closed, not passed on. */
    private final class RequiredHeader extends DetectorConnectionFactory {
        RequiredHeader(ConnectionFactory.Detecting v1, ConnectionFactory.Detecting v2) {
            super(v1, v2);
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

    /** Recognizes a v1 line by its first bytes; {@link V1Header} reads it. */
    private final class StrictV1 extends AbstractConnectionFactory implements ConnectionFactory.Detecting {
        StrictV1() {
            super("proxy-v1");
        }

        @Override
        public Detection detect(ByteBuffer buffer) {
            int at = buffer.position();
            for (int i = 0; i < V1_SIGNATURE.length; i++) {
                if (at + i >= buffer.limit()) {
                    return Detection.NEED_MORE_BYTES;
                }
                if (buffer.get(at + i) != V1_SIGNATURE[i]) {
                    return Detection.NOT_RECOGNIZED;
                }
            }
            return Detection.RECOGNIZED;
        }

        @Override
        public Connection newConnection(Connector connector, EndPoint endPoint) {
            return configure(new V1Header(endPoint, connector), connector, endPoint);
        }
    }

    /**
     * Reads a v1 line up to its LF (at most {@link ProxyV1Line#MAX_LENGTH} bytes), parses it, and hands the
     * connection with the bytes after the line to TLS on a {@link ProxyConnectionFactory.ProxyEndPoint}; a line
     * that does not parse closes the connection, and {@link #refusal} says why.
     */
    private final class V1Header extends AbstractConnection implements Connection.UpgradeFrom, Connection.UpgradeTo {
        private final Connector connector;
        /** Flush mode: the bytes read and not yet consumed (the detector's, then the network's). */
        private ByteBuffer buffer = BufferUtil.allocate(ProxyV1Line.MAX_LENGTH);
        private volatile String refusal;

        V1Header(EndPoint endPoint, Connector connector) {
            super(endPoint, connector.getExecutor());
            this.connector = connector;
        }

        @Override
        public void onUpgradeTo(ByteBuffer received) {
            // The detector hands over what it read: the line, and maybe the client's first TLS bytes after it.
            if (received.remaining() > BufferUtil.space(buffer)) {
                ByteBuffer larger = BufferUtil.allocate(buffer.remaining() + received.remaining());
                BufferUtil.append(larger, buffer);
                buffer = larger;
            }
            BufferUtil.append(buffer, received);
        }

        @Override
        public ByteBuffer onUpgradeFrom() {
            if (!buffer.hasRemaining()) {
                return null;
            }
            ByteBuffer rest = ByteBuffer.allocate(buffer.remaining());
            rest.put(buffer).flip();
            return rest;
        }

        @Override
        public void onOpen() {
            super.onOpen();
            try {
                if (!readLine()) {
                    fillInterested();
                }
            } catch (RuntimeException e) {
                getEndPoint().close(e);
            }
        }

        @Override
        public void onFillable() {
            try {
                while (!readLine()) {
                    int filled = getEndPoint().fill(buffer);
                    if (filled < 0) {
                        getEndPoint().close(new EOFException("PROXY v1 line cut short"));
                        return;
                    }
                    if (filled == 0) {
                        fillInterested();
                        return;
                    }
                }
            } catch (IOException | RuntimeException e) {
                getEndPoint().close(e);
            }
        }

        /** @return true when the line was read and the connection handed over or closed; false for more bytes */
        private boolean readLine() {
            int end = -1;
            int bound = Math.min(buffer.limit(), buffer.position() + ProxyV1Line.MAX_LENGTH);
            for (int i = buffer.position(); i < bound; i++) {
                if (buffer.get(i) == '\n') {
                    end = i;
                    break;
                }
            }
            if (end < 0) {
                if (buffer.remaining() >= ProxyV1Line.MAX_LENGTH) {
                    refuse("no LF within " + ProxyV1Line.MAX_LENGTH + " bytes");
                    return true;
                }
                return false;
            }
            byte[] bytes = new byte[end - buffer.position() + 1];
            buffer.get(bytes);
            ProxyV1Line line;
            try {
                line = ProxyV1Line.parse(bytes);
            } catch (IllegalArgumentException e) {
                refuse(e.getMessage());
                return true;
            }
            EndPoint endPoint = getEndPoint();
            EndPoint proxied = line.unknown()
                    ? new ProxyConnectionFactory.ProxyEndPoint(endPoint, endPoint.getLocalSocketAddress(),
                            endPoint.getRemoteSocketAddress())
                    : new ProxyConnectionFactory.ProxyEndPoint(endPoint, line.destination(), line.source());
            endPoint.upgrade(proxiedTls.newConnection(connector, proxied));
            return true;
        }

        private void refuse(String why) {
            refusal = "PROXY v1 line refused: " + why;
            getEndPoint().close(new IOException(refusal));
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
                String refusal = connection instanceof V1Header v1 ? v1.refusal : null;
                LOG.warn("closed a connection from {}, an address of general.proxy_protocol_from, before a "
                        + "complete PROXY protocol header: {}{}", remote, refusal != null ? refusal
                                : "malformed (Jetty's 'Proxy v2 error' line says why), cut short, or none within "
                                        + "the idle timeout", LogBudget.since(skipped));
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
