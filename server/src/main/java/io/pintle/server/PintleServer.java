package io.pintle.server;

import com.sun.management.UnixOperatingSystemMXBean;
import io.pintle.server.config.ServerConfig;
import io.pintle.server.http.edge.HttpServerFactory;
import io.pintle.server.metrics.ServerMetrics;
import io.pintle.server.reload.Reloader;
import io.pintle.server.reload.ServerSnapshot;
import io.pintle.server.reload.ReloadOutcome;
import io.pintle.server.reload.SnapshotHolder;
import io.pintle.server.systemd.SystemdNotifier;
import io.pintle.server.tls.TlsContextFactory;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.time.Duration;
import java.util.Optional;
import org.eclipse.jetty.server.AbstractConnector;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.NetworkConnector;
import org.eclipse.jetty.server.Server;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** A running (or ready to run) Pintle instance. Everything it owns hangs off Jetty's {@link Server}. */
@SuppressWarnings("try") // close() may throw InterruptedException: Jetty's stop waits for in-flight requests.
public final class PintleServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(PintleServer.class);
    /** Descriptors kept for files being served, the admin listener, logs, the JVM's own. */
    public static final long DESCRIPTOR_RESERVE = 1000;

    private final ServerConfig config;
    private final SnapshotHolder snapshots;
    private final Reloader reloader;
    private final ServerMetrics metrics;
    private final Server server;
    private final SystemdNotifier notifier;

    PintleServer(ServerConfig config, SnapshotHolder snapshots, Reloader reloader, ServerMetrics metrics,
            Server server, SystemdNotifier notifier) {
        this.config = config;
        this.snapshots = snapshots;
        this.reloader = reloader;
        this.metrics = metrics;
        this.server = server;
        this.notifier = notifier;
    }

    /**
     * Binds the listeners and starts serving; returns once requests are accepted.
     *
     * @throws Exception when a listener cannot be bound or a component fails to start
     */
    public void start() throws Exception {
        server.start();
        ServerSnapshot snapshot = snapshots.current();
        LOG.info("pintle {} ({}) serving {} on {} (admin {}): snapshot {} with {} nodes, {} pinned keys; "
                        + "server key {}; TLS {} by {}",
                snapshot.self(), config.general().role().text(), snapshot.share().root(), uri(), adminUri(),
                snapshot.generation(), snapshot.nodes().nodeCount(), snapshot.nodes().pinCount(),
                snapshot.credentials().keyHash(), String.join("/", config.tls().protocols()),
                TlsContextFactory.describe(config.tls().provider()));
        ServerConfig.TlsProvider used = TlsContextFactory.resolve(config.tls().provider());
        if (config.tls().provider() == ServerConfig.TlsProvider.AUTO && used == ServerConfig.TlsProvider.JDK) {
            LOG.warn("[tls] provider = \"auto\" fell back to the JDK's TLS: {}; handshakes cost about twice the CPU "
                    + "(set provider = \"jdk\" to silence this)", TlsContextFactory.describe(config.tls().provider()));
        }
        checkDescriptorLimit(used);
        if (!answersOnSelectorThreads()) {
            // A blocking handler added in front of the Jersey applications without WorkerDispatch, reserved
            // threads or fewer selectors: every request costs a thread hand-off. Correct, but a regression.
            LOG.warn("request handlers are {}: plain downloads are not answered in place on a selector per core",
                    server.getInvocationType());
        }
        // After start() returned: both listeners are bound (or inherited) and accepting.
        notifier.ready(status(null));
    }

    /**
     * Warns when the open-files limit cannot hold {@code [limits] max_connections}: past it, accepting fails
     * ("Too many open files") and handshakes break, which bench/perf's idle row ran into with Conscrypt.
     */
    private void checkDescriptorLimit(ServerConfig.TlsProvider used) {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof UnixOperatingSystemMXBean os) {
            descriptorShortfall(os.getMaxFileDescriptorCount(), config.limits().maxConnections(), used)
                    .ifPresent(LOG::warn);
        }
    }

    /**
     * @param provider the TLS provider in use (not {@code auto})
     * @return file descriptors one open TLS connection holds: the socket, and with Conscrypt a pipe too (the two
     *     ends of the one its JNI layer opens per engine, freed when the connection closes: {@code
     *     tls.NativeEngineRelease})
     */
    public static int descriptorsPerConnection(ServerConfig.TlsProvider provider) {
        return provider == ServerConfig.TlsProvider.CONSCRYPT ? 3 : 1;
    }

    /**
     * @param limit the process's open-files limit
     * @param maxConnections {@code [limits] max_connections}
     * @param provider the TLS provider in use (not {@code auto})
     * @return a warning when the limit is below what that many connections need
     */
    static Optional<String> descriptorShortfall(long limit, int maxConnections, ServerConfig.TlsProvider provider) {
        boolean conscrypt = provider == ServerConfig.TlsProvider.CONSCRYPT;
        long perConnection = descriptorsPerConnection(provider);
        long needed = perConnection * maxConnections + DESCRIPTOR_RESERVE;
        if (limit >= needed) {
            return Optional.empty();
        }
        return Optional.of("the open-files limit (" + limit + ") is below what [limits] max_connections = "
                + maxConnections + " needs (" + needed + ": " + perConnection + " per TLS connection"
                + (conscrypt ? " with Conscrypt, the socket and a pipe," : "") + " and " + DESCRIPTOR_RESERVE
                + " for files and the rest): raise it (systemd LimitNOFILE) or lower max_connections");
    }

    /** Blocks until the server stops. @throws InterruptedException if interrupted */
    public void join() throws InterruptedException {
        server.join();
    }

    /** Stops gracefully: in-flight requests get up to the stop timeout to finish. */
    @Override
    public void close() throws Exception {
        notifier.stopping();
        server.stop();
        LOG.info("pintle stopped");
    }

    /**
     * Stops as {@link #close()} does, except that a connection idle when the stop begins (a keep-alive connection
     * with no request under way) is closed once idle for {@code idle}, instead of Jetty's shutdown idle timeout of a
     * second: the time a client is given to bring one more request on it. For a caller that knows none will come,
     * such as a test's teardown: its clients keep their connections open (the JDK's HttpClient cannot close them),
     * and the stop would wait out the second.
     *
     * @param idle how long an idle connection is kept once the stop begins (a millisecond at least)
     * @throws Exception as {@link #close()}
     */
    public void close(Duration idle) throws Exception {
        for (Connector connector : server.getConnectors()) {
            if (connector instanceof AbstractConnector open) {
                open.setShutdownIdleTimeout(Math.max(1, idle.toMillis()));
            }
        }
        close();
    }

    /**
     * @param last the last reload attempt, or null before any
     * @return one line for {@code systemctl status}: what is live, and how the last reload ended
     */
    String status(ReloadOutcome last) {
        ServerSnapshot snapshot = snapshots.current();
        String reload = last == null ? ""
                : last.succeeded() ? "; last reload " + last.result().text()
                : "; last reload FAILED, previous generation serving: " + last.error();
        return "serving " + snapshot.nodes().nodeCount() + " nodes on port " + port() + ", generation "
                + snapshot.generation() + reload;
    }

    /**
     * @return whether plain downloads are answered on the selector thread that read them, one selector per core,
     *     with no hand-off per request (see {@link HttpServerFactory#answersInPlace})
     */
    public boolean answersOnSelectorThreads() {
        return HttpServerFactory.answersInPlace(server);
    }

    /** @return the TLS listener's actual port (useful with port 0) */
    public int port() {
        return connector(HttpServerFactory.TLS_CONNECTOR).getLocalPort();
    }

    /** @return the CFEngine listener's actual port, or -1 when {@code [cfengine] listen} is not set */
    public int cfenginePort() {
        for (org.eclipse.jetty.server.Connector candidate : server.getConnectors()) {
            if (io.pintle.server.cfengine.CfengineListener.CONNECTOR.equals(candidate.getName())) {
                return ((org.eclipse.jetty.server.ServerConnector) candidate).getLocalPort();
            }
        }
        return -1;
    }

    /** @return the admin listener's actual port */
    public int adminPort() {
        return connector(HttpServerFactory.ADMIN_CONNECTOR).getLocalPort();
    }

    /** @return {@code http://<loopback>:<port>} of the admin listener */
    public URI adminUri() {
        String host = config.admin().listen().host();
        return URI.create("http://" + ServerConfig.Listen.authorityHost(host) + ":" + adminPort());
    }

    /** @return the reload writer (SIGHUP, tests) */
    public Reloader reloader() {
        return reloader;
    }

    private NetworkConnector connector(String name) {
        for (Connector connector : server.getConnectors()) {
            if (name.equals(connector.getName())) {
                return (NetworkConnector) connector;
            }
        }
        throw new IllegalStateException("no connector " + name);
    }

    /** @return {@code https://<host>:<port>} of the TLS listener, with {@code 0.0.0.0} shown as 127.0.0.1 */
    public URI uri() {
        String host = config.general().listen().host();
        if (host.equals("0.0.0.0") || host.equals("::") || host.isEmpty()) {
            host = "127.0.0.1";
        }
        return URI.create("https://" + ServerConfig.Listen.authorityHost(host) + ":" + port());
    }

    /** @return the configuration it runs with */
    public ServerConfig config() {
        return config;
    }

    /** @return this instance's metrics (what {@code /metrics} exposes) */
    public ServerMetrics metrics() {
        return metrics;
    }

    /** @return the live snapshot holder */
    public SnapshotHolder snapshots() {
        return snapshots;
    }
}
