package io.pintle.server.nodes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pintle.server.tls.SelfSigned;
import java.security.KeyPair;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import org.bouncycastle.asn1.ASN1ObjectIdentifier;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x500.X500NameBuilder;
import org.bouncycastle.asn1.x500.style.BCStyle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class CertificateSubjectsTest {
    private static final KeyPair KEY = SelfSigned.keyPair(SelfSigned.KeyType.EC_P256);

    private static X509Certificate certificate(X500Name subject) {
        Instant now = Instant.now();
        return SelfSigned.certificate(KEY, subject, now.minus(Duration.ofHours(1)), now.plus(Duration.ofDays(1)));
    }

    /** A multi-valued RDN ({@code CN=...+UID=...}) holds the UID next to other attributes: the UID is read. */
    @ParameterizedTest
    @ValueSource(strings = {"cn-first", "uid-first", "long-common-name-that-sorts-after-the-uid-attribute"})
    void theUidOfAMultiValuedRdnIsTheUidNotItsOtherAttribute(String commonName) {
        boolean uidFirst = commonName.equals("uid-first");
        ASN1ObjectIdentifier[] types = uidFirst
                ? new ASN1ObjectIdentifier[] {BCStyle.UID, BCStyle.CN}
                : new ASN1ObjectIdentifier[] {BCStyle.CN, BCStyle.UID};
        String[] values = uidFirst ? new String[] {"node-a", commonName} : new String[] {commonName, "node-a"};
        X500Name subject = new X500NameBuilder(BCStyle.INSTANCE).addMultiValuedRDN(types, values).build();

        assertThat(CertificateSubjects.uid(certificate(subject))).contains("node-a");
    }

    @ParameterizedTest
    @ValueSource(strings = {"CN=node-a", "O=Rudder+CN=node-a"})
    void aSubjectWithoutUidHasNone(String subject) {
        assertThat(CertificateSubjects.uid(certificate(new X500Name(BCStyle.INSTANCE, subject)))).isEmpty();
    }

    /** Two UIDs naming different nodes name none, in separate RDNs or in one multi-valued RDN, in either order. */
    @ParameterizedTest
    @ValueSource(strings = {"UID=node-a,UID=node-b", "UID=node-b,UID=node-a", "CN=x,UID=node-a+UID=node-b",
        "UID=node-a,CN=x,UID=node-b"})
    void aSubjectWithTwoDifferentUidsNamesNoNode(String subject) {
        X509Certificate certificate = certificate(new X500Name(BCStyle.INSTANCE, subject));

        assertThatThrownBy(() -> CertificateSubjects.uid(certificate))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("2 UID attributes naming different nodes")
                .hasMessageContaining("node-a").hasMessageContaining("node-b")
                .hasMessageContaining("names no single node");
    }

    @Test
    void theSameUidTwiceIsThatNode() {
        X509Certificate certificate = certificate(new X500Name(BCStyle.INSTANCE, "UID=node-a,CN=x,UID=node-a"));

        assertThat(CertificateSubjects.uid(certificate)).contains("node-a");
    }
}
