package io.pintle.server.tls;

import java.io.IOException;
import java.io.Writer;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.security.interfaces.RSAPrivateKey;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.Locale;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x500.X500NameBuilder;
import org.bouncycastle.asn1.x500.style.BCStyle;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.openssl.jcajce.JcaPKCS8Generator;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * Creates Rudder-style agent identities: a key pair and a self-signed certificate whose subject and issuer are
 * {@code UID=<node id>}, as {@code rudder agent check} makes them, and writes them as PEM. Private keys are
 * written with mode 0600 before any byte of the key is written.
 */
public final class SelfSigned {
    /** Rudder's agent certificates are valid for ten years. */
    public static final Duration RUDDER_VALIDITY = Duration.ofDays(3650);

    private static final SecureRandom RANDOM = new SecureRandom();

    private SelfSigned() {}

    /** Key algorithms. */
    public enum KeyType {
        /** RSA 4096, Rudder's default agent key. */
        RSA_4096,
        /** RSA 2048, faster to generate (tests, demo). */
        RSA_2048,
        /** ECDSA P-256. */
        EC_P256;

        /**
         * @param text {@code rsa}, {@code rsa2048}, {@code rsa4096} or {@code ec}
         * @return the key type
         */
        public static KeyType parse(String text) {
            return switch (text.toLowerCase(Locale.ROOT)) {
                case "rsa", "rsa4096" -> RSA_4096;
                case "rsa2048" -> RSA_2048;
                case "ec", "ecdsa", "p256" -> EC_P256;
                default -> throw new IllegalArgumentException("unknown key type '" + text + "' (rsa, rsa2048, ec)");
            };
        }
    }

    /**
     * A generated key pair and certificate.
     *
     * @param keyPair the key pair
     * @param certificate the self-signed certificate
     */
    public record Identity(KeyPair keyPair, X509Certificate certificate) {}

    /**
     * @param type key algorithm
     * @return a fresh key pair
     */
    public static KeyPair keyPair(KeyType type) {
        try {
            return switch (type) {
                case RSA_4096, RSA_2048 -> {
                    KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
                    generator.initialize(type == KeyType.RSA_4096 ? 4096 : 2048, RANDOM);
                    yield generator.generateKeyPair();
                }
                case EC_P256 -> {
                    KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
                    generator.initialize(new ECGenParameterSpec("secp256r1"), RANDOM);
                    yield generator.generateKeyPair();
                }
            };
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("cannot generate a " + type + " key", e);
        }
    }

    /**
     * @param uid the node id, or null for none
     * @return the subject {@code UID=<uid>} (or {@code CN=pintle} without uid)
     */
    public static X500Name subject(String uid) {
        X500NameBuilder builder = new X500NameBuilder(BCStyle.INSTANCE);
        if (uid != null) {
            builder.addRDN(BCStyle.UID, uid);
        } else {
            builder.addRDN(BCStyle.CN, "pintle");
        }
        return builder.build();
    }

    /**
     * Generates a Rudder-style identity valid from now for {@link #RUDDER_VALIDITY}.
     *
     * @param type key algorithm
     * @param uid the node id
     * @return the identity
     */
    public static Identity generate(KeyType type, String uid) {
        KeyPair pair = keyPair(type);
        Instant now = Instant.now();
        return new Identity(pair, certificate(pair, subject(uid), now.minus(Duration.ofMinutes(5)), now.plus(RUDDER_VALIDITY)));
    }

    /**
     * Issues a self-signed certificate.
     *
     * @param pair the key pair
     * @param subject subject and issuer
     * @param notBefore start of validity
     * @param notAfter end of validity
     * @return the certificate
     */
    public static X509Certificate certificate(KeyPair pair, X500Name subject, Instant notBefore, Instant notAfter) {
        try {
            JcaX509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(
                    subject, new BigInteger(64, RANDOM).abs().add(BigInteger.ONE), Date.from(notBefore),
                    Date.from(notAfter), subject, pair.getPublic());
            builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
            String algorithm = pair.getPrivate().getAlgorithm().equals("EC") ? "SHA256withECDSA" : "SHA256withRSA";
            return new JcaX509CertificateConverter()
                    .getCertificate(builder.build(new JcaContentSignerBuilder(algorithm).build(pair.getPrivate())));
        } catch (GeneralSecurityException | IOException | OperatorCreationException e) {
            throw new IllegalStateException("cannot issue a certificate", e);
        }
    }

    /**
     * Writes certificates as PEM (concatenated), replacing the file atomically.
     *
     * @param file destination
     * @param certificates certificates
     * @throws IOException on write errors
     */
    public static void writeCertificates(Path file, X509Certificate... certificates) throws IOException {
        Path temporary = temporary(file);
        try (Writer out = Files.newBufferedWriter(temporary, StandardCharsets.US_ASCII);
                JcaPEMWriter pem = new JcaPEMWriter(out)) {
            for (X509Certificate certificate : certificates) {
                pem.writeObject(certificate);
            }
        }
        Files.setPosixFilePermissions(temporary, PosixFilePermissions.fromString("rw-r--r--"));
        Files.move(temporary, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    /**
     * Writes a private key as PEM with mode 0600: PKCS#1 ({@code RSA PRIVATE KEY}, like Rudder's
     * {@code localhost.priv}) for RSA keys when {@code pkcs1} is set, PKCS#8 otherwise.
     *
     * @param file destination
     * @param key the key
     * @param pkcs1 whether to write RSA keys in PKCS#1 form
     * @throws IOException on write errors
     */
    public static void writePrivateKey(Path file, PrivateKey key, boolean pkcs1) throws IOException {
        Path temporary = temporary(file);
        try (Writer out = Files.newBufferedWriter(temporary, StandardCharsets.US_ASCII);
                JcaPEMWriter pem = new JcaPEMWriter(out)) {
            if (pkcs1 && key instanceof RSAPrivateKey) {
                pem.writeObject(key);
            } else {
                // EC keys must be PKCS#8: JcaPEMWriter writes SEC1 without curve parameters, unreadable by openssl.
                pem.writeObject(new JcaPKCS8Generator(key, null));
            }
        }
        Files.move(temporary, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    private static Path temporary(Path file) throws IOException {
        Path directory = file.toAbsolutePath().getParent();
        Files.createDirectories(directory);
        // Created 0600 from the start, so a key is never readable by others, not even for a moment.
        return Files.createTempFile(directory, "." + file.getFileName(), ".tmp",
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
    }
}
