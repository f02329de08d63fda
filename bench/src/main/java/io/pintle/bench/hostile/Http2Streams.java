package io.pintle.bench.hostile;

import java.util.ArrayList;
import java.util.List;
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
import org.eclipse.jetty.util.Callback;

/**
 * The client side of the attacks that open many HTTP/2 streams on a few connections ({@link ZeroWindow},
 * {@link AbandonedPolls.Http2}): one client from the attacker's address, its sessions, the count of streams that
 * got a status, and the clean-up. What each attack sends, holds and resets stays in the attack.
 */
final class Http2Streams {
    /** How long a connection or a stream may take to open. */
    static final long OPEN_LIMIT_SECONDS = 15;

    private final Attacker attacker;
    private final List<Session> sessions = new ArrayList<>();
    private final AtomicInteger answered = new AtomicInteger();
    private HTTP2Client client;

    Http2Streams(Attacker attacker) {
        this.attacker = attacker;
    }

    /** Starts the client: before the first {@link #connect}. */
    void start() throws Exception {
        client = attacker.http2();
    }

    /**
     * @param listener the session's listener (e.g. the settings its preface sends)
     * @return a new session to the server, waited for up to {@link #OPEN_LIMIT_SECONDS}
     */
    Session connect(Session.Listener listener) throws Exception {
        Session session = client.connect(client.getClientConnector().getSslContextFactory(), attacker.server(),
                listener).get(OPEN_LIMIT_SECONDS, TimeUnit.SECONDS);
        sessions.add(session);
        return session;
    }

    /**
     * @param session one of {@link #connect}'s sessions
     * @param path the path on the server
     * @param fields the request's headers
     * @param listener the stream's listener, usually a {@link StatusCounter}
     * @return the stream, once opened
     */
    CompletableFuture<Stream> get(Session session, String path, HttpFields fields, Stream.Listener listener) {
        MetaData.Request get = new MetaData.Request("GET", HttpURI.from("https://127.0.0.1:" + attacker.port()
                + path), HttpVersion.HTTP_2, fields);
        return session.newStream(new HeadersFrame(get, null, true), listener);
    }

    /** @return the sessions, in the order they were opened */
    List<Session> sessions() {
        return sessions;
    }

    /** @return how many streams have had a status */
    int answered() {
        return answered.get();
    }

    /** Closes every session, then stops the client; a failure to stop is what the attacker saw. */
    void close() {
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

    /** Counts each stream's status and tells the attacker what it was. */
    static class StatusCounter implements Stream.Listener {
        private final Http2Streams streams;

        StatusCounter(Http2Streams streams) {
            this.streams = streams;
        }

        @Override
        public void onHeaders(Stream stream, HeadersFrame frame) {
            if (frame.getMetaData() instanceof MetaData.Response response) {
                streams.answered.incrementAndGet();
                streams.attacker.saw(Integer.toString(response.getStatus()));
            }
        }
    }
}
