package io.pintle.server.nodes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pintle.server.tls.CertificateAuthority;
import io.pintle.server.tls.SelfSigned;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.cert.X509CRL;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x500.style.BCStyle;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.CRLNumber;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v2CRLBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CRLConverter;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.junit.jupiter.api.Test;

class NodeTrustTest {
    private static final Path CA_FILE = Path.of("/test/policy_server_ca.pem");
    private static final Instant NOW = Instant.now();
    private static final CertificateAuthority ROOT =
            CertificateAuthority.root(SelfSigned.KeyType.EC_P256, "Root", Duration.ofDays(365));
    private static final CertificateAuthority NODES = ROOT.intermediate(SelfSigned.KeyType.EC_P256, "Nodes");

    private static byte[] pem(Object... objects) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (JcaPEMWriter writer = new JcaPEMWriter(new OutputStreamWriter(bytes, StandardCharsets.US_ASCII))) {
            for (Object object : objects) {
                writer.writeObject(object);
            }
        }
        return bytes.toByteArray();
    }

    private static CaTrust trust(int depth) throws IOException {
        return CaTrust.parse(pem(ROOT.certificate(), NODES.certificate()), CA_FILE, depth);
    }

    private static ClientCertificate issued(CertificateAuthority ca, String uid, List<GeneralName> sans) {
        KeyPair pair = SelfSigned.keyPair(SelfSigned.KeyType.EC_P256);
        X509Certificate leaf = ca.issue(pair.getPublic(), CertificateAuthority.subject(uid, "node"), sans);
        List<X509Certificate> chain = new ArrayList<>();
        chain.add(leaf);
        chain.addAll(ca.chain().subList(0, ca.chain().size() - 1));
        return ClientCertificate.of(chain);
    }

    private static NodeRegistry listing(String... ids) {
        List<Node> nodes = new ArrayList<>();
        for (String id : ids) {
            nodes.add(new Node(new NodeId(id), id + ".example.org", Optional.empty(), new NodeId("root")));
        }
        return NodeRegistry.of(nodes);
    }

    /** A certificate of the nodes CA with these DNS SANs and no UID. */
    static ClientCertificate sanCertificate(String... names) {
        List<GeneralName> sans = new ArrayList<>();
        for (String name : names) {
            sans.add(CertificateAuthority.dns(name));
        }
        return issued(NODES, null, sans);
    }

    /** A certificate signed by {@code issuer} with the given extensions, for the purpose checks. */
    private static X509Certificate custom(CertificateAuthority issuer, KeyPair keys, String subject, boolean ca,
            Integer keyUsage, KeyPurposeId purpose) throws Exception {
        JcaX509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(issuer.name(),
                BigInteger.valueOf(System.nanoTime()), java.util.Date.from(NOW.minus(Duration.ofMinutes(5))),
                java.util.Date.from(NOW.plus(Duration.ofDays(30))), new X500Name(subject), keys.getPublic());
        builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(ca));
        if (keyUsage != null) {
            builder.addExtension(Extension.keyUsage, true, new KeyUsage(keyUsage));
        }
        if (purpose != null) {
            builder.addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(purpose));
        }
        return new JcaX509CertificateConverter().getCertificate(
                builder.build(new JcaContentSignerBuilder("SHA256withECDSA").build(issuer.keyPair().getPrivate())));
    }

    @Test
    void onlyCertificatesFitForClientAuthenticationAreTrusted() throws Exception {
        CaTrust bundle = trust(5);
        KeyPair keys = SelfSigned.keyPair(SelfSigned.KeyType.EC_P256);
        X509Certificate caAsClient = custom(NODES, keys, "UID=n1", true, KeyUsage.keyCertSign, null);
        X509Certificate signOnly = custom(NODES, keys, "UID=n1", false, KeyUsage.keyCertSign, null);
        X509Certificate serverOnly = custom(NODES, keys, "UID=n1", false, KeyUsage.digitalSignature,
                KeyPurposeId.id_kp_serverAuth);
        X509Certificate fine = custom(NODES, keys, "UID=n1", false, KeyUsage.digitalSignature,
                KeyPurposeId.id_kp_clientAuth);
        for (X509Certificate refused : List.of(caAsClient, signOnly, serverOnly)) {
            assertThat(bundle.verify(List.of(refused, NODES.certificate()), NOW))
                    .isInstanceOfSatisfying(CaTrust.Invalid.class, invalid ->
                            assertThat(invalid.reason()).isEqualTo(Identification.Reason.CERTIFICATE_NOT_TRUSTED));
        }
        assertThat(bundle.verify(List.of(fine, NODES.certificate()), NOW)).isInstanceOf(CaTrust.Valid.class);

        // A CA whose extended key usage is server authentication only cannot vouch for clients (OpenSSL's rule).
        KeyPair caKeys = SelfSigned.keyPair(SelfSigned.KeyType.EC_P256);
        X509Certificate serverCa = custom(ROOT, caKeys, "CN=Servers CA", true, KeyUsage.keyCertSign | KeyUsage.cRLSign,
                KeyPurposeId.id_kp_serverAuth);
        CertificateAuthority servers = new CertificateAuthority(new X500Name("CN=Servers CA"), caKeys, serverCa,
                List.of(serverCa, ROOT.certificate()));
        X509Certificate below = servers.issue(keys.getPublic(), CertificateAuthority.subject("n1", null), List.of());
        assertThat(bundle.verify(List.of(below, serverCa), NOW)).isInstanceOfSatisfying(CaTrust.Invalid.class,
                invalid -> assertThat(invalid.detail()).contains("CN=Servers CA"));
    }

    @Test
    void certificatesTheClientSendsBesideThePathAreIgnored() throws Exception {
        CertificateAuthority old = ROOT.intermediate(SelfSigned.KeyType.EC_P256, "Old Nodes");
        KeyPair keys = SelfSigned.keyPair(SelfSigned.KeyType.EC_P256);
        X509Certificate stale = custom(ROOT, keys, "CN=Stale Cross", true, KeyUsage.keyCertSign, null);
        ClientCertificate client = issued(NODES, "n1", List.of());
        List<X509Certificate> chain = new ArrayList<>(client.chain());
        chain.add(old.certificate());
        chain.add(stale);
        assertThat(trust(5).verify(chain, NOW)).isInstanceOf(CaTrust.Valid.class);
        // On the path, an expired CA is named.
        assertThat(trust(5).verify(client.chain(), NOW.plus(Duration.ofDays(400))))
                .isInstanceOfSatisfying(CaTrust.Invalid.class, invalid ->
                        assertThat(invalid.reason()).isEqualTo(Identification.Reason.CERTIFICATE_EXPIRED));
    }

    @Test
    void aBundleRemembersTheChainsItVerifiedAcrossConnections() throws Exception {
        // The root alone: the intermediate on a path can only come from the client, or from what was remembered.
        CaTrust bundle = CaTrust.parse(pem(ROOT.certificate()), CA_FILE, 5);
        ClientCertificate first = issued(NODES, "n1", List.of());
        // The same certificates decoded again, as the next connection of the same agent has them (BouncyCastle's
        // factory: the JDK's hands back the objects it decoded before for the same bytes).
        List<X509Certificate> again = new ArrayList<>();
        java.security.cert.CertificateFactory factory = java.security.cert.CertificateFactory.getInstance("X.509",
                new org.bouncycastle.jce.provider.BouncyCastleProvider());
        for (X509Certificate certificate : first.chain()) {
            again.add((X509Certificate) factory.generateCertificate(
                    new java.io.ByteArrayInputStream(certificate.getEncoded())));
        }
        assertThat(again.get(1)).isNotSameAs(first.chain().get(1));
        CaTrust.Valid one = (CaTrust.Valid) bundle.verify(first.chain(), NOW);
        CaTrust.Valid two = (CaTrust.Valid) bundle.verify(again, NOW);
        assertThat(two.path().get(0)).isSameAs(again.get(0));
        assertThat(two.path().get(1)).isSameAs(one.path().get(1)).isNotSameAs(again.get(1));
        assertThat(two.root()).isEqualTo(one.root());
        assertThat(two.notAfter()).isEqualTo(one.notAfter());
        // A refusal is not remembered: the same certificate is judged again (here, by another bundle's depth).
        CertificateAuthority stranger = CertificateAuthority.root(SelfSigned.KeyType.EC_P256, "Root", Duration.ofDays(9));
        ClientCertificate refused = issued(stranger, "n1", List.of());
        assertThat(bundle.verify(refused.chain(), NOW)).isInstanceOf(CaTrust.Invalid.class);
        assertThat(bundle.verify(refused.chain(), NOW)).isInstanceOf(CaTrust.Invalid.class);
    }

    @Test
    void depthCountsAsApacheDoes() throws Exception {
        CertificateAuthority ca = ROOT;
        for (int i = 0; i < 4; i++) {
            ca = ca.intermediate(SelfSigned.KeyType.EC_P256, "Level " + i);
        }
        ClientCertificate depth5 = issued(ca, "n", List.of());
        ClientCertificate depth6 = issued(ca.intermediate(SelfSigned.KeyType.EC_P256, "Level 5"), "n", List.of());
        assertThat(trust(5).verify(depth5.chain(), NOW)).isInstanceOfSatisfying(CaTrust.Valid.class,
                valid -> assertThat(valid.depth()).isEqualTo(5));
        assertThat(trust(5).verify(depth6.chain(), NOW)).isInstanceOfSatisfying(CaTrust.Invalid.class,
                invalid -> assertThat(invalid.reason()).isEqualTo(Identification.Reason.CHAIN_TOO_DEEP));
        assertThat(trust(1).verify(issued(ROOT, "n", List.of()).chain(), NOW)).isInstanceOf(CaTrust.Valid.class);
        assertThat(trust(1).verify(issued(NODES, "n", List.of()).chain(), NOW)).isInstanceOf(CaTrust.Invalid.class);
    }

    @Test
    void aBundleWithoutARootOrWithALeafIsRefused() throws Exception {
        assertThatThrownBy(() -> CaTrust.parse(pem(NODES.certificate()), CA_FILE, 5))
                .hasMessageContaining("no self-signed root CA");
        ClientCertificate leaf = issued(NODES, "n", List.of());
        assertThatThrownBy(() -> CaTrust.parse(pem(ROOT.certificate(), leaf.certificate()), CA_FILE, 5))
                .hasMessageContaining("is not a CA certificate");
        assertThatThrownBy(() -> CaTrust.parse("nothing here".getBytes(StandardCharsets.US_ASCII), CA_FILE, 5))
                .hasMessageContaining(CA_FILE.toString());
    }

    @Test
    void idRulesReadTheUidOrOneMatchingSan() {
        ClientCertificate both = issued(NODES, "by-uid", List.of(CertificateAuthority.dns("By-San.Nodes.Example.com"),
                CertificateAuthority.uri("urn:rudder:node:by-uri")));
        assertThat(IdRule.parse("uid").read(both).id()).isEqualTo("by-uid");
        assertThat(IdRule.parse("san-dns:{id}.nodes.example.com").read(both).id()).isEqualTo("By-San");
        assertThat(IdRule.parse("san-uri:urn:rudder:node:{id}").read(both).id()).isEqualTo("by-uri");
        assertThat(IdRule.parse("san-uri:urn:other:{id}").read(both).problem()).contains("no URI SAN matches");
        ClientCertificate twice = issued(NODES, null, List.of(CertificateAuthority.dns("a.nodes.example.com"),
                CertificateAuthority.dns("b.nodes.example.com")));
        assertThat(IdRule.parse("san-dns:{id}.nodes.example.com").read(twice).problem())
                .contains("different ids");
        assertThat(IdRule.parse("uid").read(twice).problem()).contains("no UID");
        assertThatThrownBy(() -> IdRule.parse("san-dns:nodes.example.com")).hasMessageContaining("{id}");
        assertThatThrownBy(() -> IdRule.parse("cn")).hasMessageContaining("not an id rule");
        assertThatThrownBy(() -> IdRule.parse("san-dns:{id}.{id}")).hasMessageContaining("exactly once");
    }

    /** Hostile testing, issue 34 N2: a CA-signed subject {@code UID=n1, UID=n2} was taken as n1. */
    @Test
    void aCertificateWithTwoUidsNamingDifferentNodesIsNoNodeInEitherMode() throws Exception {
        KeyPair pair = SelfSigned.keyPair(SelfSigned.KeyType.EC_P256);
        X500Name twoUids = new X500Name(BCStyle.INSTANCE, "UID=n1,UID=n2");
        X509Certificate leaf = NODES.issue(pair.getPublic(), twoUids, List.of());
        ClientCertificate presented = ClientCertificate.of(List.of(leaf, NODES.certificate()));
        NodeRegistry registry = listing("n1", "n2");

        NodeTrust validation = new NodeTrust(List.of(NodeTrust.Mode.CERT_VALIDATION), trust(5), List.of(IdRule.UID),
                Revocations.NONE);
        assertThat(validation.identify(registry, presented, NOW))
                .isInstanceOfSatisfying(Identification.Anonymous.class, anonymous -> {
                    assertThat(anonymous.reason()).isEqualTo(Identification.Reason.NO_NODE_ID);
                    assertThat(anonymous.detail()).contains("2 UID attributes naming different nodes (n1, n2)")
                            .contains("names no single node");
                });
        // Pinning mode reads the same UID: refused before any pin is looked at.
        assertThat(NodeTrust.PINNING.identify(registry, presented, NOW))
                .isInstanceOfSatisfying(Identification.Anonymous.class, anonymous -> {
                    assertThat(anonymous.reason()).isEqualTo(Identification.Reason.INVALID_UID);
                    assertThat(anonymous.detail()).contains("(n1, n2)");
                });
    }

    @Test
    void validationAuthenticatesListedNodesAndSaysWhy() throws Exception {
        NodeTrust trust = new NodeTrust(List.of(NodeTrust.Mode.CERT_VALIDATION), trust(5),
                List.of(IdRule.UID, IdRule.parse("san-dns:{id}.nodes.example.com")), Revocations.NONE);
        NodeRegistry registry = listing("n1", "n2");
        ClientCertificate n1 = issued(NODES, "n1", List.of());
        assertThat(trust.identify(registry, n1, NOW)).isEqualTo(
                new Identification.Authenticated(new NodeId("n1"), n1.sha256(), NodeTrust.Mode.CERT_VALIDATION));
        assertThat(trust.identify(registry, issued(NODES, null, List.of(CertificateAuthority.dns("n2.nodes.example.com"))),
                NOW)).isInstanceOfSatisfying(Identification.Authenticated.class,
                        authenticated -> assertThat(authenticated.node()).isEqualTo(new NodeId("n2")));
        assertThat(trust.identify(registry, issued(NODES, "n3", List.of()), NOW))
                .isInstanceOfSatisfying(Identification.Anonymous.class, anonymous -> {
                    assertThat(anonymous.reason()).isEqualTo(Identification.Reason.NODE_NOT_LISTED);
                    assertThat(anonymous.verified()).contains("UID=n3");
                });
        CertificateAuthority stranger = CertificateAuthority.root(SelfSigned.KeyType.EC_P256, "Root", Duration.ofDays(9));
        assertThat(trust.identify(registry, issued(stranger, "n1", List.of()), NOW))
                .isInstanceOfSatisfying(Identification.Anonymous.class, anonymous -> {
                    assertThat(anonymous.reason()).isEqualTo(Identification.Reason.CERTIFICATE_NOT_TRUSTED);
                    assertThat(anonymous.verified()).isNull();
                });
        assertThat(trust.identify(registry, issued(NODES, "n1", List.of()), NOW.plus(Duration.ofDays(400))))
                .isInstanceOfSatisfying(Identification.Anonymous.class, anonymous ->
                        assertThat(anonymous.reason()).isEqualTo(Identification.Reason.CERTIFICATE_EXPIRED));
    }

    @Test
    void aConnectionVerifiesItsChainOncePerBundleAndRevocationPerRequest() throws Exception {
        CaTrust bundle = trust(5);
        ClientCertificate client = issued(NODES, "n1", List.of());
        CaTrust.Verdict first = client.verified(bundle, NOW);
        assertThat(client.verified(bundle, NOW)).isSameAs(first);
        assertThat(client.verified(trust(5), NOW)).isNotSameAs(first);

        NodeRegistry registry = listing("n1");
        X509CRL crl = NODES.crl(List.of(client.certificate().getSerialNumber()));
        Revocations revoked = new Revocations(Revocations.parseCrls(pem(crl), Path.of("/test/crl.pem"), bundle),
                Set.of(), null);
        NodeTrust before = new NodeTrust(List.of(NodeTrust.Mode.CERT_VALIDATION), bundle, List.of(IdRule.UID),
                Revocations.NONE);
        NodeTrust after = new NodeTrust(List.of(NodeTrust.Mode.CERT_VALIDATION), bundle, List.of(IdRule.UID), revoked);
        assertThat(before.identify(registry, client, NOW)).isInstanceOf(Identification.Authenticated.class);
        assertThat(after.identify(registry, client, NOW)).isInstanceOfSatisfying(Identification.Anonymous.class,
                anonymous -> assertThat(anonymous.reason()).isEqualTo(Identification.Reason.REVOKED));
        // Revoking the intermediate revokes every node below it.
        X509CRL rootCrl = ROOT.crl(List.of(NODES.certificate().getSerialNumber()));
        NodeTrust intermediateRevoked = new NodeTrust(List.of(NodeTrust.Mode.CERT_VALIDATION), bundle,
                List.of(IdRule.UID), new Revocations(Revocations.parseCrls(pem(rootCrl), Path.of("/c"), bundle),
                        Set.of(), null));
        assertThat(intermediateRevoked.identify(registry, issued(NODES, "n1", List.of()), NOW))
                .isInstanceOfSatisfying(Identification.Anonymous.class,
                        anonymous -> assertThat(anonymous.detail()).contains("CA certificate 'CN=Nodes'"));
    }

    @Test
    void crlsAreVerifiedAgainstTheBundleAndTheDenyListIsPins() throws Exception {
        CaTrust bundle = trust(5);
        CertificateAuthority impostor = CertificateAuthority.root(SelfSigned.KeyType.EC_P256, "Nodes", Duration.ofDays(9));
        assertThatThrownBy(() -> Revocations.parseCrls(pem(impostor.crl(List.of(BigInteger.TWO))), Path.of("/c.pem"),
                bundle)).hasMessageContaining("not signed by that CA's key");
        CertificateAuthority unknown = CertificateAuthority.root(SelfSigned.KeyType.EC_P256, "Other", Duration.ofDays(9));
        assertThatThrownBy(() -> Revocations.parseCrls(pem(unknown.crl(List.of())), Path.of("/c.pem"), bundle))
                .hasMessageContaining("has no issuer in");
        assertThat(Revocations.parseCrls(NODES.crl(List.of()).getEncoded(), Path.of("/c.der"), bundle)).hasSize(1);
        X509v2CRLBuilder delta = new X509v2CRLBuilder(NODES.name(), java.util.Date.from(NOW));
        delta.addExtension(Extension.deltaCRLIndicator, true, new CRLNumber(BigInteger.ONE));
        X509CRL deltaCrl = new JcaX509CRLConverter().getCRL(delta.build(
                new JcaContentSignerBuilder("SHA256withECDSA").build(NODES.keyPair().getPrivate())));
        assertThatThrownBy(() -> Revocations.parseCrls(pem(deltaCrl), Path.of("/c.pem"), bundle))
                .hasMessageContaining("delta CRL");
        assertThat(Revocations.parseCrls(pem(NODES.crl(List.of()), ROOT.crl(List.of())), Path.of("/c.pem"), bundle))
                .hasSize(2);

        KeyHash pin = KeyHash.sha256(SelfSigned.keyPair(SelfSigned.KeyType.EC_P256).getPublic());
        assertThat(Revocations.parseDenied(("# comment\n\n" + pin + "  # stolen\n").getBytes(StandardCharsets.UTF_8),
                Path.of("/d"))).containsExactly(pin);
        assertThatThrownBy(() -> Revocations.parseDenied("md5//nope\n".getBytes(StandardCharsets.UTF_8),
                Path.of("/d"))).hasMessageContaining("/d:1: not a key pin");
    }

    @Test
    void withBothModesAPinnedCertificateStaysPinnedAndTheDenyListAppliesToBoth() throws Exception {
        SelfSigned.Identity agent = SelfSigned.generate(SelfSigned.KeyType.EC_P256, "pinned");
        KeyHash pin = KeyHash.sha256(agent.certificate().getPublicKey());
        NodeRegistry registry = NodeRegistry.of(List.of(
                new Node(new NodeId("pinned"), "p", Optional.of(pin), new NodeId("root")),
                new Node(new NodeId("n1"), "n", Optional.empty(), new NodeId("root"))));
        NodeTrust both = new NodeTrust(List.of(NodeTrust.Mode.CERT_PINNING, NodeTrust.Mode.CERT_VALIDATION), trust(5),
                List.of(IdRule.UID), Revocations.NONE);
        assertThat(both.identify(registry, ClientCertificate.of(agent.certificate()), NOW))
                .isInstanceOfSatisfying(Identification.Authenticated.class,
                        a -> assertThat(a.via()).isEqualTo(NodeTrust.Mode.CERT_PINNING));
        assertThat(both.identify(registry, issued(NODES, "n1", List.of()), NOW))
                .isInstanceOfSatisfying(Identification.Authenticated.class,
                        a -> assertThat(a.via()).isEqualTo(NodeTrust.Mode.CERT_VALIDATION));
        // A self-signed certificate nobody pins reads as pinning's refusal, not the CA's.
        SelfSigned.Identity unknown = SelfSigned.generate(SelfSigned.KeyType.EC_P256, "pinned");
        assertThat(both.identify(registry, ClientCertificate.of(unknown.certificate()), NOW))
                .isInstanceOfSatisfying(Identification.Anonymous.class,
                        a -> assertThat(a.reason()).isEqualTo(Identification.Reason.UNKNOWN_KEY));
        // The CA signed a pinned key's certificate, and revoked it: refused in both modes too.
        ClientCertificate certified = issued(NODES, "certified", List.of());
        NodeRegistry withCertified = NodeRegistry.of(List.of(new Node(new NodeId("certified"), "c",
                Optional.of(certified.sha256()), new NodeId("root"))));
        NodeTrust bothRevoking = new NodeTrust(both.modes(), both.ca(), both.idRules(), new Revocations(
                Revocations.parseCrls(pem(NODES.crl(List.of(certified.certificate().getSerialNumber()))),
                        Path.of("/c.pem"), both.ca()), Set.of(), null));
        assertThat(both.identify(withCertified, certified, NOW)).isInstanceOf(Identification.Authenticated.class);
        assertThat(bothRevoking.identify(withCertified, certified, NOW))
                .isInstanceOfSatisfying(Identification.Anonymous.class,
                        a -> assertThat(a.reason()).isEqualTo(Identification.Reason.REVOKED));
        NodeTrust denying = new NodeTrust(both.modes(), both.ca(), both.idRules(),
                new Revocations(List.of(), Set.of(pin), Path.of("/etc/pintle/denied-keys")));
        assertThat(denying.identify(registry, ClientCertificate.of(agent.certificate()), NOW))
                .isInstanceOfSatisfying(Identification.Anonymous.class, a -> {
                    assertThat(a.reason()).isEqualTo(Identification.Reason.REVOKED);
                    assertThat(a.detail()).contains("denied_keys_file");
                });
    }
}
