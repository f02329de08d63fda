package io.pintle.server.tls;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.NetworkChannel;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult.HandshakeStatus;
import jdk.net.ExtendedSocketOptions;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.io.ssl.SslConnection;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.SslConnectionFactory;
import org.eclipse.jetty.util.ssl.SslContextFactory;

/**
 * Jetty's TLS connection factory, whose connections acknowledge what they read during the handshake at once
 * (Linux {@code TCP_QUICKACK}), so that a client whose next write waits behind Nagle's algorithm does not wait for
 * the server's delayed acknowledgement.
 *
 * <p>Twice in a TLS 1.3 handshake with a client certificate the client writes something the server does not
 * answer: its last flight (certificate, verify, finished), after which it writes its request at once — a server
 * can issue its session tickets only after that flight, and BoringSSL (Conscrypt, the default provider) writes
 * them with the first response, not before (an empty wrap after the handshake produces nothing: checked) —; and,
 * with the JDK's client, the compatibility change_cipher_spec it writes alone before that flight. Without
 * {@code TCP_NODELAY} (Python's {@code ssl}, {@code ab}, the JDK's sockets, many HTTP libraries; curl sets it)
 * the kernel holds the client's next small write until the previous one is acknowledged, and the server, having
 * nothing to send, acknowledges it only when its delayed-ACK timer fires, 40 ms or more on Linux. Measured with
 * {@code tcpdump} (issue 23): request to first byte 45 ms at p50 instead of 3 ms, the request leaving the client
 * right after the server's bare ACK. nginx does not stall because OpenSSL sends its tickets right after the
 * handshake, and the ACK rides with them. Asking for a quick ACK after each read of the handshake sends that ACK
 * at once: a system call per handshake read (two or three per connection), and at most as many small packets.
 *
 * <p>Off with {@code -Dpintle.tls.quickAckHandshake=false} (Jetty's own factory then), for benchmarks' A/B runs.
 * Where the option is not supported (not Linux) the connections are Jetty's own.
 */
public final class TlsConnectionFactory extends SslConnectionFactory {
    /** The system property that turns the quick ACKs off: {@code false} turns them off. */
    public static final String SWITCH = "pintle.tls.quickAckHandshake";

    private final boolean quickAck;

    /**
     * @param tls the TLS configuration
     * @param nextProtocol the protocol after TLS (ALPN)
     */
    public TlsConnectionFactory(SslContextFactory.Server tls, String nextProtocol) {
        super(tls, nextProtocol);
        this.quickAck = !"false".equals(System.getProperty(SWITCH));
    }

    @Override
    protected SslConnection newSslConnection(Connector connector, EndPoint endPoint, SSLEngine engine) {
        if (quickAck && endPoint.getTransport() instanceof NetworkChannel channel
                && channel.supportedOptions().contains(ExtendedSocketOptions.TCP_QUICKACK)) {
            return new QuickAckConnection(connector, endPoint, engine, channel);
        }
        return super.newSslConnection(connector, endPoint, engine);
    }

    /** As Jetty's, and a quick ACK after each read while the handshake lasts. */
    private final class QuickAckConnection extends SslConnection {
        private final NetworkChannel channel;

        QuickAckConnection(Connector connector, EndPoint endPoint, SSLEngine engine, NetworkChannel channel) {
            super(connector.getByteBufferPool(), connector.getExecutor(), getSslContextFactory(), endPoint, engine,
                    isDirectBuffersForEncryption(), isDirectBuffersForDecryption());
            this.channel = channel;
        }

        @Override
        protected int networkFill(ByteBuffer input) throws IOException {
            int filled = super.networkFill(input);
            if (filled > 0 && getSSLEngine().getHandshakeStatus() != HandshakeStatus.NOT_HANDSHAKING) {
                // On Linux, setting it while an acknowledgement is pending sends it now; the kernel leaves
                // quick-ACK mode again by itself.
                try {
                    channel.setOption(ExtendedSocketOptions.TCP_QUICKACK, true);
                } catch (IOException e) {
                    // Only a closed channel refuses it: the read that follows sees that. Never fail a read for it.
                }
            }
            return filled;
        }
    }
}
