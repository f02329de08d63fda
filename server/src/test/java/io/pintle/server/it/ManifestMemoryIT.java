package io.pintle.server.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.pintle.client.PintleClient;
import io.pintle.server.testing.Sandbox;
import io.pintle.server.testing.ServerProcess;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 18, manifest memory: eight concurrent anonymous {@code ?view=manifest} of a large tree against the shaded
 * jar in a child JVM with the systemd unit's options ({@code deploy/systemd/pintle.service}). A manifest used to
 * be built whole in memory (every entry as objects, then the JSON as one array, copied): at the unit's 384 MiB,
 * eight manifests of a 100,000-file tree at once ran out of memory ({@code OutOfMemoryError}; requests cut or never
 * answered). Each must now get its 200 with the whole manifest, and nothing may run out of memory.
 *
 * <p>What the old way needed grew with the tree, so the same pressure comes from a smaller tree in a smaller heap:
 * 10,000 files at {@code -Xmx64m} by default (the old way: seven 500s and a request never answered), which keeps
 * this test well under a minute on a loaded two-core machine, where creating and hashing 100,000 files alone can
 * take a minute. The fixed part of the heap (Jetty, TLS, the snapshot) does not shrink with the tree, so the
 * scaled run is the harsher one. The unit's own figures: {@code -Dpintle.manifest.directories=100
 * -Dpintle.manifest.heap=384m}.
 */
class ManifestMemoryIT {
    private static final String HEAP = System.getProperty("pintle.manifest.heap", "64m");
    /** The unit's {@code PINTLE_JAVA_OPTS}, with {@code -Xmx} scaled as the tree is. */
    private static final List<String> UNIT_JVM_OPTIONS = List.of("-Xms64m", "-Xmx" + HEAP, "-XX:MaxGCPauseMillis=20");
    private static final int DIRECTORIES = Integer.getInteger("pintle.manifest.directories", 10);
    private static final int FILES_PER_DIRECTORY = 1000;
    private static final int CONCURRENT = 8;

