package io.pintle.server.tls;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.NetworkChannel;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.IntSupplier;
import java.util.function.LongSupplier;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult.HandshakeStatus;
import jdk.net.ExtendedSocketOptions;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.io.ssl.SslConnection;
import org.eclipse.jetty.io.ssl.SslHandshakeListener;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.SslConnectionFactory;
import org.eclipse.jetty.util.ProcessorUtils;
import org.eclipse.jetty.util.ssl.SslContextFactory;

/**
 * Jetty's TLS connection factory, whose connections (1) acknowledge what they read during the handshake at once
 * (Linux {@code TCP_QUICKACK}), so that a client whose next write waits behind Nagle's algorithm does not wait for
 * the server's delayed acknowledgement, and (2) run their handshake steps through a {@link HandshakeGate}, one
 * step at a time per core, handshakes under way first.
 *
 * <p>Quick ACK. Twice in a TLS 1.3 handshake with a client certificate the client writes something the server
 * does not answer: its last flight (certificate, verify, finished), after which it writes its request at once — a
 * server can issue its session tickets only after that flight, and BoringSSL (Conscrypt, the default provider)
 * writes them with the first response, not before (an empty wrap after the handshake produces nothing: checked) —;
 * and, with the JDK's client, the compatibility change_cipher_spec it writes alone before that flight. Without
 * {@code TCP_NODELAY} (Python's {@code ssl}, {@code ab}, the JDK's sockets, many HTTP libraries; curl sets it)
 * the kernel holds the client's next small write until the previous one is acknowledged, and the server, having
 * nothing to send, acknowledges it only when its delayed-ACK timer fires, 40 ms or more on Linux. Measured with
 * {@code tcpdump} (issue 23): request to first byte 45 ms at p50 instead of 3 ms, the request leaving the client
 * right after the server's bare ACK. nginx does not stall because OpenSSL sends its tickets right after the
 * handshake, and the ACK rides with them. Asking for a quick ACK after each read of the handshake sends that ACK
 * at once: a system call per handshake read (two or three per connection), and at most as many small packets.
 * Where the option is not supported (not Linux) there are no quick ACKs.
 *
 * <p>Handshake gate: see {@link HandshakeGate}. A step holds its permit until the read it was given is processed
 * or the handshake ends, whichever is first: the first request, which may arrive with the client's last flight and
 * may block (an upload), runs after the permit is given back. Jetty can also advance a handshake outside a read
 * (when its flight did not fit the socket's send buffer, the write's completion goes on with it): that part, the
 * cheap end of a handshake, runs ungated.
 *
 * <p>Bench-only A/B switches, not settings (no operator has a reason to turn them off): {@code
 * -Dpintle.bench.quickAckHandshake=false}, {@code -Dpintle.bench.handshakeGate=false} (which also ends the
 * returning clients' precedence), {@code -Dpintle.bench.returningFirst=false}; the first two off give Jetty's own
 * connections (docs/BENCHMARKS.md, bench/README.md).
 */
public final class TlsConnectionFactory extends SslConnectionFactory {
    /** Bench only: the system property whose {@code false} turns the quick ACKs off, for an A/B run. */
    public static final String BENCH_QUICK_ACK_SWITCH = "pintle.bench.quickAckHandshake";
    /** Bench only: the system property whose {@code false} turns the handshake gate off, for an A/B run. */
    public static final String BENCH_GATE_SWITCH = "pintle.bench.handshakeGate";
    /**
     * Bench only: the system property whose {@code false} puts returning clients' new handshakes in arrival order
     * with the others (the gate as before {@link ReturningPeers}), for an A/B run.
     */
    public static final String BENCH_RETURNING_SWITCH = "pintle.bench.returningFirst";

    private final boolean quickAck;
    /** Null when off. */
    private final HandshakeGate gate;
    /** Null when off (or the gate is). */
    private final ReturningPeers returning;
    /** New handshakes that went before the other new ones, their client having just finished one. */
    private final LongAdder returned = new LongAdder();

    /**
     * @param tls the TLS configuration
     * @param nextProtocol the protocol after TLS (ALPN)
     */
    public TlsConnectionFactory(SslContextFactory.Server tls, String nextProtocol) {
        super(tls, nextProtocol);
        this.quickAck = !"false".equals(System.getProperty(BENCH_QUICK_ACK_SWITCH));
        this.gate = "false".equals(System.getProperty(BENCH_GATE_SWITCH)) ? null
                : new HandshakeGate(ProcessorUtils.availableProcessors());
        this.returning = gate == null || "false".equals(System.getProperty(BENCH_RETURNING_SWITCH)) ? null
                : new ReturningPeers();
    }

    /** @return the number of handshaking connections waiting for a step, or null when the gate is off */
    public IntSupplier handshakesWaiting() {
        return gate == null ? null : gate::waiting;
    }

    /** @return the number of handshake steps running, or null when the gate is off */
    public IntSupplier handshakeStepsRunning() {
        return gate == null ? null : gate::running;
    }

