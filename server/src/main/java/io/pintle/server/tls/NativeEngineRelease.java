package io.pintle.server.tls;

import java.nio.ByteBuffer;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.ssl.SslConnection;

/**
 * Frees a Conscrypt engine's native state (BoringSSL's {@code SSL} and the pipe Conscrypt opens beside each one)
 * as soon as its TLS connection closes, however it ends: handshake never finished, idle or header timeout, client
 * reset, normal close.
 *
 * <p>Conscrypt frees them only once both sides of the engine are closed and no encrypted output is left in it;
 * otherwise its finalizer does, whenever a garbage collection runs. Jetty closes the outbound side of every
 * connection it closes, but the inbound side only when it reads the end of the stream, and it cannot send what is
 * left (the close_notify that closing queues, session tickets) once the peer has gone. A connection ended by a
 * timeout or by a reset thus kept two descriptors until a collection: a few rounds of abandoned handshakes ran
 * the process out of descriptors. The JDK's engine holds nothing native and is left alone.
 */
public final class NativeEngineRelease implements Connection.Listener {
    private static final ByteBuffer NOTHING = ByteBuffer.allocate(0);
    /** Wraps that may be needed to empty an engine: a close_notify and a few tickets fit in one. */
    private static final int MAX_DRAINS = 8;

    @Override
    public void onOpened(Connection connection) {
        // Nothing to do until it closes.
    }

    @Override
    public void onClosed(Connection connection) {
        if (connection instanceof SslConnection tls && NativeTls.isNative(tls.getSSLEngine())) {
            release(tls.getSSLEngine());
        }
    }

    /**
     * Closes both sides, then takes out whatever encrypted output is left: it goes nowhere, the connection is
     * gone, and the wrap that empties the engine frees it (each call returns at once on an engine already freed).
     *
     * @param engine a Conscrypt engine whose connection is closed
     */
    static void release(SSLEngine engine) {
        engine.closeOutbound();
        try {
            engine.closeInbound();
            ByteBuffer discarded = ByteBuffer.allocate(engine.getSession().getPacketBufferSize());
            for (int i = 0; i < MAX_DRAINS && engine.wrap(NOTHING, discarded).bytesProduced() > 0; i++) {
                discarded.clear();
            }
        } catch (SSLException e) {
            // No peer is left to tell; what could not be freed here, the finalizer frees.
        }
    }
}
