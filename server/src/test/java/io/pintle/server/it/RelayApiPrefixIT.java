package io.pintle.server.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.pintle.client.PintleClient;
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
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * relayd's API on each listener, as Rudder serves it: on 443 Apache proxies only the unversioned
 * {@code /rudder/relay-api/} to relayd and its {@code <Location /rudder/relay-api/> Require all denied} refuses the
 * rest (relayd's own {@code /rudder/relay-api/1/...}, {@code system/}) with 403; relayd's port (Pintle's admin
 * listener) answers the versioned paths.
 */
class RelayApiPrefixIT {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void theVersionedPrefixAndSystemAreRefusedOnTheTlsListenerAndServedOnTheAdminOne(@TempDir Path dir)
            throws Exception {
        Sandbox sandbox = Sandbox.create(dir);
        NodeKeys a = sandbox.addNode("node-a", SelfSigned.KeyType.RSA_2048, Sandbox.Pinning.BOTH);
        sandbox.addNode("node-b", SelfSigned.KeyType.RSA_2048, Sandbox.Pinning.BOTH);
        Files.createDirectories(dir.resolve("shared-folder"));
        Files.writeString(dir.resolve("shared-folder/file"), "x");
        try (TestServer server = TestServer.start(sandbox)) {
            PintleClient client = server.client(a);
            byte[] upload = SharedFilesIT.upload(a.keyPair(), "payload".getBytes(StandardCharsets.UTF_8), "sha256");
            record Call(String method, String path, HttpRequest.BodyPublisher body) {}
            List<Call> refused = List.of(
                    new Call("GET", "/rudder/relay-api/1/shared-folder/file", HttpRequest.BodyPublishers.noBody()),
                    new Call("HEAD", "/rudder/relay-api/1/shared-folder/file?hash=", HttpRequest.BodyPublishers.noBody()),
                    new Call("PUT", "/rudder/relay-api/1/shared-files/node-b/node-a/f?ttl=60",
                            HttpRequest.BodyPublishers.ofByteArray(upload)),
                    new Call("HEAD", "/rudder/relay-api/1/shared-files/node-b/node-a/f?hash=00",
                            HttpRequest.BodyPublishers.noBody()),
                    new Call("POST", "/rudder/relay-api/1/remote-run/all", HttpRequest.BodyPublishers.noBody()),
                    new Call("GET", "/rudder/relay-api/1/system/status", HttpRequest.BodyPublishers.noBody()),
                    new Call("POST", "/rudder/relay-api/1/system/reload", HttpRequest.BodyPublishers.noBody()),
                    new Call("GET", "/rudder/relay-api/system/info", HttpRequest.BodyPublishers.noBody()),
                    new Call("POST", "/rudder/relay-api/system/reload", HttpRequest.BodyPublishers.noBody()),
                    new Call("GET", "/rudder/relay-api/no-such-family/x", HttpRequest.BodyPublishers.noBody()));
            for (Call call : refused) {
                HttpResponse<String> response = client.httpClient().send(PolicyServingIT.request(client, call.path())
                        .method(call.method(), call.body()).build(), HttpResponse.BodyHandlers.ofString());
                assertThat(response.statusCode()).as(call.method() + " " + call.path()).isEqualTo(403);
                if (!call.method().equals("HEAD")) {
                    assertThat(response.headers().firstValue("content-type")).hasValue("application/problem+json");
                    JsonNode problem = JSON.readTree(response.body());
                    assertThat(problem.path("reason").asText()).isEqualTo("relay-api-denied");
                    assertThat(problem.path("detail").asText()).contains("/rudder/relay-api/");
                }
            }
            Path sharedFiles = Files.createDirectories(dir.resolve("shared-files"));
            try (Stream<Path> stored = Files.walk(sharedFiles).filter(Files::isRegularFile)) {
                assertThat(stored.toList()).isEmpty();
            }
            // The same families under Apache's path are served.
            HttpResponse<String> file = client.httpClient().send(PolicyServingIT.request(client,
                    "/rudder/relay-api/shared-folder/file").build(), HttpResponse.BodyHandlers.ofString());
            assertThat(file.statusCode()).isEqualTo(200);
            assertThat(file.body()).isEqualTo("x");
            assertThat(client.httpClient().send(PolicyServingIT.request(client,
                    "/rudder/relay-api/shared-files/node-b/node-a/f?ttl=60").PUT(HttpRequest.BodyPublishers
                    .ofByteArray(upload)).build(), HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(200);

            // relayd's port: its own versioned paths, and the unversioned ones Rudder's hook posts there.
            for (String path : List.of("/rudder/relay-api/1/system/status", "/rudder/relay-api/system/status")) {
                TestServer.AdminResponse status = server.admin("GET", path);
                assertThat(status.status()).as(path).isEqualTo(200);
                assertThat(status.body().path("action").asText()).isEqualTo("getStatus");
            }
            HttpResponse<String> adminShared = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                    server.server().adminUri().resolve("/rudder/relay-api/1/shared-folder/file"))
                    .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(adminShared.statusCode()).as("node routes are not on the admin listener").isEqualTo(404);
        }
    }

    @Test
    void anAgentsCurlOnTheVersionedPrefixGets403(@TempDir Path dir) throws Exception {
        assumeTrue(CurlIT.available("curl"), "curl is not installed");
        Sandbox sandbox = Sandbox.create(dir);
        NodeKeys node = sandbox.addNode("node-1", SelfSigned.KeyType.RSA_2048, Sandbox.Pinning.BOTH);
        Files.createDirectories(dir.resolve("shared-folder"));
        Files.writeString(dir.resolve("shared-folder/file.txt"), "x");
        try (TestServer server = TestServer.start(sandbox)) {
            List<String> flags = List.of("-sS", "--tlsv1.3", "--location", "--connect-timeout", "10", "--noproxy",
                    "*", "--pinnedpubkey", sandbox.serverPin(), "--insecure", "--cert",
                    node.certificatePath().toString(), "--key", node.keyPath().toString(), "-o", "/dev/null", "-w",
                    "%{http_code}");
            assertThat(CurlIT.curl(flags, server.uri() + "/rudder/relay-api/1/shared-folder/file.txt").stdout())
                    .isEqualTo("403");
            assertThat(CurlIT.curl(flags, server.uri() + "/rudder/relay-api/shared-folder/file.txt").stdout())
                    .isEqualTo("200");
        }
    }
}
