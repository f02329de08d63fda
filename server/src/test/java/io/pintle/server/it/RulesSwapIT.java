package io.pintle.server.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.pintle.client.PintleClient;
import io.pintle.server.testing.NodeKeys;
import io.pintle.server.testing.Sandbox;
import io.pintle.server.testing.TestServer;
import io.pintle.server.tls.SelfSigned;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.DigestOutputStream;
import java.security.MessageDigest;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Rudder publishes policies by writing {@code rules.new} and renaming it to {@code rules}. A download that started
 * before the swap must complete with the old bytes; the next request sees the new version.
 */
class RulesSwapIT {
    /** Far larger than loopback socket buffers, so the swap happens while the response is still streaming. */
    private static final int SIZE = 32 * 1024 * 1024;

    @Test
    void downloadInFlightDuringRulesRenameCompletesWithTheOldVersion(@TempDir Path dir) throws Exception {
        Sandbox sandbox = Sandbox.create(dir);
        NodeKeys node = sandbox.addNode("node-1", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        Path rules = sandbox.share().resolve("node-1/rules");
        Files.createDirectories(rules);
        MessageDigest expected = MessageDigest.getInstance("SHA-256");
        try (OutputStream out = new DigestOutputStream(Files.newOutputStream(rules.resolve("rudder.tar.bz2")), expected)) {
            byte[] block = new byte[1024 * 1024];
            Random random = new Random(7);
            for (int i = 0; i < SIZE / block.length; i++) {
                random.nextBytes(block);
                out.write(block);
            }
        }
        try (TestServer server = TestServer.start(sandbox)) {
            PintleClient client = server.client(node, HttpClient.Version.HTTP_1_1);
            HttpResponse<InputStream> response = client.httpClient().send(
                    PolicyServingIT.request(client, "/policies/node-1/rules/rudder.tar.bz2").build(),
                    HttpResponse.BodyHandlers.ofInputStream());
            assertThat(response.statusCode()).isEqualTo(200);
            String oldEtag = response.headers().firstValue("etag").orElseThrow();
            MessageDigest received = MessageDigest.getInstance("SHA-256");
            long total;
            try (InputStream body = response.body()) {
                byte[] start = body.readNBytes(64 * 1024);
                received.update(start);
                total = start.length;

                Path next = Files.createDirectories(rules.resolveSibling("rules.new"));
                Files.writeString(next.resolve("rudder.tar.bz2"), "generation 2");
                Path old = Files.move(rules, rules.resolveSibling("rules.old"));
                Files.move(next, rules);
                deleteTree(old);

                byte[] buffer = new byte[256 * 1024];
                int read;
                while ((read = body.read(buffer)) >= 0) {
                    received.update(buffer, 0, read);
                    total += read;
                }
            }
            assertThat(total).isEqualTo(SIZE);
            assertThat(HexFormat.of().formatHex(received.digest()))
                    .isEqualTo(HexFormat.of().formatHex(expected.digest()));

            HttpResponse<String> after = client.httpClient().send(
                    PolicyServingIT.request(client, "/policies/node-1/rules/rudder.tar.bz2").build(),
                    HttpResponse.BodyHandlers.ofString(StandardCharsets.US_ASCII));
            assertThat(after.body()).isEqualTo("generation 2");
            assertThat(after.headers().firstValue("etag")).isPresent().isNotEqualTo(java.util.Optional.of(oldEtag));
        }
    }

    private static void deleteTree(Path root) throws Exception {
        try (Stream<Path> walk = Files.walk(root)) {
            for (Path path : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(path);
            }
        }
    }
}
