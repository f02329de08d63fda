package io.pintle.server.uploads;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pintle.server.nodes.KeyHash;
import io.pintle.server.nodes.NodeId;
import io.pintle.server.tls.SelfSigned;
import io.pintle.server.uploads.UploadSignatures.Reason;
import io.pintle.server.uploads.UploadSignatures.Verdict;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.PublicKey;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.zip.GZIPOutputStream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Reports and inventories signed by the real {@code openssl} commands rudder-agent runs. */
class UploadSignaturesTest {
    private static final String NODE = "0f9c3a2e-1b2c-4d5e-8f90-123456789abc";
    private static final String REPORT_NAME = "2026-12-03T10:00:00+00:00@" + NODE + ".log.gz";
    private static final String INVENTORY_NAME = NODE + "_2026-12-03T10:00:00+00:00.ocs.gz";
    private static final String RUN_LOG = """
            2026-12-03T10:00:00+00:00 R: @@Common@@result_success@@hasPolicyServer-root@@common-root@@00@@common@@StartRun@@2026-12-03 10:00:00+00:00##%s@#Start execution
            2026-12-03T10:00:01+00:00 R: @@Common@@log_info@@hasPolicyServer-root@@common-root@@00@@common@@EndRun@@2026-12-03 10:00:01+00:00##%s@#End execution
            """.formatted(NODE, NODE);
    private static final long BOUND = 1024 * 1024;

    @TempDir
    static Path dir;

    private static SelfSigned.Identity node;
    private static SelfSigned.Identity other;
    private static byte[] signedReport;
    private static byte[] inventory;
    private static String signFile;

    @BeforeAll
    static void signWithOpenssl() throws Exception {
        node = identity("node", NODE, SelfSigned.KeyType.RSA_2048);
        other = identity("other", "other-node", SelfSigned.KeyType.RSA_2048);
        signedReport = smimeSign("node", RUN_LOG);

        inventory = """
                <?xml version="1.0" encoding="UTF-8" ?>
                <REQUEST><DEVICEID>node.example.com</DEVICEID><CONTENT><RUDDER><UUID>%s</UUID></RUDDER></CONTENT></REQUEST>
                """.formatted(NODE).getBytes(StandardCharsets.UTF_8);
        Path ocs = dir.resolve("inventory.ocs");
        Files.write(ocs, inventory);
        // As rudder-sign does: openssl's "...= <hex>" output, cut with sed -e 's/.*= //'.
        String signature = afterEquals(openssl(ocs, "dgst", "-sha512", "-hex", "-sign", key("node").toString()));
        String hash = afterEquals(openssl(ocs, "dgst", "-sha512", "-hex"));
        signFile = String.join("\n", "header=rudder-signature-v1", "algorithm=sha512", "digest=" + signature,
                "hash_value=" + hash, "short_pubkey=MIIBCgKCAQEA", "hostname=node.example.com",
                "keydate=2026-12-03 10:00:00.000000000 +0000", "keyid=123456", "");
    }

    private static SelfSigned.Identity identity(String label, String uid, SelfSigned.KeyType type) throws IOException {
        SelfSigned.Identity identity = SelfSigned.generate(type, uid);
        SelfSigned.writeCertificates(dir.resolve(label + ".cert"), identity.certificate());
        SelfSigned.writePrivateKey(key(label), identity.keyPair().getPrivate(), true);
        return identity;
    }

    private static Path key(String label) {
        return dir.resolve(label + ".priv");
    }

    /** rudder-agent's report.sh, before its gzip. */
    private static byte[] smimeSign(String label, String runLog) throws Exception {
        Path in = Files.writeString(dir.resolve(label + "-runlog"), runLog);
        Path out = dir.resolve(label + "-runlog.signed");
        openssl(null, "smime", "-sign", "-text", "-nocerts", "-signer", dir.resolve(label + ".cert").toString(),
                "-inkey", key(label).toString(), "-in", in.toString(), "-out", out.toString());
        return Files.readAllBytes(out);
    }

    private static String openssl(Path stdin, String... arguments) throws Exception {
        List<String> command = new ArrayList<>(List.of("openssl"));
        command.addAll(List.of(arguments));
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        if (stdin != null) {
            builder.redirectInput(stdin.toFile());
        }
        Process process = builder.start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("openssl %s finished", command).isTrue();
        assertThat(process.exitValue()).as("openssl %s: %s", command, output).isZero();
        return output;
    }

    private static String afterEquals(String opensslOutput) {
        return opensslOutput.strip().replaceAll(".*= ", "");
    }

