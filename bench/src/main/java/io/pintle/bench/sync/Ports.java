package io.pintle.bench.sync;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/** Loopback ports of the servers the benchmark starts, and stopping them. */
public final class Ports {
    private Ports() {}

    /**
     * A port free on 127.0.0.1 now. Another process could take it before the server binds it; the server then
     * fails to start and the run fails, loudly.
     *
     * @return the port
     * @throws IOException if no port can be bound
     */
    public static int free() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    /**
     * Waits until something accepts connections on 127.0.0.1:{@code port}.
     *
     * @param port the port
     * @param limit how long to wait at most
     * @param process the server, whose exit ends the wait
     * @throws IOException if the time is up or the process exited
     */
    public static void awaitListening(int port, Duration limit, Process process) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + limit.toNanos();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IOException("server exited with " + process.exitValue() + " before listening on " + port);
            }
            try (Socket socket = new Socket()) {
                socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 200);
                return;
            } catch (IOException notYet) {
                Thread.sleep(50);
            }
        }
        throw new IOException("nothing listening on 127.0.0.1:" + port + " after " + limit);
    }

    /**
     * Stops a server this harness started: SIGTERM to its pid, SIGKILL if it is still there after {@code grace}.
     *
     * @param process the server
     * @param grace how long it may take to stop
     */
    public static void stop(Process process, Duration grace) {
        process.destroy();
        try {
            if (!process.waitFor(grace.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }
}
