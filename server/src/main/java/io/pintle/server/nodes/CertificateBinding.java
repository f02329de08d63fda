package io.pintle.server.nodes;

import java.security.PublicKey;
import java.util.Arrays;
import java.util.Objects;

/**
 * A key pinned for a node by a certificate in a bundle such as {@code nodescerts.pem}.
 *
 * <p>The key itself is kept (as its DER SubjectPublicKeyInfo, a few hundred bytes) so that what a node signs (its
 * run reports, its inventories) can be checked against it, not only its TLS key pin. Equality is by value: two
 * bindings of the same node to the same key are equal, whichever array holds the key.
 *
 * @param node the certificate's subject UID
 * @param key the sha256 pin of its public key
 * @param publicKey the public key's DER SubjectPublicKeyInfo, whose sha256 pin is {@code key} (copied in, and
 *     copied out by the accessor)
 */
public record CertificateBinding(NodeId node, KeyHash key, byte[] publicKey) {
    /**
     * @throws IllegalArgumentException when {@code key} is not the sha256 pin of {@code publicKey}
     */
    public CertificateBinding {
        Objects.requireNonNull(node);
        Objects.requireNonNull(key);
        publicKey = publicKey.clone();
        // A pin that is not the key's would let a node's TLS identity and its signatures disagree: refused here
        // once, so that NodeRegistry never has to ask which of the two to believe.
        if (!key.algorithm().equals("sha256") || !key.equals(KeyHash.of("sha256", publicKey))) {
            throw new IllegalArgumentException("key pin " + key + " is not the sha256 pin of the key given for node "
                    + node);
        }
    }

    /**
     * @param node the certificate's subject UID
     * @param key its public key
     * @return the binding, with the key's sha256 pin
     */
    public static CertificateBinding of(NodeId node, PublicKey key) {
        byte[] encoded = key.getEncoded();
        return new CertificateBinding(node, KeyHash.of("sha256", encoded), encoded);
    }

    /** @return a copy of the public key's DER SubjectPublicKeyInfo */
    @Override
    public byte[] publicKey() {
        return publicKey.clone();
    }

    /** @return the same bytes as {@link #publicKey()}, not copied: for this package's readers, which never write */
    byte[] publicKeyShared() {
        return publicKey;
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof CertificateBinding that && node.equals(that.node) && key.equals(that.key)
                && Arrays.equals(publicKey, that.publicKey);
    }

    @Override
    public int hashCode() {
        // The pin is a digest of the key: hashing the key's bytes again would add nothing.
        return 31 * node.hashCode() + key.hashCode();
    }

    @Override
    public String toString() {
        return "CertificateBinding[node=" + node + ", key=" + key + "]";
    }
}
