package io.pintle.api;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.PublicKey;
import java.util.Base64;

/**
 * Public-key pins in the form Rudder and curl use: {@code sha256//<base64(sha256(DER SubjectPublicKeyInfo))>}.
 * The same value appears in {@code nodeslist.json} ({@code key-hash}), in {@code rudder.json}
 * ({@code POLICY_SERVER_KEY_HASH}) and in {@code curl --pinnedpubkey}.
 */
public final class KeyPins {
    /** Prefix of a sha256 pin. */
    public static final String SHA256_PREFIX = "sha256//";

    private KeyPins() {}

    /**
     * Computes the sha256 pin of a public key.
     *
     * @param key the key; its {@code getEncoded()} must be the DER SubjectPublicKeyInfo (true for X.509 keys)
     * @return {@code sha256//<base64>}
     */
    public static String sha256(PublicKey key) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(key.getEncoded());
            return SHA256_PREFIX + Base64.getEncoder().encodeToString(digest);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is not available in this JVM", e);
        }
    }
}
