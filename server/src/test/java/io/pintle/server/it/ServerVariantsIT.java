package io.pintle.server.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.pintle.api.dto.WhoAmI;
import io.pintle.client.ClientTls;
import io.pintle.client.FetchResult;
import io.pintle.client.PintleClient;
import io.pintle.client.ProblemException;
import io.pintle.server.testing.NodeKeys;
import io.pintle.server.testing.Sandbox;
import io.pintle.server.testing.TestServer;
import io.pintle.server.tls.SelfSigned;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import javax.net.ssl.SSLParameters;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.io.ClientConnector;
import org.eclipse.jetty.util.ssl.SslContextFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Server configurations beyond the default: key formats, networks, TLS 1.2, and Jetty's own client. */
class ServerVariantsIT {

    @ParameterizedTest(name = "server key {0}, PKCS#1 {1}")
    @CsvSource({"RSA_2048, true", "RSA_2048, false", "EC_P256, false"})
    void serverKeyInPkcs1OrPkcs8RsaOrEcIsServedAndPinned(SelfSigned.KeyType type, boolean pkcs1, @TempDir Path dir)
            throws Exception {
        Sandbox sandbox = Sandbox.create(dir, type, pkcs1);
        assertThat(Files.readString(sandbox.server().keyPath()))
                .startsWith(pkcs1 ? "-----BEGIN RSA PRIVATE KEY-----" : "-----BEGIN PRIVATE KEY-----");
        NodeKeys node = sandbox.addNode("node-1", SelfSigned.KeyType.RSA_2048, Sandbox.Pinning.BOTH);
        sandbox.shareFile("node-1/rules/rudder.tar.bz2", "policies".getBytes(StandardCharsets.US_ASCII));
        try (TestServer server = TestServer.start(sandbox)) {
            FetchResult result = server.client(node)
                    .fetch("/policies/node-1/rules/rudder.tar.bz2", dir.resolve("out"), null);
            assertThat(result.status()).isEqualTo(200);
            assertThat(Files.readString(dir.resolve("out"))).isEqualTo("policies");
        }
    }

    @Test
    void addressOutsideTheAllowedNetworksIsDenied(@TempDir Path dir) throws Exception {
        Sandbox sandbox = Sandbox.create(dir);
        NodeKeys node = sandbox.addNode("node-1", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        sandbox.shareFile("node-1/rules/rudder.tar.bz2", "policies".getBytes(StandardCharsets.US_ASCII));
        sandbox.shareFile("common/lib.tar.bz2", "lib".getBytes(StandardCharsets.US_ASCII));
        sandbox.networks("# agents only come from the LAN\nRequire ip 10.0.0.0/8 192.168.0.0/16\n");
        try (TestServer server = TestServer.start(sandbox)) {
            PintleClient client = server.client(node);
            for (String path : new String[] {"/policies/node-1/rules/rudder.tar.bz2", "/common/lib.tar.bz2"}) {
                ProblemException denied = PolicyServingIT.problem(client, path, dir);
                assertThat(denied.problem().status()).isEqualTo(403);
                assertThat(denied.problem().reason()).isEqualTo("network-not-allowed");
                assertThat(denied.problem().detail()).isEqualTo("127.0.0.1 is not in the allowed networks");
            }
            WhoAmI whoami = client.whoami();
            assertThat(whoami.allowedNetwork()).isFalse();
            assertThat(whoami.known()).isTrue();
        }
    }

    @Test
    void tls12CanBeEnabledByConfiguration(@TempDir Path dir) throws Exception {
        Sandbox sandbox = Sandbox.create(dir);
        NodeKeys node = sandbox.addNode("node-1", SelfSigned.KeyType.RSA_2048, Sandbox.Pinning.BOTH);
        try (TestServer server = TestServer.start(sandbox, "protocols = [\"TLSv1.3\", \"TLSv1.2\"]")) {
            HttpClient tls12 = HttpClient.newBuilder()
                    .sslContext(ClientTls.context(node.certificatePath(), node.keyPath(), Set.of(sandbox.serverPin())))
                    .sslParameters(new SSLParameters(null, new String[] {"TLSv1.2"}))
                    .build();
            HttpResponse<String> response = tls12.send(
                    HttpRequest.newBuilder(server.uri().resolve("/v1/whoami")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(response.body()).contains("\"tls_protocol\":\"TLSv1.2\"").contains("\"known\":true");
        }
    }

    @Test
    void windowsAgentChecksItsZipWithHeadThenIfNoneMatchUsingJettysClient(@TempDir Path dir) throws Exception {
        Sandbox sandbox = Sandbox.create(dir);
        NodeKeys windows = sandbox.addNode("win-1", SelfSigned.KeyType.RSA_2048, Sandbox.Pinning.CERTIFICATES);
        byte[] zip = "PK\u0003\u0004 dsc policies".getBytes(StandardCharsets.ISO_8859_1);
        Path file = sandbox.shareFile("win-1/rules/dsc/rudder.zip", zip);
        try (TestServer server = TestServer.start(sandbox)) {
            SslContextFactory.Client tls = new SslContextFactory.Client();
            tls.setSslContext(ClientTls.context(windows.certificatePath(), windows.keyPath(),
                    Set.of(sandbox.serverPin())));
            tls.setEndpointIdentificationAlgorithm(null);
            ClientConnector connector = new ClientConnector();
            connector.setSslContextFactory(tls);
            org.eclipse.jetty.client.HttpClient jetty = new org.eclipse.jetty.client.HttpClient(
                    new org.eclipse.jetty.client.transport.HttpClientTransportOverHTTP(connector));
            jetty.start();
            try {
                String url = server.uri() + "/policies/win-1/rules/dsc/rudder.zip";
                ContentResponse head = jetty.newRequest(url).method("HEAD").send();
                assertThat(head.getStatus()).isEqualTo(200);
                String etag = head.getHeaders().get("ETag");
                assertThat(etag).startsWith("\"");
                assertThat(head.getHeaders().get("Content-Length")).isEqualTo(String.valueOf(zip.length));

                ContentResponse unchanged = jetty.newRequest(url).headers(h -> h.put("If-None-Match", etag)).send();
                assertThat(unchanged.getStatus()).isEqualTo(304);
                assertThat(unchanged.getContent()).isEmpty();

                // Rudder regenerates the zip by writing a new file and renaming it over the old one.
                Path next = file.resolveSibling("rudder.zip.new");
                Files.write(next, "PK\u0003\u0004 new policies".getBytes(StandardCharsets.ISO_8859_1));
                Files.move(next, file, java.nio.file.StandardCopyOption.ATOMIC_MOVE,
                        java.nio.file.StandardCopyOption.REPLACE_EXISTING);
                ContentResponse changed = jetty.newRequest(url).headers(h -> h.put("If-None-Match", etag)).send();
                assertThat(changed.getStatus()).isEqualTo(200);
                assertThat(changed.getHeaders().get("ETag")).isNotEqualTo(etag);
                assertThat(changed.getContent()).isEqualTo(Files.readAllBytes(file));
            } finally {
                jetty.stop();
            }
        }
    }
}
