package io.pintle.server.nodes;

import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * What identification reads from a client certificate that depends on the certificate alone: its validity
 * period, the subject's {@code UID} (or why there is none), its key pins, the chain the client sent with it, and,
 * when a SAN id rule asks, its DNS and URI SANs. Parsing the subject and hashing the key cost more than the rest of a cached file
 * request, so the TLS layer computes this once per connection and {@link NodeTrust#identify} uses it on every
 * request of that connection, against whatever snapshot the request runs on. The chain's verification against a
 * CA bundle is kept here too ({@link #verified}), for as long as the bundle is the same object.
 *
 * @param certificate the leaf certificate
 * @param chain the leaf and the certificates the client sent after it
 * @param notBefore start of validity
 * @param notAfter end of validity
 * @param uid the subject's UID, or null when it has none, it cannot be decoded or the subject has UIDs of
 *     different values
 * @param uidProblem why the UID cannot be decoded or names no single node, or null
 * @param sha256 the key's sha256 pin
 * @param memo the chain's last verification
 */
public record ClientCertificate(X509Certificate certificate, List<X509Certificate> chain, Instant notBefore,
        Instant notAfter, String uid, String uidProblem, KeyHash sha256, Memo memo) {
    public ClientCertificate {
        Objects.requireNonNull(certificate);
        chain = List.copyOf(chain);
        Objects.requireNonNull(notBefore);
        Objects.requireNonNull(notAfter);
        Objects.requireNonNull(sha256);
        Objects.requireNonNull(memo);
    }

    /**
     * @param certificate a client's leaf certificate, sent alone
     * @return what identification needs of it
     */
    public static ClientCertificate of(X509Certificate certificate) {
        return of(List.of(certificate));
    }

    /**
     * @param chain a client's certificates, leaf first
     * @return what identification needs of them
     */
    public static ClientCertificate of(List<X509Certificate> chain) {
        X509Certificate certificate = chain.get(0);
        String uid = null;
        String problem = null;
        try {
            Optional<String> text = CertificateSubjects.uid(certificate);
            uid = text.orElse(null);
        } catch (IllegalArgumentException e) {
            problem = e.getMessage();
        }
        return new ClientCertificate(certificate, chain, certificate.getNotBefore().toInstant(),
                certificate.getNotAfter().toInstant(), uid, problem, KeyHash.sha256(certificate.getPublicKey()), new Memo());
    }

    /**
     * @param now the time to check against
     * @return the refusal when the certificate is not valid at that time, or null when it is
     */
    public Identification.Anonymous outsideValidity(Instant now) {
        if (now.isBefore(notBefore)) {
            return new Identification.Anonymous(Identification.Reason.CERTIFICATE_NOT_YET_VALID,
                    "the client certificate is not valid before " + notBefore);
        }
        if (now.isAfter(notAfter)) {
            return new Identification.Anonymous(Identification.Reason.CERTIFICATE_EXPIRED,
                    "the client certificate expired on " + notAfter);
        }
        return null;
    }

    /**
     * The chain verified against a CA bundle, once per connection and bundle: a reload that keeps the bundle's
     * bytes keeps the same {@link CaTrust} object, so the verification stands; a changed bundle verifies again.
     * Revocation is not part of it: it is checked on every request.
     *
     * @param trust the snapshot's CA bundle
     * @param now the time to verify at
     * @return the verification
     */
    public CaTrust.Verdict verified(CaTrust trust, Instant now) {
        Memo.Entry entry = memo.entry;
        if (entry != null && entry.trust() == trust) {
            return entry.verdict();
        }
        CaTrust.Verdict verdict = trust.verify(chain, now);
        memo.entry = new Memo.Entry(trust, verdict);
        return verdict;
    }

    /**
     * Few fleets pin sha512 (Rudder writes sha256 key hashes), and the comparisons that need it (a sha512 pin in
     * the node list or the deny list) are rare: hashed when first asked, then kept, rather than on every
     * connection.
     *
     * @return the key's sha512 pin
     */
    public KeyHash sha512() {
        KeyHash sha512 = memo.sha512;
        if (sha512 == null) {
            sha512 = KeyHash.of("sha512", certificate.getPublicKey());
            memo.sha512 = sha512;
        }
        return sha512;
    }

    /** @return its DNS subject alternative names (read when a SAN id rule first asks, then kept) */
    public List<String> dnsNames() {
        return sans().dns();
    }

    /** @return its URI subject alternative names (read when a SAN id rule first asks, then kept) */
    public List<String> uris() {
        return sans().uris();
    }

    /** Only SAN id rules read them: not parsed for every connection of the default pinning mode. */
    private Memo.Sans sans() {
        Memo.Sans sans = memo.sans;
        if (sans == null) {
            sans = Memo.Sans.of(certificate);
            memo.sans = sans;
        }
        return sans;
    }

    /**
     * What is computed of the certificate on demand and kept for the connection: the chain's last verification,
     * the SANs, the sha512 pin. A race only computes twice.
     */
    public static final class Memo {
        private volatile Entry entry;
        private volatile Sans sans;
        private volatile KeyHash sha512;

        /** DNS and URI subject alternative names. */
        private record Sans(List<String> dns, List<String> uris) {
            static Sans of(X509Certificate certificate) {
                List<String> dns = new ArrayList<>();
                List<String> uris = new ArrayList<>();
                try {
                    Collection<List<?>> names = certificate.getSubjectAlternativeNames();
                    if (names != null) {
                        for (List<?> name : names) {
                            if (name.size() == 2 && name.get(0) instanceof Integer type
                                    && name.get(1) instanceof String value) {
                                if (type == IdRule.San.DNS) {
                                    dns.add(value);
                                } else if (type == IdRule.San.URI) {
                                    uris.add(value);
                                }
                            }
                        }
                    }
                } catch (CertificateParsingException e) {
                    // An undecodable SAN extension names no id: SAN rules then find nothing, and say so.
                }
                return new Sans(List.copyOf(dns), List.copyOf(uris));
            }
        }

        record Entry(CaTrust trust, CaTrust.Verdict verdict) {}
    }
}
