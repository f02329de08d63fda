package io.pintle.server.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.pintle.api.KeyPins;
import io.pintle.client.Pem;
import io.pintle.server.demo.DemoLayout;
import io.pintle.server.nodes.CertificateSubjects;
import io.pintle.server.testing.Cli;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.cert.X509Certificate;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CliTest {
    @TempDir
    static Path shared;

    /** One demo layout for the class: creating it generates four keys. */
    private static DemoLayout demo;

    @TempDir
    Path dir;

    @BeforeAll
    static void createDemo() throws IOException {
        demo = DemoLayout.create(shared.resolve("demo"), 0);
    }

    private static String permissions(Path file) throws IOException {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(file));
    }

    @Test
    void keygenWritesAPkcs1RsaKeyAndACertificateAndPrintsItsPin() throws Exception {
        Path cert = dir.resolve("agent.cert");
        Path key = dir.resolve("localhost.priv");

        Cli.Run run = Cli.pintle("keygen", "--id", "node-1", "--cert", cert.toString(), "--key", key.toString(),
                "--type", "rsa2048");

        assertThat(run.exitCode()).as(run.err()).isZero();
        List<X509Certificate> certificates = Pem.readCertificates(cert);
        assertThat(certificates).hasSize(1);
        X509Certificate certificate = certificates.get(0);
        assertThat(CertificateSubjects.uid(certificate)).contains("node-1");
        assertThat(certificate.getPublicKey().getAlgorithm()).isEqualTo("RSA");
        assertThat(run.out().lines().toList())
                .singleElement().asString()
                .startsWith("sha256//")
                .isEqualTo(KeyPins.sha256(certificate.getPublicKey()));
        assertThat(Files.readString(key)).startsWith("-----BEGIN RSA PRIVATE KEY-----");
        assertThat(permissions(key)).isEqualTo("rw-------");
        assertThat(permissions(cert)).isEqualTo("rw-r--r--");
        assertThat(Pem.readPrivateKey(key).getAlgorithm()).isEqualTo("RSA");
    }

    @Test
    void keygenWritesPkcs8WhenAsked() throws Exception {
        Path key = dir.resolve("localhost.priv");

        Cli.Run run = Cli.pintle("keygen", "--id", "node-1", "--cert", dir.resolve("agent.cert").toString(),
                "--key", key.toString(), "--type", "rsa2048", "--pkcs8");

        assertThat(run.exitCode()).as(run.err()).isZero();
        assertThat(Files.readString(key)).startsWith("-----BEGIN PRIVATE KEY-----");
        assertThat(permissions(key)).isEqualTo("rw-------");
    }

    @Test
    void keygenWritesEcKeysAsPkcs8() throws Exception {
        Path cert = dir.resolve("agent.cert");
        Path key = dir.resolve("localhost.priv");

        Cli.Run run = Cli.pintle("keygen", "--id", "node-2", "--cert", cert.toString(), "--key", key.toString(),
                "--type", "ec");

        assertThat(run.exitCode()).as(run.err()).isZero();
        assertThat(Files.readString(key)).startsWith("-----BEGIN PRIVATE KEY-----");
        assertThat(Pem.readPrivateKey(key).getAlgorithm()).isEqualTo("EC");
        assertThat(run.out().strip()).isEqualTo(KeyPins.sha256(Pem.readCertificates(cert).get(0).getPublicKey()));
    }

    @Test
    void keygenRefusesToOverwriteAnExistingFile() throws Exception {
        Path cert = Files.writeString(dir.resolve("agent.cert"), "keep me");
        Path key = dir.resolve("localhost.priv");

        Cli.Run run = Cli.pintle("keygen", "--id", "node-1", "--cert", cert.toString(), "--key", key.toString(),
                "--type", "ec");

        assertThat(run.exitCode()).isEqualTo(ExitCodes.CONFIG_ERROR);
        assertThat(run.err()).contains(cert.toString()).contains("--force");
        assertThat(Files.readString(cert)).isEqualTo("keep me");
        assertThat(key).doesNotExist();
    }

    @Test
    void keygenOverwritesWithForce() throws Exception {
        Path cert = Files.writeString(dir.resolve("agent.cert"), "old");
        Path key = Files.writeString(dir.resolve("localhost.priv"), "old");

        Cli.Run run = Cli.pintle("keygen", "--id", "node-1", "--cert", cert.toString(), "--key", key.toString(),
                "--type", "ec", "--force");

        assertThat(run.exitCode()).as(run.err()).isZero();
        assertThat(Pem.readCertificates(cert)).hasSize(1);
        assertThat(permissions(key)).isEqualTo("rw-------");
    }

    @Test
    void keygenRefusesAnInvalidNodeId() {
        Path cert = dir.resolve("agent.cert");
        Path key = dir.resolve("localhost.priv");

        Cli.Run run = Cli.pintle("keygen", "--id", "node 1/..", "--cert", cert.toString(), "--key", key.toString(),
                "--type", "ec");

        assertThat(run.exitCode()).isEqualTo(ExitCodes.CONFIG_ERROR);
        assertThat(run.err()).contains("invalid node id 'node 1/..'");
        assertThat(cert).doesNotExist();
        assertThat(key).doesNotExist();
    }

    @Test
    void keygenRefusesAnUnknownKeyType() {
        Cli.Run run = Cli.pintle("keygen", "--id", "node-1", "--cert", dir.resolve("c").toString(),
                "--key", dir.resolve("k").toString(), "--type", "dsa");

        assertThat(run.exitCode()).isEqualTo(ExitCodes.CONFIG_ERROR);
        assertThat(run.err()).contains("unknown key type 'dsa'");
    }

    @Test
    void checkConfigAcceptsTheDemoLayout() {
        Cli.Run run = Cli.pintle("check-config", "--config", demo.config().toString());

        assertThat(run.exitCode()).as(run.err()).isZero();
        assertThat(run.out())
                .contains("configuration OK: " + demo.config())
                .contains("node id root, role root")
                .contains("3 nodes")
                .contains(demo.serverPin())
                .contains("trust: cert_pinning\n");
    }

    @Test
    void checkConfigSaysTheTrustModeAndRevocationsOfACaSandbox() throws IOException {
        io.pintle.server.demo.DemoCaLayout ca = io.pintle.server.demo.DemoCaLayout.create(dir.resolve("ca-demo"), 0);
        Cli.Run run = Cli.pintle("check-config", "--config", ca.config().toString());

        assertThat(run.exitCode()).as(run.err()).isZero();
        assertThat(run.out())
                .contains("trust: cert_validation (CA bundle " + ca.directory().resolve("ca/policy_server_ca.pem"))
                .contains("depth 5; id rules [uid, san-dns:{id}.nodes.demo.example]")
                .contains("revocation: 1 CRL(s), 0 denied key(s)");
    }

    @Test
    void checkConfigRefusesAnUnknownKeyNamingIt() throws IOException {
        Path config = shared.resolve("demo/unknown-key.toml");
        Files.writeString(config, Files.readString(demo.config()).replace("[general]\n", "[general]\ncolour = 1\n"));

        Cli.Run run = Cli.pintle("check-config", "--config", config.toString());

        assertThat(run.exitCode()).isEqualTo(ExitCodes.CONFIG_ERROR);
        assertThat(run.err()).contains(config.toString()).contains("general.colour");
        assertThat(run.out()).doesNotContain("configuration OK");
    }

    @Test
    void checkConfigRefusesAnInvalidNodesListNamingIt() throws IOException {
        Path nodesList = demo.directory().resolve("lib/nodeslist.json");
        String original = Files.readString(nodesList);
        try {
            Files.writeString(nodesList, "{\"node-1\": ");

            Cli.Run run = Cli.pintle("check-config", "--config", demo.config().toString());

            assertThat(run.exitCode()).isEqualTo(ExitCodes.CONFIG_ERROR);
            assertThat(run.err()).contains(nodesList.toString()).contains("invalid JSON");
        } finally {
            Files.writeString(nodesList, original);
        }
    }

    @Test
    void checkConfigOfAMissingFileIsAConfigurationError() {
        Path missing = dir.resolve("absent.toml");

        Cli.Run run = Cli.pintle("check-config", "--config", missing.toString());

        assertThat(run.exitCode()).isEqualTo(ExitCodes.CONFIG_ERROR);
        assertThat(run.err()).contains(missing.toString()).contains("no such file");
    }

    @Test
    void unknownOptionIsAUsageError() {
        Cli.Run run = Cli.pintle("check-config", "--no-such-option");

        assertThat(run.exitCode()).isEqualTo(ExitCodes.CONFIG_ERROR);
        assertThat(run.err()).contains("--no-such-option");
    }

    @Test
    void syncRefusesAMalformedPinBeforeConnecting() {
        Cli.Run run = Cli.pintle("sync", "--server", "https://127.0.0.1:1", "--cert", "agent.cert", "--key", "agent.key",
                "--pin", "sha256//not-a-hash", "/common/", dir.resolve("local").toString());

        assertThat(run.exitCode()).isEqualTo(ExitCodes.CONFIG_ERROR);
        assertThat(run.err()).contains("--pin").contains("sha256//not-a-hash");
        assertThat(dir.resolve("local")).doesNotExist();
    }

    @Test
    void syncWithUnreadableKeyMaterialIsAConfigurationError() {
        Cli.Run run = Cli.pintle("sync", "--server", "https://127.0.0.1:1", "--cert", dir.resolve("none.cert").toString(),
                "--key", dir.resolve("none.priv").toString(), "--pin", demo.serverPin(), "/common/",
                dir.resolve("local").toString());

        assertThat(run.exitCode()).isEqualTo(ExitCodes.CONFIG_ERROR);
        assertThat(run.err()).contains("cannot use the key material").contains("none.cert");
    }

    @Test
    void syncToAnUnreachableServerExits3AndCreatesNothing() {
        Path cert = dir.resolve("agent.cert");
        Path key = dir.resolve("localhost.priv");
        assertThat(Cli.pintle("keygen", "--id", "node-1", "--cert", cert.toString(), "--key", key.toString(),
                "--type", "ec").exitCode()).isZero();

        Cli.Run run = Cli.pintle("sync", "--server", "https://127.0.0.1:1", "--cert", cert.toString(), "--key",
                key.toString(), "--pin", demo.serverPin(), "/common/", dir.resolve("local").toString());

        assertThat(run.exitCode()).as(run.err()).isEqualTo(ExitCodes.STARTUP_FAILURE);
        assertThat(run.err()).contains("failed after 3 attempts").contains("local tree unchanged");
        assertThat(dir.resolve("local")).doesNotExist();
    }
    @Test
    void checkConfigRefusesAFractionForAWholeNumberNamingTheKey() throws IOException {
        Path config = shared.resolve("demo/fraction.toml");
        // Into the demo's own [limits] table (TOML refuses a table twice).
        Files.writeString(config, Files.readString(demo.config())
                .replace("[limits]\n", "[limits]\nmax_manifest_entries = 1.5\n"));

        Cli.Run run = Cli.pintle("check-config", "--config", config.toString());

        assertThat(run.exitCode()).isEqualTo(ExitCodes.CONFIG_ERROR);
        assertThat(run.err()).contains(config + ": 'limits.max_manifest_entries': expected a whole number "
                + "(at most 2147483647), not 1.5");
        assertThat(run.out()).doesNotContain("configuration OK");
    }

    @Test
    void noHelpPrintsANullDefault() {
        Cli.Run top = Cli.pintle("--help");
        assertThat(top.exitCode()).as(top.err()).isZero();
        // The sub-commands as the help lists them, whichever way they are registered: "  serve  Run the server...".
        List<String> commands = top.out().lines()
                .dropWhile(line -> !line.equals("Commands:"))
                .skip(1)
                .takeWhile(line -> line.startsWith("  "))
                .map(line -> line.strip().split("\\s+", 2)[0])
                .toList();
        assertThat(commands).contains("serve", "check-config", "explain");
        assertThat(top.out()).doesNotContainPattern("(?i)default:? null");
        for (String command : commands) {
            Cli.Run help = Cli.pintle(command, "--help");
            assertThat(help.exitCode()).as(command + ": " + help.err()).isZero();
            assertThat(help.out()).as(command).isNotBlank().doesNotContainPattern("(?i)default:? null");
        }
        assertThat(Cli.pintle("explain", "--help").out()).contains("default: " + ConfigOption.DEFAULT_FILE);
    }
}
