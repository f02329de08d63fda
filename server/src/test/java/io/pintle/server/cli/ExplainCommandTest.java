package io.pintle.server.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.pintle.server.nodes.KeyHash;
import io.pintle.server.testing.Cli;
import io.pintle.server.testing.NodeKeys;
import io.pintle.server.testing.Sandbox;
import io.pintle.server.tls.CertificateAuthority;
import io.pintle.server.tls.SelfSigned;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code pintle explain} against a sandbox with a generated CA (root, one intermediate, CRLs of both): each step
 * it prints, and the final decision it takes from the server's own calls.
 */
class ExplainCommandTest {
    @TempDir
    Path dir;

    private Sandbox sandbox;
    private CertificateAuthority root;
    private CertificateAuthority intermediate;
    /** node-1, signed by the intermediate; its chain file holds the leaf then the intermediate. */
    private Path allowed;
    private X509Certificate allowedCertificate;
    /** node-2, signed by the intermediate, whose CRL lists it. */
    private Path revoked;
    private X509Certificate revokedCertificate;

    @BeforeEach
    void createCaAndNodes() throws IOException {
        sandbox = Sandbox.create(dir);
        root = CertificateAuthority.root(SelfSigned.KeyType.EC_P256, "Fleet Root CA", Duration.ofDays(3650));
        intermediate = root.intermediate(SelfSigned.KeyType.EC_P256, "Fleet Nodes CA");
        SelfSigned.writeCertificates(dir.resolve("lib/ca.pem"), root.certificate(), intermediate.certificate());

        allowedCertificate = issue("node-1");
        allowed = chain("node-1", allowedCertificate);
        revokedCertificate = issue("node-2");
        revoked = chain("node-2", revokedCertificate);
        CertificateAuthority.writeCrls(dir.resolve("lib/crl.pem"), root.crl(List.of()),
                intermediate.crl(List.of(revokedCertificate.getSerialNumber())));
        // Listed by nodeslist.json (key-hash), not in the pinning bundle: CA mode needs the listing only.
        sandbox.register("node-1", allowedCertificate, Sandbox.Pinning.NODES_LIST);
        sandbox.register("node-2", revokedCertificate, Sandbox.Pinning.NODES_LIST);
        sandbox.shareFile("node-1/rules/promises.cf", "bundle agent x {}\n".getBytes(StandardCharsets.UTF_8));
    }

    private X509Certificate issue(String uid) {
        KeyPair pair = SelfSigned.keyPair(SelfSigned.KeyType.EC_P256);
        return intermediate.issue(pair.getPublic(), CertificateAuthority.subject(uid, uid + ".example.org"),
                List.of(CertificateAuthority.dns(uid + ".nodes.example.org")));
    }

    private Path chain(String name, X509Certificate leaf) throws IOException {
        Path file = dir.resolve(name + "-agent-http.cert");
        SelfSigned.writeCertificates(file, leaf, intermediate.certificate());
        return file;
    }

    /** The sandbox configuration with these {@code [nodes]} keys added. */
    private Path config(String nodesKeys) throws IOException {
        Path file = sandbox.config("");
        String toml = Files.readString(file);
        String bundle = "certificates = [\"lib/nodescerts.pem\"]";
        assertThat(toml).contains(bundle);
        Files.writeString(file, toml.replace(bundle, bundle + "\n" + nodesKeys + "\n"
                + "denied_keys_file = \"lib/denied-keys\""));
        Files.writeString(dir.resolve("lib/denied-keys"), "# none yet\n");
        return file;
    }

    private Path caConfig(String extra) throws IOException {
        return config("authentication = [\"cert_validation\"]\nca_file = \"lib/ca.pem\"\n"
                + "id_rules = [\"san-uri:urn:rudder:{id}\", \"uid\"]\ncrl_files = [\"lib/crl.pem\"]\n" + extra);
    }

    private static Cli.Run explain(Path config, Path certificate, String... more) {
        List<String> args = new java.util.ArrayList<>(List.of("explain", "--config", config.toString(), "--cert",
                certificate.toString()));
        args.addAll(List.of(more));
        return Cli.pintle(args.toArray(new String[0]));
    }

