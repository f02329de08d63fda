package io.pintle.bench.hostile;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLSocket;

/**
 * Issue 18's first case: Range downloads of a large file whose client leaves after the first bytes ({@code curl
 * -r 0- --limit-rate 50k --max-time 0.3}). Each is a new TLS connection from the attacker's address with a small
 * receive buffer (the server's writes stall after a few kilobytes, as on a slow link), reads the start of the
 * answer, then resets the connection (no close_notify, no FIN: SO_LINGER 0).
 */
final class AbortedRanges implements Attack {
    /** The socket's receive buffer: the server's writes stall after a few kilobytes. */
    private static final int RECEIVE_BUFFER = 8192;

    private final Attacker attacker;
    private final int count;
    private final int concurrency;
    private final AtomicInteger next = new AtomicInteger();
    private long nanos;

    AbortedRanges(Attacker attacker, int count, int concurrency) {
        this.attacker = attacker;
        this.count = count;
        this.concurrency = concurrency;
    }

    @Override
    public String description() {
        return String.format(Locale.ROOT, "%,d Range downloads (`Range: bytes=0-`) of `%s` (8 MiB), anonymous, %d at"
                + " a time, each a new TLS connection reset after the first 64 bytes", count,
                HostileLayout.LARGE_FILE, concurrency);
    }

    @Override
    public void launch() throws Exception {
        long start = System.nanoTime();
        ExecutorService pool = Executors.newFixedThreadPool(concurrency);
        try {
            List<Future<?>> workers = new ArrayList<>();
            for (int i = 0; i < concurrency; i++) {
                workers.add(pool.submit(() -> {
                    while (next.getAndIncrement() < count) {
                        abortOne();
                    }
                }));
            }
            for (Future<?> worker : workers) {
                worker.get();
            }
        } finally {
            pool.shutdownNow();
            nanos = System.nanoTime() - start;
        }
    }

    private void abortOne() {
        try (SSLSocket socket = attacker.connect(RECEIVE_BUFFER)) {
            Attacker.write(socket, "GET " + HostileLayout.LARGE_FILE + " HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    + "Range: bytes=0-\r\n\r\n");
            int status = Attacker.readStatus(socket, 64);
            attacker.saw(status < 0 ? "no status" : Integer.toString(status));
            socket.setSoLinger(true, 0);
        } catch (IOException e) {
            attacker.saw("failed: " + e.getClass().getSimpleName());
        }
    }

    @Override
    public String delivered() {
        return String.format(Locale.ROOT, "%,d in %.1f s (%,.0f/s)", Math.min(count, next.get()), nanos / 1e9,
                Math.min(count, next.get()) / (nanos / 1e9));
    }

    @Override
    public void close() {
        // Every connection is closed by launch.
    }
}
