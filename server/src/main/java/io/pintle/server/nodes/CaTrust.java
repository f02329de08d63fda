package io.pintle.server.nodes;

import java.io.ByteArrayInputStream;
import java.nio.ByteBuffer;
import java.io.IOException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.cert.CertPathBuilder;
import java.security.cert.CertPathBuilderException;
import java.security.cert.CertStore;
import java.security.cert.CertificateEncodingException;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.CertificateParsingException;
import java.security.cert.CollectionCertStoreParameters;
import java.security.cert.PKIXBuilderParameters;
import java.security.cert.PKIXCertPathBuilderResult;
import java.security.cert.TrustAnchor;
import java.security.cert.X509CertSelector;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import javax.security.auth.x500.X500Principal;

/**
 * The CA bundle of certificate-validation mode ({@code [nodes] ca_file}, Rudder's {@code policy_server_ca.pem},
 * Apache's {@code SSLCACertificateFile} with {@code SSLVerifyDepth 5}): its self-signed certificates are the trust
 * anchors, the others are intermediates a client may leave out of the chain it sends. Immutable; a reload that
 * keeps the file's bytes keeps the object, so that connections keep their verification ({@link
 * ClientCertificate#verified}).
 *
 * <p>Depth counts as Apache's does: the CA certificates above the client's, the root included. A node
 * certificate signed by the root is at depth 1; with four intermediates between them, at depth 5.
 */
public final class CaTrust {
    /** Apache's {@code SSLVerifyDepth} in Rudder's vhost. */
    public static final int DEFAULT_MAX_DEPTH = 5;
    private static final String CLIENT_AUTH = "1.3.6.1.5.5.7.3.2";
    private static final String ANY_USAGE = "2.5.29.37.0";

    private final Path file;
    private final Set<TrustAnchor> anchors;
    private final List<X509Certificate> certificates;
    private final int maxDepth;
    /**
     * Chains verified valid, by the SHA-256 of the client certificate's encoding: an agent opens a new connection
     * per request, and each would build its path again (the JDK's PKIX builder: about a sixth of a handshake's
     * Java time, bench/handshakes). Only valid verdicts are kept (a certificate's signatures and constraints do not
     * change; its dates are checked on every request); the CA certificates above it are kept once each ({@link
     * #shared}). Bounded: past {@link #CACHE_ENTRIES} it starts again empty. Dropped with the bundle.
     */
    private final ConcurrentHashMap<ByteBuffer, Verified> verified = new ConcurrentHashMap<>();
    /** One object per CA certificate seen on a path, so that cached paths of a fleet share their intermediates. */
    private final ConcurrentHashMap<X509Certificate, X509Certificate> shared = new ConcurrentHashMap<>();

    /** Verified chains kept ({@link #verified}): a root's fleet, a few hundred bytes each. */
    static final int CACHE_ENTRIES = 100_000;
    private static final int SHARED_ENTRIES = 1_000;

    /** What a valid verdict says beyond the client certificate itself. */
    private record Verified(List<X509Certificate> above, X509Certificate root, Instant notBefore, Instant notAfter) {}

    private CaTrust(Path file, Set<TrustAnchor> anchors, List<X509Certificate> certificates, int maxDepth) {
        this.file = file;
        this.anchors = Set.copyOf(anchors);
        this.certificates = List.copyOf(certificates);
        this.maxDepth = maxDepth;
    }

    /**
     * @param content the bundle's bytes (PEM certificates)
     * @param file where they were read, for messages
     * @param maxDepth the deepest chain accepted
     * @return the trust
     * @throws IOException naming the file when it holds no certificate or no self-signed CA
     */
    public static CaTrust parse(byte[] content, Path file, int maxDepth) throws IOException {
        List<X509Certificate> all = new ArrayList<>();
        try {
            for (var certificate : CertificateFactory.getInstance("X.509")
                    .generateCertificates(new ByteArrayInputStream(content))) {
                all.add((X509Certificate) certificate);
            }
        } catch (CertificateException | RuntimeException e) {
            throw new IOException(file + ": not a PEM certificate bundle: " + e.getMessage(), e);
        }
        if (all.isEmpty()) {
            throw new IOException(file + ": no certificate found ([nodes] ca_file must hold the CA certificates "
                    + "that sign the nodes' agent-http.cert)");
        }
        Set<TrustAnchor> anchors = new HashSet<>();
        for (X509Certificate certificate : all) {
            if (certificate.getBasicConstraints() < 0) {
                throw new IOException(file + ": '" + certificate.getSubjectX500Principal().getName() + "' is not a "
                        + "CA certificate (no basicConstraints CA:TRUE); the CA bundle holds CA certificates only");
            }
            if (selfSigned(certificate)) {
                anchors.add(new TrustAnchor(certificate, null));
            }
        }
        if (anchors.isEmpty()) {
            throw new IOException(file + ": no self-signed root CA among its " + all.size() + " certificate(s); a "
                    + "chain is trusted up to a root in this file, as Apache's SSLCACertificateFile");
        }
        return new CaTrust(file, anchors, all, maxDepth);
    }

