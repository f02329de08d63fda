package io.pintle.server.nodes;

import static org.assertj.core.api.Assertions.assertThat;

import io.pintle.api.KeyPins;
import io.pintle.server.tls.SelfSigned;
import java.security.KeyPair;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Optional;
import org.bouncycastle.asn1.ASN1Primitive;
import org.bouncycastle.asn1.x500.RDN;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x500.style.BCStyle;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class NodeRegistryTest {
    private static final NodeId ROOT = new NodeId("root");
    private static final NodeId NODE_A = new NodeId("node-a");
    private static final NodeId NODE_B = new NodeId("node-b");
    private static final NodeId NODE_C = new NodeId("node-c");
    private static final NodeId NODE_D = new NodeId("node-d");

    /** Whole seconds: X.509 validity dates have no sub-second part. */
    private static final Instant NOW = Instant.now().truncatedTo(ChronoUnit.SECONDS);

    private static KeyPair keyA;
    private static KeyPair keyB;
    private static KeyPair keyC;
    private static KeyPair keyD;
    private static KeyPair unknownKey;
    private static NodeRegistry registry;

    @BeforeAll
    static void setUp() {
        keyA = SelfSigned.keyPair(SelfSigned.KeyType.EC_P256);
        keyB = SelfSigned.keyPair(SelfSigned.KeyType.EC_P256);
        keyC = SelfSigned.keyPair(SelfSigned.KeyType.EC_P256);
        keyD = SelfSigned.keyPair(SelfSigned.KeyType.EC_P256);
        unknownKey = SelfSigned.keyPair(SelfSigned.KeyType.EC_P256);
        registry = NodeRegistry.of(
                List.of(
                        node(NODE_A, Optional.of(KeyHash.sha256(keyA.getPublic()))),
                        node(NODE_B, Optional.of(KeyHash.sha256(keyB.getPublic()))),
                        node(NODE_C, Optional.empty()),
                        node(NODE_D, Optional.of(KeyHash.of("sha512", keyD.getPublic())))),
                List.of(
                        new CertificateBinding(NODE_C, KeyHash.sha256(keyC.getPublic())),
                        // the same key as in nodeslist.json: one pin, not two
                        new CertificateBinding(NODE_A, KeyHash.sha256(keyA.getPublic()))));
    }

    private static Node node(NodeId id, Optional<KeyHash> key) {
        return new Node(id, id + ".example.com", key, ROOT);
    }

    private static X509Certificate certificate(KeyPair pair, String uid) {
        return SelfSigned.certificate(pair, SelfSigned.subject(uid), NOW.minus(Duration.ofDays(1)),
                NOW.plus(Duration.ofDays(365)));
    }

    private static Identification.Anonymous anonymous(Identification identification) {
        assertThat(identification).isInstanceOf(Identification.Anonymous.class);
        return (Identification.Anonymous) identification;
    }

    @Test
    void nodeWithItsKeyInTheNodesListIsAuthenticated() {
        Identification identification = registry.identify(certificate(keyB, "node-b"), NOW);

        assertThat(identification).isEqualTo(
                new Identification.Authenticated(NODE_B, KeyHash.sha256(keyB.getPublic())));
    }

    @Test
    void nodeKnownOnlyThroughACertificateBindingIsAuthenticated() {
        Identification identification = registry.identify(certificate(keyC, "node-c"), NOW);

        assertThat(identification).isEqualTo(
                new Identification.Authenticated(NODE_C, KeyHash.sha256(keyC.getPublic())));
    }

    @Test
    void sha512PinInTheNodesListAuthenticatesToo() {
        Identification identification = registry.identify(certificate(keyD, "node-d"), NOW);

        assertThat(identification).isEqualTo(
                new Identification.Authenticated(NODE_D, KeyHash.sha256(keyD.getPublic())));
    }

    @Test
    void noCertificateIsAnonymous() {
        assertThat(anonymous(registry.identify(null, NOW)).reason())
                .isEqualTo(Identification.Reason.NO_CERTIFICATE);
    }

    @Test
    void expiredCertificateIsRefusedEvenWithAKnownKey() {
        X509Certificate expired = SelfSigned.certificate(keyA, SelfSigned.subject("node-a"),
                NOW.minus(Duration.ofDays(30)), NOW.minus(Duration.ofDays(1)));

        Identification.Anonymous anonymous = anonymous(registry.identify(expired, NOW));

        assertThat(anonymous.reason()).isEqualTo(Identification.Reason.CERTIFICATE_EXPIRED);
        assertThat(anonymous.detail()).contains(NOW.minus(Duration.ofDays(1)).toString());
    }

    @Test
    void notYetValidCertificateIsRefusedEvenWithAKnownKey() {
        X509Certificate future = SelfSigned.certificate(keyA, SelfSigned.subject("node-a"),
                NOW.plus(Duration.ofDays(1)), NOW.plus(Duration.ofDays(30)));

        assertThat(anonymous(registry.identify(future, NOW)).reason())
                .isEqualTo(Identification.Reason.CERTIFICATE_NOT_YET_VALID);
    }

    @Test
    void certificateIsValidOnTheFirstAndLastSecondOfItsValidity() {
        Instant from = NOW.minus(Duration.ofDays(1));
        Instant until = NOW.plus(Duration.ofDays(1));
        X509Certificate certificate = SelfSigned.certificate(keyA, SelfSigned.subject("node-a"), from, until);

        assertThat(registry.identify(certificate, from)).isInstanceOf(Identification.Authenticated.class);
        assertThat(registry.identify(certificate, until)).isInstanceOf(Identification.Authenticated.class);
        assertThat(anonymous(registry.identify(certificate, until.plusSeconds(1))).reason())
                .isEqualTo(Identification.Reason.CERTIFICATE_EXPIRED);
    }

    @Test
    void certificateWithoutUidIsAnonymous() {
        Identification.Anonymous anonymous = anonymous(registry.identify(certificate(keyA, null), NOW));

        assertThat(anonymous.reason()).isEqualTo(Identification.Reason.CERTIFICATE_WITHOUT_UID);
        assertThat(anonymous.detail()).contains("CN=pintle");
    }

    @Test
    void certificateWhoseUidIsNotANodeIdIsAnonymous() {
        Identification.Anonymous anonymous = anonymous(registry.identify(certificate(keyA, "node a/.."), NOW));

        assertThat(anonymous.reason()).isEqualTo(Identification.Reason.INVALID_UID);
        assertThat(anonymous.detail()).contains("node a/..");
    }

    @Test
    void unknownKeyIsAnonymousAndNamesItsPin() {
        Identification.Anonymous anonymous = anonymous(registry.identify(certificate(unknownKey, "node-a"), NOW));

        assertThat(anonymous.reason()).isEqualTo(Identification.Reason.UNKNOWN_KEY);
        assertThat(anonymous.detail()).contains(KeyPins.sha256(unknownKey.getPublic())).contains("node-a");
    }

    @Test
    void anotherNodesKeyDoesNotAuthenticateTheUid() {
        // node-a's UID with node-b's key: a node trying to pass for another one.
        Identification.Anonymous anonymous = anonymous(registry.identify(certificate(keyB, "node-a"), NOW));

        assertThat(anonymous.reason()).isEqualTo(Identification.Reason.KEY_NOT_FOR_UID);
        assertThat(anonymous.detail())
                .contains(KeyPins.sha256(keyB.getPublic()))
                .contains("node-b")
                .contains("node-a");
    }

    @Test
    void countsNodesAndDistinctPins() {
        assertThat(registry.nodeCount()).isEqualTo(4);
        // A, B and D from nodeslist.json, C from its certificate; A's certificate repeats A's pin.
        assertThat(registry.pinCount()).isEqualTo(4);
        assertThat(registry.node(NODE_C)).hasValueSatisfying(node -> assertThat(node.keyHash()).isEmpty());
        assertThat(registry.node(new NodeId("node-z"))).isEmpty();
    }

    @Test
    void emptyRegistryAuthenticatesNobody() {
        NodeRegistry empty = NodeRegistry.empty();

        assertThat(empty.nodeCount()).isZero();
        assertThat(empty.pinCount()).isZero();
        assertThat(anonymous(empty.identify(certificate(keyA, "node-a"), NOW)).reason())
                .isEqualTo(Identification.Reason.UNKNOWN_KEY);
    }

    @Test
    void uidThatIsNotUtf8IsAnInvalidUidNotAnError() throws Exception {
        // Found by CertificatesFuzzTest: the JDK accepts a UTF8String UID that is not UTF-8, BouncyCastle threw.
        X500Name subject = new X500Name(new RDN[] {new RDN(BCStyle.UID,
                ASN1Primitive.fromByteArray(new byte[] {0x0c, 0x02, (byte) 0xc3, 0x28}))});
        X509Certificate certificate = SelfSigned.certificate(keyA, subject, NOW.minus(Duration.ofDays(1)),
                NOW.plus(Duration.ofDays(365)));

        assertThat(anonymous(registry.identify(certificate, NOW)).reason())
                .isEqualTo(Identification.Reason.INVALID_UID);
    }
}
