package io.pintle.server.http.edge;

import io.pintle.server.http.admin.Readiness;
import io.pintle.server.http.files.FileHandler;
import io.pintle.server.http.jersey.JerseyHandler;
import io.pintle.server.http.orders.OrdersHandler;
import io.pintle.server.http.webapp.WebappProxy;
import io.pintle.server.access.Route;
import io.pintle.server.config.ServerConfig;
import io.pintle.server.delivery.Delivery;
import io.pintle.server.metrics.ServerMetrics;
import io.pintle.server.policy.PolicyArchives;
import io.pintle.server.policy.ChangeWaits;
import io.pintle.server.policy.DigestCache;
import io.pintle.server.policy.FileCache;
import io.pintle.server.policy.TreeScanner;
import io.pintle.server.remoterun.PullChannels;
import io.pintle.server.sharedfiles.SharedFileStore;
import io.pintle.server.tls.NativeEngineRelease;
import io.pintle.server.tls.TlsConnectionFactory;
import io.pintle.server.reload.SnapshotHolder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.ServerSocketChannel;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Executor;
import org.eclipse.jetty.alpn.server.ALPNServerConnectionFactory;
import org.eclipse.jetty.compression.gzip.GzipCompression;
import org.eclipse.jetty.compression.server.CompressionConfig;
import org.eclipse.jetty.compression.server.CompressionHandler;
import org.eclipse.jetty.http.UriCompliance;
import org.eclipse.jetty.http2.server.HTTP2ServerConnectionFactory;
import org.eclipse.jetty.server.AbstractConnector;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.NetworkConnectionLimit;
import org.eclipse.jetty.server.SecureRequestCustomizer;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.SslConnectionFactory;
import org.eclipse.jetty.server.handler.ContextHandler;
import org.eclipse.jetty.util.ProcessorUtils;
import org.eclipse.jetty.util.VirtualThreads;
import org.eclipse.jetty.util.ssl.SslContextFactory;
import org.eclipse.jetty.util.thread.Invocable;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.glassfish.jersey.server.ResourceConfig;

/**
 * Builds the Jetty server: the node-facing TLS connector (HTTP/2 and HTTP/1.1 by ALPN) in front of the node-facing
 * Jersey application, and the plain-HTTP loopback admin connector in front of the admin application.
 */
public final class HttpServerFactory {
    /** Platform worker threads; requests run on virtual threads instead when the JVM has them (21+). */
    public static final int MAX_THREADS = 200;
    /** An idle keep-alive connection is closed after this long; agents make two requests per run. */
    public static final long IDLE_TIMEOUT_MS = 30_000;
    /** What ALPN offers, by preference: HTTP/2, then HTTP/1.1 (their ALPN ids). */
    static final String[] ALPN_PROTOCOLS = {"h2", "http/1.1"};
    /** Largest request header block: agents send a handful of short headers. */
    public static final int MAX_REQUEST_HEADER_BYTES = 8 * 1024;
    /** Graceful stop lets in-flight downloads finish for at most this long. */
    public static final long STOP_TIMEOUT_MS = 15_000;
    /** Bodies smaller than this are not worth compressing. */
    public static final int MIN_COMPRESS_BYTES = 1024;

    /**
     * Selector threads of the TLS listener: one per core, as nginx runs a worker process per core. Plain file
     * downloads are answered on these threads ({@link WorkerDispatch}), so they are the event loops (Jetty's default
     * is one per two cores, which on 2 cores is a single thread for every download).
     */
    public static final int SELECTORS = Math.max(1, ProcessorUtils.availableProcessors());

    /** Connector name of the node-facing TLS listener. */
    public static final String TLS_CONNECTOR = "tls";
    /** Connector name of the loopback administration listener. */
    public static final String ADMIN_CONNECTOR = "admin";

    private HttpServerFactory() {}

