package io.pintle.server.nodes;

import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * What identification reads from a client certificate that depends on the certificate alone: its validity
 * period, the subject's {@code UID} (or why there is none) and its key pins. Parsing the subject and hashing the key
 * twice cost more than the rest of a cached file request, so the TLS layer computes this once per TLS session and
 * {@link NodeRegistry#identifyClient(ClientCertificate, Instant)} uses it on every request of that session, against
 * whatever snapshot the request runs on.
 *
 * @param certificate the leaf certificate
 * @param notBefore start of validity
 * @param notAfter end of validity
 * @param uid the subject's UID, or null when it has none or it cannot be decoded
 * @param uidProblem why the UID cannot be decoded, or null
 * @param sha256 the key's sha256 pin
 * @param sha512 the key's sha512 pin
 */
public record ClientCertificate(X509Certificate certificate, Instant notBefore, Instant notAfter, String uid,
        String uidProblem, KeyHash sha256, KeyHash sha512) {
    public ClientCertificate {
        Objects.requireNonNull(certificate);
        Objects.requireNonNull(notBefore);
        Objects.requireNonNull(notAfter);
        Objects.requireNonNull(sha256);
        Objects.requireNonNull(sha512);
    }

    /**
     * @param certificate a client's leaf certificate
     * @return what identification needs of it
     */
    public static ClientCertificate of(X509Certificate certificate) {
        String uid = null;
        String problem = null;
        try {
            Optional<String> text = CertificateSubjects.uid(certificate);
            uid = text.orElse(null);
        } catch (IllegalArgumentException e) {
            problem = e.getMessage();
        }
        return new ClientCertificate(certificate, certificate.getNotBefore().toInstant(),
                certificate.getNotAfter().toInstant(), uid, problem, KeyHash.sha256(certificate.getPublicKey()),
                KeyHash.of("sha512", certificate.getPublicKey()));
    }
}
