package io.pintle.bench.harness;

import java.nio.charset.StandardCharsets;
import java.security.cert.CertificateEncodingException;
import java.security.cert.X509Certificate;
import java.util.Base64;

/** Certificates in PEM, as nodescerts.pem holds them, written by the thousand without a PEM writer per entry. */
public final class Pem {
    /** PEM bodies are base64 in lines of 64 characters. */
    private static final Base64.Encoder BASE64 = Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII));

    private Pem() {}

    /**
     * @param certificate a certificate
     * @return it in PEM
     */
    public static byte[] certificate(X509Certificate certificate) {
        try {
            return ("-----BEGIN CERTIFICATE-----\n" + BASE64.encodeToString(certificate.getEncoded())
                    + "\n-----END CERTIFICATE-----\n").getBytes(StandardCharsets.US_ASCII);
        } catch (CertificateEncodingException e) {
            throw new IllegalStateException("cannot encode a certificate", e);
        }
    }
}
