package io.pintle.server.http.edge;

import io.pintle.server.metrics.ServerMetrics;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.eclipse.jetty.io.AbstractEndPoint;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.io.ssl.SslConnection;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.util.thread.Scheduler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Protects the TLS listener from clients that hold a connection without using it, which the idle timeout alone
 * does not catch because they send or read a byte now and then:
 * <ul>
 *   <li>header timeout (slow loris): a new connection must complete its TLS handshake and the headers of its
 *       first request within the header timeout, or it is closed;</li>
 *   <li>minimum response rate (slow reader): every check period, a connection with a response write waiting on
 *       the client must have taken at least the minimum rate's worth of bytes since the last check, or it is
 *       closed; this frees the download worker it holds.</li>
 * </ul>
 * Jetty 12's own {@code HttpConfiguration.setMinRequestDataRate/setMinResponseDataRate} are settings nothing in
 * Jetty 12.1 reads, hence this. One timer per connection; nothing on the request path.
 */
public final class ConnectionGuard implements Connection.Listener {
    private static final Logger LOG = LoggerFactory.getLogger(ConnectionGuard.class);

    private final Connector connector;
    private final long headerTimeoutMs;
    private final long minBytesPerCheck;
    private final long checkPeriodMs;
    private final ServerMetrics metrics;

    /**
     * @param connector the connector it guards (for its scheduler)
     * @param headerTimeout time allowed for the handshake and the first request's headers
     * @param minResponseBytesPerSecond minimum read rate of a client a response waits on; 0 for no check
     * @param checkPeriod how often the rate is checked
     * @param metrics where closed connections are counted
     */
    ConnectionGuard(Connector connector, Duration headerTimeout, long minResponseBytesPerSecond, Duration checkPeriod,
            ServerMetrics metrics) {
        this.connector = connector;
        this.headerTimeoutMs = headerTimeout.toMillis();
        this.checkPeriodMs = checkPeriod.toMillis();
        this.minBytesPerCheck = minResponseBytesPerSecond * checkPeriod.toMillis() / 1000;
        this.metrics = metrics;
    }

    @Override
    public void onOpened(Connection connection) {
        // The TLS connection is the first one on a network connection; those it hands over to (ALPN, HTTP/1.1,
        // HTTP/2) are opened on its decrypted end point and are found through it.
        if (connection instanceof SslConnection tls) {
            Watch watch = new Watch(tls, connector.getScheduler());
            tls.addEventListener(watch);
            watch.schedule(headerTimeoutMs);
        }
    }

    @Override
    public void onClosed(Connection connection) {
        // Each connection's watch cancels itself (it listens to its own connection).
    }

    /** The timer of one network connection. */
    private final class Watch implements Connection.Listener, Runnable {
        private final SslConnection tls;
        private final Scheduler scheduler;
        private volatile Scheduler.Task task;
        private volatile boolean closed;
        private boolean firstRequestSeen;
        private long lastBytesOut;

        Watch(SslConnection tls, Scheduler scheduler) {
            this.tls = tls;
            this.scheduler = scheduler;
        }

        void schedule(long delayMs) {
            if (!closed) {
                task = scheduler.schedule(this, delayMs, TimeUnit.MILLISECONDS);
            }
        }

        @Override
        public void run() {
            if (closed) {
                return;
            }
            if (!firstRequestSeen) {
                // Requests are counted once their headers are complete (HTTP/1.1), or as frames arrive (HTTP/2).
                Connection application = tls.getSslEndPoint().getConnection();
                if (application == null || application instanceof SslConnection
                        || application.getMessagesIn() <= 0) {
                    close("header-timeout", "no complete request header within " + headerTimeoutMs + " ms");
                    return;
                }
                firstRequestSeen = true;
                lastBytesOut = tls.getBytesOut();
            } else {
                long bytesOut = tls.getBytesOut();
                long progress = bytesOut - lastBytesOut;
                lastBytesOut = bytesOut;
                EndPoint network = tls.getEndPoint();
                // Behind a PROXY protocol header the TLS connection runs on Jetty's ProxyEndPoint, which wraps
                // the socket's.
                while (network instanceof EndPoint.Wrapper wrapper) {
                    network = wrapper.unwrap();
                }
                if (network instanceof AbstractEndPoint socket && socket.getWriteFlusher().isPending()
                        && progress < minBytesPerCheck) {
                    close("slow-client", "read " + progress + " bytes in " + checkPeriodMs + " ms while a response "
                            + "waited on it");
                    return;
                }
            }
            if (minBytesPerCheck > 0) {
                schedule(checkPeriodMs);
            }
        }

        private void close(String reason, String detail) {
            LOG.debug("closing connection from {}: {}", tls.getEndPoint().getRemoteSocketAddress(), detail);
            metrics.connectionClosed(reason);
            tls.getEndPoint().close(new TimeoutException(detail));
        }

        @Override
        public void onClosed(Connection connection) {
            closed = true;
            Scheduler.Task current = task;
            if (current != null) {
                current.cancel();
            }
        }
    }
}
