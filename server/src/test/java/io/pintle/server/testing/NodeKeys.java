package io.pintle.server.testing;

import io.pintle.server.nodes.KeyHash;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.cert.X509Certificate;

/**
 * A client identity written as PEM files, as a Rudder agent has them.
 *
 * @param name the node id (or a label for identities without a valid UID)
 * @param certificatePath {@code agent.cert}
 * @param keyPath {@code localhost.priv}
 * @param certificate the certificate
 * @param keyPair the key pair
 */
public record NodeKeys(String name, Path certificatePath, Path keyPath, X509Certificate certificate, KeyPair keyPair) {
    /** @return the {@code sha256//} pin of the key */
    public String pin() {
        return KeyHash.sha256(certificate.getPublicKey()).toString();
    }
}
