package io.pintle.server.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.pintle.api.dto.Manifest;
import io.pintle.client.PintleClient;
import io.pintle.server.testing.Await;
import io.pintle.server.testing.NodeKeys;
import io.pintle.server.testing.Sandbox;
import io.pintle.server.testing.TestServer;
import io.pintle.server.tls.SelfSigned;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * relayd's shared folder over Pintle's TLS listener: GET, HEAD with {@code hash}/{@code hash_type} (304 same,
 * 200 differs or no hash, 404 absent, 400 malformed), Apache's unversioned prefix, Apache's access rule, and the
 * recursive views.
 */
class SharedFolderIT {
    private static final ObjectMapper JSON = new ObjectMapper();

    /**
     * HEAD queries (below {@code /rudder/relay-api/shared-folder/}) and relayd's answers: relayd's own test,
     * {@code tests/shared_folder.rs} {@code it_shares_folder}, case by case, plus what its
     * {@code SharedFolderParams::hash} and {@code Hash::new} decide for the cases it does not list: no hash or an
     * empty one is "no hash" (200 when the file exists, {@code hash_type} unread); an absent file is 404 whatever
     * the query; a hash that is not the hexadecimal digest of its type, or a type that is empty or unknown, is 400.
     */
    private static final String RELAYD_HEAD_CASES = """
            tools/script.sh?hash_type=sha256&hash=SHA256         | 304
            tools/script.sh?hash=SHA256                          | 304
            tools/script.sh?hash=SHA256_UPPER&hash_type=sha256   | 304
            tools/script.sh?hash=SHA512&hash_type=sha512         | 304
            file%20with%20space?hash_type=sha256&hash=SHA256     | 304
            tools/script.sh?hash_type=sha256&hash=OTHER256       | 200
            tools/script.sh?hash_type=sha256&hash=test           | 400
            tools/script.sh?hash_type=sha256&hash=00             | 400
            tools/script.sh?hash_type=sha512&hash=SHA256         | 400
            tools/script.sh?hash_type=wrong-hash-type&hash=SHA256 | 400
            tools/script.sh?hash_type=&hash=SHA256               | 400
            tools/script.sh?hash_type=sha256&hash=               | 200
            tools/script.sh?hash=                                | 200
            tools/script.sh?hash_type=&hash=                     | 200
            tools/script.sh?hash_type=md5&hash=                  | 200
            tools/script.sh?hash_type=md5                        | 200
            tools/script.sh                                      | 200
            wrong-node/script.sh?hash_type=sha256&hash=SHA256    | 404
            tools/absent.sh?hash_type=sha256&hash=               | 404
            tools/absent.sh?hash_type=wrong-hash-type&hash=test  | 404
            """;

