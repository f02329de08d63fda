package io.pintle.server.nodes;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.cert.CRLException;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509CRL;
import java.security.cert.X509CRLEntry;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import javax.security.auth.x500.X500Principal;

/**
 * What revokes a client certificate, as of one load: certificate revocation lists of the CAs of certificate-
 * validation mode ({@code [nodes] crl_files}, PEM or DER, several issuers), and the keys an operator denies in
 * either mode ({@code [nodes] denied_keys_file}, one pin per line), so that a stolen agent key is refused without
 * touching Rudder's files. Immutable; looked up on every request (a hash lookup per certificate of the path), so
 * a reload that adds a revocation refuses the certificate's next request, on an open connection and after a TLS
 * resumption too.
 */
public final class Revocations {
    private static final String DELTA_CRL_INDICATOR = "2.5.29.27";
    private static final String ISSUING_DISTRIBUTION_POINT = "2.5.29.28";

    /** Nothing revoked, no list read. */
    public static final Revocations NONE = new Revocations(List.of(), Set.of(), null);

    private final List<Crl> crls;
    private final Map<X500Principal, List<X509CRL>> byIssuer;
    private final Set<KeyHash> denied;
    /** Whether the deny list names a sha512 pin: only then is a client's key hashed with sha512. */
    private final boolean deniedSha512;
    private final Path deniedFile;

    /**
     * @param crls the lists, verified against their issuers
     * @param denied the denied key pins
     * @param deniedFile where they were read, or null when no file was
     */
    public Revocations(List<Crl> crls, Set<KeyHash> denied, Path deniedFile) {
        this.crls = List.copyOf(crls);
        Map<X500Principal, List<X509CRL>> index = new HashMap<>();
        for (Crl crl : this.crls) {
            index.computeIfAbsent(crl.crl().getIssuerX500Principal(), issuer -> new ArrayList<>(1)).add(crl.crl());
        }
        index.replaceAll((issuer, list) -> List.copyOf(list));
        this.byIssuer = Collections.unmodifiableMap(index);
        this.denied = Set.copyOf(denied);
        this.deniedSha512 = this.denied.stream().anyMatch(key -> key.algorithm().equals("sha512"));
        this.deniedFile = deniedFile;
    }

    /**
     * One CRL as read.
     *
     * @param file where it was read
     * @param crl the list
     */
    public record Crl(Path file, X509CRL crl) {
        public Crl {
            Objects.requireNonNull(file);
            Objects.requireNonNull(crl);
        }

        /** @return its issuer, as RFC 2253 writes it */
        public String issuer() {
            return crl.getIssuerX500Principal().getName();
        }

        /** @return when it was issued */
        public Instant thisUpdate() {
            return crl.getThisUpdate().toInstant();
        }

        /** @return when the next one is due, or null when it does not say */
        public Instant nextUpdate() {
            return crl.getNextUpdate() == null ? null : crl.getNextUpdate().toInstant();
        }

        /** @return how many certificates it revokes */
        public int entries() {
            Set<? extends X509CRLEntry> entries = crl.getRevokedCertificates();
            return entries == null ? 0 : entries.size();
        }
    }

    /**
     * Reads a CRL file and checks each list's signature against a certificate of its issuer in the CA bundle (a
     * list from elsewhere, or altered, is refused: the reload fails and the previous lists stay).
     *
     * @param content the file's bytes: PEM {@code X509 CRL} blocks, or one DER list
     * @param file its name, for messages
     * @param ca the CA bundle, or null when certificate-validation mode is off
     * @return its lists
     * @throws IOException naming the file and the list when one cannot be read or verified
     */
    public static List<Crl> parseCrls(byte[] content, Path file, CaTrust ca) throws IOException {
        List<Crl> result = new ArrayList<>();
        try {
            for (var crl : CertificateFactory.getInstance("X.509").generateCRLs(new ByteArrayInputStream(content))) {
                result.add(new Crl(file, (X509CRL) crl));
            }
        } catch (CRLException | CertificateException | RuntimeException e) {
            throw new IOException(file + ": not a certificate revocation list (PEM \"X509 CRL\" blocks or DER): "
                    + e.getMessage(), e);
        }
        if (result.isEmpty()) {
            throw new IOException(file + ": no certificate revocation list found");
        }
        for (Crl crl : result) {
            String scope = scope(crl.crl());
            if (scope != null) {
                throw new IOException(file + ": the CRL of '" + crl.issuer() + "' " + scope + "; Pintle reads complete "
                        + "lists of the certificates their issuer signed (a delta or partial list in place of the "
                        + "full one would undo revocations)");
            }
            if (ca == null) {
                continue;
            }
            List<X509Certificate> issuers = ca.certificatesOf(crl.crl().getIssuerX500Principal());
            if (issuers.isEmpty()) {
                throw new IOException(file + ": the CRL of '" + crl.issuer() + "' has no issuer in " + ca.file()
                        + "; add that CA's certificate to the bundle (intermediates too) so its lists can be "
                        + "verified");
            }
            if (issuers.stream().noneMatch(issuer -> signedBy(crl.crl(), issuer))) {
                throw new IOException(file + ": the CRL of '" + crl.issuer() + "' is not signed by that CA's key "
                        + "in " + ca.file() + " (altered, or from another CA of the same name)");
            }
        }
        return result;
    }

