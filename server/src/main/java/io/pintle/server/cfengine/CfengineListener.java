package io.pintle.server.cfengine;

import io.pintle.server.config.ServerConfig;
import io.pintle.server.metrics.ServerMetrics;
import io.pintle.server.reload.SnapshotHolder;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.interfaces.RSAPublicKey;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import javax.net.ssl.SSLEngine;
import org.eclipse.jetty.io.AbstractConnection;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.io.ssl.SslHandshakeListener;
import org.eclipse.jetty.server.AbstractConnectionFactory;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.DetectorConnectionFactory;
import org.eclipse.jetty.server.NetworkConnectionLimit;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.SslConnectionFactory;
import org.eclipse.jetty.util.ssl.SslContextFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * CFEngine's door on the server: a listener ({@code [cfengine] listen}) whose connections go, in order, through
 * the address checks ({@code allowconnects}: the allowed networks of the live snapshot; a cap per address and in
 * all, as {@code maxconnections}), the protocol detection (a TLS ClientHello, or else the classic protocol, refused
 * with a log line as Rudder's {@code allowlegacyconnects => {}}), TLS with the server's RSA key and a required
 * client certificate, then {@link CfengineConnection}.
 */
public final class CfengineListener {
    /** The connector's name, in metrics ({@code pintle_connections{listener="cfengine"}}) and logs. */
    public static final String CONNECTOR = "cfengine";
    private static final Logger LOG = LoggerFactory.getLogger(CfengineListener.class);
    private static final String PROTOCOL = "cfengine";
    private static final String CLASSIC = "cfengine-classic";

    private CfengineListener() {}

    /**
     * Adds the listener to a server; nothing when {@code [cfengine] listen} is not set.
     *
     * @param server the server, not started
     * @param config the configuration
     * @param snapshots the live snapshot
     * @param door what the connections share
     * @return the connector, or null when off
     * @throws GeneralSecurityException when the key cannot be used for TLS
     * @throws IOException naming the key file when it cannot be read or is not RSA
     */
    public static ServerConnector install(Server server, ServerConfig config, SnapshotHolder snapshots,
            CfengineDoor door) throws GeneralSecurityException, IOException {
        ServerConfig.Cfengine cfengine = config.cfengine();
        if (!cfengine.enabled()) {
            return null;
        }
        KeyPair key = CfengineKey.readPrivate(cfengine.key());
        io.pintle.server.tls.KeyFilePermissions.check(cfengine.key(), config.tls().allowWorldReadableKey());
        SslContextFactory.Server tls = io.pintle.server.tls.TlsContextFactory.cfengine(key, cfengine.protocols(),
                config.tls().provider());
        ServerMetrics metrics = door.metrics();
        Duration identificationTimeout = config.limits().headerTimeout();

        SslConnectionFactory ssl = new SslConnectionFactory(tls, PROTOCOL);
        ssl.addBean(new SslHandshakeListener() {
            @Override
            public void handshakeFailed(Event event, Throwable failure) {
                metrics.cfengineRefused("handshake");
                SSLEngine engine = event.getSSLEngine();
                LOG.debug("CFEngine TLS handshake with {} failed: {}", engine.getPeerHost(), failure.toString());
            }
        });
        ClassicRefusal classic = new ClassicRefusal(metrics);
        DetectorConnectionFactory detector = new DetectorConnectionFactory(ssl) {
            @Override
            protected void nextProtocol(Connector connector, EndPoint endPoint, ByteBuffer buffer) {
                // Not a TLS ClientHello: CFEngine's classic protocol (its CAUTH), or anything else.
                upgradeToConnectionFactory(classic, connector, endPoint);
            }
        };
        AbstractConnectionFactory agents = new AbstractConnectionFactory(PROTOCOL) {
            @Override
            public Connection newConnection(Connector connector, EndPoint endPoint) {
                return configure(new CfengineConnection(endPoint, connector.getExecutor(), door), connector,
                        endPoint);
            }
        };
        Gate connector = new Gate(server, cfengine.maxConnectionsPerAddress(), identificationTimeout, snapshots,
                metrics, detector, classic, ssl, agents);
        connector.setName(CONNECTOR);
        connector.setHost(cfengine.listen().host());
        connector.setPort(cfengine.listen().port());
        connector.setIdleTimeout(cfengine.idleTimeout().toMillis());
        connector.setAcceptQueueSize(config.limits().acceptQueue());
        server.addBean(new NetworkConnectionLimit(cfengine.maxConnections(), connector));
        server.addConnector(connector);
        LOG.info("CFEngine protocol on {} (TLS {}, key {} {})", cfengine.listen(), cfengine.protocols(),
                cfengine.key(), CfengineKey.md5((RSAPublicKey) key.getPublic()));
        return connector;
    }

    /**
     * The connector, with {@code allowconnects} and the per-address cap applied as a connection is accepted,
     * before a byte of it is read.
     */
    private static final class Gate extends ServerConnector {
        private final int perAddress;
        private final Duration identificationTimeout;
        private final SnapshotHolder snapshots;
        private final ServerMetrics metrics;
        /** Open connections per address: changed on accept and close only, under the object's lock. */
        private final Map<InetAddress, Integer> open = new HashMap<>();
        private final Map<EndPoint, InetAddress> counted = new java.util.IdentityHashMap<>();

        Gate(Server server, int perAddress, Duration identificationTimeout, SnapshotHolder snapshots,
                ServerMetrics metrics, org.eclipse.jetty.server.ConnectionFactory... factories) {
            super(server, -1, 1, factories);
            this.perAddress = perAddress;
            this.identificationTimeout = identificationTimeout;
            this.snapshots = snapshots;
            this.metrics = metrics;
        }

        @Override
        protected void onEndPointOpened(EndPoint endPoint) {
            super.onEndPointOpened(endPoint);
            InetAddress address = endPoint.getRemoteSocketAddress() instanceof InetSocketAddress socket
                    ? socket.getAddress() : null;
            if (address == null) {
                return;
            }
            if (!snapshots.current().networks().contains(address)) {
                metrics.cfengineRefused("network-not-allowed");
                LOG.info("refused the CFEngine connection from {}: not in the allowed networks (allowconnects)",
                        address.getHostAddress());
                endPoint.close();
                return;
            }
            boolean over;
            synchronized (this) {
                int now = open.merge(address, 1, Integer::sum);
                counted.put(endPoint, address);
                over = now > perAddress;
            }
            if (over) {
                metrics.cfengineRefused("too-many-from-address");
                LOG.info("refused a CFEngine connection from {}: {} open from that address already "
                        + "([cfengine] max_connections_per_address)", address.getHostAddress(), perAddress);
                endPoint.close();
                return;
            }
            // TLS and the identification dialog within the header timeout, whatever the peer sends or does not.
            getScheduler().schedule(() -> {
                if (endPoint.isOpen() && !identified(endPoint)) {
                    metrics.cfengineRefused("identification");
                    LOG.info("closed the CFEngine connection from {}: no TLS handshake and identification within "
                            + "{} s ([limits] header_timeout_seconds)", address.getHostAddress(),
                            identificationTimeout.toSeconds());
                    endPoint.close();
                }
            }, identificationTimeout.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
        }

        private static boolean identified(EndPoint endPoint) {
            return endPoint.getConnection() instanceof org.eclipse.jetty.io.ssl.SslConnection tls
                    && tls.getSslEndPoint().getConnection() instanceof CfengineConnection agent && agent.welcomed();
        }

        @Override
        protected void onEndPointClosed(EndPoint endPoint) {
            synchronized (this) {
                InetAddress address = counted.remove(endPoint);
                if (address != null) {
                    open.computeIfPresent(address, (key, count) -> count > 1 ? count - 1 : null);
                }
            }
            super.onEndPointClosed(endPoint);
        }
    }

    /** A connection that is not TLS: logged, counted and closed, as cf-serverd without allowlegacyconnects. */
    private static final class ClassicRefusal extends AbstractConnectionFactory {
        private final ServerMetrics metrics;

        ClassicRefusal(ServerMetrics metrics) {
            super(CLASSIC);
            this.metrics = metrics;
        }

        @Override
        public Connection newConnection(Connector connector, EndPoint endPoint) {
            return configure(new Refused(endPoint, connector.getExecutor()), connector, endPoint);
        }

        /** Takes the bytes the detection read (Jetty hands them over), logs, closes. */
        private final class Refused extends AbstractConnection implements Connection.UpgradeTo {
            Refused(EndPoint endPoint, java.util.concurrent.Executor executor) {
                super(endPoint, executor);
            }

            @Override
            public void onUpgradeTo(ByteBuffer buffer) {
                // The classic protocol's first bytes: nothing of them is read.
            }

            @Override
            public void onOpen() {
                super.onOpen();
                metrics.cfengineRefused("classic-protocol");
                LOG.info("refused the CFEngine connection from {}: not TLS (the classic protocol, or not CFEngine "
                        + "at all). Pintle speaks CFEngine's TLS protocol only, as Rudder's cf-serverd "
                        + "(an empty allowlegacyconnects): set protocol_version => \"2\" (or \"latest\") on the "
                        + "agent", getEndPoint().getRemoteSocketAddress());
                getEndPoint().close();
            }

            @Override
            public void onFillable() {
                getEndPoint().close();
            }
        }
    }
}
