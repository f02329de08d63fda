package io.pintle.client;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.PrivateKey;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.cert.X509CertificateHolder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.openssl.PEMKeyPair;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaPEMKeyConverter;

/**
 * Reads the PEM files Rudder uses: certificates (one or a concatenation, like {@code nodescerts.pem}) and
 * unencrypted private keys, either PKCS#1/SEC1 ({@code RSA PRIVATE KEY}, {@code EC PRIVATE KEY}, as in
 * {@code ppkeys/localhost.priv}) or PKCS#8 ({@code PRIVATE KEY}). Errors name the file.
 */
public final class Pem {
    private Pem() {}

    /**
     * Reads every certificate in a PEM file, in file order. Other PEM objects are an error.
     *
     * @param file the PEM file
     * @return the certificates; empty if the file holds none
     * @throws IOException if the file cannot be read or holds something that is not a certificate
     */
    public static List<X509Certificate> readCertificates(Path file) throws IOException {
        List<X509Certificate> result = new ArrayList<>();
        JcaX509CertificateConverter converter = new JcaX509CertificateConverter();
        try (Reader reader = Files.newBufferedReader(file, StandardCharsets.US_ASCII);
                PEMParser parser = new PEMParser(reader)) {
            Object object;
            while ((object = readObject(parser, file)) != null) {
                if (!(object instanceof X509CertificateHolder holder)) {
                    throw new IOException(file + ": expected only certificates, found "
                            + object.getClass().getSimpleName());
                }
                try {
                    result.add(converter.getCertificate(holder));
                } catch (CertificateException e) {
                    throw new IOException(file + ": certificate " + (result.size() + 1) + " is invalid: "
                            + e.getMessage(), e);
                }
            }
        } catch (NoSuchFileException e) {
            throw new IOException(file + ": no such file", e);
        }
        if (result.isEmpty() && !new String(Files.readAllBytes(file), StandardCharsets.ISO_8859_1).isBlank()) {
            // An empty bundle is legitimate (no node yet); a non-empty file without any PEM block is corruption.
            throw new IOException(file + ": not valid PEM: no certificate found");
        }
        return List.copyOf(result);
    }

    /**
     * Reads the first private key in a PEM file.
     *
     * @param file the PEM file (PKCS#1, SEC1 or PKCS#8, unencrypted; RSA or EC)
     * @return the key
     * @throws IOException if the file cannot be read or holds no usable private key
     */
    public static PrivateKey readPrivateKey(Path file) throws IOException {
        JcaPEMKeyConverter converter = new JcaPEMKeyConverter();
        try (Reader reader = Files.newBufferedReader(file, StandardCharsets.US_ASCII);
                PEMParser parser = new PEMParser(reader)) {
            Object object;
            while ((object = readObject(parser, file)) != null) {
                if (object instanceof PEMKeyPair pair) {
                    return converter.getKeyPair(pair).getPrivate();
                }
                if (object instanceof PrivateKeyInfo info) {
                    return converter.getPrivateKey(info);
                }
                if (!(object instanceof X509CertificateHolder)) {
                    throw new IOException(file + ": unsupported PEM object " + object.getClass().getSimpleName()
                            + " (encrypted keys are not supported; expected an unencrypted RSA or EC key)");
                }
            }
        } catch (NoSuchFileException e) {
            throw new IOException(file + ": no such file", e);
        }
        throw new IOException(file + ": no private key found");
    }

    private static Object readObject(PEMParser parser, Path file) throws IOException {
        try {
            return parser.readObject();
        } catch (IOException | RuntimeException e) {
            // BouncyCastle reports malformed base64 or DER as runtime exceptions.
            throw new IOException(file + ": not valid PEM: " + e.getMessage(), e);
        }
    }
}
