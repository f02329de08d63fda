package io.pintle.server.nodes;

import io.pintle.client.Pem;
import java.io.IOException;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * Reads node certificate bundles ({@code nodescerts.pem}, {@code allnodescerts.pem}): concatenated PEM
 * certificates whose subject UID names the node. A file that is not valid PEM is an error; a certificate without
 * a usable UID is skipped with a warning, so one malformed node certificate does not lock out every node
 * (Rudder #24112).
 */
public final class CertificatesLoader {
    private CertificatesLoader() {}

    /**
     * @param file a PEM bundle
     * @param warnings receives one message per skipped certificate
     * @return the bindings it establishes
     * @throws IOException naming the file when it cannot be read or parsed
     */
    public static List<CertificateBinding> load(Path file, Consumer<String> warnings) throws IOException {
        List<CertificateBinding> bindings = new ArrayList<>();
        List<X509Certificate> certificates = Pem.readCertificates(file);
        for (int i = 0; i < certificates.size(); i++) {
            X509Certificate certificate = certificates.get(i);
            Optional<String> uid = CertificateSubjects.uid(certificate);
            if (uid.isEmpty()) {
                warnings.accept(file + ": certificate " + (i + 1) + " ('"
                        + certificate.getSubjectX500Principal().getName() + "') has no UID; skipped");
                continue;
            }
            try {
                bindings.add(new CertificateBinding(new NodeId(uid.get()), KeyHash.sha256(certificate.getPublicKey())));
            } catch (IllegalArgumentException e) {
                warnings.accept(file + ": certificate " + (i + 1) + ": " + e.getMessage() + "; skipped");
            }
        }
        return List.copyOf(bindings);
    }
}
