package io.pintle.server.nodes;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.PublicKey;
import java.util.Base64;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Optional;

/**
 * A public-key pin: a digest of the DER SubjectPublicKeyInfo. The canonical text is Rudder 7+'s
 * {@code sha256//<base64>} (or {@code sha512//}); Rudder 6's {@code sha256:<hex>} is also read.
 *
 * @param algorithm {@code sha256} or {@code sha512}
 * @param base64 the digest, base64
 */
public record KeyHash(String algorithm, String base64) {
    /**
     * @throws IllegalArgumentException when the algorithm is not supported or the digest has the wrong length
     */
    public KeyHash {
        int expected = switch (algorithm) {
            case "sha256" -> 32;
            case "sha512" -> 64;
            default -> throw new IllegalArgumentException("unsupported key hash algorithm '" + algorithm + "'");
        };
        byte[] digest = Base64.getDecoder().decode(base64);
        if (digest.length != expected) {
            throw new IllegalArgumentException(algorithm + " key hash must be " + expected + " bytes");
        }
        // Canonical form (padded), so that equal digests are equal hashes however they were written.
        base64 = Base64.getEncoder().encodeToString(digest);
    }

    /**
     * Parses a key hash as found in {@code nodeslist.json}.
     *
     * @param text {@code sha256//<base64>}, {@code sha512//<base64>}, {@code sha256:<hex>} or {@code sha512:<hex>}
     * @return the hash, or empty when the text is empty or malformed (relayd ignores such entries too)
     */
    public static Optional<KeyHash> parse(String text) {
        if (text == null) {
            return Optional.empty();
        }
        try {
            int slashes = text.indexOf("//");
            if (slashes > 0) {
                String algorithm = text.substring(0, slashes).toLowerCase(Locale.ROOT);
                return Optional.of(new KeyHash(algorithm, text.substring(slashes + 2)));
            }
            int colon = text.indexOf(':');
            if (colon > 0) {
                String algorithm = text.substring(0, colon).toLowerCase(Locale.ROOT);
                byte[] digest = HexFormat.of().parseHex(text.substring(colon + 1).toLowerCase(Locale.ROOT));
                return Optional.of(new KeyHash(algorithm, Base64.getEncoder().encodeToString(digest)));
            }
        } catch (IllegalArgumentException malformed) {
            return Optional.empty();
        }
        return Optional.empty();
    }

    /**
     * @param key a public key
     * @return its sha256 pin
     */
    public static KeyHash sha256(PublicKey key) {
        return of("sha256", key);
    }

    /**
     * @param algorithm {@code sha256} or {@code sha512}
     * @param key a public key
     * @return its pin with that algorithm
     */
    public static KeyHash of(String algorithm, PublicKey key) {
        return of(algorithm, key.getEncoded());
    }

    /**
     * @param algorithm {@code sha256} or {@code sha512}
     * @param subjectPublicKeyInfo a public key's DER SubjectPublicKeyInfo ({@link PublicKey#getEncoded()})
     * @return its pin with that algorithm
     */
    public static KeyHash of(String algorithm, byte[] subjectPublicKeyInfo) {
        String jca = switch (algorithm) {
            case "sha256" -> "SHA-256";
            case "sha512" -> "SHA-512";
            default -> throw new IllegalArgumentException("unsupported key hash algorithm '" + algorithm + "'");
        };
        try {
            byte[] digest = MessageDigest.getInstance(jca).digest(subjectPublicKeyInfo);
            return new KeyHash(algorithm, Base64.getEncoder().encodeToString(digest));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(jca + " is not available in this JVM", e);
        }
    }

    @Override
    public String toString() {
        return algorithm + "//" + base64;
    }
}