    /**
     * Whether a server from {@link #create} answers plain downloads where nginx would: every request handler is
     * non-blocking (the Jersey applications sit behind {@link WorkerDispatch}), the pool keeps no reserved
     * threads, and the TLS listener has a selector per core; so each selector reads, answers and writes its
     * connections' downloads on its own thread, with no hand-off per request.
     *
     * @param server the server
     * @return whether all three hold
     */
    public static boolean answersInPlace(Server server) {
        if (server.getInvocationType() != Invocable.InvocationType.NON_BLOCKING
                || !(server.getThreadPool() instanceof QueuedThreadPool pool) || pool.getReservedThreads() != 0) {
            return false;
        }
        for (Connector connector : server.getConnectors()) {
            if (TLS_CONNECTOR.equals(connector.getName()) && connector instanceof ServerConnector tls) {
                return tls.getSelectorManager().getSelectorCount() == SELECTORS;
            }
        }
        return false;
    }

    /**
     * The node-facing TLS connector: HTTP/2 and HTTP/1.1 by ALPN, the peer's TLS session on every request, no SNI
     * host check, Pintle's URI compliance. Also used by the benchmark's baseline, so both share one TLS stack.
     *
     * @param server the server it belongs to
     * @param tls the TLS configuration
     * @param listen address and port
     * @return the connector, not added to the server
     */
    public static ServerConnector tlsConnector(Server server, SslContextFactory.Server tls, ServerConfig.Listen listen) {
        HttpConfiguration http = new HttpConfiguration();
        http.setSendServerVersion(false);
        http.setSendXPoweredBy(false);
        http.setSendDateHeader(true);
        http.setRequestHeaderSize(MAX_REQUEST_HEADER_BYTES);
        // No per-connection header cache: Jetty's (1,024 entries) costs about 100 KB of heap per HTTP/1.1 connection
        // once built, and helps only a connection that carries many requests, which agents' never do (one request
        // per curl process). bench/channels, 3,000 nodes after one order each: RSS 538 MiB with it, 316 without.
        http.setHeaderCacheSize(0);
        SecureRequestCustomizer secure = new SecureRequestCustomizer();
        // Agents connect by IP or by names their server certificate (UID=<id>, no SAN) never lists: they trust
        // it by key pin. The default SNI host check would answer 400 "Invalid SNI" to all of them.
        secure.setSniHostCheck(false);
        http.addCustomizer(secure);
        // Encoded separators, dots, backslashes and empty segments reach SafePaths, which refuses them with a
        // reason and a log line, instead of an anonymous 400 from Jetty.
        http.setUriCompliance(UriCompliance.DEFAULT.with("pintle",
                UriCompliance.Violation.AMBIGUOUS_PATH_SEGMENT,
                UriCompliance.Violation.AMBIGUOUS_EMPTY_SEGMENT,
                UriCompliance.Violation.AMBIGUOUS_PATH_SEPARATOR,
                UriCompliance.Violation.AMBIGUOUS_PATH_ENCODING,
                UriCompliance.Violation.SUSPICIOUS_PATH_CHARACTERS));

        HttpConnectionFactory http1 = new HttpConnectionFactory(http);
        HTTP2ServerConnectionFactory http2 = new HTTP2ServerConnectionFactory(http);
        // The protocols ALPN offers, named: by default it offers every factory of the connector but TLS and
        // itself, which would include the PROXY protocol factory when there is one. ALPN's names: HTTP/1.1's
        // factory is called "HTTP/1.1" (getProtocol()), which no client asks for; "http/1.1" is its ALPN id.
        ALPNServerConnectionFactory alpn = new ALPNServerConnectionFactory(ALPN_PROTOCOLS);
        alpn.setDefaultProtocol(http1.getProtocol());
        SslConnectionFactory ssl = new TlsConnectionFactory(tls, alpn.getProtocol());
        ssl.addEventListener(new NativeEngineRelease());

        ServerConnector connector = new ServerConnector(server, -1, SELECTORS, ssl, alpn, http2, http1);
        connector.setName(TLS_CONNECTOR);
        connector.setHost(listen.host());
        connector.setPort(listen.port());
        connector.setIdleTimeout(IDLE_TIMEOUT_MS);
        connector.setAcceptQueueSize(ServerConfig.Limits.DEFAULTS.acceptQueue());
        return connector;
    }


