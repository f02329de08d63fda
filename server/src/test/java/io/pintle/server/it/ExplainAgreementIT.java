package io.pintle.server.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.pintle.client.ClientTls;
import io.pintle.server.testing.Cli;
import io.pintle.server.testing.Sandbox;
import io.pintle.server.testing.TestServer;
import io.pintle.server.tls.CertificateAuthority;
import io.pintle.server.tls.SelfSigned;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The end-to-end check that {@code pintle explain} and the running server agree ({@code AccessTest} is the table
 * of the access function both call): for every certificate and route of a matrix, in certificate-validation mode
 * alone and with both modes on, the real server's answer (allowed, or the 403's reason) and explain's final
 * decision on the same configuration are the same.
 */
class ExplainAgreementIT {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    private record Identity(Path certificate, Path key) {}

    @ParameterizedTest
    @ValueSource(strings = {"[\"cert_validation\"]", "[\"cert_pinning\", \"cert_validation\"]"})
    void explainDecidesAsTheServerAnswers(String modes) throws Exception {
        Sandbox sandbox = Sandbox.create(dir);
        CertificateAuthority root = CertificateAuthority.root(SelfSigned.KeyType.EC_P256, "Root", Duration.ofDays(90));
        CertificateAuthority nodes = root.intermediate(SelfSigned.KeyType.EC_P256, "Nodes");
        SelfSigned.writeCertificates(dir.resolve("lib/ca.pem"), root.certificate(), nodes.certificate());
        Map<String, Identity> identities = new LinkedHashMap<>();
        identities.put("listed", issue(nodes, "node-1"));
        identities.put("revoked", issue(nodes, "node-2"));
        identities.put("unlisted", issue(nodes, "node-new"));
        identities.put("stranger", issue(CertificateAuthority.root(SelfSigned.KeyType.EC_P256, "Root",
                Duration.ofDays(9)), "node-1"));
        var pinned = sandbox.addNode("pinned-node", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        identities.put("pinned", new Identity(pinned.certificatePath(), pinned.keyPath()));
        X509Certificate revoked = io.pintle.client.Pem.readCertificates(identities.get("revoked").certificate()).get(0);
        CertificateAuthority.writeCrls(dir.resolve("lib/crl.pem"), nodes.crl(List.of(revoked.getSerialNumber())));
        for (String id : List.of("node-1", "node-2")) {
            sandbox.listNode(id);
            sandbox.shareFile(id + "/rules/rudder.tar.bz2", new byte[] {1, 2, 3});
        }
        sandbox.nodesConfig(String.join("\n", "authentication = " + modes, "ca_file = \"lib/ca.pem\"",
                "id_rules = [\"uid\"]", "crl_files = [\"lib/crl.pem\"]", "denied_keys_file = \"\""));
        Path config = sandbox.config("");
        List<String[]> routes = List.of(
                new String[] {"GET", "/policies/node-1/rules/rudder.tar.bz2"},
                new String[] {"GET", "/policies/pinned-node/rules/rudder.tar.bz2"},
                new String[] {"GET", "/common/anything"},
                new String[] {"GET", "/uuid"},
                new String[] {"GET", "/rudder/relay-api/shared-folder/anything"},
                new String[] {"PUT", "/inventories/probe.ocs"});
        List<String> compared = new ArrayList<>();
        try (TestServer server = TestServer.start(sandbox)) {
            for (Map.Entry<String, Identity> identity : identities.entrySet()) {
                for (String[] route : routes) {
                    String served = serve(server, sandbox.serverPin(), identity.getValue(), route[0], route[1]);
                    Cli.Run run = Cli.pintle("explain", "--config", config.toString(), "--cert",
                            identity.getValue().certificate().toString(), "--path", route[1], "--method", route[0]);
                    String explained = decision(run);
                    String what = identity.getKey() + " " + route[0] + " " + route[1];
                    assertThat(explained).as(what + "\n" + run.out() + run.err()).isEqualTo(served);
                    compared.add(what + " -> " + served);
                }
            }
        }
        // The matrix holds both outcomes, so agreement is not agreement on one answer.
        assertThat(compared).anyMatch(line -> line.endsWith("-> allowed"))
                .anyMatch(line -> line.endsWith("-> revoked")).anyMatch(line -> line.endsWith("-> uid-mismatch"))
                .anyMatch(line -> line.endsWith("-> certificate-not-trusted") || line.endsWith("-> unknown-key"));
    }

    private Identity issue(CertificateAuthority ca, String uid) throws IOException {
        KeyPair pair = SelfSigned.keyPair(SelfSigned.KeyType.EC_P256);
        X509Certificate leaf = ca.issue(pair.getPublic(), CertificateAuthority.subject(uid, null), List.of());
        Path home = Files.createDirectories(dir.resolve("agents/" + uid + "-" + ca.name()));
        List<X509Certificate> chain = new ArrayList<>(List.of(leaf));
        chain.addAll(ca.chain().subList(0, ca.chain().size() - 1));
        SelfSigned.writeCertificates(home.resolve("agent-http.cert"), chain.toArray(new X509Certificate[0]));
        SelfSigned.writePrivateKey(home.resolve("agent-http.key"), pair.getPrivate(), false);
        return new Identity(home.resolve("agent-http.cert"), home.resolve("agent-http.key"));
    }

    /** @return "allowed", or the refusal's reason */
    private static String decision(Cli.Run run) {
        for (String line : run.out().split("\n")) {
            String[] words = line.trim().split("\\s+", 4);
            if (words.length >= 3 && words[0].equals("decision")) {
                if (words[1].equals("ok")) {
                    return "allowed";
                }
                return words[2].endsWith(":") ? words[2].substring(0, words[2].length() - 1) : words[2];
            }
        }
        return "no decision line (exit " + run.exitCode() + ")";
    }

    /** @return "allowed" when the server let the request through (whatever it then found), or the refusal's reason */
    private static String serve(TestServer server, String pin, Identity identity, String method, String path)
            throws Exception {
        SSLContext context = ClientTls.context(identity.certificate(), identity.key(), Set.of(pin));
        try (SSLSocket socket = (SSLSocket) context.getSocketFactory().createSocket("127.0.0.1", server.port())) {
            OutputStream out = socket.getOutputStream();
            out.write((method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                    + (method.equals("PUT") ? "Content-Length: 5\r\n\r\nprobe" : "\r\n"))
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            String response = read(socket.getInputStream());
            int status = Integer.parseInt(response.substring(9, 12));
            if (status != 401 && status != 403) {
                return "allowed";
            }
            String body = response.substring(response.indexOf("\r\n\r\n") + 4);
            // Chunked or not: the problem's JSON object is the body's one object.
            return JSON.readTree(body.substring(body.indexOf('{'), body.lastIndexOf('}') + 1)).path("reason").asText();
        }
    }

    private static String read(InputStream in) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        in.transferTo(bytes);
        return bytes.toString(StandardCharsets.UTF_8);
    }
}