    private static boolean selfSigned(X509Certificate certificate) {
        if (!certificate.getSubjectX500Principal().equals(certificate.getIssuerX500Principal())) {
            return false;
        }
        try {
            certificate.verify(certificate.getPublicKey());
            return true;
        } catch (GeneralSecurityException e) {
            return false;
        }
    }

    /** @return the bundle file */
    public Path file() {
        return file;
    }

    /** @return the bundle's certificates, in file order */
    public List<X509Certificate> certificates() {
        return certificates;
    }

    /** @return the deepest chain accepted */
    public int maxDepth() {
        return maxDepth;
    }

    /**
     * @param issuer a CRL's issuer
     * @return the bundle's certificates of that subject (a CRL is checked against them)
     */
    List<X509Certificate> certificatesOf(X500Principal issuer) {
        List<X509Certificate> found = new ArrayList<>(1);
        for (X509Certificate certificate : certificates) {
            if (certificate.getSubjectX500Principal().equals(issuer)) {
                found.add(certificate);
            }
        }
        return found;
    }

    /** The outcome of verifying a chain. */
    public sealed interface Verdict {}

    /**
     * The chain leads to a root of the bundle within the depth.
     *
     * @param path the client's certificate, then the intermediates up to (not including) the root
     * @param root the root it leads to
     * @param notBefore the latest start of validity along the path
     * @param notAfter the earliest end of validity along the path
     */
    public record Valid(List<X509Certificate> path, X509Certificate root, Instant notBefore, Instant notAfter)
            implements Verdict {
        public Valid {
            path = List.copyOf(path);
            Objects.requireNonNull(root);
        }

        /** @return the depth, as Apache counts it: CA certificates above the client's */
        public int depth() {
            return path.size();
        }
    }

    /**
     * The chain is refused.
     *
     * @param reason why, as a stable code
     * @param detail why, in words
     */
    public record Invalid(Identification.Reason reason, String detail) implements Verdict {}

    /**
     * Verifies a client chain: signatures, CA constraints and validity dates of every certificate up to a root of
     * the bundle, the depth, and that the client certificate may authenticate a client, as OpenSSL's client purpose
     * check has it (not a CA; a key usage, when there is one, with digitalSignature or keyAgreement; extended key
     * usages, on it and on the CAs above it, that allow client authentication). Revocation is not checked here
     * (see {@link Revocations}). Certificates the client sends that are not on the path are ignored, as OpenSSL
     * ignores them.
     *
     * @param chain the client's certificates, leaf first
     * @param now the time to verify at
     * @return the verdict
     */
    public Verdict verify(List<X509Certificate> chain, Instant now) {
        X509Certificate leaf = chain.get(0);
        ByteBuffer key = fingerprint(leaf);
        Verified known = key != null ? verified.get(key) : null;
        if (known != null) {
            List<X509Certificate> path = new ArrayList<>(known.above().size() + 1);
            path.add(leaf);
            path.addAll(known.above());
            return new Valid(path, known.root(), known.notBefore(), known.notAfter());
        }
        Verdict verdict = build(chain, leaf, now);
        if (key != null && verdict instanceof Valid valid) {
            if (verified.size() >= CACHE_ENTRIES) {
                verified.clear();
            }
            List<X509Certificate> above = new ArrayList<>(valid.path().size() - 1);
            for (X509Certificate ca : valid.path().subList(1, valid.path().size())) {
                above.add(share(ca));
            }
            verified.put(key, new Verified(List.copyOf(above), valid.root(), valid.notBefore(), valid.notAfter()));
        }
        return verdict;
    }

    private X509Certificate share(X509Certificate ca) {
        X509Certificate known = shared.get(ca);
        if (known != null) {
            return known;
        }
        if (shared.size() >= SHARED_ENTRIES) {
            return ca;
        }
        X509Certificate raced = shared.putIfAbsent(ca, ca);
        return raced != null ? raced : ca;
    }

    /** @return the SHA-256 of the certificate's encoding, or null when it cannot be encoded (then not cached) */
    private static ByteBuffer fingerprint(X509Certificate certificate) {
        try {
            return ByteBuffer.wrap(MessageDigest.getInstance("SHA-256").digest(certificate.getEncoded()));
        } catch (CertificateEncodingException | NoSuchAlgorithmException e) {
            return null;
        }
    }

