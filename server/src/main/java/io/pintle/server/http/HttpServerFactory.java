package io.pintle.server.http;

import io.pintle.server.config.ServerConfig;
import io.pintle.server.metrics.ServerMetrics;
import io.pintle.server.policy.FileCache;
import io.pintle.server.reload.SnapshotHolder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.ServerSocketChannel;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;
import java.util.concurrent.Executor;
import org.eclipse.jetty.alpn.server.ALPNServerConnectionFactory;
import org.eclipse.jetty.compression.gzip.GzipCompression;
import org.eclipse.jetty.compression.server.CompressionConfig;
import org.eclipse.jetty.compression.server.CompressionHandler;
import org.eclipse.jetty.http.UriCompliance;
import org.eclipse.jetty.http2.server.HTTP2ServerConnectionFactory;
import org.eclipse.jetty.server.AbstractConnector;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.NetworkConnectionLimit;
import org.eclipse.jetty.server.SecureRequestCustomizer;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.SslConnectionFactory;
import org.eclipse.jetty.server.handler.ContextHandler;
import org.eclipse.jetty.server.handler.ContextHandlerCollection;
import org.eclipse.jetty.util.ProcessorUtils;
import org.eclipse.jetty.util.VirtualThreads;
import org.eclipse.jetty.util.ssl.SslContextFactory;
import org.eclipse.jetty.util.thread.Invocable;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.glassfish.jersey.jetty.JettyHttpContainer;
import org.glassfish.jersey.server.ContainerFactory;
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
        ALPNServerConnectionFactory alpn = new ALPNServerConnectionFactory();
        alpn.setDefaultProtocol(http1.getProtocol());
        SslConnectionFactory ssl = new SslConnectionFactory(tls, alpn.getProtocol());

        ServerConnector connector = new ServerConnector(server, -1, SELECTORS, ssl, alpn, http2, http1);
        connector.setName(TLS_CONNECTOR);
        connector.setHost(listen.host());
        connector.setPort(listen.port());
        connector.setIdleTimeout(IDLE_TIMEOUT_MS);
        return connector;
    }


    /**
     * @param listen the address and port of the TLS listener
     * @param tls the server's TLS configuration
     * @param application the node-facing Jersey application
     * @param adminListen the address and port of the plain-HTTP loopback admin listener
     * @param admin the admin Jersey application
     * @return a server, not started
     */
    public static Server create(ServerConfig.Listen listen, SslContextFactory.Server tls, ResourceConfig application,
            ServerConfig.Listen adminListen, ResourceConfig admin) {
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

        server.addConnector(tlsConnector(server, tls, listen));

        HttpConfiguration adminHttp = new HttpConfiguration();
        adminHttp.setSendServerVersion(false);
        adminHttp.setRequestHeaderSize(MAX_REQUEST_HEADER_BYTES);
        ServerConnector adminConnector = new ServerConnector(server, new HttpConnectionFactory(adminHttp));
        adminConnector.setName(ADMIN_CONNECTOR);
        adminConnector.setHost(adminListen.host());
        adminConnector.setPort(adminListen.port());
        adminConnector.setIdleTimeout(IDLE_TIMEOUT_MS);
        server.addConnector(adminConnector);

        // Each application answers on its own connector only ("@name" virtual hosts match connector names), so no
        // admin route is ever reachable from the network. Jersey's Jetty container must sit at the root context
        // (it would add a context path twice).
        ContextHandler nodeFacing = new ContextHandler(
                new WorkerDispatch(ContainerFactory.createContainer(JettyHttpContainer.class, application)), "/");
        nodeFacing.setVirtualHosts(List.of("@" + TLS_CONNECTOR));
        ContextHandler administration = new ContextHandler(
                new WorkerDispatch(ContainerFactory.createContainer(JettyHttpContainer.class, admin)), "/");
        administration.setVirtualHosts(List.of("@" + ADMIN_CONNECTOR));
        // Not dynamic: Jetty counts a dynamic collection as blocking, which would hand every request to a worker.
        CompressionHandler compression = new CompressionHandler(
                new ContextHandlerCollection(false, nodeFacing, administration));
        GzipCompression gzip = new GzipCompression();
        gzip.setMinCompressSize(MIN_COMPRESS_BYTES);
        compression.putCompression(gzip);
        // Text and JSON only: archives are already compressed, and compressing them would also drop the
        // Content-Length agents rely on.
        compression.putConfiguration("/*", CompressionConfig.builder()
                .compressIncludeMimeType("text/plain")
                .compressIncludeMimeType("application/json")
                .compressIncludeMimeType("application/problem+json")
                .compressIncludeMimeType("application/xml")
                .compressIncludeMethod("GET")
                .build());
        // No GracefulHandler on top, on purpose. On stop (SIGTERM, a restart for an upgrade) the connectors stop
        // accepting and wait, up to STOP_TIMEOUT_MS, for each open connection to finish the request it carries and
        // close: that is the drain. A GracefulHandler would add a 503 for a request that arrives on a connection
        // accepted just before the stop, which SocketActivationIT saw while replacing the process.
        server.setHandler(compression);
        server.setErrorHandler(new ProblemErrorHandler());
        return server;
    }

    /**
     * Puts a {@link DirectFileHandler} in front of the node-facing Jersey application of a server from {@link
     * #create}: plain file downloads are answered by Jetty directly, everything else by Jersey as before.
     *
     * @param server the server
     * @param snapshots the live snapshot
     * @param clock the clock for certificate validity
     * @param files what earlier downloads found (see {@link FileCache})
     */
    public static void serveFilesDirectly(Server server, SnapshotHolder snapshots, Clock clock, FileCache files) {
        for (ContextHandler context : server.getDescendants(ContextHandler.class)) {
            if (context.getVirtualHosts().contains("@" + TLS_CONNECTOR)) {
                context.setHandler(new DirectFileHandler(context.getHandler(), snapshots, clock, files));
                return;
            }
        }
        throw new IllegalStateException("no node-facing context");
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

    /**
     * Wires observation into a server from {@link #create}: every completed request is counted and access-logged
     * ({@link RequestObserver}), TLS handshakes on the node-facing listener are counted, open connections are
     * read per listener at scrape time, and {@code readiness} follows the server's lifecycle.
     *
     * @param server the server
     * @param metrics the instance's metrics
     * @param snapshots the live snapshot (for the access log settings)
     * @param readiness what {@code /ready} reports
     */
    public static void observe(Server server, ServerMetrics metrics, SnapshotHolder snapshots, Readiness readiness) {
        server.setRequestLog(new RequestObserver(metrics, snapshots, ADMIN_CONNECTOR));
        Map<String, LongSupplier> connections = new LinkedHashMap<>();
        for (Connector connector : server.getConnectors()) {
            SslConnectionFactory ssl = connector.getConnectionFactory(SslConnectionFactory.class);
            if (ssl != null) {
                ssl.addBean(new HandshakeCounter(metrics));
            }
            if (connector instanceof AbstractConnector counted) {
                connections.put(connector.getName(), () -> counted.getConnectedEndPoints().size());
            }
        }
        metrics.connections(connections);
        server.addEventListener(readiness);
    }

    /**
     * Applies overload control to a server from {@link #create}, on the TLS listener only (the admin listener
     * stays reachable when it is saturated): at most {@code maxConnections} open connections (past it, new ones
     * wait in the kernel's backlog), the idle timeout, the header timeout and minimum response rate ({@link
     * ConnectionGuard}), and bounded workers per work class with a 503 past their queue ({@link OverloadHandler}).
     *
     * @param server the server
     * @param limits the configured limits
     * @param metrics where rejections and closed connections are counted
     */
    public static void limit(Server server, ServerConfig.Limits limits, ServerMetrics metrics) {
        for (Connector connector : server.getConnectors()) {
            if (TLS_CONNECTOR.equals(connector.getName()) && connector instanceof ServerConnector tls) {
                tls.setIdleTimeout(limits.idleTimeout().toMillis());
                tls.addEventListener(new ConnectionGuard(tls, limits.headerTimeout(),
                        limits.minResponseBytesPerSecond(), ConnectionGuard.RATE_CHECK_PERIOD, metrics));
                server.addBean(new NetworkConnectionLimit(limits.maxConnections(), tls));
            }
        }
        server.setHandler(new OverloadHandler(server.getHandler(), TLS_CONNECTOR, limits, metrics));
    }
}