    private static byte[] gzip(byte[] content) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (GZIPOutputStream out = new GZIPOutputStream(bytes)) {
            out.write(content);
        }
        return bytes.toByteArray();
    }

    private static List<PublicKey> keysOf(SelfSigned.Identity identity) {
        return List.of(identity.certificate().getPublicKey());
    }

    private static Verdict report(String name, byte[] uploaded, List<PublicKey> keys) throws IOException {
        return UploadSignatures.verifyReport(name, new ByteArrayInputStream(uploaded), BOUND, keys);
    }

    private static Verdict inventory(byte[] uploaded, String sign, List<PublicKey> keys) throws IOException {
        return UploadSignatures.verifyInventory(new ByteArrayInputStream(uploaded), INVENTORY_NAME,
                new ByteArrayInputStream(sign.getBytes(StandardCharsets.US_ASCII)), keys);
    }

    private static Verdict.Refused refused(Verdict verdict, Reason reason) {
        assertThat(verdict).isInstanceOf(Verdict.Refused.class);
        Verdict.Refused refused = (Verdict.Refused) verdict;
        assertThat(refused.reason()).as(refused.detail()).isEqualTo(reason);
        return refused;
    }

    @Test
    void reportSignedByTheNodesKeyIsVerified() throws IOException {
        Verdict verdict = report(REPORT_NAME, gzip(signedReport), keysOf(node));

        assertThat(verdict).isEqualTo(new Verdict.Verified(KeyHash.sha256(node.certificate().getPublicKey())));
        assertThat(verdict.ok()).isTrue();
    }

    @Test
    void reportIsVerifiedWhenOneOfSeveralPinnedKeysSignedIt() throws IOException {
        List<PublicKey> rotating = List.of(other.certificate().getPublicKey(), node.certificate().getPublicKey());

        assertThat(report(REPORT_NAME, gzip(signedReport), rotating).ok()).isTrue();
    }

    @Test
    void reportSignedByAnotherNodesKeyIsRefused() throws IOException {
        Verdict.Refused refused = refused(report(REPORT_NAME, gzip(signedReport), keysOf(other)),
                Reason.REPORT_SIGNATURE);

        assertThat(refused.detail()).contains("not made by node " + NODE + "'s pinned key");
        assertThat(Reason.REPORT_SIGNATURE.code()).isEqualTo("report-signature");
    }

    @Test
    void reportWithOneChangedByteOfItsSignedTextIsRefused() throws IOException {
        String text = new String(signedReport, StandardCharsets.ISO_8859_1);
        int at = text.indexOf("Start execution");
        assertThat(at).isPositive();
        byte[] changed = signedReport.clone();
        changed[at] = 'X';

        refused(report(REPORT_NAME, gzip(changed), keysOf(node)), Reason.REPORT_SIGNATURE);
    }

    @Test
    void unsignedRunLogIsRefused() throws IOException {
        Verdict.Refused refused = refused(
                report(REPORT_NAME, gzip(RUN_LOG.getBytes(StandardCharsets.UTF_8)), keysOf(node)),
                Reason.REPORT_SIGNATURE);

        assertThat(refused.detail()).startsWith("the report is not S/MIME signed");
    }

    @Test
    void garbageIsRefusedWithoutALibrarysMessage() throws IOException {
        byte[] garbage = new byte[4096];
        new Random(42).nextBytes(garbage);

        Verdict.Refused notGzip = refused(report(REPORT_NAME, garbage, keysOf(node)), Reason.REPORT_SIGNATURE);
        Verdict.Refused gzippedGarbage = refused(report(REPORT_NAME, gzip(garbage), keysOf(node)),
                Reason.REPORT_SIGNATURE);

        assertThat(notGzip.detail()).isEqualTo("the report is not valid gzip (corrupt or truncated upload)");
        assertThat(gzippedGarbage.detail()).startsWith("the report is not S/MIME signed");
    }

    @Test
    void truncatedGzipIsRefused() throws IOException {
        byte[] whole = gzip(signedReport);
        byte[] truncated = java.util.Arrays.copyOf(whole, whole.length / 2);

        refused(report(REPORT_NAME, truncated, keysOf(node)), Reason.REPORT_SIGNATURE);
    }

    @Test
    void reportWithAMangledSignaturePartIsRefused() throws IOException {
        // In the signature value, which ends the SignedData (the signer's issuer and serial are not checked: the
        // pinned key is, as with relayd's NOINTERN).
        String text = new String(signedReport, StandardCharsets.ISO_8859_1);
        int close = text.lastIndexOf("\n------");
        byte[] mangled = signedReport.clone();
        int at = close - 20;
        mangled[at] = (byte) (mangled[at] == 'A' ? 'B' : 'A');

        refused(report(REPORT_NAME, gzip(mangled), keysOf(node)), Reason.REPORT_SIGNATURE);
    }

    @Test
    void reportLargerThanTheBoundIsRefusedAsTooLarge() throws IOException {
        byte[] gzipped = gzip(signedReport);

        Verdict.Refused refused = refused(UploadSignatures.verifyReport(REPORT_NAME,
                new ByteArrayInputStream(gzipped), signedReport.length - 1, keysOf(node)), Reason.REPORT_TOO_LARGE);
        Verdict exactly = UploadSignatures.verifyReport(REPORT_NAME, new ByteArrayInputStream(gzipped),
                signedReport.length, keysOf(node));

        assertThat(refused.reason().code()).isEqualTo("report-too-large");
        assertThat(exactly.ok()).isTrue();
    }

    @Test
    void zippedAndPlainReportsAreRead() throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ZipOutputStream zip = new ZipOutputStream(bytes)) {
            zip.putNextEntry(new ZipEntry("runlog.signed"));
            zip.write(signedReport);
            zip.closeEntry();
            zip.putNextEntry(new ZipEntry("second"));
            zip.write("not read".getBytes(StandardCharsets.US_ASCII));
        }
        String zipName = NODE + "_2026-12-03T10:00:00+00:00.log.zip";

        assertThat(report(zipName, bytes.toByteArray(), keysOf(node)).ok()).isTrue();
        assertThat(report("2026-12-03T10:00:00+00:00@" + NODE + ".log", signedReport, keysOf(node)).ok()).isTrue();
        refused(report(zipName, new byte[0], keysOf(node)), Reason.REPORT_SIGNATURE);
    }

    @Test
    void reportSignedWithAnEcKeyIsVerified() throws Exception {
        SelfSigned.Identity ec = identity("ec", "ec-node", SelfSigned.KeyType.EC_P256);
        byte[] signed = smimeSign("ec", RUN_LOG);

        assertThat(report("2026-12-03T10:00:00+00:00@ec-node.log.gz", gzip(signed), keysOf(ec)).ok()).isTrue();
        refused(report("2026-12-03T10:00:00+00:00@ec-node.log.gz", gzip(signed), keysOf(node)),
                Reason.REPORT_SIGNATURE);
    }

    @Test
    void reportOfANodeWithoutPinnedKeyIsRefused() throws IOException {
        Verdict.Refused refused = refused(report(REPORT_NAME, gzip(signedReport), List.of()), Reason.REPORT_SIGNATURE);

        assertThat(refused.detail()).contains("has no pinned key");
    }

    @Test
    void aFailingUploadStreamIsAnIoErrorNotARefusal() {
        InputStream failing = new InputStream() {
            @Override
            public int read() throws IOException {
                throw new IOException("connection reset");
            }
        };

        assertThatThrownBy(() -> UploadSignatures.verifyReport(REPORT_NAME, failing, BOUND, keysOf(node)))
                .isInstanceOf(IOException.class).hasMessage("connection reset");
    }

    @Test
    void inventorySignedByTheNodesKeyIsVerified() throws IOException {
        Verdict verdict = inventory(gzip(inventory), signFile, keysOf(node));

        assertThat(verdict).isEqualTo(new Verdict.Verified(KeyHash.sha256(node.certificate().getPublicKey())));
    }

    @Test
    void uncompressedInventoryIsVerifiedToo() throws IOException {
        Verdict verdict = UploadSignatures.verifyInventory(new ByteArrayInputStream(inventory),
                NODE + "_2026-12-03T10:00:00+00:00.ocs",
                new ByteArrayInputStream(signFile.getBytes(StandardCharsets.US_ASCII)), keysOf(node));

        assertThat(verdict.ok()).isTrue();
    }

    @Test
    void inventorySignedByAnotherKeyIsRefused() throws IOException {
        Verdict.Refused refused = refused(inventory(gzip(inventory), signFile, keysOf(other)),
                Reason.INVENTORY_SIGNATURE);

        assertThat(refused.detail()).contains("not made by node " + NODE + "'s pinned key")
                .contains("the inventory is the one that was signed");
        assertThat(refused.reason().code()).isEqualTo("inventory-signature");
    }

    @Test
    void tamperedInventoryIsRefused() throws IOException {
        byte[] tampered = new String(inventory, StandardCharsets.UTF_8).replace("node.example.com", "evil.example.com")
                .getBytes(StandardCharsets.UTF_8);

        Verdict.Refused refused = refused(inventory(gzip(tampered), signFile, keysOf(node)),
                Reason.INVENTORY_SIGNATURE);

        assertThat(refused.detail()).contains("changed after it was signed");
    }

    @Test
    void signFileWithAnotherHeaderOrAlgorithmIsRefused() throws IOException {
        Verdict.Refused header = refused(inventory(gzip(inventory),
                signFile.replace("rudder-signature-v1", "rudder-signature-v2"), keysOf(node)),
                Reason.INVENTORY_SIGNATURE);
        Verdict.Refused algorithm = refused(inventory(gzip(inventory),
                signFile.replace("algorithm=sha512", "algorithm=sha256"), keysOf(node)),
                Reason.INVENTORY_SIGNATURE);
        Verdict.Refused none = refused(inventory(gzip(inventory), "not a sign file", keysOf(node)),
                Reason.INVENTORY_SIGNATURE);

        assertThat(header.detail()).isEqualTo(
                "the sign file's header is 'rudder-signature-v2'; only rudder-signature-v1 is accepted (as by "
                        + "Rudder's webapp)");
        assertThat(algorithm.detail()).contains("algorithm is 'sha256'");
        assertThat(none.detail()).contains("no header");
    }

    @Test
    void corruptInventoryCompressionIsRefused() throws IOException {
        Verdict.Refused refused = refused(inventory(inventory, signFile, keysOf(node)), Reason.INVENTORY_SIGNATURE);

        assertThat(refused.detail()).isEqualTo("the inventory is not valid gzip (corrupt or truncated upload)");
    }

    @ParameterizedTest
    @CsvSource(nullValues = "-", value = {
        "2026-12-03T10:00:00+00:00@0f9c3a2e-1b2c-4d5e-8f90-123456789abc.log.gz, 0f9c3a2e-1b2c-4d5e-8f90-123456789abc",
        "2026-12-03T10_00_00+00_00@0f9c3a2e-1b2c-4d5e-8f90-123456789abc.log.gz, 0f9c3a2e-1b2c-4d5e-8f90-123456789abc",
        "2026-12-03T10:00:00+00:00@root.log.gz, root",
        "2026-12-03T10:00:00+00:00@root.log.zip, root",
        "2026-12-03T10:00:00+00:00@root.log, root",
        "0f9c3a2e-1b2c-4d5e-8f90-123456789abc_2026-12-03T10:00:00+00:00.log.gz, 0f9c3a2e-1b2c-4d5e-8f90-123456789abc",
        "root_2026-12-03T10_00_00+00_00.log.zip, root",
        "root_2026-12-03T10:00:00+00:00.log, root",
        "2026-12-03T10:00:00+00:00@root.ocs.gz, -",
        "2026-12-03T10:00:00+00:00@not a node.log.gz, -",
        "root_yesterday.log.gz, -",
        "runlog.gz, -",
        "@root.log.gz, -",
        "../2026-12-03T10:00:00+00:00@root.log.gz, -",
        "'', -",
    })
    void reportNamesNameTheirNode(String name, String node) {
        assertThat(UploadNames.reportNode(name)).isEqualTo(node == null ? null : new NodeId(node));
    }

    @ParameterizedTest
    @CsvSource(nullValues = "-", value = {
        "0f9c3a2e-1b2c-4d5e-8f90-123456789abc_2026-12-03T10:00:00+00:00.ocs.gz, 0f9c3a2e-1b2c-4d5e-8f90-123456789abc",
        "0f9c3a2e-1b2c-4d5e-8f90-123456789abc_2026-12-03T10:00:00+00:00.ocs.sign, 0f9c3a2e-1b2c-4d5e-8f90-123456789abc",
        "0f9c3a2e-1b2c-4d5e-8f90-123456789abc_2026-12-03T10_00_00+00_00.ocs, 0f9c3a2e-1b2c-4d5e-8f90-123456789abc",
        "root_2026-12-03T10:00:00+00:00.ocs.gz, root",
        "node.example.com-0f9c3a2e-1b2c-4d5e-8f90-123456789abc.ocs.gz, 0f9c3a2e-1b2c-4d5e-8f90-123456789abc",
        "node_1.example.com-0F9C3A2E-1B2C-4D5E-8F90-123456789ABC.ocs.sign, 0F9C3A2E-1B2C-4D5E-8F90-123456789ABC",
        "node.example.com-0f9c3a2e-1b2c-4d5e-8f90-123456789abc.ocs, 0f9c3a2e-1b2c-4d5e-8f90-123456789abc",
        "node.example.com-root.ocs.gz, -",
        "0f9c3a2e-1b2c-4d5e-8f90-123456789abc_2026-12-03T10:00:00+00:00.log.gz, -",
        "inventory.ocs.gz, -",
        "0f9c3a2e-1b2c-4d5e-8f90-123456789abc.ocs.gz, -",
        "'', -",
    })
    void inventoryNamesNameTheirNode(String name, String node) {
        assertThat(UploadNames.inventoryNode(name)).isEqualTo(node == null ? null : new NodeId(node));
    }
}
