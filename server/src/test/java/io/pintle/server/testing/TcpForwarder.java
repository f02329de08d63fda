package io.pintle.server.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP forwarder on 127.0.0.1 in front of a server, bytes passed through untouched (TLS ends at the server), that
 * can make the connections open at a moment go silent: from then on what either side sends is read and dropped, so
 * both ends see a healthy TCP connection that never answers, as a peer that hung or a middlebox that lost the flow.
 * Connections opened later are forwarded again.
 */
public final class TcpForwarder implements AutoCloseable {
    private final ServerSocket listener;
    private final InetSocketAddress target;
    private final List<Link> links = new CopyOnWriteArrayList<>();

    private TcpForwarder(ServerSocket listener, InetSocketAddress target) {
        this.listener = listener;
        this.target = target;
    }

    /**
     * @param targetPort the server's port on 127.0.0.1
     * @return a forwarder accepting connections
     * @throws IOException when it cannot listen
     */
    public static TcpForwarder to(int targetPort) throws IOException {
        ServerSocket listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        TcpForwarder forwarder = new TcpForwarder(listener,
                new InetSocketAddress(InetAddress.getLoopbackAddress(), targetPort));
        Thread acceptor = new Thread(forwarder::accept, "tcp-forwarder-accept");
        acceptor.setDaemon(true);
        acceptor.start();
        return forwarder;
    }

    /** @return the port to connect to */
    public int port() {
        return listener.getLocalPort();
    }

    /** Makes every connection open now silent in both directions, for good. */
    public void silenceOpenConnections() {
        for (Link link : links) {
            link.silent = true;
        }
    }

    private void accept() {
        while (!listener.isClosed()) {
            try {
                Socket client = listener.accept();
                Socket server = new Socket();
                server.connect(target, 5_000);
                Link link = new Link(client, server);
                links.add(link);
                pump(link, client, server, "up");
                pump(link, server, client, "down");
            } catch (IOException e) {
                // Closed, or the server refused: the client sees its connection closed.
            }
        }
    }

    private static void pump(Link link, Socket from, Socket to, String direction) throws IOException {
        InputStream in = from.getInputStream();
        OutputStream out = to.getOutputStream();
        Thread thread = new Thread(() -> {
            byte[] buffer = new byte[16 * 1024];
            try {
                for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
                    if (!link.silent) {
                        out.write(buffer, 0, n);
                        out.flush();
                    }
                }
            } catch (IOException e) {
                // The link is going down.
            } finally {
                link.close();
            }
        }, "tcp-forwarder-" + direction);
        thread.setDaemon(true);
        thread.start();
    }

    @Override
    public void close() throws IOException {
        listener.close();
        for (Link link : links) {
            link.close();
        }
    }

    /** One forwarded connection. */
    private static final class Link {
        private final Socket client;
        private final Socket server;
        private volatile boolean silent;

        Link(Socket client, Socket server) {
            this.client = client;
            this.server = server;
        }

        void close() {
            try {
                client.close();
            } catch (IOException e) {
                // Already closed.
            }
            try {
                server.close();
            } catch (IOException e) {
                // Already closed.
            }
        }
    }
}
