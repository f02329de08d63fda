package io.pintle.server.tls;

import io.pintle.client.Pem;
import io.pintle.server.nodes.KeyHash;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.Objects;

/**
 * The server's certificate chain and private key, checked to belong together.
 *
 * @param chain the certificate chain, leaf first
 * @param key the leaf's private key
 */
public record ServerCredentials(List<X509Certificate> chain, PrivateKey key) {
    public ServerCredentials {
        chain = List.copyOf(chain);
        Objects.requireNonNull(key);
        if (chain.isEmpty()) {
            throw new IllegalArgumentException("empty certificate chain");
        }
    }

    /**
     * Reads and checks the server certificate and key.
     *
     * @param certificate PEM certificate (chain)
     * @param key PEM private key
     * @return the credentials
     * @throws IOException naming the file when a file is unreadable, or when the key does not match the certificate
     */
    public static ServerCredentials load(Path certificate, Path key) throws IOException {
        List<X509Certificate> chain = Pem.readCertificates(certificate);
        if (chain.isEmpty()) {
            throw new IOException(certificate + ": no certificate found");
        }
        PrivateKey privateKey = Pem.readPrivateKey(key);
        if (!matches(chain.get(0), privateKey)) {
            throw new IOException(key + ": private key does not match the certificate " + certificate);
        }
        return new ServerCredentials(chain, privateKey);
    }

    /**
     * @param other other credentials
     * @return whether both hold the same certificates and the same key (by encoding)
     */
    public boolean sameAs(ServerCredentials other) {
        return chain.equals(other.chain) && java.util.Arrays.equals(key.getEncoded(), other.key.getEncoded());
    }

    /** @return the pin agents use for this server ({@code sha256//...}) */
    public KeyHash keyHash() {
        return KeyHash.sha256(chain.get(0).getPublicKey());
    }

    /**
     * Checks a key pair by signing and verifying a probe, which works for every key type.
     *
     * @param certificate a certificate
     * @param key a private key
     * @return whether the key is the certificate's
     */
    static boolean matches(X509Certificate certificate, PrivateKey key) {
        String algorithm = switch (key.getAlgorithm()) {
            case "RSA" -> "SHA256withRSA";
            case "EC" -> "SHA256withECDSA";
            case "Ed25519", "EdDSA" -> "Ed25519";
            default -> null;
        };
        if (algorithm == null || !algorithm.startsWith(algorithmPrefix(certificate))) {
            return false;
        }
        try {
            byte[] probe = "pintle key check".getBytes(StandardCharsets.US_ASCII);
            Signature signer = Signature.getInstance(algorithm);
            signer.initSign(key);
            signer.update(probe);
            byte[] signature = signer.sign();
            Signature verifier = Signature.getInstance(algorithm);
            verifier.initVerify(certificate.getPublicKey());
            verifier.update(probe);
            return verifier.verify(signature);
        } catch (GeneralSecurityException e) {
            return false;
        }
    }

    private static String algorithmPrefix(X509Certificate certificate) {
        return switch (certificate.getPublicKey().getAlgorithm()) {
            case "RSA" -> "SHA256withRSA";
            case "EC" -> "SHA256withECDSA";
            default -> "Ed25519";
        };
    }
}
