package io.pintle.server.upstream;

import io.pintle.client.PintleClient;
import io.pintle.server.config.ServerConfig;
import io.pintle.server.nodes.KeyHash;
import io.pintle.server.reload.ServerSnapshot;
import java.io.IOException;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The client of this server's policy server, built from the {@code [upstream]} section and the policy server's key
 * pin of the current snapshot, and rebuilt when either changes (a reload) or after a request got no answer
 * ({@link #renew}); otherwise one client, shared (the JDK client keeps its connections). The pin is never read from
 * disk here: the snapshot holds it.
 */
public final class UpstreamClient {
    /**
     * How long a request gets for its answer's headers (and a download for each part of a body), a long poll its
     * wait on top. The policy server answers a request that does not wait at once, or refuses it with a 503 once
     * it has queued for its queue timeout (30 s by default): twice that is no answer. Short rather than sized for
     * long polls because the JDK 17 client can lose a request: one that takes the connection as the server closes
     * it (a GOAWAY: an idle connection, a rate of stream resets) is registered on the closed connection, never sent
     * and never failed, so only its timeout ends it (the client's GOAWAY handling as of 17.0.15, reworked by
     * JDK-8335181 in JDK 24 and 17.0.17; RelaySyncFailuresIT shows it). The retry goes out on a fresh connection:
     * the closed one has left the client's pool.
     */
    public static final Duration ANSWER_TIMEOUT = Duration.ofSeconds(60);

    private final Duration answerTimeout;
    private final AtomicReference<Built> built = new AtomicReference<>();

    /** A client with {@link #ANSWER_TIMEOUT}. */
    public UpstreamClient() {
        this(ANSWER_TIMEOUT);
    }

    /** @param answerTimeout how long a request that does not wait gets for its answer */
    public UpstreamClient(Duration answerTimeout) {
        this.answerTimeout = answerTimeout;
    }

    /** @return how long a request that does not wait gets for its answer; a long poll gets its wait on top */
    public Duration answerTimeout() {
        return answerTimeout;
    }

    /**
     * Drops the client, so that the next {@link #client} builds one with new connections. For after a request got
     * no answer: the JDK client keeps an HTTP/2 connection that went silent (it sends no PING), and every request
     * on it would wait its whole timeout. Requests under way on the old client finish there.
     */
    public void renew() {
        built.set(null);
    }

    /**
     * @param snapshot the snapshot now in force: its {@code [upstream]} section and policy server pin
     * @return a client of the policy server
     * @throws NotConfiguredException when there is no {@code [upstream] url}
     * @throws IOException when this server's client certificate or key cannot be read
     * @throws GeneralSecurityException when they are unusable
     */
    public PintleClient client(ServerSnapshot snapshot) throws IOException, GeneralSecurityException {
        ServerConfig.Upstream config = snapshot.config().upstream();
        if (!config.configured()) {
            throw new NotConfiguredException();
        }
        KeyHash pin = snapshot.upstreamPin();
        Built current = built.get();
        if (current != null && current.config().equals(config) && current.pin().equals(pin)) {
            return current.client();
        }
        PintleClient client = PintleClient.builder(config.url())
                .identity(config.clientCertificate(), config.clientKey())
                .pin(pin.toString())
                .connectTimeout(Duration.ofSeconds(10))
                // Client-lib's syncs add their wait to it for the manifest the server holds.
                .requestTimeout(answerTimeout)
                .build();
        // Two threads may build at once after a reload; either result is right, and the loser's client is dropped.
        built.set(new Built(config, pin, client));
        return client;
    }

    private record Built(ServerConfig.Upstream config, KeyHash pin, PintleClient client) {}

    /** There is no {@code [upstream] url}: this server has no policy server to ask (root). */
    public static final class NotConfiguredException extends IOException {
        private static final long serialVersionUID = 1L;

        NotConfiguredException() {
            super("no [upstream] url is configured (this server has no policy server)");
        }
    }
}
