package io.pintle.server.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;

/**
 * TLS clients that give up half-way, as a scanner or a crashing agent does, to count what the server keeps for
 * them: each opens a TCP connection to the node-facing listener and then, by kind, sends the start of a
 * ClientHello and stalls, or completes the handshake and stalls, or completes the handshake and resets the
 * connection without a close_notify.
 */
public final class AbandonedConnections implements AutoCloseable {
    /**
     * The first bytes of a ClientHello: a handshake record announcing 512 bytes, of which only the handshake
     * header, the version and part of the random ever come.
     */
    private static final byte[] PARTIAL_CLIENT_HELLO = {
        0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, (byte) 0xfc, 0x03, 0x03,
        1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20};

    private final List<Socket> stalled = new ArrayList<>();

    private AbandonedConnections() {}

    /**
     * Opens the connections one after the other: the stalled handshakes, the partial ClientHellos, then the reset
     * handshakes. When this returns, each has sent what its kind sends.
     *
     * @param port the server's TLS port on 127.0.0.1
     * @param client the TLS context of the full handshakes (it must be accepted by the server)
     * @param partialHellos connections that send part of a ClientHello, then stall
     * @param handshakesStalled connections that complete the handshake, then stall
     * @param handshakesReset connections that complete the handshake, then reset (no close_notify)
     * @return the stalled connections, still open on this side
     * @throws IOException when a connection cannot be made
     */
    public static AbandonedConnections open(int port, SSLContext client, int partialHellos, int handshakesStalled,
            int handshakesReset) throws IOException {
        AbandonedConnections connections = new AbandonedConnections();
        try {
            // Resets last: the collections that the handshakes' garbage sets off then run while the other
            // connections are open. A collection after a connection closed frees its engine, hiding a leak.
            for (int i = 0; i < handshakesStalled; i++) {
                connections.stalled.add(handshake(port, client));
            }
            for (int i = 0; i < partialHellos; i++) {
                Socket socket = new Socket("127.0.0.1", port);
                connections.stalled.add(socket);
                OutputStream out = socket.getOutputStream();
                out.write(PARTIAL_CLIENT_HELLO);
                out.flush();
            }
            for (int i = 0; i < handshakesReset; i++) {
                reset(handshake(port, client));
            }
        } catch (IOException | RuntimeException e) {
            connections.close();
            throw e;
        }
        return connections;
    }

    /** @return connections opened and still open on this side */
    public int stalled() {
        return stalled.size();
    }

    /**
     * Waits until the server has closed every stalled connection (its header or idle timeout), reading what it
     * sends until the end of the stream.
     *
     * @param timeout how long each may take
     * @return how many the server had not closed by then
     */
    public int awaitClosedByServer(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        int open = 0;
        byte[] buffer = new byte[4096];
        for (Socket socket : stalled) {
            try {
                InputStream in = socket.getInputStream();
                while (true) {
                    long left = Math.max(1, (deadline - System.nanoTime()) / 1_000_000);
                    socket.setSoTimeout((int) Math.min(Integer.MAX_VALUE, left));
                    if (in.read(buffer) < 0) {
                        break;
                    }
                }
            } catch (SocketTimeoutException e) {
                open++;
            } catch (IOException closedByTheServer) {
                // A reset is a close too.
            }
        }
        return open;
    }

    /** Resets every stalled connection from this side. */
    @Override
    public void close() {
        for (Socket socket : stalled) {
            try {
                reset(socket);
            } catch (IOException ignored) {
                // Already gone.
            }
        }
        stalled.clear();
    }

    /** @return a TCP connection that carried a complete TLS handshake, which closing does not end with a close_notify */
    private static Socket handshake(int port, SSLContext client) throws IOException {
        Socket tcp = new Socket("127.0.0.1", port);
        try {
            // Not closed through the TLS socket (autoClose false): that would send a close_notify.
            SSLSocket tls = (SSLSocket) client.getSocketFactory().createSocket(tcp, "127.0.0.1", port, false);
            tls.startHandshake();
            return tcp;
        } catch (IOException | RuntimeException e) {
            tcp.close();
            throw e;
        }
    }

    private static void reset(Socket socket) throws IOException {
        socket.setSoLinger(true, 0);
        socket.close();
    }

    /**
     * @param pid a process on this machine
     * @return its open file descriptors, from {@code /proc}
     * @throws IOException when {@code /proc/<pid>/fd} cannot be read
     */
    public static Descriptors descriptors(long pid) throws IOException {
        int total = 0;
        int pipes = 0;
        try (Stream<Path> entries = Files.list(Path.of("/proc/" + pid + "/fd"))) {
            for (Path entry : (Iterable<Path>) entries::iterator) {
                total++;
                try {
                    if (Files.readSymbolicLink(entry).toString().startsWith("pipe:")) {
                        pipes++;
                    }
                } catch (IOException closedMeanwhile) {
                    // Listed, then closed: still counted once.
                }
            }
        }
        return new Descriptors(total, pipes);
    }

    /**
     * Open file descriptors of a process.
     *
     * @param total all of them
     * @param pipes pipe ends among them
     */
    public record Descriptors(int total, int pipes) {
        @Override
        public String toString() {
            return total + " descriptors (" + pipes + " pipe ends)";
        }
    }
}