    @Test
    void aCaSignedListedNodeIsAllowedItsOwnPoliciesWithEveryStepShown() throws IOException {
        Cli.Run run = explain(caConfig(""), allowed, "--path", "/policies/node-1/rules/promises.cf");

        assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
        String pin = KeyHash.sha256(allowedCertificate.getPublicKey()).toString();
        assertThat(run.out()).contains(
                "cert[0]     ok       subject 'UID=node-1,CN=node-1.example.org', issuer 'CN=Fleet Nodes CA', "
                        + "serial " + allowedCertificate.getSerialNumber().toString(16),
                ", key " + pin,
                "cert[1]     ok       subject 'CN=Fleet Nodes CA', issuer 'CN=Fleet Root CA'",
                "trust       -        [nodes] authentication: cert_pinning off, cert_validation on (ca_file "
                        + dir.resolve("lib/ca.pem"),
                "ca.chain    ok       'UID=node-1,CN=node-1.example.org' signed by 'CN=Fleet Nodes CA' signed by "
                        + "root 'CN=Fleet Root CA'",
                "depth 2 (ca_max_depth 5)",
                "ca.idrule   -        san-uri:urn:rudder:{id}: no URI SAN matches urn:rudder:{id}",
                "ca.idrule   ok       uid: reads 'node-1'",
                "ca.crl      ok       CRL of 'CN=Fleet Nodes CA' (" + dir.resolve("lib/crl.pem") + ")",
                "1 entry: lists no certificate of the path",
                "ca.crl      ok       CRL of 'CN=Fleet Root CA'",
                "ca.listed   ok       nodeslist.json lists node-1",
                "deny        ok       key " + pin + " is not denied (" + dir.resolve("lib/denied-keys") + ", 0 key(s))",
                "identity    ok       node node-1 (key " + pin + ", via cert_validation)",
                "network     ok       127.0.0.1 is in the allowed networks",
                "route       -        GET /policies/node-1/rules/promises.cf: policies",
                "file        ok       ",
                "decision    ok       allowed: policies: node node-1 reads its own directory");
        // Pinning is off: no pinning step at all.
        assertThat(run.out()).doesNotContain("pin.");
    }

    @Test
    void withoutAPathTheIdentificationDecides() throws IOException {
        Cli.Run run = explain(caConfig(""), allowed);

        assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
        assertThat(run.out()).contains("decision    ok       the certificate authenticates a node")
                .doesNotContain("route ");
    }

    @Test
    void aRevokedCertificateIsRefusedNamingTheCrl() throws IOException {
        Cli.Run run = explain(caConfig(""), revoked, "--path", "/policies/node-2/rules/promises.cf");

        assertThat(run.exitCode()).as(run.out() + run.err()).isEqualTo(ExitCodes.EXPLAIN_REFUSED);
        String serial = revokedCertificate.getSerialNumber().toString(16);
        assertThat(run.out()).contains(
                "ca.chain    ok       ",
                "ca.crl      refused  revoked: CRL of 'CN=Fleet Nodes CA'",
                "lists 'UID=node-2,CN=node-2.example.org' (serial " + serial + ")",
                "identity    refused  revoked: the client certificate (serial " + serial + ") is revoked since",
                "decision    refused  revoked: ");
    }

    @Test
    void aPathOfAnotherNodeIsAUidMismatch() throws IOException {
        Cli.Run run = explain(caConfig(""), allowed, "--path", "/policies/node-2/rules/promises.cf");

        assertThat(run.exitCode()).isEqualTo(ExitCodes.EXPLAIN_REFUSED);
        assertThat(run.out()).contains("identity    ok       node node-1",
                "file        -        no such file under " + sandbox.share().resolve("node-2"),
                "decision    refused  uid-mismatch: certificate UID node-1 does not match the node node-2 in the "
                        + "path");
    }

    @Test
    void aChainDeeperThanCaMaxDepthIsRefused() throws IOException {
        Cli.Run run = explain(caConfig("ca_max_depth = 1"), allowed);

        assertThat(run.exitCode()).isEqualTo(ExitCodes.EXPLAIN_REFUSED);
        assertThat(run.out()).contains(
                "ca.chain    refused  chain-too-deep: the client certificate is at depth 2 below the root "
                        + "'CN=Fleet Root CA' (1 intermediate CA(s)); [nodes] ca_max_depth is 1",
                "identity    refused  chain-too-deep: ",
                "decision    refused  the certificate authenticates no node");
    }

