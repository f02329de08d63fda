package io.pintle.server.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.pintle.client.PintleClient;
import io.pintle.server.testing.Await;
import io.pintle.server.testing.NodeKeys;
import io.pintle.server.testing.Sandbox;
import io.pintle.server.testing.TestServer;
import io.pintle.server.tls.SelfSigned;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.MessageDigest;
import java.security.PublicKey;
import java.security.Signature;
import java.time.Duration;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Stream;
import org.bouncycastle.asn1.x509.SubjectPublicKeyInfo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Node-to-node shared files over real TLS: a file signed by node A (with its agent key, in the test) for node B
 * is stored, found by HEAD, fetched by B and refused to everyone else; tampered, unsigned, oversized and
 * misaddressed uploads are refused with a reason and leave nothing on disk; a relay forwards what is not for its
 * nodes to its policy server.
 */
class SharedFilesIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String PREFIX = "/rudder/relay-api/shared-files/";

    @Test
    void aFileSharedByAForBIsFetchedByBOnly(@TempDir Path dir) throws Exception {
        Sandbox sandbox = Sandbox.create(dir);
        NodeKeys a = sandbox.addNode("node-a", SelfSigned.KeyType.RSA_2048, Sandbox.Pinning.BOTH);
        NodeKeys b = sandbox.addNode("node-b", SelfSigned.KeyType.RSA_2048, Sandbox.Pinning.BOTH);
        NodeKeys c = sandbox.addNode("node-c", SelfSigned.KeyType.RSA_2048, Sandbox.Pinning.CERTIFICATES);
        byte[] content = "secret for b\n".getBytes(StandardCharsets.UTF_8);
        try (TestServer server = TestServer.start(sandbox)) {
            PintleClient client = server.client(a);
            HttpResponse<String> put = put(client, PREFIX + "node-b/node-a/my.file?ttl=1d",
                    upload(a.keyPair(), content, "sha256"));
            assertThat(put.statusCode()).as(put.body()).isEqualTo(200);
            Path stored = dir.resolve("shared-files/node-b/files/node-a/my.file");
            assertThat(stored).hasBinaryContent(content);
            String metadata = Files.readString(stored.resolveSibling("my.file.metadata"));
            assertThat(metadata).startsWith("header=rudder-signature-v1\nalgorithm=sha256\n")
                    .containsPattern("\nexpires=\\d+\n$");

            String hash = hex("SHA-256", content);
            assertThat(head(client, PREFIX + "node-b/node-a/my.file?hash=" + hash)).isEqualTo(200);
            // relayd's own versioned path is not open on the TLS listener, as Apache does not proxy it.
            assertThat(head(client, "/rudder/relay-api/1/shared-files/node-b/node-a/my.file?hash=" + hash))
                    .isEqualTo(403);
            assertThat(head(client, PREFIX + "node-b/node-a/my.file?hash=" + "0".repeat(64))).isEqualTo(404);
            assertThat(head(client, PREFIX + "node-b/node-a/other?hash=" + hash)).isEqualTo(404);

            HttpResponse<byte[]> fetched = server.client(b).httpClient().send(PolicyServingIT.request(
                    server.client(b), PREFIX + "node-b/node-a/my.file").build(), HttpResponse.BodyHandlers.ofByteArray());
            assertThat(fetched.statusCode()).isEqualTo(200);
            assertThat(fetched.body()).isEqualTo(content);
            for (NodeKeys other : List.of(a, c)) {
                HttpResponse<String> refused = get(server.client(other), PREFIX + "node-b/node-a/my.file");
                assertThat(refused.statusCode()).isEqualTo(403);
                assertThat(JSON.readTree(refused.body()).path("reason").asText()).isEqualTo("uid-mismatch");
            }

            // sha512 signatures as well (the agent's algorithm is configurable).
            byte[] second = "second".getBytes(StandardCharsets.UTF_8);
            assertThat(put(client, PREFIX + "node-b/node-a/second?ttl=3%20hours", upload(a.keyPair(), second, "sha512"))
                    .statusCode()).isEqualTo(200);
            assertThat(head(client, PREFIX + "node-b/node-a/second?hash=" + hex("SHA-512", second))).isEqualTo(200);
        }
    }

    @Test
    void badUploadsAreRefusedCleanlyAndLeaveNothing(@TempDir Path dir) throws Exception {
        Sandbox sandbox = Sandbox.create(dir);
        NodeKeys a = sandbox.addNode("node-a", SelfSigned.KeyType.RSA_2048, Sandbox.Pinning.BOTH);
        NodeKeys c = sandbox.addNode("node-c", SelfSigned.KeyType.RSA_2048, Sandbox.Pinning.BOTH);
        sandbox.addNode("node-b", SelfSigned.KeyType.RSA_2048, Sandbox.Pinning.BOTH);
        byte[] content = "payload".getBytes(StandardCharsets.UTF_8);
        try (TestServer server = TestServer.start(sandbox, "[limits]\nmax_shared_file_bytes = 4096\n")) {
            PintleClient client = server.client(a);
            String url = PREFIX + "node-b/node-a/f?ttl=60";

            byte[] tampered = upload(a.keyPair(), content, "sha256");
            tampered[tampered.length - 1] ^= 1;
            assertProblem(put(client, url, tampered), 403, "bad-signature");
            // C's key (pinned for C, not for A) in metadata claiming to come from A.
            assertProblem(put(client, url, upload(c.keyPair(), content, "sha256")), 403, "key-mismatch");
            assertProblem(put(client, PREFIX + "node-b/node-zz/f?ttl=60", upload(a.keyPair(), content, "sha256")),
                    404, "unknown-source");
            assertProblem(put(client, url, "header=rudder-signature-v1\n\nbody".getBytes(StandardCharsets.UTF_8)),
                    400, "bad-metadata");
            assertProblem(put(client, url, "no metadata at all".getBytes(StandardCharsets.UTF_8)), 400, "bad-metadata");
            assertProblem(put(client, url, upload(a.keyPair(), new byte[5000], "sha256")), 413, "too-large");
            assertProblem(put(client, PREFIX + "node-b/node-a/f?ttl=forever", upload(a.keyPair(), content, "sha256")),
                    400, "bad-ttl");
            assertProblem(put(client, PREFIX + "node-b/node-a/f", upload(a.keyPair(), content, "sha256")), 400,
                    "bad-ttl");
            for (String id : List.of("..", ".", "a%20b", "%2e%2e", "a%2Fb", "a%00b")) {
                HttpResponse<String> bad = put(client, PREFIX + "node-b/node-a/" + id + "?ttl=60",
                        upload(a.keyPair(), content, "sha256"));
                assertThat(bad.statusCode()).as(id).isIn(400, 403, 404);
            }
            HttpResponse<String> chunked = client.httpClient().send(PolicyServingIT.request(client, url)
                    .PUT(HttpRequest.BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(content))).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertProblem(chunked, 411, "length-required");
            // The target is unknown here and this server (a root) has no policy server: refused, not stored.
            assertProblem(put(client, PREFIX + "node-q/node-a/f?ttl=60", upload(a.keyPair(), content, "sha256")), 404,
                    "unknown-target");

            try (Stream<Path> left = Files.walk(dir.resolve("shared-files")).filter(Files::isRegularFile)) {
                assertThat(left.toList()).isEmpty();
            }
            // A good upload still works after all that, and expires.
            assertThat(put(client, PREFIX + "node-b/node-a/f?ttl=1", upload(a.keyPair(), content, "sha256"))
                    .statusCode()).isEqualTo(200);
            Await.until(Duration.ofSeconds(10), "the upload with a 1 s ttl expired",
                    () -> head(client, PREFIX + "node-b/node-a/f?hash=" + hex("SHA-256", content)) == 404);
        }
    }

    /**
     * relayd's own tests ({@code tests/shared_files.rs}), case by case: {@code it_shares_files}' HEAD answers
     * (an invalid or empty hash is "not there", 404), {@code it_refuses_a_file_id_colliding_with_a_metadata_file},
     * {@code it_overrides_client_provided_expiration} and {@code it_rejects_invalid_ttl_values}.
     */
    @Test
    void relaydsSharedFilesCasesAnswerAsRelaydDoes(@TempDir Path dir) throws Exception {
        Sandbox sandbox = Sandbox.create(dir);
        NodeKeys a = sandbox.addNode("node-a", SelfSigned.KeyType.RSA_2048, Sandbox.Pinning.BOTH);
        sandbox.addNode("node-b", SelfSigned.KeyType.RSA_2048, Sandbox.Pinning.BOTH);
        byte[] content = "file2 content\n".getBytes(StandardCharsets.UTF_8);
        try (TestServer server = TestServer.start(sandbox)) {
            PintleClient client = server.client(a);
            assertThat(put(client, PREFIX + "node-b/node-a/file?ttl=1d", upload(a.keyPair(), content, "sha256"))
                    .statusCode()).isEqualTo(200);
            Path victim = dir.resolve("shared-files/node-b/files/node-a/file.metadata");
            String before = Files.readString(victim);

            String hash = hex("SHA-256", content);
            assertThat(head(client, PREFIX + "node-b/node-a/file?hash=" + hash)).isEqualTo(200);
            assertThat(head(client, PREFIX + "node-b/node-a/file?hash=" + hash.substring(0, 63) + "3")).isEqualTo(404);
            assertThat(head(client, PREFIX + "node-b/node-a/file?hash=0xcafecafecafe")).isEqualTo(404);
            assertThat(head(client, PREFIX + "node-b/node-a/file?hash=")).isEqualTo(404);

            // A file id naming another file's metadata: a client error, and the metadata is left untouched.
            for (String id : List.of("file.metadata", "file.METADATA")) {
                assertProblem(put(client, PREFIX + "node-b/node-a/" + id + "?ttl=1d",
                        upload(a.keyPair(), content, "sha256")), 400, "bad-id");
            }
            assertThat(Files.readString(victim)).isEqualTo(before);

            // An expires line sent by the client is replaced by the one the ttl gives, never duplicated.
            byte[] signed = upload(a.keyPair(), content, "sha256");
            String text = new String(signed, StandardCharsets.ISO_8859_1);
            int blank = text.indexOf("\n\n");
            byte[] withExpires = (text.substring(0, blank + 1) + "expires=1580941341\n" + text.substring(blank + 1))
                    .getBytes(StandardCharsets.ISO_8859_1);
            assertThat(put(client, PREFIX + "node-b/node-a/file3.properties?ttl=1d", withExpires).statusCode())
                    .isEqualTo(200);
            List<String> expires = Files.readAllLines(dir.resolve("shared-files/node-b/files/node-a/"
                    + "file3.properties.metadata")).stream().filter(line -> line.startsWith("expires=")).toList();
            assertThat(expires).singleElement().satisfies(line -> assertThat(
                    Long.parseLong(line.substring("expires=".length())) - java.time.Instant.now().getEpochSecond())
                    .isBetween(86_400L - 500, 86_400L + 500));
            assertThat(head(client, PREFIX + "node-b/node-a/file3.properties?hash=" + hash)).isEqualTo(200);

            for (String ttl : List.of("18446744073709551615", "not-a-duration")) {
                assertProblem(put(client, PREFIX + "node-b/node-a/file2?ttl=" + ttl,
                        upload(a.keyPair(), content, "sha256")), 400, "bad-ttl");
            }
        }
    }

    @Test
    void aRelayForwardsFilesForNodesElsewhereToItsPolicyServer(@TempDir Path dir) throws Exception {
        Sandbox root = Sandbox.create(dir.resolve("root"));
        NodeKeys a = root.addNode("node-a", SelfSigned.KeyType.RSA_2048, Sandbox.Pinning.BOTH);
        root.addNode("node-b", SelfSigned.KeyType.RSA_2048, Sandbox.Pinning.BOTH);
        Sandbox relay = Sandbox.create(dir.resolve("relay"));
        // The relay knows node-a (below it) but not node-b (elsewhere under root).
        relay.register("node-a", a.certificate(), Sandbox.Pinning.BOTH);
        byte[] content = "for b, via the relay".getBytes(StandardCharsets.UTF_8);
        try (TestServer rootServer = TestServer.start(root)) {
            try (TestServer relayServer = TestServer.start(relay, "[upstream]\nurl = \"" + rootServer.uri()
                    + "\"\nkey_hash = \"" + root.serverPin() + "\"\n")) {
                PintleClient client = relayServer.client(a);
                HttpResponse<String> put = put(client, PREFIX + "node-b/node-a/via-relay?ttl=60",
                        upload(a.keyPair(), content, "sha256"));
                assertThat(put.statusCode()).as(put.body()).isEqualTo(200);
                assertThat(dir.resolve("root/shared-files/node-b/files/node-a/via-relay")).hasBinaryContent(content);
                assertThat(dir.resolve("relay/shared-files/node-b")).doesNotExist();
                assertThat(head(client, PREFIX + "node-b/node-a/via-relay?hash=" + hex("SHA-256", content)))
                        .isEqualTo(200);
            }
        }
    }

    /** The body an agent sends: relayd's metadata lines signed with the sender's key, an empty line, the file. */
    static byte[] upload(KeyPair sender, byte[] content, String algorithm) throws Exception {
        String jca = algorithm.equals("sha256") ? "SHA-256" : "SHA-512";
        Signature signer = Signature.getInstance(algorithm.equals("sha256") ? "SHA256withRSA" : "SHA512withRSA");
        signer.initSign(sender.getPrivate());
        signer.update(content);
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        body.writeBytes(String.join("\n",
                "header=rudder-signature-v1",
                "algorithm=" + algorithm,
                "digest=" + HexFormat.of().formatHex(signer.sign()),
                "hash_value=" + hex(jca, content),
                "short_pubkey=" + pkcs1(sender.getPublic()),
                "hostname=agent.example.org",
                "keydate=2026-12-02 15:00:00",
                "keyid=B29D02BB",
                "",
                "").getBytes(StandardCharsets.UTF_8));
        body.writeBytes(content);
        return body.toByteArray();
    }

    private static String pkcs1(PublicKey key) throws Exception {
        return Base64.getEncoder().encodeToString(
                SubjectPublicKeyInfo.getInstance(key.getEncoded()).parsePublicKey().getEncoded());
    }

    private static HttpResponse<String> put(PintleClient client, String path, byte[] body) throws Exception {
        return client.httpClient().send(PolicyServingIT.request(client, path)
                .PUT(HttpRequest.BodyPublishers.ofByteArray(body)).build(), HttpResponse.BodyHandlers.ofString());
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

    private static void assertProblem(HttpResponse<String> response, int status, String reason) throws Exception {
        assertThat(response.statusCode()).as(response.body()).isEqualTo(status);
        assertThat(response.headers().firstValue("content-type")).hasValue("application/problem+json");
        assertThat(JSON.readTree(response.body()).path("reason").asText()).isEqualTo(reason);
    }

    private static String hex(String algorithm, byte[] content) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance(algorithm).digest(content));
    }
}
