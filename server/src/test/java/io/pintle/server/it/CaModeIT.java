package io.pintle.server.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.pintle.client.ClientTls;
import io.pintle.server.testing.NodeKeys;
import io.pintle.server.testing.Sandbox;
import io.pintle.server.testing.TestServer;
import io.pintle.server.tls.CertificateAuthority;
import io.pintle.server.tls.SelfSigned;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x500.X500NameBuilder;
import org.bouncycastle.asn1.x500.style.BCStyle;
import org.bouncycastle.asn1.x509.GeneralName;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Rudder's certificate-validation mode against the real server: node certificates signed by an intermediate of a
 * generated CA, with the node id in the subject UID or in a DNS SAN, each refusal with its own reason, revocation by
 * a CRL that applies to the next request of an open connection and of a resumed TLS session, uploads by
 * certificate, both modes side by side, and curl with rudder-client's flags of that mode.
 */
class CaModeIT {
    private static final String SAN_DOMAIN = ".nodes.example.com";
    private static final String FILE = "/rules/rudder.tar.bz2";

    @TempDir
    static Path dir;

    private static Sandbox sandbox;
    private static TestServer server;
    private static CertificateAuthority root;
    private static CertificateAuthority intermediate;
    private static Path crlFile;
    private static NodeKeys byUid;
    private static NodeKeys bySan;

