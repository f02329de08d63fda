package io.pintle.server.nodes;

import java.util.Objects;

/**
 * A key pinned for a node by a certificate in a bundle such as {@code nodescerts.pem}.
 *
 * @param node the certificate's subject UID
 * @param key the sha256 pin of its public key
 */
public record CertificateBinding(NodeId node, KeyHash key) {
    public CertificateBinding {
        Objects.requireNonNull(node);
        Objects.requireNonNull(key);
    }
}