    @Test
    void eightConcurrentManifestsOfALargeTreeFitTheHeap(@TempDir Path dir) throws Exception {
        Sandbox sandbox = Sandbox.create(dir);
        Path tree = sandbox.share().resolve("common/big");
        byte[] content = "bundle agent x {}\n".getBytes(StandardCharsets.US_ASCII);
        for (int d = 0; d < DIRECTORIES; d++) {
            Path directory = Files.createDirectories(tree.resolve(String.format("techniques/directory-%03d", d)));
            for (int f = 0; f < FILES_PER_DIRECTORY; f++) {
                Files.write(directory.resolve(String.format("policy-file-%05d.cf", f)), content);
            }
        }
        Path config = sandbox.config("");
        Path log = dir.resolve("server.log");
        List<String> command = new ArrayList<>();
        command.add(ProcessHandle.current().info().command().orElse("java"));
        command.addAll(UNIT_JVM_OPTIONS);
        command.addAll(List.of("-jar", ServerProcess.jar(), "serve", "--config", config.toString()));
        Process server = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            URI uri = URI.create(ServerProcess.awaitServing(log, server));
            long rssBefore = rssKib(server);
            // No client certificate: /common/ is open to the allowed networks.
            PintleClient anonymous = PintleClient.builder(uri).pin(sandbox.serverPin()).build();
            List<CompletableFuture<Fetched>> fetches = new ArrayList<>();
            List<Fetched> results = new ArrayList<>();
            // A thread each: the common pool has a single thread on a two-core machine.
            ExecutorService clients = Executors.newFixedThreadPool(CONCURRENT);
            try {
                for (int i = 0; i < CONCURRENT; i++) {
                    // A connection each, as separate agents or relays.
                    PintleClient client = i == 0 ? anonymous : PintleClient.builder(uri).pin(sandbox.serverPin())
                            .build();
                    fetches.add(CompletableFuture.supplyAsync(() -> fetch(client, "/common/big/?view=manifest"),
                            clients));
                }
                for (CompletableFuture<Fetched> fetch : fetches) {
                    results.add(fetch.get(55, TimeUnit.SECONDS));
                }
            } finally {
                clients.shutdownNow();
            }
            long rssAfter = rssKib(server);
            System.out.printf("manifest memory: %d concurrent manifests of %d files, %s: RSS %d MiB -> %d MiB%n",
                    CONCURRENT, DIRECTORIES * FILES_PER_DIRECTORY, UNIT_JVM_OPTIONS, rssBefore / 1024,
                    rssAfter / 1024);

            assertThat(Files.readString(log)).doesNotContain("OutOfMemoryError");
            assertThat(results).allSatisfy(result -> {
                assertThat(result.status()).as(result.toString()).isEqualTo(200);
                assertThat(result.files()).isEqualTo(DIRECTORIES * FILES_PER_DIRECTORY);
                assertThat(result.entries()).isEqualTo(DIRECTORIES * FILES_PER_DIRECTORY + DIRECTORIES + 1);
                assertThat(result.bodyEtag()).isEqualTo(result.headerEtag());
            });
            assertThat(results).extracting(Fetched::sha256).containsOnly(results.get(0).sha256());
            assertThat(server.isAlive()).isTrue();
        } finally {
            server.destroy();
            assertThat(server.waitFor(30, TimeUnit.SECONDS)).isTrue();
        }
    }

    /**
     * What one manifest request brought, read as it streams (the test's own heap holds no manifest).
     *
     * @param status the status
     * @param headerEtag the {@code ETag} header
     * @param bodyEtag the manifest's {@code etag} field
     * @param files its {@code files} field
     * @param entries how many entries it lists
     * @param sha256 the body's digest
     */
    record Fetched(int status, String headerEtag, String bodyEtag, long files, long entries, String sha256) {}

    private static Fetched fetch(PintleClient client, String path) {
        try {
            HttpResponse<InputStream> response = client.httpClient().send(
                    PolicyServingIT.request(client, path).timeout(Duration.ofSeconds(50)).GET().build(),
                    HttpResponse.BodyHandlers.ofInputStream());
            MessageDigest sha256 = MessageDigest.getInstance("SHA-256");
            String bodyEtag = null;
            long files = -1;
            long entries = 0;
            try (InputStream body = new java.security.DigestInputStream(response.body(), sha256);
                    JsonParser parser = new JsonFactory().createParser(body)) {
                if (response.statusCode() != 200) {
                    return new Fetched(response.statusCode(), null, new String(body.readAllBytes(),
                            StandardCharsets.UTF_8), -1, -1, "");
                }
                int depth = 0;
                for (JsonToken token; (token = parser.nextToken()) != null; ) {
                    if (token == JsonToken.START_OBJECT || token == JsonToken.START_ARRAY) {
                        depth++;
                        if (depth == 3 && token == JsonToken.START_OBJECT) {
                            entries++;
                        }
                    } else if (token == JsonToken.END_OBJECT || token == JsonToken.END_ARRAY) {
                        depth--;
                    } else if (depth == 1 && token == JsonToken.FIELD_NAME) {
                        String name = parser.currentName();
                        parser.nextToken();
                        if (name.equals("etag")) {
                            bodyEtag = parser.getText();
                        } else if (name.equals("files")) {
                            files = parser.getLongValue();
                        } else if (parser.currentToken() == JsonToken.START_ARRAY) {
                            depth++;
                        }
                    }
                }
            }
            return new Fetched(response.statusCode(), response.headers().firstValue("etag").orElse(null), bodyEtag,
                    files, entries, HexFormat.of().formatHex(sha256.digest()));
        } catch (IOException | InterruptedException | java.security.GeneralSecurityException e) {
            // A cut response (the server ran out of memory mid-body) is a failure of this test, shown as such.
            return new Fetched(-1, null, e.toString(), -1, -1, "");
        }
    }

    /** @return the resident set size of a process, in KiB, from /proc */
    private static long rssKib(Process process) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/" + process.pid() + "/status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", ""));
            }
        }
        return -1;
    }
}