    /** @return why the list is not a complete list of its issuer's certificates, or null when it is one */
    private static String scope(X509CRL crl) {
        if (crl.getExtensionValue(DELTA_CRL_INDICATOR) != null) {
            return "is a delta CRL (deltaCRLIndicator)";
        }
        if (crl.getExtensionValue(ISSUING_DISTRIBUTION_POINT) != null) {
            return "covers a part of its issuer's certificates only (issuingDistributionPoint)";
        }
        Set<String> critical = crl.getCriticalExtensionOIDs();
        if (critical != null && !critical.isEmpty()) {
            return "has critical extensions Pintle does not read " + critical;
        }
        Set<? extends X509CRLEntry> entries = crl.getRevokedCertificates();
        if (entries != null) {
            for (X509CRLEntry entry : entries) {
                Set<String> entryCritical = entry.getCriticalExtensionOIDs();
                if (entryCritical != null && !entryCritical.isEmpty()) {
                    return "has entries with critical extensions Pintle does not read " + entryCritical
                            + " (an indirect CRL, for instance)";
                }
            }
        }
        return null;
    }

    private static boolean signedBy(X509CRL crl, X509Certificate issuer) {
        try {
            crl.verify(issuer.getPublicKey());
            return true;
        } catch (GeneralSecurityException e) {
            return false;
        }
    }

    /**
     * Reads the deny list: one key pin per line ({@code sha256//<base64>}, as in {@code nodeslist.json}'s
     * {@code key-hash} and Rudder's {@code policy_server_hash}), blank lines and {@code #} comments ignored.
     *
     * @param content the file's bytes
     * @param file its name, for messages
     * @return the pins
     * @throws IOException naming the line that is not a pin
     */
    public static Set<KeyHash> parseDenied(byte[] content, Path file) throws IOException {
        Set<KeyHash> pins = new LinkedHashSet<>();
        String[] lines = new String(content, StandardCharsets.UTF_8).split("\n", -1);
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i];
            int hash = line.indexOf('#');
            String pin = (hash >= 0 ? line.substring(0, hash) : line).strip();
            if (pin.isEmpty()) {
                continue;
            }
            KeyHash parsed = KeyHash.parse(pin).orElse(null);
            if (parsed == null) {
                throw new IOException(file + ":" + (i + 1) + ": not a key pin (sha256//<base64 of the SHA-256 of "
                        + "the public key>, as 'rudder agent info' shows it): '" + (pin.length() > 80
                                ? pin.substring(0, 80) + "..." : pin) + "'");
            }
            pins.add(parsed);
        }
        return pins;
    }

    /** @return the CRLs, in file order */
    public List<Crl> crls() {
        return crls;
    }

    /** @return the denied key pins */
    public Set<KeyHash> denied() {
        return denied;
    }

    /** @return the deny list file read, or null */
    public Path deniedFile() {
        return deniedFile;
    }

    /**
     * @param certificate a client certificate
     * @return why its key is denied, or null when it is not
     */
    public String deniedKey(ClientCertificate certificate) {
        if (denied.isEmpty()) {
            return null;
        }
        KeyHash hit = denied.contains(certificate.sha256()) ? certificate.sha256()
                : deniedSha512 && denied.contains(certificate.sha512()) ? certificate.sha512() : null;
        return hit == null ? null : "key " + hit + " is in the deny list ([nodes] denied_keys_file)";
    }

    /**
     * @param path a verified path: the client's certificate, then its CAs below the root
     * @return why one of them is revoked, or null when none is
     */
    public String revoked(List<X509Certificate> path) {
        if (byIssuer.isEmpty()) {
            return null;
        }
        for (X509Certificate certificate : path) {
            List<X509CRL> lists = byIssuer.get(certificate.getIssuerX500Principal());
            if (lists == null) {
                continue;
            }
            for (X509CRL crl : lists) {
                X509CRLEntry entry = crl.getRevokedCertificate(certificate);
                if (entry != null) {
                    return (certificate == path.get(0) ? "the client certificate" : "CA certificate '"
                            + certificate.getSubjectX500Principal().getName() + "' above it") + " (serial "
                            + certificate.getSerialNumber().toString(16) + ") is revoked since "
                            + entry.getRevocationDate().toInstant() + " by the CRL of '"
                            + crl.getIssuerX500Principal().getName() + "' issued " + crl.getThisUpdate().toInstant();
                }
            }
        }
        return null;
    }
}
