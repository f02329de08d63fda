package io.pintle.server.nodes;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.file.Path;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.util.Collection;

/**
 * The key pin of this server's own policy server, from its certificate ({@code [upstream] certificate}, Rudder's
 * {@code policy_server.pem}): who may call this server's remote run on the TLS listener, and whose key this
 * server accepts when it calls up. Like the other trust inputs it is read by a reload, never per request.
 */
public final class PolicyServerPinLoader {
    private PolicyServerPinLoader() {}

    /**
     * @param content the certificate file's bytes (PEM; the first certificate is the policy server's)
     * @param file where they were read, for errors
     * @return the sha256 pin of the first certificate's public key
     * @throws IOException naming the file when it holds no readable certificate
     */
    public static KeyHash parse(byte[] content, Path file) throws IOException {
        Collection<? extends Certificate> certificates;
        try {
            certificates = CertificateFactory.getInstance("X.509")
                    .generateCertificates(new ByteArrayInputStream(content));
        } catch (CertificateException | IllegalArgumentException e) {
            // The JDK's reason names its own classes ("Unable to initialize, java.io.IOException: Too short"):
            // what the operator can check is the file's form.
            throw new IOException(file + ": not a PEM certificate (upstream.certificate): expected the policy "
                    + "server's certificate as '-----BEGIN CERTIFICATE-----', base64 lines and "
                    + "'-----END CERTIFICATE-----' (damaged or cut short?)", e);
        }
        if (certificates.isEmpty()) {
            throw new IOException(file + ": holds no certificate (upstream.certificate)");
        }
        return KeyHash.sha256(certificates.iterator().next().getPublicKey());
    }
}
