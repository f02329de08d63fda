package io.pintle.server.tls;

import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.ssl.SslConnection;

/**
 * Frees a Conscrypt engine's native state (BoringSSL's {@code SSL} and the pipe Conscrypt opens beside each one)
 * as soon as its TLS connection closes, however it ends: handshake never finished, idle or header timeout, client
 * reset, normal close.
 *
 * <p>Conscrypt frees them only once both directions of the engine are closed. Jetty closes the outbound side
 * whenever it closes a connection, but the inbound side only when it reads the end of the stream; a connection
 * that the server closes (timeouts) or that the client resets never gets there, and its two pipe descriptors
 * stayed open until a garbage collection ran the engine's finalizer: a few rounds of abandoned handshakes ran
 * the process out of descriptors. The JDK's engine holds nothing native and is left alone.
 */
public final class NativeEngineRelease implements Connection.Listener {
    @Override
    public void onOpened(Connection connection) {
        // Nothing to do until it closes.
    }

    @Override
    public void onClosed(Connection connection) {
        if (connection instanceof SslConnection tls) {
            SSLEngine engine = tls.getSSLEngine();
            if (NativeTls.isNative(engine)) {
                // Each returns at once when its side is already closed; the second one to close frees.
                engine.closeOutbound();
                try {
                    engine.closeInbound();
                } catch (SSLException e) {
                    // The connection is gone; there is no peer left to tell.
                }
            }
        }
    }
}
