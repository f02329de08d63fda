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
 * pin of the current snapshot, and rebuilt when either changes (a reload); otherwise one client, shared (the JDK
 * client keeps its connections). The pin is never read from disk here: the snapshot holds it.
 */
public final class UpstreamClient {
    private final AtomicReference<Built> built = new AtomicReference<>();

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
                // Long polls wait up to Routes.MAX_WAIT_SECONDS (5 min) for their answer's headers: allow a minute more.
                .requestTimeout(Duration.ofMinutes(6))
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