    @Test
    void aPinnedSelfSignedNodeIsAuthenticatedByPinningDuringAMigration() throws IOException {
        NodeKeys pinned = sandbox.addNode("node-3", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        Path config = config("authentication = [\"cert_pinning\", \"cert_validation\"]\nca_file = \"lib/ca.pem\"\n"
                + "crl_files = [\"lib/crl.pem\"]");

        Cli.Run run = explain(config, pinned.certificatePath(), "--path", "/policies/node-3/rules/promises.cf");

        assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
        assertThat(run.out()).contains(
                "trust       -        [nodes] authentication: cert_pinning on, cert_validation on",
                "pin.uid     ok       node-3",
                "pin.list    -        nodeslist.json lists node-3, key-hash " + pinned.pin(),
                "pin.certs   -        " + dir.resolve("lib/nodescerts.pem") + " pins " + pinned.pin() + " for node-3",
                "pin.key     -        key " + pinned.pin() + " is pinned for [node-3]",
                "pinning     ok       node node-3",
                "ca.chain    refused  certificate-not-trusted: ",
                "ca.idrule   -        uid: reads 'node-3' (not reached: the chain is refused)",
                "identity    ok       node node-3 (key " + pinned.pin() + ", via cert_pinning)",
                "decision    ok       allowed: policies: node node-3 reads its own directory");
    }

    @Test
    void aCaSignedNodeMayUploadByItsCertificateAndPinningModeMentionsBasicCredentials() throws IOException {
        Path config = config("authentication = [\"cert_pinning\", \"cert_validation\"]\nca_file = \"lib/ca.pem\"");

        Cli.Run run = explain(config, allowed, "--path", "/inventory-updates/node-1.ocs", "--method", "PUT");

        assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
        assertThat(run.out()).contains(
                "pinning     refused  pins-disagree: ",
                "identity    ok       node node-1 (key ",
                "route       -        PUT /inventory-updates/node-1.ocs: inventory-updates",
                "upload      -        with cert_pinning on, uploads also accept HTTP Basic credentials of",
                "decision    ok       allowed: uploads: node node-1 by its CA-signed certificate");
    }

    @Test
    void aDeniedKeyAndAnAddressOutsideTheNetworksAreRefused() throws IOException {
        Path config = caConfig("");
        Files.writeString(dir.resolve("lib/denied-keys"),
                KeyHash.sha256(allowedCertificate.getPublicKey()) + " # stolen laptop\n");

        Cli.Run run = explain(config, allowed, "--address", "192.0.2.7", "--path", "/common/tools/x");

        assertThat(run.exitCode()).isEqualTo(ExitCodes.EXPLAIN_REFUSED);
        assertThat(run.out()).contains("deny        refused  revoked: key ",
                "identity    refused  revoked: key ",
                "network     refused  network-not-allowed: 192.0.2.7 is not in the allowed networks",
                "decision    refused  network-not-allowed: ");
    }

    @Test
    void uuidNeedsAVerifiedCertificateInCaMode() throws IOException {
        NodeKeys selfSigned = sandbox.unregisteredIdentity("stranger", "node-9");

        Path config = caConfig("");

        Cli.Run verified = explain(config, allowed, "--path", "/uuid");
        Cli.Run untrusted = explain(config, selfSigned.certificatePath(), "--path", "/uuid");
        Cli.Run revokedOne = explain(config, revoked, "--path", "/uuid");

        assertThat(verified.exitCode()).as(verified.out()).isZero();
        assertThat(verified.out()).contains("route       -        GET /uuid: uuid",
                "decision    ok       allowed: uuid: verified certificate");
        assertThat(untrusted.exitCode()).isEqualTo(ExitCodes.EXPLAIN_REFUSED);
        assertThat(untrusted.out()).contains("decision    refused  certificate-not-trusted: /uuid needs a verified "
                + "client certificate in certificate-validation mode");
        assertThat(revokedOne.exitCode()).isEqualTo(ExitCodes.EXPLAIN_REFUSED);
        assertThat(revokedOne.out()).contains("decision    refused  revoked: /uuid needs a verified client "
                + "certificate");
    }

    @Test
    void aConfigurationThatDoesNotLoadIsAConfigurationError() throws IOException {
        Path config = caConfig("");
        Files.delete(dir.resolve("lib/ca.pem"));

        Cli.Run run = explain(config, allowed);

        assertThat(run.exitCode()).isEqualTo(ExitCodes.CONFIG_ERROR);
        assertThat(run.err()).contains("pintle explain: configuration error: ").contains("ca.pem");
        assertThat(run.out()).isEmpty();
    }

    @Test
    void aDerCertificateIsRead() throws Exception {
        Path der = dir.resolve("node-1.der");
        Files.write(der, allowedCertificate.getEncoded());

        // The DER file holds the leaf alone: the CA bundle supplies the intermediate, as it does for a client.
        Cli.Run run = explain(caConfig(""), der);

        assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
        assertThat(run.out()).contains("cert[0]     ok       subject 'UID=node-1,CN=node-1.example.org'")
                .doesNotContain("cert[1]");
    }
}
