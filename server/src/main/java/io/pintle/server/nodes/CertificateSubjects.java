package io.pintle.server.nodes;

import java.security.cert.X509Certificate;
import java.util.LinkedHashSet;
import java.util.Optional;
import java.util.Set;
import org.bouncycastle.asn1.ASN1Encodable;
import org.bouncycastle.asn1.ASN1String;
import org.bouncycastle.asn1.x500.AttributeTypeAndValue;
import org.bouncycastle.asn1.x500.RDN;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x500.style.BCStyle;

/**
 * Reads the node id from a certificate: the subject's {@code UID} attribute (OID 0.9.2342.19200300.100.1.1),
 * as Rudder's agents write it ({@code openssl req -subj "/UID=<uuid>"}) and Apache reads it
 * ({@code SSL_CLIENT_S_DN_UID}).
 */
public final class CertificateSubjects {
    private CertificateSubjects() {}

    /**
     * @param certificate a certificate
     * @return the subject's UID attribute value (also when it shares a multi-valued RDN with other attributes), or
     *     empty when there is none
     * @throws IllegalArgumentException when the subject or its UID cannot be decoded (a UTF8String that is not
     *     UTF-8, for instance: the JDK accepts such a certificate, BouncyCastle does not decode it), or when it
     *     holds UIDs of different values: such a subject names no single node (OpenSSL's lookups read the
     *     first, an RFC 2253 string shows the last first), so neither is admitted
     */
    public static Optional<String> uid(X509Certificate certificate) {
        Set<String> uids = new LinkedHashSet<>();
        try {
            X500Name subject = X500Name.getInstance(certificate.getSubjectX500Principal().getEncoded());
            for (RDN rdn : subject.getRDNs(BCStyle.UID)) {
                // A multi-valued RDN (CN=x+UID=y) holds other attributes beside the UID, in DER order.
                for (AttributeTypeAndValue attribute : rdn.getTypesAndValues()) {
                    if (attribute.getType().equals(BCStyle.UID)) {
                        ASN1Encodable value = attribute.getValue();
                        uids.add(value instanceof ASN1String string ? string.getString() : value.toString());
                    }
                }
            }
        } catch (IllegalArgumentException | IllegalStateException e) {
            throw new IllegalArgumentException("the certificate subject's UID cannot be decoded: " + e.getMessage(), e);
        }
        if (uids.size() > 1) {
            throw new IllegalArgumentException("the certificate subject '"
                    + certificate.getSubjectX500Principal().getName() + "' has " + uids.size()
                    + " UID attributes naming different nodes (" + String.join(", ", uids)
                    + "): the certificate names no single node");
        }
        return uids.stream().findFirst();
    }
}
