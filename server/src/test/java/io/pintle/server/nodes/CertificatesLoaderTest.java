package io.pintle.server.nodes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pintle.server.tls.SelfSigned;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

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
                CertificateBinding.of(new NodeId("node-1"), key1.getPublic()),
                CertificateBinding.of(new NodeId("node-2"), key2.getPublic()));
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
    void footerOverlappingTheHeaderFailsNamingTheFile() throws IOException {
        // Found by CertificatesFuzzTest: this threw StringIndexOutOfBoundsException.
        Path bundle = dir.resolve("overlap.pem");
        Files.writeString(bundle, "-----BEGIN CERTIFICATE-------END CERTIFICATE-----\n");

        assertThatThrownBy(() -> CertificatesLoader.load(bundle, warnings::add))
                .isInstanceOf(IOException.class)
                .hasMessageStartingWith(bundle + ": not valid PEM");
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

    /** A previous index whose blocks bind what the test says, at the offsets where the file has them. */
    private static CertificateIndex planted(byte[] content, CertificateBinding... bindings) {
        String text = new String(content, StandardCharsets.ISO_8859_1);
        int[] starts = new int[bindings.length];
        int[] ends = new int[bindings.length];
        int from = 0;
        for (int i = 0; i < bindings.length; i++) {
            starts[i] = text.indexOf("-----BEGIN CERTIFICATE-----", from);
            ends[i] = text.indexOf("-----END CERTIFICATE-----", starts[i]) + "-----END CERTIFICATE-----".length();
            from = ends[i];
        }
        return new CertificateIndex(content, starts, ends, bindings);
    }

    private static CertificateBinding binding(String node, KeyPair key) {
        return CertificateBinding.of(new NodeId(node), key.getPublic());
    }

    @Test
    void blocksParsedBeforeAreReusedAndOnlyNewOnesParsed() throws IOException {
        Path first = dir.resolve("first.pem");
        SelfSigned.writeCertificates(first, certificate(key1, "node-1"), certificate(key2, "node-2"));
        // Planted bindings prove that the known blocks are taken from the previous load, not parsed again.
        CertificateBinding planted1 = binding("planted-1", key3);
        CertificateBinding planted2 = binding("planted-2", key3);
        CertificateIndex before = planted(Files.readAllBytes(first), planted1, planted2);

        // A certificate inserted between the two, as when a node is accepted.
        Path grown = dir.resolve("grown.pem");
        SelfSigned.writeCertificates(grown, certificate(key1, "node-1"), certificate(key3, "node-3"),
                certificate(key2, "node-2"));
        String[] blocks = Files.readString(grown).split("(?=-----BEGIN)");
        Files.writeString(grown, Files.readString(first).split("(?=-----BEGIN)")[0] + blocks[1]
                + Files.readString(first).split("(?=-----BEGIN)")[1]);

        CertificateIndex after = CertificatesLoader.parse(Files.readAllBytes(grown), grown, warnings::add, before);

        assertThat(after.bindings()).containsExactly(planted1, binding("node-3", key3), planted2);
        assertThat(after.blockCount()).isEqualTo(3);
        assertThat(warnings).isEmpty();
    }

    @Test
    void blocksRemovedOrMovedAreFoundAmongThePreviousOnes() throws IOException {
        List<X509Certificate> certificates = new ArrayList<>();
        List<CertificateBinding> planted = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            certificates.add(certificate(i % 2 == 0 ? key1 : key2, "node-" + i));
            planted.add(binding("planted-" + i, key3));
        }
        Path before = dir.resolve("before.pem");
        SelfSigned.writeCertificates(before, certificates.toArray(X509Certificate[]::new));
        CertificateIndex previous = planted(Files.readAllBytes(before), planted.toArray(CertificateBinding[]::new));

        // Two removed near the start, then every block in reverse order.
        List<X509Certificate> edited = new ArrayList<>(certificates.subList(3, 30));
        edited.add(0, certificates.get(0));
        java.util.Collections.reverse(edited);
        Path after = dir.resolve("after.pem");
        SelfSigned.writeCertificates(after, edited.toArray(X509Certificate[]::new));

        CertificateIndex index = CertificatesLoader.parse(Files.readAllBytes(after), after, warnings::add, previous);

        assertThat(index.blockCount()).isEqualTo(28);
        // The first misses are parsed; once they pile up, the rest are found by key among the previous blocks.
        assertThat(index.bindings()).filteredOn(b -> b.node().value().startsWith("planted-")).hasSizeGreaterThan(15);
        assertThat(index.bindings()).filteredOn(b -> !b.node().value().startsWith("planted-"))
                .allSatisfy(b -> assertThat(b.node().value()).startsWith("node-"));
    }

    /**
     * Random edits of a random bundle: whatever the previous load, the bindings equal a parse from scratch, or both
     * fail with the same message.
     */
    @Test
    void anyEditGivesWhatAWholeParseGives() throws IOException {
        List<String> pool = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            Path one = dir.resolve("one.pem");
            SelfSigned.writeCertificates(one, certificate(i % 3 == 0 ? key1 : i % 3 == 1 ? key2 : key3,
                    i == 11 ? null : "node-" + i));
            pool.add(Files.readString(one));
        }
        pool.add("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n");
        pool.add("-----BEGIN CERTIFICATE-----\nnot base64!\n-----END CERTIFICATE-----\n");
        pool.add("-----BEGIN CERTIFICATE-----\nMIIB\n");
        pool.add("some text between blocks\n");
        Path file = dir.resolve("bundle.pem");
        for (int round = 0; round < 200; round++) {
            java.util.Random random = new java.util.Random(round);
            List<String> blocks = new ArrayList<>();
            for (int i = random.nextInt(15); i > 0; i--) {
                blocks.add(pool.get(random.nextInt(11)));
            }
            byte[] before = String.join("", blocks).getBytes(StandardCharsets.ISO_8859_1);
            CertificateIndex previous;
            try {
                previous = CertificatesLoader.parse(before, file, s -> { }, CertificateIndex.EMPTY);
            } catch (IOException e) {
                previous = CertificateIndex.EMPTY;
            }
            for (int e = 1 + random.nextInt(4); e > 0; e--) {
                int at = blocks.isEmpty() ? 0 : random.nextInt(blocks.size());
                switch (random.nextInt(5)) {
                    case 0 -> blocks.add(at, pool.get(random.nextInt(pool.size())));
                    case 1 -> {
                        if (!blocks.isEmpty()) {
                            blocks.remove(at);
                        }
                    }
                    case 2 -> {
                        if (!blocks.isEmpty()) {
                            blocks.add(random.nextInt(blocks.size()), blocks.remove(at));
                        }
                    }
                    case 3 -> {
                        if (!blocks.isEmpty()) {
                            // One byte of the body changed: a different (probably invalid) certificate.
                            String block = blocks.get(at);
                            int where = block.indexOf('\n') + 1 + random.nextInt(20);
                            blocks.set(at, block.substring(0, where) + (block.charAt(where) == 'A' ? 'B' : 'A')
                                    + block.substring(where + 1));
                        }
                    }
                    default -> blocks.add(at, pool.get(random.nextInt(11)).replace("\n", "\r\n"));
                }
            }
            byte[] after = String.join("", blocks).getBytes(StandardCharsets.ISO_8859_1);
            CertificateIndex from = previous;
            List<String> fullWarnings = new ArrayList<>();
            List<String> incrementalWarnings = new ArrayList<>();
            Object expected = outcome(() -> CertificatesLoader.parse(after, file, fullWarnings::add,
                    CertificateIndex.EMPTY).bindings());
            Object actual = outcome(() -> CertificatesLoader.parse(after, file, incrementalWarnings::add, from)
                    .bindings());
            assertThat(actual).as("round %d", round).isEqualTo(expected);
            assertThat(incrementalWarnings).as("round %d", round).isEqualTo(fullWarnings);
        }
    }

    private interface Parse {
        List<CertificateBinding> run() throws IOException;
    }

    /** @return the bindings, or the failure's class and message */
    private static Object outcome(Parse parse) {
        try {
            return parse.run();
        } catch (IOException e) {
            return e.getClass().getName() + ": " + e.getMessage();
        }
    }
    // --- issue 18: messages in the operator's words ---

    @ParameterizedTest(name = "[{index}] {1}")
    @CsvSource(delimiter = '|', quoteCharacter = '`', textBlock = """
            -----BEGIN CERTIFICATE-----\\n-----END CERTIFICATE-----\\n         | it has nothing between its BEGIN and END lines
            -----BEGIN CERTIFICATE-----\\n!!!!\\n-----END CERTIFICATE-----\\n   | its body is not base64
            -----BEGIN CERTIFICATE-----\\nAAAA\\n-----END CERTIFICATE-----\\n   | its body is not an X.509 certificate (damaged or cut short?)
            """)
    void aDamagedCertificateIsNamedByNumberAndLineWithoutTheJdksWording(String pem, String reason)
            throws Exception {
        X509Certificate good = SelfSigned.generate(SelfSigned.KeyType.EC_P256, "node-1").certificate();
        Path bundle = dir.resolve("damaged.pem");
        SelfSigned.writeCertificates(bundle, good);
        int lines = Files.readAllLines(bundle).size();
        Files.writeString(bundle, pem.replace("\\n", "\n"), java.nio.file.StandardOpenOption.APPEND);

        assertThatThrownBy(() -> CertificatesLoader.load(bundle, warnings::add))
                .isInstanceOf(IOException.class)
                .hasMessage(bundle + ": not valid PEM: certificate 2 (line " + (lines + 1) + ") is invalid: " + reason)
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("java.io", "Could not parse",
                        "Empty input"));
    }
}
