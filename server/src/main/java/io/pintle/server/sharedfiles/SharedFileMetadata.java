package io.pintle.server.sharedfiles;

import java.io.IOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PublicKey;
import java.security.spec.RSAPublicKeySpec;
import java.time.Instant;
import java.util.Base64;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.bouncycastle.asn1.pkcs.RSAPublicKey;

/**
 * The metadata of a shared file, in relayd's {@code rudder-signature-v1} format: {@code key=value} lines
 * ({@code header}, {@code algorithm}, {@code digest} = hex RSA signature of the file, {@code hash_value} = hex
 * hash of the file, {@code short_pubkey} = the sender's PKCS#1 RSA public key in base64 without armour,
 * {@code hostname}, {@code keydate}, {@code keyid}), and when stored, {@code expires=<epoch seconds>}.
 *
 * @param algorithm {@code sha256} or {@code sha512}: of {@code hash_value} and of the signature
 * @param digest the RSA (PKCS#1 v1.5) signature of the file, hex
 * @param hashValue the file's hash, lower-case hex
 * @param shortPubkey the sender's public key as sent
 * @param hostname as sent
 * @param keyDate as sent
 * @param keyId as sent
 * @param expires when the stored file may be removed, or empty in an upload
 */
public record SharedFileMetadata(String algorithm, String digest, String hashValue, String shortPubkey,
        String hostname, String keyDate, String keyId, Optional<Instant> expires) {
    /** Suffix of the stored metadata file. */
    public static final String EXTENSION = ".metadata";

    /** The only format relayd knows. */
    public static final String HEADER = "rudder-signature-v1";

    /** Metadata longer than this is not metadata (the RSA-4096 key in base64 is about 750 bytes). */
    public static final int MAX_BYTES = 16 * 1024;

    private static final List<String> REQUIRED =
            List.of("header", "algorithm", "digest", "hash_value", "short_pubkey", "hostname", "keydate", "keyid");

    public SharedFileMetadata {
        Objects.requireNonNull(algorithm);
        Objects.requireNonNull(digest);
        Objects.requireNonNull(hashValue);
        Objects.requireNonNull(shortPubkey);
        Objects.requireNonNull(hostname);
        Objects.requireNonNull(keyDate);
        Objects.requireNonNull(keyId);
        Objects.requireNonNull(expires);
    }

    /**
     * @param text the metadata lines
     * @return the metadata
     * @throws InvalidException naming the first problem
     */
    public static SharedFileMetadata parse(String text) throws InvalidException {
        Map<String, String> values = new LinkedHashMap<>();
        for (String line : text.split("\n")) {
            String trimmed = line.endsWith("\r") ? line.substring(0, line.length() - 1) : line;
            if (trimmed.isEmpty()) {
                continue;
            }
            int equals = trimmed.indexOf('=');
            if (equals <= 0) {
                throw new InvalidException("metadata line without key=value: '" + printable(trimmed) + "'");
            }
            if (values.put(trimmed.substring(0, equals), trimmed.substring(equals + 1)) != null) {
                throw new InvalidException("duplicate metadata key '" + printable(trimmed.substring(0, equals)) + "'");
            }
        }
        for (String key : REQUIRED) {
            if (!values.containsKey(key)) {
                throw new InvalidException("metadata lacks '" + key + "'");
            }
        }
        if (!HEADER.equals(values.get("header"))) {
            throw new InvalidException("unknown metadata header '" + printable(values.get("header")) + "' (expected "
                    + HEADER + ")");
        }
        String algorithm = values.get("algorithm");
        if (!algorithm.equals("sha256") && !algorithm.equals("sha512")) {
            throw new InvalidException("algorithm must be sha256 or sha512, not '" + printable(algorithm) + "'");
        }
        String hash = values.get("hash_value").toLowerCase(java.util.Locale.ROOT);
        int hexLength = algorithm.equals("sha256") ? 64 : 128;
        if (!hash.matches("[0-9a-f]{" + hexLength + "}")) {
            throw new InvalidException("hash_value is not a " + algorithm + " in hexadecimal");
        }
        String digest = values.get("digest");
        if (!digest.matches("([0-9a-fA-F]{2}){1,1024}")) {
            throw new InvalidException("digest (the signature) is not hexadecimal");
        }
        Optional<Instant> expires = Optional.empty();
        if (values.containsKey("expires")) {
            try {
                expires = Optional.of(Instant.ofEpochSecond(Long.parseLong(values.get("expires"))));
            } catch (NumberFormatException e) {
                throw new InvalidException("expires is not a number of seconds");
            }
        }
        SharedFileMetadata metadata = new SharedFileMetadata(algorithm, digest, hash, values.get("short_pubkey"),
                values.get("hostname"), values.get("keydate"), values.get("keyid"), expires);
        metadata.publicKey();
        return metadata;
    }

    /**
     * @return the sender's public key
     * @throws InvalidException if {@code short_pubkey} is not a PKCS#1 RSA public key in base64
     */
    public PublicKey publicKey() throws InvalidException {
        try {
            RSAPublicKey key = RSAPublicKey.getInstance(Base64.getMimeDecoder().decode(shortPubkey));
            BigInteger modulus = key.getModulus();
            if (modulus.bitLength() < 2048 || modulus.bitLength() > 16384) {
                throw new InvalidException("short_pubkey is a " + modulus.bitLength() + "-bit RSA key; 2048 to "
                        + "16384 bits are accepted");
            }
            return KeyFactory.getInstance("RSA").generatePublic(new RSAPublicKeySpec(modulus, key.getPublicExponent()));
        } catch (IllegalArgumentException | GeneralSecurityException e) {
            throw new InvalidException("short_pubkey is not a PKCS#1 RSA public key in base64");
        }
    }

    /** @return the JCA signature algorithm of {@code digest} */
    public String signatureAlgorithm() {
        return algorithm.equals("sha256") ? "SHA256withRSA" : "SHA512withRSA";
    }

    /** @return the JCA digest algorithm of {@code hash_value} */
    public String hashAlgorithm() {
        return algorithm.equals("sha256") ? "SHA-256" : "SHA-512";
    }

    /** @return the signature's bytes */
    public byte[] signature() {
        return HexFormat.of().parseHex(digest.toLowerCase(java.util.Locale.ROOT));
    }

    /**
     * @param when the expiry to store
     * @return this metadata with that expiry
     */
    public SharedFileMetadata expiring(Instant when) {
        return new SharedFileMetadata(algorithm, digest, hashValue, shortPubkey, hostname, keyDate, keyId,
                Optional.of(when));
    }

    /** @return the lines relayd stores (and accepts), {@code expires} last when set */
    public byte[] format() {
        StringBuilder text = new StringBuilder(1024)
                .append("header=").append(HEADER).append('\n')
                .append("algorithm=").append(algorithm).append('\n')
                .append("digest=").append(digest).append('\n')
                .append("hash_value=").append(hashValue).append('\n')
                .append("short_pubkey=").append(shortPubkey).append('\n')
                .append("hostname=").append(hostname).append('\n')
                .append("keydate=").append(keyDate).append('\n')
                .append("keyid=").append(keyId).append('\n');
        expires.ifPresent(when -> text.append("expires=").append(when.getEpochSecond()).append('\n'));
        return text.toString().getBytes(StandardCharsets.UTF_8);
    }

    private static String printable(String text) {
        String shortened = text.length() > 40 ? text.substring(0, 40) + "..." : text;
        return shortened.replaceAll("[\\p{Cntrl}']", "?");
    }

    /** The metadata is malformed; the message says how. */
    public static final class InvalidException extends IOException {
        private static final long serialVersionUID = 1L;

        InvalidException(String message) {
            super(message);
        }
    }
}
