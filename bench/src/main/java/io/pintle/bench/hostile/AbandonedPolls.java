package io.pintle.bench.hostile;

import java.io.IOException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLSocket;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http2.ErrorCode;
import org.eclipse.jetty.http2.api.Session;
import org.eclipse.jetty.http2.api.Stream;
import org.eclipse.jetty.http2.frames.ResetFrame;
import org.eclipse.jetty.util.Callback;

/**
 * Issue 18's fourth case: change waits ({@code ?wait=}) that their client abandons. {@code If-None-Match: *} on a
 * /common file parks anonymously until the file changes; the attacker parks as many as it may, holds them for a
 * while, then goes away. Over HTTP/2 it resets each stream ({@link Http2}); over HTTP/1.1 it resets each
 * connection ({@link Http1}), which the server does not see while the wait is parked (documented), so those slots
 * come back only when the waits end.
 */
final class AbandonedPolls {
    private AbandonedPolls() {}

    /** Many waits on a few HTTP/2 connections, then a RST_STREAM (CANCEL) for each. */
    static final class Http2 implements Attack {
        private final Attacker attacker;
        private final int connections;
        private final int streams;
        private final Duration hold;
        private final Http2Streams h2;
        private final List<Stream> opened = new ArrayList<>();
        private long openNanos;

        Http2(Attacker attacker, int connections, int streams, Duration hold) {
            this.attacker = attacker;
            this.connections = connections;
            this.streams = streams;
            this.hold = hold;
            this.h2 = new Http2Streams(attacker);
        }

        @Override
        public String description() {
            return String.format(Locale.ROOT, "%d HTTP/2 connections × %d streams `GET %s?wait=300`,"
                    + " `If-None-Match: *`, anonymous; held %d s, then every stream reset (CANCEL)", connections,
                    streams, HostileLayout.COMMON_FILE, hold.toSeconds());
        }

        @Override
        public void launch() throws Exception {
            long start = System.nanoTime();
            h2.start();
            List<CompletableFuture<Stream>> pending = new ArrayList<>();
            for (int c = 0; c < connections; c++) {
                Session session = h2.connect(new Session.Listener() {});
                for (int s = 0; s < streams; s++) {
                    HttpFields fields = HttpFields.build().put(HttpHeader.IF_NONE_MATCH, "*");
                    pending.add(h2.get(session, HostileLayout.COMMON_FILE + "?wait=300", fields,
                            new Http2Streams.StatusCounter(h2)));
                }
            }
            for (CompletableFuture<Stream> stream : pending) {
                opened.add(stream.get(Http2Streams.OPEN_LIMIT_SECONDS, TimeUnit.SECONDS));
            }
            openNanos = System.nanoTime() - start;
            Thread.sleep(hold.toMillis());
            int parked = connections * streams - h2.answered();
            for (Stream stream : opened) {
                if (!stream.isClosed()) {
                    stream.reset(new ResetFrame(stream.getId(), ErrorCode.CANCEL_STREAM_ERROR.code), Callback.NOOP);
                }
            }
            attacker.saw("parked, then reset by the attacker", parked);
        }

        @Override
        public String delivered() {
            return String.format(Locale.ROOT, "%,d streams open in %.1f s", opened.size(), openNanos / 1e9);
        }

        @Override
        public void close() {
            h2.close();
        }
    }

    /** One wait per HTTP/1.1 connection, then each connection reset (SO_LINGER 0). */
    static final class Http1 implements Attack {
        /** After this, a 503 the server wrote at once has arrived; a parked wait answers nothing. */
        private static final int ANSWERS_ARRIVED_MILLIS = 500;

        private final Attacker attacker;
        private final int count;
        private final Duration wait;
        private final Duration hold;
        private final List<SSLSocket> sockets = new ArrayList<>();
        private long openNanos;

        Http1(Attacker attacker, int count, Duration wait, Duration hold) {
            this.attacker = attacker;
            this.count = count;
            this.wait = wait;
            this.hold = hold;
        }

        @Override
        public String description() {
            return String.format(Locale.ROOT, "%,d HTTP/1.1 connections, one `GET %s?wait=%d` each, `If-None-Match:"
                    + " *`, anonymous; held %d s, then every connection reset", count, HostileLayout.COMMON_FILE,
                    wait.toSeconds(), hold.toSeconds());
        }

        @Override
        public void launch() throws Exception {
            long start = System.nanoTime();
            for (int i = 0; i < count; i++) {
                try {
                    SSLSocket socket = attacker.connect(0);
                    Attacker.write(socket, "GET " + HostileLayout.COMMON_FILE + "?wait=" + wait.toSeconds()
                            + " HTTP/1.1\r\nHost: 127.0.0.1\r\nIf-None-Match: *\r\n\r\n");
                    sockets.add(socket);
                } catch (IOException e) {
                    attacker.saw("failed: " + e.getClass().getSimpleName());
                }
            }
            openNanos = System.nanoTime() - start;
            Thread.sleep(ANSWERS_ARRIVED_MILLIS);
            for (SSLSocket socket : sockets) {
                socket.setSoTimeout(5);
                try {
                    int status = Attacker.readStatus(socket, 512);
                    attacker.saw(status < 0 ? "closed without an answer" : Integer.toString(status));
                } catch (SocketTimeoutException parked) {
                    attacker.saw("parked, then reset by the attacker");
                }
            }
            Thread.sleep(Math.max(0, hold.toMillis() - (System.nanoTime() - start) / 1_000_000));
            for (SSLSocket socket : sockets) {
                socket.setSoLinger(true, 0);
                socket.close();
            }
        }

        @Override
        public String delivered() {
            return String.format(Locale.ROOT, "%,d connections open in %.1f s", sockets.size(), openNanos / 1e9);
        }

        @Override
        public void close() {
            // Every connection is closed by launch.
        }
    }
}