    /**
     * @return new handshakes so far that went before the other new ones (their address had just finished one), or
     *     null when returning clients have no precedence
     */
    public LongSupplier handshakesReturning() {
        return returning == null ? null : returned::sum;
    }

    @Override
    protected SslConnection newSslConnection(Connector connector, EndPoint endPoint, SSLEngine engine) {
        NetworkChannel channel = quickAck && endPoint.getTransport() instanceof NetworkChannel network
                && network.supportedOptions().contains(ExtendedSocketOptions.TCP_QUICKACK) ? network : null;
        if (channel == null && gate == null) {
            return super.newSslConnection(connector, endPoint, engine);
        }
        return new PintleSslConnection(connector, endPoint, engine, channel);
    }

    /**
     * As Jetty's, with quick ACKs while the handshake lasts (if {@code channel}) and gated steps (if the factory has
     * a {@link #gate}).
     */
    private final class PintleSslConnection extends SslConnection implements SslHandshakeListener,
            HandshakeGate.Waiter {
        private final NetworkChannel channel;
        /** Set once the handshake has succeeded or failed: reads no longer go through the gate. */
        private volatile boolean handshakeOver;
        /**
         * Its place among new handshakes, decided at its first read (which uses up its address's ticket) and read
         * again by later reads and by the handshake's end, which may run on other threads.
         */
        private volatile HandshakeGate.Turn firstTurn;
        /** The client's address, read with {@link #firstTurn} (written before it); null without precedence. */
        private InetAddress peer;
        /**
         * The permit of the latest step, which the handshake's end gives back early. Two steps of one connection can
         * overlap (a step re-arms the read interest before it returns, and the next read may start on another
         * thread meanwhile): each step releases its own permit, and a permit is given back once however often it is
         * released, so none is lost or given back twice.
         */
        private final AtomicReference<HandshakeGate.Permit> latest = new AtomicReference<>();

        PintleSslConnection(Connector connector, EndPoint endPoint, SSLEngine engine, NetworkChannel channel) {
            super(connector.getByteBufferPool(), connector.getExecutor(), getSslContextFactory(), endPoint, engine,
                    isDirectBuffersForEncryption(), isDirectBuffersForDecryption());
            this.channel = channel;
            if (gate != null) {
                addHandshakeListener(this);
            }
        }

        @Override
        public void onFillable() {
            if (gate == null || handshakeOver) {
                super.onFillable();
                return;
            }
            // Under way once the server has written its flight: a ClientHello cut in two reads is still new.
            HandshakeGate.Permit permit = gate.enter(this, getBytesOut() > 0 ? HandshakeGate.Turn.UNDER_WAY
                    : newTurn());
            if (permit != null) {
                step(permit);
            }
            // else queued: resume() runs the step when a permit is free. This connection's read interest was used
            // up by this call and is asked again only by the step.
        }

        /**
         * Decided once, at the first read: a ClientHello cut in two reads is asked again by the step of its first
         * part, after this was set.
         */
        private HandshakeGate.Turn newTurn() {
            if (firstTurn == null) {
                peer = returning != null && getEndPoint().getRemoteSocketAddress() instanceof InetSocketAddress socket
                        ? socket.getAddress() : null;
                boolean back = peer != null && returning.take(peer);
                if (back) {
                    returned.increment();
                }
                firstTurn = back ? HandshakeGate.Turn.RETURNING : HandshakeGate.Turn.NEW;
            }
            return firstTurn;
        }

        @Override
        public boolean resume(HandshakeGate.Permit permit) {
            try {
                getExecutor().execute(() -> step(permit));
                return true;
            } catch (RuntimeException e) {
                // A stopping pool refuses new work: the gate takes the permit back; the connection, not read again,
                // ends with the server or at its header timeout.
                return false;
            }
        }

        @Override
        public boolean isOpen() {
            return getEndPoint().isOpen();
        }

        private void step(HandshakeGate.Permit permit) {
            latest.set(permit);
            try {
                super.onFillable();
            } finally {
                permit.release();
            }
        }

        private void handshakeEnded() {
            handshakeOver = true;
            HandshakeGate.Permit permit = latest.get();
            if (permit != null) {
                permit.release();
            }
        }

        @Override
        public void handshakeSucceeded(Event event) {
            handshakeEnded();
            // Only a handshake that waited among the new ones leaves a ticket: a returning one leaves none.
            if (firstTurn == HandshakeGate.Turn.NEW && peer != null) {
                returning.finished(peer);
            }
        }

        @Override
        public void handshakeFailed(Event event, Throwable failure) {
            handshakeEnded();
        }

        @Override
        protected int networkFill(ByteBuffer input) throws IOException {
            int filled = super.networkFill(input);
            if (channel != null && filled > 0
                    && getSSLEngine().getHandshakeStatus() != HandshakeStatus.NOT_HANDSHAKING) {
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
