package io.pintle.bench.sync;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * A TCP proxy on 127.0.0.1 that adds latency, since this kernel has no {@code netem}: every chunk of bytes is
 * forwarded, untouched (TLS goes through as it is), half a round trip after it arrived. Chunks are queued with
 * their due time and a writer per direction sends each when due, so the delay adds to each byte's trip without
 * capping the bandwidth (a writer never sleeps a full delay per chunk).
 *
 * <p>The kernel completes the client's TCP handshake with the proxy at once; to charge it like a real link does,
 * nothing is forwarded either way before one full round trip after the accept (so the first bytes reach the
 * server one and a half round trips after {@code connect}, as over a real link).
 *
 * <p>It also counts connections and <em>turns</em>: a turn is server-to-client data arriving after
 * client-to-server data on the same connection, that is one request/response exchange the client waited for. A
 * sequential protocol makes one turn per exchange; a client with requests in flight in parallel makes fewer turns
 * than requests. Round trips as reported = connections (their TCP handshake) + turns.
 */
final class DelayProxy implements AutoCloseable {
    /** Read size: chunks are forwarded as they arrive, at most this big. */
    private static final int CHUNK_BYTES = 256 * 1024;
    private static final int SOCKET_BUFFER_BYTES = 1024 * 1024;
    /**
     * A chunk due within this is written at once rather than parked for: parkNanos oversleeps by some 50 µs, which
     * per chunk of a few KB would cap the bandwidth near 100 MB/s. Sending up to 0.2 ms early is under 2% of the
     * one-way delay.
     */
    private static final long EARLY_NANOS = 200_000;

    private final InetSocketAddress target;
    private final long oneWayNanos;
    private final ServerSocket listener;
    private final Thread acceptor;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final AtomicLong connections = new AtomicLong();
    private final AtomicLong turns = new AtomicLong();
    private final AtomicLong bytes = new AtomicLong();
    /** Direct buffers written and free again: reading into them and writing from them copies nothing on the heap. */
    private final Queue<ByteBuffer> buffers = new ConcurrentLinkedQueue<>();
    private volatile boolean closed;

    private DelayProxy(InetSocketAddress target, Duration roundTrip, ServerSocket listener) {
        this.target = target;
        this.oneWayNanos = roundTrip.toNanos() / 2;
        this.listener = listener;
        this.acceptor = new Thread(this::acceptLoop, "delay-proxy-accept-" + listener.getLocalPort());
        this.acceptor.setDaemon(true);
    }

    /**
     * @param target where to forward (127.0.0.1)
     * @param roundTrip the round-trip time to add
     * @return a started proxy
     * @throws IOException if it cannot listen
     */
    static DelayProxy start(InetSocketAddress target, Duration roundTrip) throws IOException {
        ServerSocketChannel channel = ServerSocketChannel.open();
        channel.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 50);
        ServerSocket listener = channel.socket();
        DelayProxy proxy = new DelayProxy(target, roundTrip, listener);
        proxy.acceptor.start();
        return proxy;
    }

    /** @return the port clients connect to */
    int port() {
        return listener.getLocalPort();
    }

    /** Counters since the last {@link #reset()}. */
    record Counts(long connections, long turns, long bytes) {
        /** @return connections (one TCP handshake each) plus turns */
        long roundTrips() {
            return connections + turns;
        }
    }

    /** @return what went through since the last reset */
    Counts counts() {
        return new Counts(connections.get(), turns.get(), bytes.get());
    }

    /** Zeroes the counters. */
    void reset() {
        connections.set(0);
        turns.set(0);
        bytes.set(0);
    }

    @Override
    public void close() throws IOException {
        closed = true;
        listener.close();
        for (Socket socket : sockets) {
            socket.close();
        }
    }

    private void acceptLoop() {
        while (!closed) {
            try {
                Socket client = listener.accept();
                long acceptedAt = System.nanoTime();
                Socket server = SocketChannel.open().socket();
                server.setReceiveBufferSize(SOCKET_BUFFER_BYTES);
                server.setSendBufferSize(SOCKET_BUFFER_BYTES);
                server.connect(target);
                client.setReceiveBufferSize(SOCKET_BUFFER_BYTES);
                client.setSendBufferSize(SOCKET_BUFFER_BYTES);
                client.setTcpNoDelay(true);
                server.setTcpNoDelay(true);
                sockets.add(client);
                sockets.add(server);
                connections.incrementAndGet();
                Connection connection = new Connection(client, server);
                long openAt = acceptedAt + 2 * oneWayNanos;
                connection.pipe(client, server, true, openAt);
                connection.pipe(server, client, false, openAt);
            } catch (IOException e) {
                if (!closed) {
                    System.err.println("delay proxy: " + e);
                }
            }
        }
    }

    /** A chunk to write when due; no data means end of stream. */
    private record Chunk(ByteBuffer data, long dueNanos) {}

    /** One proxied connection: which way the last bytes went, for counting turns. */
    private final class Connection {
        private final Socket client;
        private final Socket server;
        private boolean lastUp;

        Connection(Socket client, Socket server) {
            this.client = client;
            this.server = server;
        }

        synchronized void arrived(boolean up) {
            if (!up && lastUp) {
                turns.incrementAndGet();
            }
            lastUp = up;
        }

        void pipe(Socket from, Socket to, boolean up, long openAt) {
            BlockingQueue<Chunk> queue = new LinkedBlockingQueue<>();
            String name = "delay-proxy-" + from.getPort() + (up ? "-up" : "-down");
            Thread reader = new Thread(() -> read(from, queue, up, openAt), name + "-read");
            Thread writer = new Thread(() -> write(to, queue), name + "-write");
            reader.setDaemon(true);
            writer.setDaemon(true);
            reader.start();
            writer.start();
        }

        private void read(Socket from, BlockingQueue<Chunk> queue, boolean up, long openAt) {
            try {
                SocketChannel channel = from.getChannel();
                while (true) {
                    ByteBuffer buffer = buffers.poll();
                    if (buffer == null) {
                        buffer = ByteBuffer.allocateDirect(CHUNK_BYTES);
                    }
                    buffer.clear();
                    int n = channel.read(buffer);
                    if (n < 0) {
                        buffers.offer(buffer);
                        break;
                    }
                    long now = System.nanoTime();
                    arrived(up);
                    bytes.addAndGet(n);
                    buffer.flip();
                    queue.add(new Chunk(buffer, Math.max(now, openAt) + oneWayNanos));
                }
            } catch (IOException e) {
                // Reset or closed: end this direction as if by EOF.
            }
            queue.add(new Chunk(null, Math.max(System.nanoTime(), openAt) + oneWayNanos));
        }

        private void write(Socket to, BlockingQueue<Chunk> queue) {
            try {
                SocketChannel channel = to.getChannel();
                while (true) {
                    Chunk chunk = queue.take();
                    long wait;
                    while ((wait = chunk.dueNanos() - System.nanoTime()) > EARLY_NANOS) {
                        LockSupport.parkNanos(wait);
                    }
                    if (chunk.data() == null) {
                        to.shutdownOutput();
                        break;
                    }
                    while (chunk.data().hasRemaining()) {
                        channel.write(chunk.data());
                    }
                    buffers.offer(chunk.data());
                }
            } catch (IOException e) {
                closeBoth();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                closeBoth();
            }
            if (client.isOutputShutdown() && server.isOutputShutdown()) {
                closeBoth();
            }
        }

        private void closeBoth() {
            for (Socket socket : List.of(client, server)) {
                try {
                    socket.close();
                } catch (IOException e) {
                    // already closed
                }
                sockets.remove(socket);
            }
        }
    }
}
