package io.pintle.bench.hostile;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpURI;
import org.eclipse.jetty.http.HttpVersion;
import org.eclipse.jetty.http.MetaData;
import org.eclipse.jetty.http2.ErrorCode;
import org.eclipse.jetty.http2.api.Session;
import org.eclipse.jetty.http2.api.Stream;
import org.eclipse.jetty.http2.client.HTTP2Client;
import org.eclipse.jetty.http2.frames.HeadersFrame;
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
    private static final long OPEN_LIMIT_SECONDS = 15;

    private final Attacker attacker;
    private final int connections;
    private final int streams;
    private final List<Session> sessions = new ArrayList<>();
    private final AtomicInteger answered = new AtomicInteger();
    private HTTP2Client client;
    private long openNanos;
    private long lastPing;

    ZeroWindow(Attacker attacker, int connections, int streams) {
        this.attacker = attacker;
        this.connections = connections;
        this.streams = streams;
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
        client = attacker.http2();
        List<CompletableFuture<Stream>> opened = new ArrayList<>();
        for (int c = 0; c < connections; c++) {
            Session session = client.connect(client.getClientConnector().getSslContextFactory(), attacker.server(),
                    new Session.Listener() {
                        @Override
                        public Map<Integer, Integer> onPreface(Session session) {
                            return Map.of(SettingsFrame.INITIAL_WINDOW_SIZE, 0);
                        }
                    }).get(OPEN_LIMIT_SECONDS, TimeUnit.SECONDS);
            sessions.add(session);
            for (int s = 0; s < streams; s++) {
                MetaData.Request get = new MetaData.Request("GET", HttpURI.from("https://127.0.0.1:"
                        + attacker.port() + HostileLayout.LARGE_FILE), HttpVersion.HTTP_2, HttpFields.EMPTY);
                opened.add(session.newStream(new HeadersFrame(get, null, true), new Stream.Listener() {
                    @Override
                    public void onHeaders(Stream stream, HeadersFrame frame) {
                        if (frame.getMetaData() instanceof MetaData.Response response) {
                            answered.incrementAndGet();
                            attacker.saw(Integer.toString(response.getStatus()));
                        }
                    }

                    @Override
                    public void onReset(Stream stream, ResetFrame frame, Callback callback) {
                        attacker.saw("reset by the server (" + ErrorCode.toString(frame.getError(), "?") + ")");
                        callback.succeeded();
                    }
                }));
            }
        }
        for (CompletableFuture<Stream> stream : opened) {
            stream.get(OPEN_LIMIT_SECONDS, TimeUnit.SECONDS);
        }
        // Done when every stream has its status: the server has decided which hold a worker.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(OPEN_LIMIT_SECONDS);
        while (answered.get() < connections * streams && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        openNanos = System.nanoTime() - start;
        lastPing = System.nanoTime();
    }

    @Override
    public void tick() {
        if (System.nanoTime() - lastPing >= PING_EVERY_NANOS) {
            lastPing = System.nanoTime();
            for (Session session : sessions) {
                session.ping(new PingFrame(lastPing, false), Callback.NOOP);
            }
        }
    }

    @Override
    public String delivered() {
        return String.format(Locale.ROOT, "%,d streams open, %,d with a status, in %.1f s", connections * streams,
                answered.get(), openNanos / 1e9);
    }

    @Override
    public void close() {
        for (Session session : sessions) {
            session.close(ErrorCode.NO_ERROR.code, "done", Callback.NOOP);
        }
        if (client != null) {
            try {
                client.stop();
            } catch (Exception e) {
                attacker.saw("stop failed: " + e.getClass().getSimpleName());
            }
        }
    }
}
