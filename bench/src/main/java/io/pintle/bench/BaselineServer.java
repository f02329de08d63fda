package io.pintle.bench;

import io.pintle.server.config.ServerConfig;
import io.pintle.server.http.edge.HttpServerFactory;
import io.pintle.server.tls.ServerCredentials;
import io.pintle.server.tls.TlsContextFactory;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.handler.ContextHandler;
import org.eclipse.jetty.server.handler.ResourceHandler;
import org.eclipse.jetty.util.resource.ResourceFactory;
import org.eclipse.jetty.util.ssl.SslContextFactory;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * The baseline: a plain Jetty server with the same TLS setup as Pintle (the very same {@link TlsContextFactory},
 * server key and protocols: TLS 1.3, client certificate requested, HTTP/2 and HTTP/1.1 by ALPN), serving the node's
 * policy directory under the same URL path with Jetty's {@link ResourceHandler} (ETags on), and no authorisation
 * at all. What Pintle adds on top (Jersey, per-request identification and ACL, path checks, fresh file metadata
 * on every request) is what the ratio measures.
 */
final class BaselineServer {
    /** Thread name prefix of its worker pool; {@link CpuSampler} counts these as server threads. */
    static final String THREAD_NAME = "baseline";
    /** The only address the baseline binds. */
    private static final String LOOPBACK = "127.0.0.1";

    private final Server server;
    private final ServerConnector connector;

    private BaselineServer(Server server, ServerConnector connector) {
        this.server = server;
        this.connector = connector;
    }

    /**
     * Builds and starts the baseline on a free loopback port.
     *
     * @param tls Pintle's TLS configuration (certificate, key, protocols), reused as is
     * @param directory the directory to serve
     * @param contextPath the URL path it is served under
     * @return the running baseline
     * @throws Exception if it cannot start
     */
    static BaselineServer start(ServerConfig.Tls tls, Path directory, String contextPath) throws Exception {
        QueuedThreadPool threads = new QueuedThreadPool(HttpServerFactory.MAX_THREADS);
        threads.setName(THREAD_NAME);
        Server server = new Server(threads);
        ServerConnector connector = connector(server, sslContextFactory(tls));
        server.addConnector(connector);
        server.setHandler(new ContextHandler(resources(server, directory), contextPath));
        try {
            server.start();
        } catch (Exception e) {
            server.stop();
            throw e;
        }
        return new BaselineServer(server, connector);
    }

    /** @return {@code https://127.0.0.1:<port>} */
    URI uri() {
        return URI.create("https://" + LOOPBACK + ":" + connector.getLocalPort());
    }

    /**
     * Stops the server.
     *
     * @throws Exception if Jetty fails to stop
     */
    void stop() throws Exception {
        server.stop();
    }

    private static SslContextFactory.Server sslContextFactory(ServerConfig.Tls tls)
            throws IOException, GeneralSecurityException {
        return TlsContextFactory.create(ServerCredentials.load(tls.certificate(), tls.key()), tls.protocols(),
                tls.provider());
    }

    private static ServerConnector connector(Server server, SslContextFactory.Server tls) {
        // Pintle's own TLS connector, so the baseline differs from Pintle only behind the connector.
        return HttpServerFactory.tlsConnector(server, tls, new ServerConfig.Listen(LOOPBACK, 0));
    }

    private static ResourceHandler resources(Server server, Path directory) {
        ResourceHandler resources = new ResourceHandler();
        resources.setBaseResource(ResourceFactory.of(server).newResource(directory));
        resources.setEtags(true);
        resources.setDirAllowed(false);
        return resources;
    }
}