    private Verdict build(List<X509Certificate> chain, X509Certificate leaf, Instant now) {
        String purpose = clientPurpose(leaf);
        if (purpose != null) {
            return new Invalid(Identification.Reason.CERTIFICATE_NOT_TRUSTED, purpose);
        }
        PKIXCertPathBuilderResult result;
        try {
            result = path(leaf, chain, now);
        } catch (CertPathBuilderException e) {
            // Say which certificate's dates broke the chain, when one did: the path builder only says it found none.
            for (X509Certificate sent : chain) {
                String dates = dates(sent, now, sent == leaf);
                if (dates != null) {
                    return new Invalid(now.isBefore(sent.getNotBefore().toInstant())
                            ? Identification.Reason.CERTIFICATE_NOT_YET_VALID
                            : Identification.Reason.CERTIFICATE_EXPIRED, dates);
                }
            }
            return new Invalid(Identification.Reason.CERTIFICATE_NOT_TRUSTED, "the client certificate (issuer '"
                    + leaf.getIssuerX500Principal().getName() + "') does not lead to a CA of [nodes] ca_file through "
                    + "valid CA certificates (" + chain.size() + " certificate(s) sent)");
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("the JDK's PKIX path builder is not available", e);
        }
        List<X509Certificate> path = new ArrayList<>();
        for (var certificate : result.getCertPath().getCertificates()) {
            path.add((X509Certificate) certificate);
        }
        X509Certificate root = result.getTrustAnchor().getTrustedCert();
        if (path.size() > maxDepth) {
            return new Invalid(Identification.Reason.CHAIN_TOO_DEEP, "the client certificate is at depth "
                    + path.size() + " below the root '" + root.getSubjectX500Principal().getName() + "' ("
                    + (path.size() - 1) + " intermediate CA(s)); [nodes] ca_max_depth is " + maxDepth);
        }
        for (X509Certificate ca : path.subList(1, path.size())) {
            if (!allowsClientAuth(ca)) {
                return new Invalid(Identification.Reason.CERTIFICATE_NOT_TRUSTED, "CA certificate '"
                        + ca.getSubjectX500Principal().getName() + "' above the client's limits its extended key "
                        + "usage to other purposes than client authentication");
            }
        }
        Instant notBefore = root.getNotBefore().toInstant();
        Instant notAfter = root.getNotAfter().toInstant();
        for (X509Certificate certificate : path) {
            Instant from = certificate.getNotBefore().toInstant();
            Instant to = certificate.getNotAfter().toInstant();
            notBefore = from.isAfter(notBefore) ? from : notBefore;
            notAfter = to.isBefore(notAfter) ? to : notAfter;
        }
        return new Valid(path, root, notBefore, notAfter);
    }

    private PKIXCertPathBuilderResult path(X509Certificate leaf, List<X509Certificate> chain, Instant now)
            throws GeneralSecurityException {
        X509CertSelector target = new X509CertSelector();
        target.setCertificate(leaf);
        PKIXBuilderParameters parameters = new PKIXBuilderParameters(anchors, target);
        List<X509Certificate> pool = new ArrayList<>(chain);
        pool.addAll(certificates);
        parameters.addCertStore(CertStore.getInstance("Collection", new CollectionCertStoreParameters(pool)));
        parameters.setRevocationEnabled(false);
        parameters.setDate(Date.from(now));
        parameters.setMaxPathLength(-1);
        return (PKIXCertPathBuilderResult) CertPathBuilder.getInstance("PKIX").build(parameters);
    }

    private static String dates(X509Certificate certificate, Instant now, boolean leaf) {
        String which = leaf ? "the client certificate" : "CA certificate '"
                + certificate.getSubjectX500Principal().getName() + "' in the client's chain";
        if (now.isAfter(certificate.getNotAfter().toInstant())) {
            return which + " expired on " + certificate.getNotAfter().toInstant();
        }
        if (now.isBefore(certificate.getNotBefore().toInstant())) {
            return which + " is not valid before " + certificate.getNotBefore().toInstant();
        }
        return null;
    }

    /** @return why the certificate may not authenticate a client, or null when it may */
    private static String clientPurpose(X509Certificate leaf) {
        if (leaf.getBasicConstraints() >= 0) {
            return "the client certificate is a CA certificate (basicConstraints CA:TRUE), not a node's";
        }
        boolean[] usage = leaf.getKeyUsage();
        if (usage != null && !(usage.length > 0 && usage[0]) && !(usage.length > 4 && usage[4])) {
            return "the client certificate's key usage allows neither digitalSignature nor keyAgreement, which a "
                    + "TLS client needs";
        }
        if (!allowsClientAuth(leaf)) {
            return "the client certificate's extended key usage does not allow client authentication ("
                    + CLIENT_AUTH + ")";
        }
        return null;
    }

    private static boolean allowsClientAuth(X509Certificate certificate) {
        try {
            List<String> usages = certificate.getExtendedKeyUsage();
            return usages == null || usages.contains(CLIENT_AUTH) || usages.contains(ANY_USAGE);
        } catch (CertificateParsingException e) {
            return false;
        }
    }
}
