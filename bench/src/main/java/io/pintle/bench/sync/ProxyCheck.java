package io.pintle.bench.sync;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Measures what {@link DelayProxy} really adds, before the benchmark relies on it: the round trip of a one-byte
 * ping-pong through it (and directly, for reference), the first exchange on a new connection (which also pays the
 * emulated TCP handshake), and the throughput of a one-way bulk transfer through it.
 *
 * @param directMillis median ping-pong round trip without the proxy
 * @param proxiedMillis median ping-pong round trip through the proxy
 * @param proxiedMinMillis fastest of them
 * @param proxiedMaxMillis slowest of them
 * @param firstExchangeMillis connect plus the first ping-pong through the proxy (expected: about two round trips)
 * @param megabytesPerSecond bulk throughput through the proxy, one way, from first to last byte received
 * @param directMegabytesPerSecond the same without the proxy
 * @param turnsCounted turns the proxy counted for the ping-pongs (expected: as many as ping-pongs)
 * @param pings how many ping-pongs
 */
record ProxyCheck(double directMillis, double proxiedMillis, double proxiedMinMillis, double proxiedMaxMillis,
        double firstExchangeMillis, double megabytesPerSecond, double directMegabytesPerSecond, long turnsCounted,
        int pings) {
    private static final int PINGS = 50;
    private static final int BULK_BYTES = 64 * 1024 * 1024;

    /**
     * @param roundTrip the latency the proxy adds
     * @return the measurements
     * @throws IOException on socket errors
     */
    static ProxyCheck run(Duration roundTrip) throws IOException, InterruptedException {
        try (ServerSocket echo = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            serve(echo, ProxyCheck::echo);
            InetSocketAddress echoAddress = new InetSocketAddress(InetAddress.getLoopbackAddress(), echo.getLocalPort());
            List<Double> direct = pingPong(echoAddress);
            try (DelayProxy proxy = DelayProxy.start(echoAddress, roundTrip)) {
                InetSocketAddress proxied = new InetSocketAddress(InetAddress.getLoopbackAddress(), proxy.port());
                long start = System.nanoTime();
                try (Socket socket = new Socket()) {
                    socket.setTcpNoDelay(true);
                    socket.connect(proxied);
                    exchange(socket);
                }
                double first = (System.nanoTime() - start) / 1e6;
                proxy.reset();
                List<Double> delayed = pingPong(proxied);
                long turns = proxy.counts().turns();
                double throughput = bulk(roundTrip, true);
                double directThroughput = bulk(roundTrip, false);
                return new ProxyCheck(median(direct), median(delayed), Collections.min(delayed),
                        Collections.max(delayed), first, throughput, directThroughput, turns, PINGS);
            }
        }
    }

    private static List<Double> pingPong(InetSocketAddress address) throws IOException {
        List<Double> millis = new ArrayList<>();
        try (Socket socket = new Socket()) {
            socket.setTcpNoDelay(true);
            socket.connect(address);
            exchange(socket);
            for (int i = 0; i < PINGS; i++) {
                long start = System.nanoTime();
                exchange(socket);
                millis.add((System.nanoTime() - start) / 1e6);
            }
        }
        return millis;
    }

    private static void exchange(Socket socket) throws IOException {
        socket.getOutputStream().write(1);
        socket.getOutputStream().flush();
        if (socket.getInputStream().read() < 0) {
            throw new IOException("echo closed");
        }
    }

    /** Sends BULK_BYTES to a sink, through a proxy or not, and the sink times first to last byte. */
    private static double bulk(Duration roundTrip, boolean proxied) throws IOException, InterruptedException {
        try (ServerSocket sink = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            AtomicLongArray window = new AtomicLongArray(2); // first and last byte, set by the sink
            serve(sink, socket -> {
                byte[] buffer = new byte[256 * 1024];
                long received = 0;
                InputStream in = socket.getInputStream();
                int n;
                while ((n = in.read(buffer)) > 0) {
                    if (received == 0) {
                        window.set(0, System.nanoTime());
                    }
                    received += n;
                }
                window.set(1, System.nanoTime());
                if (received != BULK_BYTES) {
                    throw new IOException("sink received " + received + " bytes");
                }
            });
            try (DelayProxy proxy = DelayProxy.start(
                    new InetSocketAddress(InetAddress.getLoopbackAddress(), sink.getLocalPort()), roundTrip);
                    Socket socket = new Socket()) {
                socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(),
                        proxied ? proxy.port() : sink.getLocalPort()));
                OutputStream out = socket.getOutputStream();
                byte[] chunk = new byte[256 * 1024];
                for (int sent = 0; sent < BULK_BYTES; sent += chunk.length) {
                    out.write(chunk);
                }
                socket.shutdownOutput();
                long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
                while (window.get(1) == 0 && System.nanoTime() < deadline) {
                    Thread.sleep(5);
                }
            }
            return BULK_BYTES / 1e6 / ((window.get(1) - window.get(0)) / 1e9);
        }
    }

    private interface Handler {
        void handle(Socket socket) throws IOException;
    }

    /** Serves each connection on a daemon thread, until the listener closes. */
    private static Thread serve(ServerSocket listener, Handler handler) {
        Thread thread = new Thread(() -> {
            while (!listener.isClosed()) {
                Socket accepted;
                try {
                    accepted = listener.accept();
                } catch (IOException closed) {
                    return;
                }
                Thread connection = new Thread(() -> {
                    try (Socket socket = accepted) {
                        socket.setTcpNoDelay(true);
                        handler.handle(socket);
                    } catch (IOException e) {
                        System.err.println("proxy check: " + e);
                    }
                }, "proxy-check-connection");
                connection.setDaemon(true);
                connection.start();
            }
        }, "proxy-check-accept");
        thread.setDaemon(true);
        thread.start();
        return thread;
    }

    private static void echo(Socket socket) throws IOException {
        InputStream in = socket.getInputStream();
        OutputStream out = socket.getOutputStream();
        int b;
        while ((b = in.read()) >= 0) {
            out.write(b);
            out.flush();
        }
    }

    static double median(List<Double> values) {
        List<Double> sorted = new ArrayList<>(values);
        Collections.sort(sorted);
        int n = sorted.size();
        return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
    }
}
