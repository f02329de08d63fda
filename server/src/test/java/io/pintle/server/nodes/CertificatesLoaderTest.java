package io.pintle.server.nodes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pintle.server.tls.SelfSigned;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CertificatesLoaderTest {
    private static KeyPair key1;
    private static KeyPair key2;
    private static KeyPair key3;

    @TempDir
    Path dir;

    private final List<String> warnings = new ArrayList<>();

    @BeforeAll
    static void generateKeys() {
        key1 = SelfSigned.keyPair(SelfSigned.KeyType.EC_P256);
        key2 = SelfSigned.keyPair(SelfSigned.KeyType.EC_P256);
        key3 = SelfSigned.keyPair(SelfSigned.KeyType.EC_P256);
    }

    private static X509Certificate certificate(KeyPair pair, String uid) {
        Instant now = Instant.now();
        return SelfSigned.certificate(pair, SelfSigned.subject(uid), now.minus(Duration.ofDays(1)),
                now.plus(Duration.ofDays(365)));
    }

    @Test
    void bundleBindsEachUidToItsKeyAndSkipsCertificatesWithoutUid() throws IOException {
        Path bundle = dir.resolve("nodescerts.pem");
        SelfSigned.writeCertificates(bundle,
                certificate(key1, "node-1"), certificate(key3, null), certificate(key2, "node-2"));

        List<CertificateBinding> bindings = CertificatesLoader.load(bundle, warnings::add);

        assertThat(bindings).containsExactly(
                new CertificateBinding(new NodeId("node-1"), KeyHash.sha256(key1.getPublic())),
                new CertificateBinding(new NodeId("node-2"), KeyHash.sha256(key2.getPublic())));
        assertThat(warnings).singleElement().asString()
                .contains(bundle.toString())
                .contains("certificate 2")
                .contains("CN=pintle")
                .contains("no UID");
    }

    @Test
    void certificateWithAnInvalidUidIsSkippedWithAWarning() throws IOException {
        Path bundle = dir.resolve("nodescerts.pem");
        SelfSigned.writeCertificates(bundle, certificate(key1, "not a node id"), certificate(key2, "node-2"));

        List<CertificateBinding> bindings = CertificatesLoader.load(bundle, warnings::add);

        assertThat(bindings).extracting(CertificateBinding::node).containsExactly(new NodeId("node-2"));
        assertThat(warnings).singleElement().asString()
                .contains("certificate 1")
                .contains("not a node id");
    }

    @Test
    void emptyBundleBindsNothing() throws IOException {
        Path bundle = Files.writeString(dir.resolve("nodescerts.pem"), "");

        assertThat(CertificatesLoader.load(bundle, warnings::add)).isEmpty();
        assertThat(warnings).isEmpty();
    }

    @Test
    void corruptPemBlockFailsNamingTheFile() throws IOException {
        Path bundle = Files.writeString(dir.resolve("nodescerts.pem"),
                "-----BEGIN CERTIFICATE-----\nthis is not base64 !!\n-----END CERTIFICATE-----\n");

        assertThatThrownBy(() -> CertificatesLoader.load(bundle, warnings::add))
                .isInstanceOf(IOException.class)
                .hasMessageContaining(bundle.toString());
    }

    @Test
    void garbageFileFailsNamingTheFile() throws IOException {
        Path bundle = Files.writeString(dir.resolve("nodescerts.pem"), "this is not a certificate bundle\n");

        assertThatThrownBy(() -> CertificatesLoader.load(bundle, warnings::add))
                .isInstanceOf(IOException.class)
                .hasMessageContaining(bundle.toString());
    }

    @Test
    void privateKeyInsteadOfCertificatesFailsNamingTheFile() throws IOException {
        Path keyFile = dir.resolve("localhost.priv");
        SelfSigned.writePrivateKey(keyFile, key1.getPrivate(), false);

        assertThatThrownBy(() -> CertificatesLoader.load(keyFile, warnings::add))
                .isInstanceOf(IOException.class)
                .hasMessageContaining(keyFile.toString())
                .hasMessageContaining("expected only certificates");
    }

    @Test
    void missingFileFailsNamingTheFile() {
        Path missing = dir.resolve("absent.pem");

        assertThatThrownBy(() -> CertificatesLoader.load(missing, warnings::add))
                .isInstanceOf(IOException.class)
                .hasMessageContaining(missing.toString())
                .hasMessageContaining("no such file");
    }

    @Test
    void blocksParsedBeforeAreReusedAndOnlyNewOnesParsed() throws IOException {
        Path first = dir.resolve("first.pem");
        SelfSigned.writeCertificates(first, certificate(key1, "node-1"));
        CertificateIndex before = CertificatesLoader.parse(Files.readAllBytes(first), first, warnings::add, Map.of());
        assertThat(before.blocks()).hasSize(1);
        String key = before.blocks().keySet().iterator().next();

        // The bundle grows by one certificate, as when a node is accepted.
        Path one = dir.resolve("one.pem");
        SelfSigned.writeCertificates(one, certificate(key2, "node-2"));
        Path grown = dir.resolve("grown.pem");
        Files.writeString(grown, Files.readString(first) + Files.readString(one));

        // A planted binding under the known block's key proves that block is looked up, not parsed again.
        CertificateBinding planted = new CertificateBinding(new NodeId("planted"), KeyHash.sha256(key3.getPublic()));
        CertificateIndex after = CertificatesLoader.parse(Files.readAllBytes(grown), grown, warnings::add,
                Map.of(key, planted));

        assertThat(after.bindings()).containsExactly(planted,
                new CertificateBinding(new NodeId("node-2"), KeyHash.sha256(key2.getPublic())));
        assertThat(after.blocks()).hasSize(2).containsEntry(key, planted);
    }
}