    @BeforeAll
    static void start() throws Exception {
        sandbox = Sandbox.create(dir.resolve("root"));
        // This test is about certificate-validation access, with bodies that are not agents' signed reports:
        // the edge check ([uploads] verify_signatures) has its own, UploadSignaturesIT.
        sandbox.uploadsConfig("verify_signatures = false");
        root = CertificateAuthority.root(SelfSigned.KeyType.EC_P256, "Example Root CA", Duration.ofDays(3650));
        intermediate = root.intermediate(SelfSigned.KeyType.EC_P256, "Example Nodes CA");
        // The bundle holds the root and, so that its CRLs can be verified, the intermediate.
        Path caFile = dir.resolve("root/lib/policy_server_ca.pem");
        SelfSigned.writeCertificates(caFile, root.certificate(), intermediate.certificate());
        crlFile = dir.resolve("root/lib/nodes-ca.crl");
        CertificateAuthority.writeCrls(crlFile, intermediate.crl(List.of()));
        // The server keeps its key (clients that pin it still do) with a certificate of the CA naming 127.0.0.1.
        NodeKeys serverKeys = sandbox.server();
        X509Certificate serverCertificate = intermediate.issue(serverKeys.keyPair().getPublic(),
                CertificateAuthority.subject("root", "127.0.0.1"), List.of(CertificateAuthority.ip("127.0.0.1"),
                        CertificateAuthority.dns("localhost")));
        SelfSigned.writeCertificates(serverKeys.certificatePath(), serverCertificate, intermediate.certificate());

        byUid = caNode("ca-uid", "ca-uid", List.of());
        bySan = caNode("ca-san", null, List.of(CertificateAuthority.dns("ca-san" + SAN_DOMAIN)));
        for (String id : List.of("ca-uid", "ca-san", "ca-deep5", "ca-deep6", "ca-revoked", "ca-expired",
                "ca-future", "ca-other")) {
            sandbox.listNode(id);
            policy(id);
        }
        sandbox.nodesConfig(String.join("\n",
                "authentication = [\"cert_validation\"]",
                "ca_file = \"lib/policy_server_ca.pem\"",
                "id_rules = [\"uid\", \"san-dns:{id}" + SAN_DOMAIN + "\"]",
                "crl_files = [\"lib/nodes-ca.crl\"]",
                "denied_keys_file = \"lib/denied-keys\""));
        Files.writeString(dir.resolve("root/lib/denied-keys"), "# none yet\n");
        server = TestServer.start(sandbox);
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    private static void policy(String id) throws IOException {
        Path file = sandbox.dir().resolve("share/" + id + FILE);
        Files.createDirectories(file.getParent());
        Files.writeString(file, "policies of " + id);
    }

    /** A node key with a certificate of the intermediate, written as Rudder's agent-http.cert: leaf, then its CA. */
    private static NodeKeys caNode(String name, String uid, List<GeneralName> sans) throws IOException {
        return issued(name, intermediate, uid, sans, Instant.now().minus(Duration.ofMinutes(5)),
                Instant.now().plus(Duration.ofDays(30)));
    }

    private static NodeKeys issued(String name, CertificateAuthority ca, String uid, List<GeneralName> sans,
            Instant notBefore, Instant notAfter) throws IOException {
        return issued(name, ca, CertificateAuthority.subject(uid, name), sans, notBefore, notAfter);
    }

    private static NodeKeys issued(String name, CertificateAuthority ca, X500Name subject, List<GeneralName> sans,
            Instant notBefore, Instant notAfter) throws IOException {
        KeyPair pair = SelfSigned.keyPair(SelfSigned.KeyType.EC_P256);
        X509Certificate leaf = ca.issue(pair.getPublic(), subject, sans, notBefore, notAfter);
        Path directory = dir.resolve("agents/" + name);
        Path certificate = directory.resolve("agent-http.cert");
        Path key = directory.resolve("agent-http.key");
        List<X509Certificate> chain = new ArrayList<>();
        chain.add(leaf);
        // The chain up to the root, the root left out, as an organisation's PKI hands it out.
        chain.addAll(ca.chain().subList(0, ca.chain().size() - 1));
        SelfSigned.writeCertificates(certificate, chain.toArray(new X509Certificate[0]));
        SelfSigned.writePrivateKey(key, pair.getPrivate(), false);
        return new NodeKeys(name, certificate, key, leaf, pair);
    }

    private static CertificateAuthority deepCa(int intermediates) {
        CertificateAuthority ca = root;
        for (int i = 1; i <= intermediates; i++) {
            ca = ca.intermediate(SelfSigned.KeyType.EC_P256, "Level " + i + " CA");
        }
        return ca;
    }

    @Test
    void nodesWithTheirIdInTheUidOrInASanAreServed() throws Exception {
        assertThat(get(byUid, "/policies/ca-uid" + FILE)).startsWith("200 ").endsWith("policies of ca-uid");
        assertThat(get(bySan, "/policies/ca-san" + FILE)).startsWith("200 ").endsWith("policies of ca-san");
        // Four intermediates below the root: depth 5, Apache's SSLVerifyDepth.
        NodeKeys deep5 = issued("ca-deep5", deepCa(4), "ca-deep5", List.of(),
                Instant.now().minus(Duration.ofMinutes(5)), Instant.now().plus(Duration.ofDays(1)));
        assertThat(get(deep5, "/policies/ca-deep5" + FILE)).startsWith("200 ");
    }

    @Test
    void everyRefusalHasItsOwnReason() throws Exception {
        Instant now = Instant.now();
        assertThat(get(byUid, "/policies/ca-san" + FILE)).startsWith("403 ").contains("uid-mismatch");
        NodeKeys expired = issued("ca-expired", intermediate, "ca-expired", List.of(), now.minus(Duration.ofDays(10)),
                now.minus(Duration.ofDays(1)));
        assertThat(get(expired, "/policies/ca-expired" + FILE)).startsWith("403 ").contains("certificate-expired");
        NodeKeys future = issued("ca-future", intermediate, "ca-future", List.of(), now.plus(Duration.ofDays(1)),
                now.plus(Duration.ofDays(10)));
        assertThat(get(future, "/policies/ca-future" + FILE)).startsWith("403 ")
                .contains("certificate-not-yet-valid");
        CertificateAuthority other = CertificateAuthority.root(SelfSigned.KeyType.EC_P256, "Example Root CA",
                Duration.ofDays(365));
        NodeKeys stranger = issued("ca-other", other, "ca-other", List.of(), now.minus(Duration.ofMinutes(5)),
                now.plus(Duration.ofDays(1)));
        assertThat(get(stranger, "/policies/ca-other" + FILE)).startsWith("403 ")
                .contains("certificate-not-trusted");
        NodeKeys deep6 = issued("ca-deep6", deepCa(5), "ca-deep6", List.of(), now.minus(Duration.ofMinutes(5)),
                now.plus(Duration.ofDays(1)));
        assertThat(get(deep6, "/policies/ca-deep6" + FILE)).startsWith("403 ").contains("chain-too-deep")
                .contains("depth 6");
        NodeKeys unlisted = caNode("ca-unlisted", "ca-unlisted", List.of());
        assertThat(get(unlisted, "/policies/ca-unlisted" + FILE)).startsWith("403 ").contains("node-not-listed");
        NodeKeys nameless = caNode("ca-nameless", null, List.of(CertificateAuthority.dns("ca-nameless.elsewhere.org")));
        assertThat(get(nameless, "/policies/ca-nameless" + FILE)).startsWith("403 ").contains("no-node-id");
        // A pinned agent certificate is no CA-signed one: this server is in certificate-validation mode only.
        NodeKeys pinned = sandbox.addNode("pinned-in-ca-mode", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        assertThat(get(pinned, "/policies/pinned-in-ca-mode" + FILE)).startsWith("403 ")
                .contains("certificate-not-trusted");
        // Rudder's vhost in this mode asks a verified certificate for /common and /uuid too.
        assertThat(get(null, "/common/anything")).startsWith("403 ").contains("no-certificate");
        assertThat(get(null, "/uuid")).startsWith("403 ").contains("no-certificate");
        assertThat(get(stranger, "/uuid")).startsWith("403 ").contains("certificate-not-trusted");
        assertThat(get(unlisted, "/uuid")).isEqualTo("200 root");
        assertThat(get(byUid, "/common/anything")).startsWith("404 ");
    }

    /**
     * Hostile testing, issue 34 N2: a CA-signed certificate whose subject holds two UIDs, A then B (both listed
     * nodes), was served as A. It names no single node: refused in either order, and whoami says why.
     */
    @Test
    void aCertificateWithTwoUidsIsNoNode() throws Exception {
        Instant now = Instant.now();
        for (List<String> uids : List.of(List.of("ca-uid", "ca-san"), List.of("ca-san", "ca-uid"))) {
            X500Name subject = new X500NameBuilder(BCStyle.INSTANCE).addRDN(BCStyle.UID, uids.get(0))
                    .addRDN(BCStyle.UID, uids.get(1)).build();
            NodeKeys twoUids = issued("ca-two-uids-" + uids.get(0), intermediate, subject, List.of(),
                    now.minus(Duration.ofMinutes(5)), now.plus(Duration.ofDays(1)));
            for (String id : uids) {
                assertThat(get(twoUids, "/policies/" + id + FILE)).startsWith("403 ")
                        .contains("no-node-id")
                        .contains("2 UID attributes naming different nodes (" + String.join(", ", uids) + ")")
                        .doesNotContain("policies of");
            }
            assertThat(get(twoUids, "/v1/whoami")).startsWith("200 ").contains("no-node-id")
                    .contains("names no single node").contains("\"known\":false");
        }
    }

    @Test
    void aCrlRefusesTheNextRequestOfAnOpenConnectionAndOfAResumedSession() throws Exception {
        NodeKeys node = caNode("ca-revoked", "ca-revoked", List.of());
        SSLContext context = tls(node, sandbox.serverPin());
        Path session = dir.resolve("ca-revoked.session");
        assertThat(openssl(node, session, false)).contains("HTTP/1.1 200");
        try (SSLSocket socket = (SSLSocket) context.getSocketFactory().createSocket("127.0.0.1", server.port())) {
            assertThat(request(socket, "/policies/ca-revoked" + FILE)).startsWith("200 ");

            CertificateAuthority.writeCrls(crlFile, intermediate.crl(List.of(node.certificate().getSerialNumber(),
                    BigInteger.valueOf(42))));
            assertThat(server.admin("POST", "/rudder/relay-api/1/system/reload").status()).isEqualTo(200);

            String refused = request(socket, "/policies/ca-revoked" + FILE);
            assertThat(refused).startsWith("403 ").contains("\"revoked\"")
                    .contains(node.certificate().getSerialNumber().toString(16));
            assertThat(request(socket, "/policies/ca-uid" + FILE)).startsWith("403 ").contains("revoked");
        } finally {
            CertificateAuthority.writeCrls(crlFile, intermediate.crl(List.of()));
        }
        // The session saved before the revocation resumes (no certificate is sent again) and is still refused.
        String resumed = opensslAfterRevocation(node, session);
        assertThat(resumed).contains("Reused").contains("HTTP/1.1 403").contains("revoked");
        assertThat(server.admin("POST", "/rudder/relay-api/1/system/reload").status()).isEqualTo(200);
        assertThat(get(node, "/policies/ca-revoked" + FILE)).startsWith("200 ");
    }

    /** Revokes the node, runs the resumed session, and leaves the CRL empty again for the other tests. */
    private static String opensslAfterRevocation(NodeKeys node, Path session) throws Exception {
        CertificateAuthority.writeCrls(crlFile, intermediate.crl(List.of(node.certificate().getSerialNumber())));
        try {
            assertThat(server.admin("POST", "/rudder/relay-api/1/system/reload").status()).isEqualTo(200);
            return openssl(node, session, true);
        } finally {
            CertificateAuthority.writeCrls(crlFile, intermediate.crl(List.of()));
        }
    }

    /** One GET through {@code openssl s_client}, saving its TLS session or resuming the saved one. */
    private static String openssl(NodeKeys node, Path session, boolean resume) throws Exception {
        List<String> command = new ArrayList<>(List.of("openssl", "s_client", "-connect", "127.0.0.1:" + server.port(),
                "-tls1_3", "-cert", node.certificatePath().toString(), "-key", node.keyPath().toString(),
                "-ign_eof"));
        command.addAll(resume ? List.of("-sess_in", session.toString()) : List.of("-sess_out", session.toString()));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        try (OutputStream in = process.getOutputStream()) {
            in.write(("GET /policies/" + node.name() + FILE + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
        }
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
        return output;
    }

    @Test
    void uploadsTakeTheVerifiedCertificateInsteadOfBasicCredentials() throws Exception {
        assertThat(put(byUid, "/inventories/ca-uid.ocs", null)).startsWith("201 ");
        // A new node, not accepted yet: its CA-signed certificate is enough for its first inventory, as in Apache.
        NodeKeys fresh = caNode("ca-new-node", "ca-new-node", List.of());
        assertThat(put(fresh, "/inventories/ca-new-node.ocs", null)).startsWith("201 ");
        assertThat(put(null, "/reports/x.log", Sandbox.UPLOAD_USER + ":" + Sandbox.WEBDAV_PASSWORD))
                .startsWith("403 ").contains("no-certificate");
        assertThat(Files.readString(sandbox.uploads(io.pintle.server.uploads.UploadKind.INVENTORIES)
                .resolve("ca-new-node.ocs"))).isEqualTo("inventory of ca-new-node");
    }

    @Test
    void curlWithRudderClientsCertificateValidationFlags() throws Exception {
        Path caFile = dir.resolve("root/lib/policy_server_ca.pem");
        Path out = dir.resolve("curl-rudder.tar.bz2");
        Path etag = dir.resolve("curl-rudder.tar.bz2.etag");
        // rudder-client in cert_validation mode: no --pinnedpubkey/--insecure; --cacert policy_server_ca.pem and
        // the agent-http pair; the server's name (127.0.0.1) is checked against its certificate.
        List<String> command = List.of("curl", "--tlsv1.3", "--location", "--fail", "--connect-timeout", "10",
                "--noproxy", "*", "--cacert", caFile.toString(), "--etag-save", etag.toString(), "--etag-compare",
                etag.toString(), "--silent", "--show-error", "--cert", byUid.certificatePath().toString(), "--key",
                byUid.keyPath().toString(), "https://127.0.0.1:" + server.port() + "/policies/ca-uid" + FILE, "-o",
                out.toString(), "--write-out", "%{http_code}");
        assertThat(curl(command)).isEqualTo("200");
        assertThat(Files.readString(out)).isEqualTo("policies of ca-uid");
        assertThat(curl(command)).isEqualTo("304");
    }

    private static String curl(List<String> command) throws Exception {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).as(output).isZero();
        return output.strip();
    }

    @Test
    void bothModesSideBySideDuringAMigrationAndADeniedPinnedKey() throws Exception {
        Sandbox both = Sandbox.create(dir.resolve("both"));
        both.uploadsConfig("verify_signatures = false");
        SelfSigned.writeCertificates(both.dir().resolve("lib/policy_server_ca.pem"), root.certificate(),
                intermediate.certificate());
        Path denied = both.dir().resolve("lib/denied-keys");
        Files.writeString(denied, "");
        NodeKeys pinned = both.addNode("pinned-node", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        both.listNode("ca-uid");
        for (String id : List.of("pinned-node", "ca-uid")) {
            Path file = both.dir().resolve("share/" + id + FILE);
            Files.createDirectories(file.getParent());
            Files.writeString(file, "policies of " + id);
        }
        both.nodesConfig(String.join("\n",
                "authentication = [\"cert_pinning\", \"cert_validation\"]",
                "ca_file = \"lib/policy_server_ca.pem\"",
                "denied_keys_file = \"lib/denied-keys\""));
        try (TestServer migrating = TestServer.start(both)) {
            SSLContext pinnedTls = tls(pinned, both.serverPin());
            SSLContext caTls = tls(byUid, both.serverPin());
            try (SSLSocket pinnedSocket = (SSLSocket) pinnedTls.getSocketFactory().createSocket("127.0.0.1",
                    migrating.port());
                    SSLSocket caSocket = (SSLSocket) caTls.getSocketFactory().createSocket("127.0.0.1",
                            migrating.port())) {
                assertThat(request(pinnedSocket, "/v1/whoami")).startsWith("200 ").contains("pinned-node")
                        .contains("cert_pinning");
                assertThat(request(caSocket, "/v1/whoami")).startsWith("200 ").contains("ca-uid")
                        .contains("cert_validation");
                assertThat(request(pinnedSocket, "/policies/pinned-node" + FILE)).startsWith("200 ");
                assertThat(request(caSocket, "/policies/ca-uid" + FILE)).startsWith("200 ");
                // Both modes on: a pinned agent still uploads with its DAV credentials.
                assertThat(put(migrating, both.serverPin(), pinned, "/reports/pinned.log",
                        Sandbox.UPLOAD_USER + ":" + Sandbox.WEBDAV_PASSWORD)).startsWith("201 ");

                Files.writeString(denied, "# stolen laptop, 2026-12-04\n"
                        + io.pintle.server.nodes.KeyHash.sha256(pinned.certificate().getPublicKey()) + "\n");
                assertThat(migrating.admin("POST", "/rudder/relay-api/1/system/reload").status()).isEqualTo(200);
                assertThat(request(pinnedSocket, "/policies/pinned-node" + FILE)).startsWith("403 ")
                        .contains("revoked").contains("deny list");
                assertThat(request(caSocket, "/policies/ca-uid" + FILE)).startsWith("200 ");
            }
        }
    }

    @Test
    void ruddersNodesAuthIncludeSaysWhereTheIdIsAndFollowsReloads() throws Exception {
        Sandbox sans = Sandbox.create(dir.resolve("sans"));
        SelfSigned.writeCertificates(sans.dir().resolve("lib/policy_server_ca.pem"), root.certificate());
        Path include = sans.dir().resolve("lib/rudder-apache-nodes-auth.conf");
        Files.writeString(include, """
                SSLUserName SSL_CLIENT_SAN_DNS_0
                RewriteCond "%{SSL:SSL_CLIENT_SAN_DNS_0}=rudder-$1.company.com" "^(.+)=\\1$"
                """);
        NodeKeys named = caNode("ca-named", null, List.of(CertificateAuthority.dns("rudder-ca-named.company.com")));
        for (String id : List.of("ca-named", "ca-uid")) {
            sans.listNode(id);
            Path file = sans.dir().resolve("share/" + id + FILE);
            Files.createDirectories(file.getParent());
            Files.writeString(file, "policies of " + id);
        }
        sans.nodesConfig(String.join("\n",
                "authentication = [\"cert_validation\"]",
                "ca_file = \"lib/policy_server_ca.pem\"",
                "nodes_auth_file = \"lib/rudder-apache-nodes-auth.conf\""));
        try (TestServer server = TestServer.start(sans)) {
            assertThat(get(server, sans.serverPin(), named, "/policies/ca-named" + FILE)).startsWith("200 ");
            assertThat(get(server, sans.serverPin(), byUid, "/policies/ca-uid" + FILE)).startsWith("403 ")
                    .contains("no-node-id");
            Files.writeString(include, """
                    RewriteCond "%{SSL:SSL_CLIENT_SAN_DNS_0}=rudder-$1.company.com" "^(.+)=\\1$" [OR]
                    RewriteCond "%{SSL:SSL_CLIENT_S_DN_UID}=$1" "^(.+)=\\1$"
                    """);
            assertThat(server.admin("POST", "/rudder/relay-api/1/system/reload").status()).isEqualTo(200);
            assertThat(get(server, sans.serverPin(), byUid, "/policies/ca-uid" + FILE)).startsWith("200 ");
            // A condition Pintle would read differently from Apache is refused; the rules in force stay.
            Files.writeString(include, "RewriteCond \"%{SSL:SSL_CLIENT_S_DN_CN}=$1\" \"^(.+)=\\1$\"\n");
            TestServer.AdminResponse refused = server.admin("POST", "/rudder/relay-api/1/system/reload");
            assertThat(refused.status()).isNotEqualTo(200);
            assertThat(refused.body().toString()).contains("SSL_CLIENT_S_DN_CN");
            assertThat(get(server, sans.serverPin(), byUid, "/policies/ca-uid" + FILE)).startsWith("200 ");
        }
    }

    // ---- plumbing: HTTP/1.1 by hand, so that "the same connection" is certain

    private static String get(TestServer target, String pin, NodeKeys node, String path) throws Exception {
        try (SSLSocket socket = (SSLSocket) tls(node, pin).getSocketFactory().createSocket("127.0.0.1",
                target.port())) {
            return request(socket, path);
        }
    }

    private static String get(NodeKeys node, String path) throws Exception {
        return get(server, sandbox.serverPin(), node, path);
    }

    /** A client context presenting the node's certificate chain (none for null) and pinning the server's key. */
    private static SSLContext tls(NodeKeys node, String pin) throws Exception {
        return node != null
                ? ClientTls.context(node.certificatePath(), node.keyPath(), Set.of(pin))
                : ClientTls.context((javax.net.ssl.KeyManager[]) null, Set.of(pin));
    }

    private static String put(NodeKeys node, String path, String basic) throws Exception {
        return put(server, sandbox.serverPin(), node, path, basic);
    }

    private static String put(TestServer target, String pin, NodeKeys node, String path, String basic)
            throws Exception {
        SSLContext context = tls(node, pin);
        byte[] body = ("inventory of " + (node != null ? node.name() : "nobody")).getBytes(StandardCharsets.UTF_8);
        try (SSLSocket socket = (SSLSocket) context.getSocketFactory().createSocket("127.0.0.1", target.port())) {
            String head = "PUT " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: " + body.length + "\r\n"
                    + (basic != null ? "Authorization: Basic " + java.util.Base64.getEncoder().encodeToString(
                            basic.getBytes(StandardCharsets.UTF_8)) + "\r\n" : "") + "\r\n";
            OutputStream out = socket.getOutputStream();
            out.write(head.getBytes(StandardCharsets.US_ASCII));
            out.write(body);
            out.flush();
            return response(socket.getInputStream());
        }
    }

    private static String request(SSLSocket socket, String path) throws IOException {
        OutputStream out = socket.getOutputStream();
        out.write(("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        out.flush();
        return response(socket.getInputStream());
    }

    /** @return "STATUS body" of one response, read by its Content-Length (the connection stays usable) */
    private static String response(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int matched = 0;
        while (matched < 4) {
            int b = in.read();
            if (b < 0) {
                throw new IOException("connection closed in the response head: " + head);
            }
            head.write(b);
            matched = (b == '\r' && matched % 2 == 0) || (b == '\n' && matched % 2 == 1) ? matched + 1
                    : b == '\r' ? 1 : 0;
        }
        String text = head.toString(StandardCharsets.US_ASCII);
        int length = 0;
        for (String line : text.split("\r\n")) {
            if (line.regionMatches(true, 0, "Content-Length:", 0, 15)) {
                length = Integer.parseInt(line.substring(15).strip());
            }
        }
        byte[] body = in.readNBytes(length);
        return text.substring(9, 12) + " " + new String(body, StandardCharsets.UTF_8);
    }
}