    @Test
    void headWithHashAnswersAsRelaydDoes(@TempDir Path dir) throws Exception {
        Sandbox sandbox = Sandbox.create(dir);
        NodeKeys node = sandbox.addNode("node-1", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        byte[] content = "123\n".getBytes(StandardCharsets.UTF_8);
        Files.createDirectories(dir.resolve("shared-folder/tools"));
        Files.write(dir.resolve("shared-folder/tools/script.sh"), content);
        Files.write(dir.resolve("shared-folder/file with space"), content);
        try (TestServer server = TestServer.start(sandbox)) {
            PintleClient client = server.client(node);
            for (String line : RELAYD_HEAD_CASES.strip().split("\n")) {
                String[] row = line.split("\\|");
                String query = row[0].strip();
                String path = query.replace("SHA256_UPPER", hex("SHA-256", content).toUpperCase(java.util.Locale.ROOT))
                        .replace("SHA256", hex("SHA-256", content)).replace("SHA512", hex("SHA-512", content))
                        .replace("OTHER256", hex("SHA-256", "other".getBytes(StandardCharsets.UTF_8)));
                assertThat(head(client, "/rudder/relay-api/shared-folder/" + path)).as(query)
                        .isEqualTo(Integer.parseInt(row[1].strip()));
            }
        }
    }

    @Test
    void aChangedFileNoLongerMatchesTheOldHashAndGetServesIt(@TempDir Path dir) throws Exception {
        Sandbox sandbox = Sandbox.create(dir);
        NodeKeys node = sandbox.addNode("node-1", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        byte[] content = "shared content\n".getBytes(StandardCharsets.UTF_8);
        Files.createDirectories(dir.resolve("shared-folder/tools"));
        Files.write(dir.resolve("shared-folder/tools/script.sh"), content);
        String sha256 = hex("SHA-256", content);
        try (TestServer server = TestServer.start(sandbox)) {
            PintleClient client = server.client(node);
            String file = "/rudder/relay-api/shared-folder/tools/script.sh";
            HttpResponse<byte[]> get = client.httpClient().send(PolicyServingIT.request(client, file).build(),
                    HttpResponse.BodyHandlers.ofByteArray());
            assertThat(get.statusCode()).isEqualTo(200);
            assertThat(get.body()).isEqualTo(content);
            assertThat(get.headers().firstValue("etag")).isPresent();
            assertThat(head(client, file + "?hash=" + sha256)).isEqualTo(304);
            TreeViewsIT.replace(dir.resolve("shared-folder/tools/script.sh"), "version 2\n");
            assertThat(head(client, file + "?hash=" + sha256)).isEqualTo(200);
            assertThat(head(client, file + "?hash=" + hex("SHA-256", "version 2\n".getBytes(StandardCharsets.UTF_8))))
                    .isEqualTo(304);
        }
    }

    @Test
    void onlyKnownNodesInAllowedNetworksAndNothingOutsideTheFolder(@TempDir Path dir) throws Exception {
        Sandbox sandbox = Sandbox.create(dir);
        NodeKeys node = sandbox.addNode("node-1", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        NodeKeys stranger = sandbox.unregisteredIdentity("stranger", "node-9");
        Files.createDirectories(dir.resolve("shared-folder"));
        Files.writeString(dir.resolve("shared-folder/file"), "x");
        sandbox.shareFile("node-1/rules/secret", "policies".getBytes(StandardCharsets.UTF_8));
        try (TestServer server = TestServer.start(sandbox)) {
            String file = "/rudder/relay-api/shared-folder/file";
            assertThat(get(server.client(node), file).statusCode()).isEqualTo(200);
            HttpResponse<String> unknown = get(server.client(stranger), file);
            assertThat(unknown.statusCode()).isEqualTo(403);
            assertThat(unknown.headers().firstValue("content-type")).hasValue("application/problem+json");
            for (String escape : List.of("../share/node-1/rules/secret", "..%2fshare/node-1/rules/secret",
                    "%2e%2e/share/node-1/rules/secret")) {
                assertThat(get(server.client(node), "/rudder/relay-api/shared-folder/" + escape).statusCode())
                        .as(escape).isIn(403, 404);
            }
            sandbox.networks("Require ip 10.0.0.0/8\n");
            server.admin("POST", "/rudder/relay-api/1/system/reload");
            HttpResponse<String> outside = get(server.client(node), file);
            assertThat(outside.statusCode()).isEqualTo(403);
            assertThat(outside.body()).contains("network-not-allowed");
        }
    }

    @Test
    void recursiveCopyThroughManifestArchiveAndWait(@TempDir Path dir) throws Exception {
        Sandbox sandbox = Sandbox.create(dir);
        NodeKeys node = sandbox.addNode("node-1", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        Path folder = Files.createDirectories(dir.resolve("shared-folder/app/conf"));
        Files.writeString(folder.resolve("a.conf"), "a");
        Files.writeString(folder.resolveSibling("run.sh"), "#!/bin/sh\n");
        try (TestServer server = TestServer.start(sandbox)) {
            PintleClient client = server.client(node);
            HttpResponse<String> manifest = get(client, "/rudder/relay-api/shared-folder/app/?view=manifest");
            assertThat(manifest.statusCode()).isEqualTo(200);
            Manifest parsed = JSON.readValue(manifest.body(), Manifest.class);
            assertThat(parsed.entries()).extracting(Manifest.Entry::path)
                    .containsExactly("conf", "conf/a.conf", "run.sh");
            HttpResponse<byte[]> archive = client.httpClient().send(PolicyServingIT.request(client,
                    "/rudder/relay-api/shared-folder/app/?view=archive").build(), HttpResponse.BodyHandlers.ofByteArray());
            assertThat(archive.statusCode()).isEqualTo(200);
            assertThat(archive.headers().firstValue("etag")).hasValue(parsed.etag());

            CompletableFuture<HttpResponse<String>> waiting = client.httpClient().sendAsync(
                    PolicyServingIT.request(client, "/rudder/relay-api/shared-folder/app/?view=manifest&wait=30")
                            .timeout(Duration.ofSeconds(60)).header("If-None-Match", parsed.etag()).build(),
                    HttpResponse.BodyHandlers.ofString());
            Await.asserted(Duration.ofSeconds(10),
                    () -> assertThat(server.metric("pintle_change_waiters")).as("parked").isEqualTo(1.0));
            assertThat(waiting).isNotDone();
            Files.writeString(folder.resolve("b.conf"), "b");
            HttpResponse<String> changed = waiting.get(10, TimeUnit.SECONDS);
            assertThat(changed.statusCode()).isEqualTo(200);
            assertThat(JSON.readValue(changed.body(), Manifest.class).entries()).extracting(Manifest.Entry::path)
                    .contains("conf/b.conf");
        }
    }

    @Test
    void curlHeadWithHashAsDownloadSharedFileDoes(@TempDir Path dir) throws Exception {
        assumeTrue(CurlIT.available("curl"), "curl is not installed");
        Sandbox sandbox = Sandbox.create(dir);
        NodeKeys node = sandbox.addNode("node-1", SelfSigned.KeyType.RSA_2048, Sandbox.Pinning.BOTH);
        byte[] content = "from the shared folder\n".getBytes(StandardCharsets.UTF_8);
        Files.createDirectories(dir.resolve("shared-folder"));
        Files.write(dir.resolve("shared-folder/file.txt"), content);
        try (TestServer server = TestServer.start(sandbox)) {
            List<String> flags = List.of("-sS", "--tlsv1.3", "--pinnedpubkey", sandbox.serverPin(), "--insecure",
                    "--cert", node.certificatePath().toString(), "--key", node.keyPath().toString(), "-o",
                    "/dev/null", "-w", "%{http_code}", "-I");
            String url = server.uri() + "/rudder/relay-api/shared-folder/file.txt?hash_type=sha256&hash=";
            assertThat(CurlIT.curl(flags, url + hex("SHA-256", content)).stdout()).isEqualTo("304");
            assertThat(CurlIT.curl(flags, url + hex("SHA-256", new byte[0])).stdout()).isEqualTo("200");
            // Without a local copy: an empty hash, "the file exists" (then the GET).
            assertThat(CurlIT.curl(flags, url).stdout()).isEqualTo("200");
        }
    }

    private static int head(PintleClient client, String path) throws Exception {
        return client.httpClient().send(PolicyServingIT.request(client, path)
                .method("HEAD", HttpRequest.BodyPublishers.noBody()).build(),
                HttpResponse.BodyHandlers.discarding()).statusCode();
    }

    private static HttpResponse<String> get(PintleClient client, String path) throws Exception {
        return client.httpClient().send(PolicyServingIT.request(client, path).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static String hex(String algorithm, byte[] content) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance(algorithm).digest(content));
    }
}
