package io.pintle.bench.perf;

import io.pintle.server.tls.SelfSigned;
import java.nio.file.Path;

/** The server key types the handshake rows compare; each server runs one listener per type. */
enum ServerKey {
    RSA_2048("rsa2048", "RSA-2048", SelfSigned.KeyType.RSA_2048),
    /** Rudder's own: a root or relay serves with its agent key, RSA-4096. */
    RSA_4096("rsa4096", "RSA-4096", SelfSigned.KeyType.RSA_4096),
    ECDSA("ecdsa", "ECDSA P-256", SelfSigned.KeyType.EC_P256);

    private final String label;
    private final String title;
    private final SelfSigned.KeyType keyType;

    ServerKey(String label, String title, SelfSigned.KeyType keyType) {
        this.label = label;
        this.title = title;
        this.keyType = keyType;
    }

    /** @return a file-name-friendly name */
    String label() {
        return label;
    }

    /** @return as printed */
    String title() {
        return title;
    }

    SelfSigned.KeyType keyType() {
        return keyType;
    }

    /**
     * @param certificate PEM certificate
     * @param key PEM private key (mode 600)
     */
    record Files(Path certificate, Path key) {}
}