    /**
     * What the file pipeline ({@link FileHandler}) answers from, beside the snapshot.
     *
     * @param files what earlier downloads found (see {@link FileCache})
     * @param scanner builds manifests and archives
     * @param digests file digests
     * @param waits parks {@code ?wait} requests
     * @param sharedFiles node-to-node shared files
     * @param channels the nodes' remote-run order channels ({@link OrdersHandler}, in front of the file pipeline)
     * @param delivery told of every node's requests and policy fetches, when they end ({@link RequestObserver})
     * @param archives builds a node's Linux archive that Rudder's hook has not written yet
     */
    public record FileServices(FileCache files, TreeScanner scanner, DigestCache digests, ChangeWaits waits,
            SharedFileStore sharedFiles, PullChannels channels, Delivery delivery, PolicyArchives archives) {}

    /**
     * Builds the whole server, top-down. Every request on either listener goes through, in this order:
     * {@link ExchangeHandler} (snapshot, route, caller), {@link OverloadHandler} (TLS listener only), compression,
     * on a root with {@code [webapp] proxy} the {@link WebappProxy} (which answers {@code /rudder/...} itself), the
     * listener's context, then on the TLS listener {@link FileHandler} (the file routes) and, for everything
     * else, the Jersey application on a worker ({@link WorkerDispatch}). {@link RequestObserver} sees every
     * completed request.
     *
     * @param config the configuration (listeners and limits)
     * @param tls the server's TLS configuration
     * @param snapshots the live snapshot
     * @param clock the clock for certificate validity
     * @param fileServices what the file pipeline answers from
     * @param application the node-facing Jersey application
     * @param admin the admin Jersey application
     * @param metrics the instance's metrics
     * @param readiness what {@code /ready} reports
     * @return a server, not started
     */
    public static Server create(ServerConfig config, SslContextFactory.Server tls, SnapshotHolder snapshots,
            Clock clock, FileServices fileServices, ResourceConfig application, ResourceConfig admin,
            ServerMetrics metrics, Readiness readiness) {
        QueuedThreadPool threads = new QueuedThreadPool(MAX_THREADS);
        threads.setName("pintle");
        // No reserved threads: Jetty would otherwise hand the selector's loop to a reserved thread for each
        // request it answers in place (execute-produce-consume), a thread wake-up per request. Without them each
        // selector reads, answers and writes on its own thread, one per core (SELECTORS), as nginx's workers.
        threads.setReservedThreads(0);
        Executor virtualThreads = VirtualThreads.getDefaultVirtualThreadsExecutor();
        if (virtualThreads != null) {
            threads.setVirtualThreadsExecutor(virtualThreads);
        }
        Server server = new Server(threads);
        server.setStopTimeout(STOP_TIMEOUT_MS);

        ServerConfig.Limits limits = config.limits();
        ServerConnector tlsConnector = tlsConnector(server, tls, config.general().listen());
        if (!config.general().proxyProtocolFrom().isEmpty()) {
            TrustedProxyConnectionFactory proxies = new TrustedProxyConnectionFactory(
                    config.general().proxyProtocolFrom(),
                    tlsConnector.getConnectionFactory(SslConnectionFactory.class), metrics);
            tlsConnector.addFirstConnectionFactory(proxies);
            tlsConnector.addConnectionFactory(proxies.proxiedTls());
        }
        tlsConnector.setIdleTimeout(limits.idleTimeout().toMillis());
        tlsConnector.setAcceptQueueSize(limits.acceptQueue());
        tlsConnector.addEventListener(new ConnectionGuard(tlsConnector, limits.headerTimeout(),
                limits.minResponseBytesPerSecond(), limits.rateCheck(), metrics));
        server.addBean(new NetworkConnectionLimit(limits.maxConnections(), tlsConnector));
        server.addConnector(tlsConnector);

        HttpConfiguration adminHttp = new HttpConfiguration();
        adminHttp.setSendServerVersion(false);
        adminHttp.setRequestHeaderSize(MAX_REQUEST_HEADER_BYTES);
        ServerConnector adminConnector = new ServerConnector(server, new HttpConnectionFactory(adminHttp));
        adminConnector.setName(ADMIN_CONNECTOR);
        adminConnector.setHost(config.admin().listen().host());
        adminConnector.setPort(config.admin().listen().port());
        adminConnector.setIdleTimeout(IDLE_TIMEOUT_MS);
        server.addConnector(adminConnector);

        // One dispatch step below the edge, the gate and compression: each request goes to the one handler of its
        // route (Route.answerer), admin routes only ever to the admin application (a route belongs to a listener).
        Handler webapp = config.webapp().enabled() ? new WebappProxy(config.webapp(), limits.webapp()) : null;
        Dispatch dispatch = new Dispatch(
                new FileHandler(snapshots, clock, fileServices.files(), fileServices.scanner(), fileServices.digests(),
                        fileServices.waits(), fileServices.sharedFiles(), fileServices.archives()),
                new OrdersHandler(fileServices.channels()),
                webapp,
                new WorkerDispatch(new JerseyHandler(application, config.limits().minRequestBytesPerSecond(),
                        config.limits().rateCheck())),
                new WorkerDispatch(new JerseyHandler(admin, 0, config.limits().rateCheck())));
        ContextHandler contexts = new ContextHandler(dispatch, "/");
        CompressionHandler compression = new CompressionHandler(contexts);
        GzipCompression gzip = new GzipCompression();
        gzip.setMinCompressSize(MIN_COMPRESS_BYTES);
        compression.putCompression(gzip);
        // Text and JSON only: archives are already compressed, and compressing them would also drop the
        // Content-Length agents rely on.
        CompressionConfig nodeFacingCompression = CompressionConfig.builder()
                .compressIncludeMimeType("text/plain")
                .compressIncludeMimeType("application/json")
                .compressIncludeMimeType("application/problem+json")
                .compressIncludeMimeType("application/xml")
                .compressIncludeMethod("GET")
                .build();
        compression.putConfiguration("/*", nodeFacingCompression);
        if (config.webapp().enabled()) {
            compression.putConfiguration("/rudder/*", WebappProxy.compression());
            compression.putConfiguration("/rudder/relay-api/*", nodeFacingCompression);
        }
        // No GracefulHandler on top, on purpose. On stop (SIGTERM, a restart for an upgrade) the connectors stop
        // accepting and wait, up to STOP_TIMEOUT_MS, for each open connection to finish the request it carries and
        // close: that is the drain. A GracefulHandler would add a 503 for a request that arrives on a connection
        // accepted just before the stop, which SocketActivationIT saw while replacing the process.
        OverloadHandler overload = new OverloadHandler(compression, TLS_CONNECTOR, limits, metrics);
        server.setHandler(new ExchangeHandler(overload, snapshots, clock, ADMIN_CONNECTOR));
        server.setErrorHandler(new ProblemErrorHandler());

        server.setRequestLog(new RequestObserver(metrics, snapshots, ADMIN_CONNECTOR, fileServices.delivery()));
        for (Connector connector : server.getConnectors()) {
            SslConnectionFactory ssl = connector.getConnectionFactory(SslConnectionFactory.class);
            if (ssl != null) {
                ssl.addBean(new HandshakeCounter(metrics));
            }
            if (ssl instanceof TlsConnectionFactory gated && gated.handshakesWaiting() != null) {
                metrics.handshakeGate(gated.handshakesWaiting(), gated.handshakeStepsRunning(),
                        gated.handshakesReturning());
            }
        }
        // Read at scrape time, so that a listener added after this (CFEngine's) is counted too.
        metrics.connections(() -> {
            Map<String, Long> open = new LinkedHashMap<>();
            for (Connector connector : server.getConnectors()) {
                if (connector instanceof AbstractConnector counted) {
                    open.put(connector.getName(), (long) counted.getConnectedEndPoints().size());
                }
            }
            return open;
        });
        server.addEventListener(readiness);
        return server;
    }

    /**
     * Makes the node-facing TLS listener accept on an already bound socket (a systemd socket unit's) instead of
     * binding {@code general.listen}; the admin listener still binds its own address. Closing the server closes
     * this process's descriptor only: the socket unit keeps the socket, and its backlog, open across restarts.
     *
     * @param server a server from {@link #create}, not started
     * @param inherited the listening socket
     */
    public static void inheritTlsListener(Server server, ServerSocketChannel inherited) {
        for (Connector connector : server.getConnectors()) {
            if (TLS_CONNECTOR.equals(connector.getName()) && connector instanceof ServerConnector tls) {
                try {
                    tls.open(inherited);
                } catch (IOException e) {
                    throw new UncheckedIOException("cannot use the inherited listening socket", e);
                }
                return;
            }
        }
        throw new IllegalStateException("no connector " + TLS_CONNECTOR);
    }
}
