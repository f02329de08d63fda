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
                        CertificateBinding.of(NODE_C, keyC.getPublic()),
                        // the same key as in nodeslist.json: one pin, not two
                        CertificateBinding.of(NODE_A, keyA.getPublic()),
                        CertificateBinding.of(NODE_B, keyB.getPublic()),
                        // sha512 in nodeslist.json, sha256 here: the same key, pinned by both inputs
                        CertificateBinding.of(NODE_D, keyD.getPublic())));
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
    void nodeWithItsKeyInTheNodesListAndTheBundleIsAuthenticated() {
        Identification identification = registry.identify(certificate(keyB, "node-b"), NOW);

        assertThat(identification).isEqualTo(
                new Identification.Authenticated(NODE_B, KeyHash.sha256(keyB.getPublic())));
    }

    @Test
    void nodeListedWithoutKeyHashIsAuthenticatedByItsCertificate() {
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
        // A, B and D (sha512) from nodeslist.json, C and D (sha256) from certificates; A's and B's repeat a pin.
        assertThat(registry.pinCount()).isEqualTo(5);
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
    // --- issue 18: one identity rule over both inputs ---

    private static final NodeId LISTED_ONLY = new NodeId("listed-only");
    private static final NodeId CERTIFIED_ONLY = new NodeId("certified-only");
    private static final NodeId ROTATING = new NodeId("rotating");

    @Test
    void nodeRemovedFromTheNodesListIsRefusedEvenWithItsCertificateStillInTheBundle() {
        KeyPair key = SelfSigned.keyPair(SelfSigned.KeyType.EC_P256);
        // nodeslist.json was rewritten without the node; nodescerts.pem not yet (or never).
        NodeRegistry between = NodeRegistry.of(List.of(node(NODE_A, Optional.of(KeyHash.sha256(keyA.getPublic())))),
                List.of(CertificateBinding.of(NODE_A, keyA.getPublic()),
                        CertificateBinding.of(CERTIFIED_ONLY, key.getPublic())));

        Identification.Anonymous anonymous = anonymous(between.identify(certificate(key, "certified-only"), NOW));

        assertThat(anonymous.reason()).isEqualTo(Identification.Reason.NODE_NOT_LISTED);
        assertThat(anonymous.reason().code()).isEqualTo("node-not-listed");
        assertThat(anonymous.detail()).contains("certified-only").contains("nodeslist.json");
        assertThat(between.identify(certificate(keyA, "node-a"), NOW))
                .isInstanceOf(Identification.Authenticated.class);
    }

    @Test
    void nodeInTheNodesListWhoseCertificateIsNotInTheBundleIsRefused() {
        KeyPair key = SelfSigned.keyPair(SelfSigned.KeyType.EC_P256);
        // nodeslist.json has the node (and its key-hash); the configured bundle does not hold its certificate.
        NodeRegistry between = NodeRegistry.of(
                List.of(node(LISTED_ONLY, Optional.of(KeyHash.sha256(key.getPublic())))), List.of());

        Identification.Anonymous anonymous = anonymous(between.identify(certificate(key, "listed-only"), NOW));

        assertThat(anonymous.reason()).isEqualTo(Identification.Reason.PINS_DISAGREE);
        assertThat(anonymous.detail()).contains("listed-only").contains("[nodes] certificates");
    }

    @Test
    void aKeyChangedInOneInputOnlyIsRefusedWhicheverInputWasWrittenFirst() {
        KeyPair oldKey = SelfSigned.keyPair(SelfSigned.KeyType.EC_P256);
        KeyPair newKey = SelfSigned.keyPair(SelfSigned.KeyType.EC_P256);
        NodeRegistry listFirst = NodeRegistry.of(
                List.of(node(ROTATING, Optional.of(KeyHash.sha256(newKey.getPublic())))),
                List.of(CertificateBinding.of(ROTATING, oldKey.getPublic())));
        NodeRegistry bundleFirst = NodeRegistry.of(
                List.of(node(ROTATING, Optional.of(KeyHash.sha256(oldKey.getPublic())))),
                List.of(CertificateBinding.of(ROTATING, newKey.getPublic())));

        for (NodeRegistry between : List.of(listFirst, bundleFirst)) {
            for (KeyPair key : List.of(oldKey, newKey)) {
                assertThat(anonymous(between.identify(certificate(key, "rotating"), NOW)).reason())
                        .isEqualTo(Identification.Reason.PINS_DISAGREE);
            }
        }
    }

    @Test
    void withoutAConfiguredBundleTheNodesListAloneDecides() {
        // No [nodes] certificates: nodeslist.json's key-hash is the only input, and enough.
        NodeRegistry listOnly = NodeRegistry.of(List.of(node(NODE_B, Optional.of(KeyHash.sha256(keyB.getPublic())))));

        assertThat(listOnly.identify(certificate(keyB, "node-b"), NOW)).isEqualTo(
                new Identification.Authenticated(NODE_B, KeyHash.sha256(keyB.getPublic())));
    }

    @Test
    void twentyThousandClonesSharingOneKeyMakeOneRegistryInLinearTime() {
        // Cloned VMs keep the template's agent key: every entry pins the same hash. Copying the owner set per owner
        // made this quadratic (20,000 entries ran for minutes and 1.5 GB); the bound only guards against that.
        KeyPair shared = SelfSigned.keyPair(SelfSigned.KeyType.EC_P256);
        KeyHash pin = KeyHash.sha256(shared.getPublic());
        int count = 20_000;
        List<Node> nodes = new java.util.ArrayList<>(count);
        List<CertificateBinding> bindings = new java.util.ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            NodeId id = new NodeId("clone-" + i);
            nodes.add(node(id, Optional.of(pin)));
            bindings.add(new CertificateBinding(id, pin, shared.getPublic().getEncoded()));
        }

        NodeRegistry clones = org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(Duration.ofSeconds(30),
                () -> NodeRegistry.of(nodes, bindings));

        assertThat(clones.nodeCount()).isEqualTo(count);
        assertThat(clones.pinCount()).isEqualTo(1);
        for (int i : new int[] {0, count / 2, count - 1}) {
            assertThat(clones.identify(certificate(shared, "clone-" + i), NOW))
                    .isEqualTo(new Identification.Authenticated(new NodeId("clone-" + i), pin));
        }
        assertThat(clones.isPinned(new NodeId("clone-7"), pin)).isTrue();
        assertThat(clones.owners(pin)).hasSize(count);
        assertThat(clones.pinsOf(new NodeId("clone-7"))).containsExactly(pin);
    }
    @Test
    void aReKeyedNodeIsAuthenticatedOnceBothInputsHaveTheNewKeyEvenWithTheOldCertificateStillThere() {
        KeyPair oldKey = SelfSigned.keyPair(SelfSigned.KeyType.EC_P256);
        KeyPair newKey = SelfSigned.keyPair(SelfSigned.KeyType.EC_P256);
        NodeRegistry after = NodeRegistry.of(
                List.of(node(ROTATING, Optional.of(KeyHash.sha256(newKey.getPublic())))),
                List.of(CertificateBinding.of(ROTATING, oldKey.getPublic()),
                        CertificateBinding.of(ROTATING, newKey.getPublic())));

        assertThat(after.identify(certificate(newKey, "rotating"), NOW))
                .isInstanceOf(Identification.Authenticated.class);
        assertThat(anonymous(after.identify(certificate(oldKey, "rotating"), NOW)).reason())
                .isEqualTo(Identification.Reason.PINS_DISAGREE);
    }

    @Test
    void aNodeListedWithoutKeyHashAndNoBundleConfiguredHasNoPinnedKey() {
        NodeRegistry listOnly = NodeRegistry.of(List.of(node(NODE_C, Optional.empty())));

        assertThat(anonymous(listOnly.identify(certificate(keyC, "node-c"), NOW)).reason())
                .isEqualTo(Identification.Reason.UNKNOWN_KEY);
        assertThat(listOnly.certificatesConfigured()).isFalse();
    }
    @Test
    void disagreementsCountTheNodesEitherInputNamesAlone() {
        KeyPair other = SelfSigned.keyPair(SelfSigned.KeyType.EC_P256);
        NodeRegistry between = NodeRegistry.of(
                List.of(node(NODE_A, Optional.of(KeyHash.sha256(keyA.getPublic()))),
                        node(NODE_B, Optional.of(KeyHash.sha256(keyB.getPublic()))),
                        node(NODE_C, Optional.of(KeyHash.sha256(keyC.getPublic())))),
                List.of(CertificateBinding.of(NODE_A, keyA.getPublic()),
                        CertificateBinding.of(NODE_C, other.getPublic()),
                        CertificateBinding.of(CERTIFIED_ONLY, other.getPublic())));

        // B has no certificate, C's certificate has another key, certified-only is not listed.
        assertThat(between.disagreements()).isEqualTo(3);
        assertThat(registry.disagreements()).isZero();
        assertThat(NodeRegistry.of(List.of(node(NODE_B, Optional.empty()))).disagreements()).isZero();
    }

    @Test
    void certifiedKeysAreTheKeysOfTheNodesCertificatesInTheBundles() {
        KeyPair rsa = SelfSigned.keyPair(SelfSigned.KeyType.RSA_2048);
        KeyPair ec = SelfSigned.keyPair(SelfSigned.KeyType.EC_P256);
        NodeRegistry rotating = NodeRegistry.of(
                List.of(node(ROTATING, Optional.empty()), node(NODE_A, Optional.of(KeyHash.sha256(keyA.getPublic())))),
                List.of(CertificateBinding.of(ROTATING, rsa.getPublic()), CertificateBinding.of(ROTATING, ec.getPublic()),
                        // the same certificate twice (in two bundles): one key
                        CertificateBinding.of(ROTATING, rsa.getPublic())));

        assertThat(rotating.certifiedKeys(ROTATING)).containsExactlyInAnyOrder(rsa.getPublic(), ec.getPublic());
        assertThat(rotating.certifiedKeys(ROTATING)).isEqualTo(rotating.certifiedKeys(ROTATING));
        // a nodeslist.json key-hash is a digest, not a key
        assertThat(rotating.certifiedKeys(NODE_A)).isEmpty();
        assertThat(rotating.certifiedKeys(NODE_B)).isEmpty();
        assertThat(NodeRegistry.of(List.of(node(NODE_A, Optional.of(KeyHash.sha256(keyA.getPublic())))))
                .certifiedKeys(NODE_A)).isEmpty();
        assertThat(registry.certifiedKeys(NODE_C)).containsExactly(keyC.getPublic());
    }

    @Test
    void bindingsAreEqualByValueAndRefuseAPinThatIsNotTheirKeys() {
        CertificateBinding binding = CertificateBinding.of(NODE_A, keyA.getPublic());
        byte[] encoded = keyA.getPublic().getEncoded();

        assertThat(new CertificateBinding(NODE_A, KeyHash.sha256(keyA.getPublic()), encoded)).isEqualTo(binding)
                .hasSameHashCodeAs(binding);
        encoded[0] ^= 1;
        assertThat(binding.publicKey()).isEqualTo(keyA.getPublic().getEncoded());
        org.assertj.core.api.Assertions.assertThatThrownBy(
                () -> new CertificateBinding(NODE_A, KeyHash.sha256(keyB.getPublic()), keyA.getPublic().getEncoded()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("node-a");
    }
}
