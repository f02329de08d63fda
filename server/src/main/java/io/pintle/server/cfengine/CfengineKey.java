package io.pintle.server.cfengine;

import io.pintle.client.Pem;
import java.io.IOException;
import java.io.Reader;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.interfaces.RSAPrivateCrtKey;
import java.security.interfaces.RSAPublicKey;
import java.security.spec.RSAPublicKeySpec;
import java.util.HexFormat;
import java.util.Locale;
import org.bouncycastle.asn1.x509.SubjectPublicKeyInfo;
import org.bouncycastle.cert.X509CertificateHolder;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaPEMKeyConverter;

/**
 * CFEngine's key identity. CFEngine names a key by a digest of its RSA modulus then its public exponent, each as
 * the unsigned big-endian bytes OpenSSL's {@code BN_bn2bin} writes: {@code MD5=<hex>} with the default digest
 * (Debian's and Rudder's builds; {@code cf-key -p} prints it, Rudder's {@code admit_keys} and
 * {@code policy_server_hash} hold it), {@code SHA=<hex>} where SHA-256 is configured. Only RSA keys exist in
 * CFEngine.
 */
public final class CfengineKey {
    private CfengineKey() {}

    /**
     * @param key an RSA public key
     * @return its {@code MD5=} digest, as {@code cf-key -p} prints it
     */
    public static String md5(RSAPublicKey key) {
        return "MD5=" + HexFormat.of().formatHex(digest(key, "MD5"));
    }

    /**
     * @param key an RSA public key
     * @return its {@code SHA=} digest (SHA-256)
     */
    public static String sha(RSAPublicKey key) {
        return "SHA=" + HexFormat.of().formatHex(digest(key, "SHA-256"));
    }

    /**
     * @param key an RSA public key
     * @param text a CFEngine key digest, {@code MD5=<hex>} or {@code SHA=<hex>}, any case
     * @return whether it names this key
     */
    public static boolean named(RSAPublicKey key, String text) {
        String lower = text.strip().toLowerCase(Locale.ROOT);
        return lower.equals(md5(key).toLowerCase(Locale.ROOT)) || lower.equals(sha(key).toLowerCase(Locale.ROOT));
    }

    private static byte[] digest(RSAPublicKey key, String algorithm) {
        MessageDigest digest;
        try {
            digest = MessageDigest.getInstance(algorithm);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(algorithm + " is not available in this JVM", e);
        }
        digest.update(unsigned(key.getModulus()));
        digest.update(unsigned(key.getPublicExponent()));
        return digest.digest();
    }

    /** {@code BN_bn2bin}: the magnitude, big-endian, without the sign byte {@link BigInteger#toByteArray} may add. */
    private static byte[] unsigned(BigInteger value) {
        byte[] bytes = value.toByteArray();
        if (bytes.length > 1 && bytes[0] == 0) {
            byte[] trimmed = new byte[bytes.length - 1];
            System.arraycopy(bytes, 1, trimmed, 0, trimmed.length);
            return trimmed;
        }
        return bytes;
    }

    /**
     * Reads the server's key: an RSA private key in PEM (PKCS#1, as {@code cf-key} writes {@code localhost.priv},
     * or PKCS#8).
     *
     * @param file the key file
     * @return the key pair
     * @throws IOException naming the file when it cannot be read or is not an RSA key
     */
    public static KeyPair readPrivate(Path file) throws IOException {
        PrivateKey key = Pem.readPrivateKey(file);
        if (!(key instanceof RSAPrivateCrtKey rsa)) {
            throw new IOException(file + ": CFEngine's protocol needs an RSA key (the agent's localhost.priv), not "
                    + key.getAlgorithm());
        }
        try {
            PublicKey publicKey = KeyFactory.getInstance("RSA")
                    .generatePublic(new RSAPublicKeySpec(rsa.getModulus(), rsa.getPublicExponent()));
            return new KeyPair(publicKey, key);
        } catch (GeneralSecurityException e) {
            throw new IOException(file + ": unusable RSA key: " + e.getMessage(), e);
        }
    }

    /**
     * Reads a public key as CFEngine stores it in {@code ppkeys/} ({@code root-MD5=<hex>.pub}: PEM {@code RSA PUBLIC
     * KEY}, PKCS#1), or a {@code PUBLIC KEY} (SubjectPublicKeyInfo), or a certificate's.
     *
     * @param file the file
     * @return the RSA public key
     * @throws IOException naming the file when it holds no RSA public key
     */
    public static RSAPublicKey readPublic(Path file) throws IOException {
        JcaPEMKeyConverter converter = new JcaPEMKeyConverter();
        try (Reader reader = Files.newBufferedReader(file, StandardCharsets.US_ASCII);
                PEMParser parser = new PEMParser(reader)) {
            Object object;
            while ((object = parse(parser, file)) != null) {
                PublicKey key = null;
                if (object instanceof SubjectPublicKeyInfo info) {
                    key = converter.getPublicKey(info);
                } else if (object instanceof X509CertificateHolder certificate) {
                    key = converter.getPublicKey(certificate.getSubjectPublicKeyInfo());
                } else if (object instanceof org.bouncycastle.openssl.PEMKeyPair pair) {
                    key = converter.getPublicKey(pair.getPublicKeyInfo());
                }
                if (key instanceof RSAPublicKey rsa) {
                    return rsa;
                }
                if (key != null) {
                    throw new IOException(file + ": a CFEngine key is RSA, not " + key.getAlgorithm());
                }
            }
        } catch (NoSuchFileException e) {
            throw new IOException(file + ": no such file", e);
        }
        throw new IOException(file + ": no RSA public key found (expected PEM, as cf-key writes ppkeys/*.pub)");
    }

    private static Object parse(PEMParser parser, Path file) throws IOException {
        try {
            return parser.readObject();
        } catch (IOException | RuntimeException e) {
            throw new IOException(file + ": not valid PEM: " + e.getMessage(), e);
        }
    }
}
