package io.pintle.server.upstream;

import io.pintle.api.KeyPins;
import io.pintle.client.Pem;
import io.pintle.client.PintleClient;
import io.pintle.server.config.ServerConfig;
import java.io.IOException;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The client of this server's policy server, built from the {@code [upstream]} section of the current snapshot's
 * configuration and rebuilt when that section changes (a reload); otherwise one client, shared (the JDK client
 * keeps its connections). Built on first use, so a root (no upstream) never reads the files.
 */
public final class UpstreamClient {
    private final AtomicReference<Built> built = new AtomicReference<>();

    /**
     * @param config the {@code [upstream]} section now in force
     * @return a client of the policy server
     * @throws NotConfiguredException when there is no {@code [upstream] url}
     * @throws IOException when the certificate or key files cannot be read
     * @throws GeneralSecurityException when they are unusable
     */
    public PintleClient client(ServerConfig.Upstream config) throws IOException, GeneralSecurityException {
        if (!config.configured()) {
            throw new NotConfiguredException();
        }
        Built current = built.get();
        if (current != null && current.config().equals(config)) {
            return current.client();
        }
        String pin = pin(config);
        PintleClient client = PintleClient.builder(config.url())
                .identity(config.clientCertificate(), config.clientKey())
                .pin(pin)
                .connectTimeout(Duration.ofSeconds(10))
                // Long polls wait up to Routes.MAX_WAIT_SECONDS (5 min) for their answer's headers: allow a minute more.
                .requestTimeout(Duration.ofMinutes(6))
                .build();
        // Two threads may build at once after a reload; either result is right, and the loser's client is dropped.
        built.set(new Built(config, client));
        return client;
    }

    /**
     * @param config the {@code [upstream]} section
     * @return the policy server's key pin: {@code key_hash}, or the key of {@code certificate}
     * @throws IOException when the certificate cannot be read
     */
    public static String pin(ServerConfig.Upstream config) throws IOException {
        return config.keyHash() != null
                ? config.keyHash()
                : KeyPins.sha256(Pem.readCertificates(config.certificate()).get(0).getPublicKey());
    }

    private record Built(ServerConfig.Upstream config, PintleClient client) {}

    /** There is no {@code [upstream] url}: this server has no policy server to ask (root). */
    public static final class NotConfiguredException extends IOException {
        private static final long serialVersionUID = 1L;

        NotConfiguredException() {
            super("no [upstream] url is configured (this server has no policy server)");
        }
    }
}
