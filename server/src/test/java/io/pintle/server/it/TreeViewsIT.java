package io.pintle.server.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.pintle.api.dto.Manifest;
import io.pintle.client.PintleClient;
import io.pintle.server.testing.Await;
import io.pintle.server.testing.NodeKeys;
import io.pintle.server.testing.Sandbox;
import io.pintle.server.testing.TestServer;
import io.pintle.server.tls.SelfSigned;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.apache.commons.compress.compressors.gzip.GzipCompressorInputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Directory views ({@code ?view=manifest}, {@code ?view=archive}) and change waits ({@code ?wait}) over real TLS:
 * the manifest is checked against the files on disk (digests computed here, independently), the archive against
 * the tree, and an archive whose tree changes while it streams must fail rather than mix versions.
 */
class TreeViewsIT {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void manifestDescribesTheTreeOnDisk(@TempDir Path dir) throws Exception {
        Sandbox sandbox = Sandbox.create(dir);
        NodeKeys node = sandbox.addNode("node-1", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        Path rules = rudderTree(sandbox, "node-1", 40);
        Files.createSymbolicLink(rules.resolve("cfengine-community/certs/policy-server.pem"), Path.of("root.pem"));
        Files.createSymbolicLink(rules.resolve("escape"), Path.of("../../../lib/nodeslist.json"));
        Files.setPosixFilePermissions(rules.resolve("cfengine-community/promises.cf"),
                PosixFilePermissions.fromString("rw-------"));
        try (TestServer server = TestServer.start(sandbox)) {
            PintleClient client = server.client(node);
            HttpResponse<String> response = get(client, "/policies/node-1/rules/?view=manifest", null);
            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(response.headers().firstValue("content-type")).hasValueSatisfying(
                    type -> assertThat(type).startsWith("application/json"));
            Manifest manifest = JSON.readValue(response.body(), Manifest.class);
            assertThat(response.headers().firstValue("etag")).hasValue(manifest.etag());
            assertThat(manifest.format()).isEqualTo(Manifest.FORMAT);

            Map<String, Manifest.Entry> byPath = new TreeMap<>();
            manifest.entries().forEach(entry -> byPath.put(entry.path(), entry));
            assertThat(manifest.entries()).extracting(Manifest.Entry::path).isSorted();
            Map<String, String> expected = onDisk(rules);
            assertThat(byPath.keySet()).isEqualTo(expected.keySet());
            long bytes = 0;
            for (Map.Entry<String, String> file : expected.entrySet()) {
                Manifest.Entry entry = byPath.get(file.getKey());
                Path local = rules.resolve(file.getKey());
                if (Files.isSymbolicLink(local)) {
                    assertThat(entry.type()).isEqualTo("symlink");
                    assertThat(entry.target()).isEqualTo(Files.readSymbolicLink(local).toString());
                } else if (Files.isDirectory(local)) {
                    assertThat(entry.type()).isEqualTo("directory");
                } else {
                    assertThat(entry.type()).isEqualTo("file");
                    assertThat(entry.sha256()).as(file.getKey()).isEqualTo(file.getValue());
                    assertThat(entry.size()).isEqualTo(Files.size(local));
                    assertThat(entry.mtime()).isEqualTo(Files.getLastModifiedTime(local).toInstant().toString());
                    bytes += entry.size();
                }
            }
            assertThat(byPath.get("cfengine-community/promises.cf").mode()).isEqualTo("0600");
            assertThat(byPath).doesNotContainKey("escape");
            assertThat(manifest.bytes()).isEqualTo(bytes);
            assertThat(manifest.files()).isEqualTo(40);

            // The same version again: 304. Without trailing slash: the same manifest.
            assertThat(get(client, "/policies/node-1/rules/?view=manifest", manifest.etag()).statusCode())
                    .isEqualTo(304);
            assertThat(JSON.readValue(get(client, "/policies/node-1/rules?view=manifest", null).body(),
                    Manifest.class)).isEqualTo(manifest);

            // One byte changes in one file: a new ETag, and only that entry differs.
            replace(rules.resolve("cfengine-community/file-7.cf"), "changed\n");
            Manifest next = JSON.readValue(get(client, "/policies/node-1/rules/?view=manifest", manifest.etag()).body(),
                    Manifest.class);
            assertThat(next.etag()).isNotEqualTo(manifest.etag());
            List<Manifest.Entry> changed = new ArrayList<>(next.entries());
            changed.removeAll(manifest.entries());
            // The file, and its directory (a rename into it changes the directory's modification time).
            assertThat(changed).extracting(Manifest.Entry::path)
                    .containsExactlyInAnyOrder("cfengine-community", "cfengine-community/file-7.cf");
        }
    }

    @Test
    void archiveRoundTripsTheTree(@TempDir Path dir) throws Exception {
        Sandbox sandbox = Sandbox.create(dir);
        NodeKeys node = sandbox.addNode("node-1", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        Path rules = rudderTree(sandbox, "node-1", 25);
        Files.createSymbolicLink(rules.resolve("cfengine-community/certs/policy-server.pem"), Path.of("root.pem"));
        Files.setPosixFilePermissions(rules.resolve("cfengine-community/file-3.cf"),
                PosixFilePermissions.fromString("rwxr-x---"));
        try (TestServer server = TestServer.start(sandbox)) {
            PintleClient client = server.client(node);
            String manifestEtag = get(client, "/policies/node-1/rules/?view=manifest", null)
                    .headers().firstValue("etag").orElseThrow();
            HttpResponse<byte[]> archive = client.httpClient().send(
                    PolicyServingIT.request(client, "/policies/node-1/rules/?view=archive").build(),
                    HttpResponse.BodyHandlers.ofByteArray());
            assertThat(archive.statusCode()).isEqualTo(200);
            assertThat(archive.headers().firstValue("content-type")).hasValue("application/gzip");
            assertThat(archive.headers().firstValue("etag")).hasValue(manifestEtag);

            Map<String, String> fromArchive = new TreeMap<>();
            try (TarArchiveInputStream tar = new TarArchiveInputStream(
                    new GzipCompressorInputStream(new ByteArrayInputStream(archive.body())))) {
                TarArchiveEntry entry;
                while ((entry = tar.getNextEntry()) != null) {
                    String name = entry.getName().replaceAll("/$", "");
                    Path local = rules.resolve(name);
                    if (entry.isSymbolicLink()) {
                        fromArchive.put(name, "link:" + entry.getLinkName());
                        assertThat(entry.getLinkName()).isEqualTo(Files.readSymbolicLink(local).toString());
                    } else if (entry.isDirectory()) {
                        fromArchive.put(name, "dir");
                    } else {
                        fromArchive.put(name, sha256(tar.readAllBytes()));
                        assertThat(entry.getMode() & 0777).as(name).isEqualTo(mode(local));
                        // Whole seconds, the ustar header's (a fraction would come in a PAX header an entry).
                        assertThat(entry.getLastModifiedTime().toInstant()).isEqualTo(
                                Files.getLastModifiedTime(local).toInstant().truncatedTo(ChronoUnit.SECONDS));
                    }
                }
            }
            assertThat(fromArchive).isEqualTo(onDisk(rules));

            assertThat(client.httpClient().send(PolicyServingIT.request(client, "/policies/node-1/rules/?view=archive")
                            .header("If-None-Match", manifestEtag).build(),
                    HttpResponse.BodyHandlers.discarding()).statusCode()).isEqualTo(304);
        }
    }

    @ParameterizedTest
    @EnumSource(names = {"HTTP_1_1", "HTTP_2"})
    void archiveFailsRatherThanMixVersionsWhenAFileChangesWhileItStreams(HttpClient.Version version,
            @TempDir Path dir) throws Exception {
        Sandbox sandbox = Sandbox.create(dir);
        NodeKeys node = sandbox.addNode("node-1", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        Path rules = Files.createDirectories(sandbox.share().resolve("node-1/rules"));
        for (int i = 0; i < 24; i++) {
            // Random bytes do not compress: the archive is ~24 MiB, far more than the socket buffers hold.
            sandbox.randomShareFile("node-1/rules/part-" + (char) ('a' + i), 1024 * 1024, i);
        }
        try (TestServer server = TestServer.start(sandbox)) {
            PintleClient client = server.client(node, version);
            HttpResponse<InputStream> response = client.httpClient().send(
                    PolicyServingIT.request(client, "/policies/node-1/rules/?view=archive").build(),
                    HttpResponse.BodyHandlers.ofInputStream());
            assertThat(response.statusCode()).isEqualTo(200);
            try (InputStream body = response.body()) {
                assertThat(body.readNBytes(256 * 1024)).hasSize(256 * 1024);
                // The last file is replaced (as Rudder does: write, rename) before the server reaches it.
                replace(rules.resolve("part-x"), "generation 2\n");
                assertThatThrownBy(() -> untar(body)).isInstanceOf(IOException.class);
            }
            // The next archive is the new version, whole.
            HttpResponse<byte[]> next = client.httpClient().send(
                    PolicyServingIT.request(client, "/policies/node-1/rules/?view=archive").build(),
                    HttpResponse.BodyHandlers.ofByteArray());
            Map<String, byte[]> files = untar(new ByteArrayInputStream(next.body()));
            assertThat(files).hasSize(24);
            assertThat(new String(files.get("part-x"), StandardCharsets.UTF_8)).isEqualTo("generation 2\n");
        }
    }

    @Test
    void waitAnswersWhenTheEtagChangesAnd304AtTheTimeout(@TempDir Path dir) throws Exception {
        Sandbox sandbox = Sandbox.create(dir);
        NodeKeys node = sandbox.addNode("node-1", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        rudderTree(sandbox, "node-1", 10);
        Path archive = sandbox.shareFile("node-1/rules/rudder.tar.bz2", "generation 1".getBytes(StandardCharsets.UTF_8));
        // The idle timeout is shorter than the waits: a parked request must survive it.
        try (TestServer server = TestServer.start(sandbox, "[limits]\nidle_timeout_seconds = 1\n")) {
            // A fresh connection for each request: with a 1 s idle timeout, a kept-alive connection can be closed
            // (GOAWAY) just as the next request goes out on a loaded machine, which the JDK client does not retry.
            TestClients clients = new TestClients(server, node);
            String path = "/policies/node-1/rules/rudder.tar.bz2";
            String etag = get(clients.fresh(), path, null).headers().firstValue("etag").orElseThrow();

            long start = System.nanoTime();
            HttpResponse<String> unchanged = get(clients.fresh(), path + "?wait=2", etag);
            assertThat(unchanged.statusCode()).isEqualTo(304);
            assertThat(unchanged.headers().firstValue("etag")).hasValue(etag);
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(1900));

            CompletableFuture<HttpResponse<String>> waiting = clients.sendAsync(path + "?wait=60", etag);
            awaitWaiters(server, 1, List.of(waiting));
            assertThat(waiting).isNotDone();
            long changedAt = System.nanoTime();
            replace(archive, "generation 2");
            HttpResponse<String> changed = waiting.get(10, TimeUnit.SECONDS);
            assertThat(changed.statusCode()).isEqualTo(200);
            assertThat(changed.body()).isEqualTo("generation 2");
            assertThat(Duration.ofNanos(System.nanoTime() - changedAt)).isLessThan(Duration.ofSeconds(2));

            // A stale If-None-Match answers at once, as without wait.
            assertThat(get(clients.fresh(), path + "?wait=60", etag).body()).isEqualTo("generation 2");

            // A manifest wait wakes on a change deep in the tree, and on the rules.new -> rules swap.
            String manifestPath = "/policies/node-1/rules/?view=manifest&wait=60";
            String manifestEtag = get(clients.fresh(), "/policies/node-1/rules/?view=manifest", null)
                    .headers().firstValue("etag").orElseThrow();
            CompletableFuture<HttpResponse<String>> tree = clients.sendAsync(manifestPath, manifestEtag);
            awaitWaiters(server, 1, List.of(tree));
            assertThat(tree).isNotDone();
            replace(sandbox.share().resolve("node-1/rules/cfengine-community/certs/root.pem"), "new root\n");
            HttpResponse<String> treeChanged = tree.get(10, TimeUnit.SECONDS);
            assertThat(treeChanged.statusCode()).isEqualTo(200);
            String swappedFrom = treeChanged.headers().firstValue("etag").orElseThrow();
            CompletableFuture<HttpResponse<String>> swap = clients.sendAsync(manifestPath, swappedFrom);
            awaitWaiters(server, 1, List.of(swap));
            Path rules = sandbox.share().resolve("node-1/rules");
            Path next = Files.createDirectories(rules.resolveSibling("rules.new"));
            Files.writeString(next.resolve("only-file"), "generation 3");
            Files.move(rules, rules.resolveSibling("rules.old"));
            Files.move(next, rules);
            HttpResponse<String> swapped = swap.get(10, TimeUnit.SECONDS);
            assertThat(swapped.statusCode()).isEqualTo(200);
            assertThat(JSON.readValue(swapped.body(), Manifest.class).entries())
                    .extracting(Manifest.Entry::path).containsExactly("only-file");
        }
    }

    /**
     * A relay restarting, or any client giving up on a wait (HTTP/2 stream reset), ends its request unanswered:
     * counted and logged as 499, as nginx does, not as a server error that an alert on 5xx would page someone for.
     */
    @Test
    void aWaitWhoseClientGoesAwayIsCountedAs499NotAServerError(@TempDir Path dir) throws Exception {
        Sandbox sandbox = Sandbox.create(dir);
        NodeKeys node = sandbox.addNode("node-1", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        rudderTree(sandbox, "node-1", 3);
        try (TestServer server = TestServer.start(sandbox)) {
            TestClients clients = new TestClients(server, node);
            String path = "/policies/node-1/rules/?view=manifest";
            String etag = get(clients.fresh(), path, null).headers().firstValue("etag").orElseThrow();
            CompletableFuture<HttpResponse<String>> waiting = clients.sendAsync(path + "&wait=60", etag);
            awaitWaiters(server, 1, List.of(waiting));
            waiting.cancel(true); // the JDK client resets the HTTP/2 stream
            Await.until(Duration.ofSeconds(10), "the wait counted as 499",
                    () -> server.metric("pintle_requests_total{route=\"policies\",status=\"499\"}") != null);
            assertThat(server.metric("pintle_requests_total{route=\"policies\",status=\"499\"}")).isEqualTo(1.0);
            assertThat(server.metric("pintle_requests_total{route=\"policies\",status=\"500\"}")).isNull();
            assertThat(server.metric("pintle_change_waiters")).isZero();
        }
    }

    /**
     * A relay's share past {@code [limits] max_manifest_entries}: its change lists and manifests are refused with a
     * detail that names the setting (the relay logs it; the root's operator raises it), a node's own tree is not.
     */
    @Test
    void aSharePastTheEntryLimitIsRefusedNamingTheSetting(@TempDir Path dir) throws Exception {
        Sandbox sandbox = Sandbox.create(dir);
        NodeKeys relay = sandbox.addNode("relay-1", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        for (String node : List.of("n1", "n2", "n3")) {
            rudderTree(sandbox, "relay-1/share/" + node, 4); // 8 entries a node
        }
        try (TestServer server = TestServer.start(sandbox, "[limits]\nmax_manifest_entries = 20\n")) {
            PintleClient client = server.client(relay);
            for (String query : List.of("?view=manifest&since=", "?view=manifest", "?view=archive")) {
                HttpResponse<String> refused = get(client, "/policies/relay-1/share/" + query, null);
                assertProblem(refused, 400, "tree-too-large");
                assertThat(JSON.readTree(refused.body()).path("detail").asText())
                        .contains("more than 20 entries", "[limits] max_manifest_entries")
                        .doesNotContain(sandbox.share().toString());
            }
            assertThat(get(client, "/policies/relay-1/share/n1/?view=manifest", null).statusCode()).isEqualTo(200);
        }
    }

    @Test
    void waitersAreBoundedAndHoldNoDownloadWorker(@TempDir Path dir) throws Exception {
        Sandbox sandbox = Sandbox.create(dir);
        NodeKeys node = sandbox.addNode("node-1", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        sandbox.shareFile("node-1/rules/rudder.tar.bz2", "generation 1".getBytes(StandardCharsets.UTF_8));
        try (TestServer server = TestServer.start(sandbox,
                "[limits]\nmax_waiters = 2\nfiles = { concurrency = 1, queue = 0 }\n")) {
            PintleClient client = server.client(node);
            String path = "/policies/node-1/rules/rudder.tar.bz2";
            String etag = get(client, path, null).headers().firstValue("etag").orElseThrow();
            List<CompletableFuture<HttpResponse<String>>> parked = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                // One download worker and no queue: the previous request's worker goes back to the gate just after
                // its response is sent, so wait for it before sending the next, or that one is refused with 503.
                awaitMetric(server, "pintle_inflight_requests{class=\"files\"}", 0);
                parked.add(client.httpClient().sendAsync(PolicyServingIT.request(client, path + "?wait=30")
                        .header("If-None-Match", etag).build(), HttpResponse.BodyHandlers.ofString()));
                // Parked one at a time: with one download worker, the next must find it free again.
                awaitWaiters(server, i + 1, parked);
            }
            HttpResponse<String> third = get(client, path + "?wait=30", etag);
            assertThat(third.statusCode()).isEqualTo(503);
            assertThat(third.headers().firstValue("retry-after")).isPresent();
            assertThat(JSON.readTree(third.body()).path("reason").asText()).isEqualTo("too-many-waiters");
            // Two parked requests, one download worker: downloads still go through. (A worker goes back to the gate
            // just after its response is sent, so the refused third request's may still be held for a moment.)
            awaitMetric(server, "pintle_inflight_requests{class=\"files\"}", 0);
            HttpResponse<String> download = get(client, path, null);
            assertThat(download.statusCode()).as(download.body()).isEqualTo(200);
            assertThat(parked).allSatisfy(waiting -> assertThat(waiting).isNotDone());
            replace(sandbox.share().resolve("node-1/rules/rudder.tar.bz2"), "generation 2");
            for (CompletableFuture<HttpResponse<String>> waiting : parked) {
                assertThat(waiting.get(10, TimeUnit.SECONDS).body()).isEqualTo("generation 2");
            }
        }
    }

    @Test
    void badViewsAndWaitsAreRefusedClearly(@TempDir Path dir) throws Exception {
        Sandbox sandbox = Sandbox.create(dir);
        NodeKeys node = sandbox.addNode("node-1", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        NodeKeys other = sandbox.addNode("node-2", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        rudderTree(sandbox, "node-1", 3);
        try (TestServer server = TestServer.start(sandbox)) {
            PintleClient client = server.client(node);
            assertProblem(get(client, "/policies/node-1/rules/?view=zip", null), 400, "bad-view");
            assertProblem(get(client, "/policies/node-1/rules/cfengine-community/promises.cf?view=manifest", null),
                    404, "not-a-directory");
            assertProblem(get(client, "/policies/node-1/rules/?view=manifest&wait=301", null), 400, "bad-wait");
            assertProblem(get(client, "/policies/node-1/rules/?view=manifest&wait=x", null), 400, "bad-wait");
            assertProblem(get(client, "/policies/node-1/rules/", null), 404, "directory");
            assertThat(get(client, "/.pintle-wait/policies/node-1/rules/?view=manifest", null).statusCode())
                    .isEqualTo(404);
            // Same ACL as the files: another node's tree is refused, with or without wait, whatever exists.
            PintleClient stranger = server.client(other);
            assertThat(get(stranger, "/policies/node-1/rules/?view=manifest", null).statusCode()).isEqualTo(403);
            assertThat(get(stranger, "/policies/node-1/rules/?view=archive&wait=5", null).statusCode())
                    .isEqualTo(403);
            assertThat(get(stranger, "/policies/node-1/nothing/?view=manifest", null).statusCode()).isEqualTo(403);
            assertThat(get(client, "/policies/node-1/nothing/?view=manifest", null).statusCode()).isEqualTo(404);
            assertThat(get(client, "/policies/node-1/../node-2/?view=manifest", null).statusCode()).isIn(403, 404);
        }
    }

    @Test
    void aChangeListNamesWhatChangedSinceAVersionAndWaitsForTheNextChange(@TempDir Path dir) throws Exception {
        Sandbox sandbox = Sandbox.create(dir);
        NodeKeys relay = sandbox.addNode("relay-1", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        for (String node : List.of("n1", "n2", "n3")) {
            rudderTree(sandbox, "relay-1/share/" + node, 4);
        }
        Path share = sandbox.share().resolve("relay-1/share");
        try (TestServer server = TestServer.start(sandbox)) {
            PintleClient client = server.client(relay);
            String path = "/policies/relay-1/share/?view=manifest";
            HttpResponse<String> first = get(client, path + "&since=", null);
            assertThat(first.statusCode()).isEqualTo(200);
            assertThat(first.body()).doesNotContain("\"since\"").doesNotContain("\"removed\"");
            Manifest whole = JSON.readValue(first.body(), Manifest.class);
            assertThat(whole).isEqualTo(JSON.readValue(get(client, path, null).body(), Manifest.class));

            replace(share.resolve("n2/rules/cfengine-community/promises.cf"), "bundle agent main { } # 2\n");
            deleteTree(share.resolve("n3"));
            HttpResponse<String> second = get(client, path + "&since=" + encode(whole.etag()), null);
            Manifest changes = JSON.readValue(second.body(), Manifest.class);
            assertThat(second.headers().firstValue("etag")).hasValue(changes.etag());
            assertThat(changes.since()).isEqualTo(whole.etag());
            assertThat(changes.removed()).containsExactly("n3");
            assertThat(changes.entries()).extracting(Manifest.Entry::path).allMatch(p -> p.startsWith("n2"))
                    .contains("n2", "n2/rules/cfengine-community/promises.cf");
            assertThat(changes.files()).isEqualTo(8); // the whole version's: n1's 4 and n2's 4

            // Unchanged since: 304 with If-None-Match; a wait answers at the next change, relative to since.
            assertThat(get(client, path + "&since=" + encode(changes.etag()), changes.etag()).statusCode())
                    .isEqualTo(304);
            CompletableFuture<HttpResponse<String>> waiting = CompletableFuture.supplyAsync(() -> {
                try {
                    return get(client, path + "&wait=30&since=" + encode(changes.etag()), changes.etag());
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            // Another follower, one version behind, waits on the same directory: its answer is relative to its own.
            CompletableFuture<HttpResponse<String>> behind = CompletableFuture.supplyAsync(() -> {
                try {
                    return get(client, path + "&wait=30&since=" + encode(whole.etag()), changes.etag());
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            awaitWaiters(server, 2, List.of(waiting, behind));
            replace(share.resolve("n1/rules/cfengine-community/promises.cf"), "bundle agent main { } # 3\n");
            HttpResponse<String> woken = waiting.get(30, TimeUnit.SECONDS);
            Manifest next = JSON.readValue(woken.body(), Manifest.class);
            assertThat(next.since()).isEqualTo(changes.etag());
            assertThat(next.removed()).isEmpty();
            assertThat(next.entries()).extracting(Manifest.Entry::path).allMatch(p -> p.startsWith("n1"));
            // The answer is the tree as it now is: its ETag is the whole manifest's.
            assertThat(next.etag()).isEqualTo(JSON.readValue(get(client, path, null).body(), Manifest.class).etag());
            Manifest fromBehind = JSON.readValue(behind.get(30, TimeUnit.SECONDS).body(), Manifest.class);
            assertThat(fromBehind.etag()).isEqualTo(next.etag());
            assertThat(fromBehind.entries()).extracting(Manifest.Entry::path)
                    .contains("n1/rules/cfengine-community/promises.cf", "n2/rules/cfengine-community/promises.cf");
            // Two versions a tree are held: when the other answer made it forget this since, the whole manifest.
            if (fromBehind.since() != null) {
                assertThat(fromBehind.since()).isEqualTo(whole.etag());
                assertThat(fromBehind.removed()).containsExactly("n3");
            } else {
                assertThat(fromBehind.removed()).isNull();
                assertThat(fromBehind.entries()).extracting(Manifest.Entry::path).noneMatch(p -> p.startsWith("n3"));
            }
        }
    }

    @Test
    void changeListsAreAnsweredWhileNodeDirectoriesAreReplacedOneAfterTheOther(@TempDir Path dir) throws Exception {
        Sandbox sandbox = Sandbox.create(dir);
        NodeKeys relay = sandbox.addNode("relay-1", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        Path share = Files.createDirectories(sandbox.share().resolve("relay-1/share"));
        List<String> nodes = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            nodes.add(String.format("node-%02d", i));
            publish(share.resolve(nodes.get(i)), 0);
        }
        try (TestServer server = TestServer.start(sandbox)) {
            PintleClient client = server.client(relay);
            String path = "/policies/relay-1/share/?view=manifest&since=";
            Manifest last = JSON.readValue(get(client, path, null).body(), Manifest.class);
            // A generation that never ends: node after node, rules.new filled then renamed over rules, 2 ms apart,
            // so each node is replaced about every 100 ms, far more often than Rudder does (once a generation). With
            // no pause each node was replaced every ~12 ms, faster than one read of it with its new files hashed:
            // no reader can then see it at rest, and the server rightly answers 503 after its 8 reads.
            java.util.concurrent.atomic.AtomicBoolean writing = new java.util.concurrent.atomic.AtomicBoolean(true);
            CompletableFuture<Integer> generations = CompletableFuture.supplyAsync(() -> {
                int written = 0;
                try {
                    for (int number = 1; writing.get(); number++) {
                        for (String node : nodes) {
                            publish(share.resolve(node), number);
                            written++;
                            Thread.sleep(2);
                        }
                    }
                } catch (IOException | InterruptedException e) {
                    throw new IllegalStateException(e);
                }
                return written;
            });
            try {
                for (int round = 0; round < 15; round++) {
                    HttpResponse<String> response = get(client, path + encode(last.etag()), null);
                    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
                    Manifest changes = JSON.readValue(response.body(), Manifest.class);
                    assertThat(changes.since()).as("held, so a change list").isEqualTo(last.etag());
                    // Each node directory listed is one version of it: the two files of its rules/ are of one
                    // generation (a rules.new being filled may be there too, as it was at that instant).
                    Map<String, List<String>> digests = new TreeMap<>();
                    for (Manifest.Entry entry : changes.entries()) {
                        if (entry.isFile() && entry.path().split("/")[1].equals("rules")) {
                            digests.computeIfAbsent(entry.path().split("/")[0], n -> new ArrayList<>())
                                    .add(entry.sha256());
                        }
                    }
                    digests.forEach((node, files) -> assertThat(files).as(node).hasSize(2).containsOnly(files.get(0)));
                    last = changes;
                }
            } finally {
                writing.set(false);
            }
            assertThat(generations.get(30, TimeUnit.SECONDS)).isPositive();
        }
    }

    /** A node's generation as Rudder publishes it: rules.new filled, then renamed over rules. */
    private static void publish(Path node, int number) throws IOException {
        Path next = Files.createDirectories(node.resolve("rules.new"));
        Files.writeString(next.resolve("rudder.tar.bz2"), "generation " + number + "\n");
        Files.writeString(next.resolve("promises.cf"), "generation " + number + "\n");
        Path rules = node.resolve("rules");
        if (Files.exists(rules)) {
            Path old = Files.move(rules, node.resolve("rules.old"));
            Files.move(next, rules);
            deleteTree(old);
        } else {
            Files.move(next, rules);
        }
    }

    @Test
    void anArchiveOfOnlySomeDirectoriesHoldsEachOfThemWholeAndNothingElse(@TempDir Path dir) throws Exception {
        Sandbox sandbox = Sandbox.create(dir);
        NodeKeys relay = sandbox.addNode("relay-1", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        for (String node : List.of("n1", "n2", "n3")) {
            rudderTree(sandbox, "relay-1/share/" + node, 5);
        }
        Path share = sandbox.share().resolve("relay-1/share");
        // A directory that leads out of the tree is left out (and logged), as a missing one.
        Files.createSymbolicLink(share.resolve("n4"), dir);
        try (TestServer server = TestServer.start(sandbox)) {
            PintleClient client = server.client(relay);
            HttpResponse<byte[]> archive = client.httpClient().send(PolicyServingIT.request(client,
                    "/policies/relay-1/share/?view=archive&only=n3&only=n1&only=missing&only=n4&only=n1").build(),
                    HttpResponse.BodyHandlers.ofByteArray());
            assertThat(archive.statusCode()).isEqualTo(200);
            assertThat(archive.headers().firstValue("content-type")).hasValue("application/gzip");
            assertThat(archive.headers().firstValue("etag")).as("several versions: no one ETag").isEmpty();
            Map<String, byte[]> files = untar(new ByteArrayInputStream(archive.body()));
            Map<String, String> expected = new TreeMap<>();
            for (String node : List.of("n1", "n3")) {
                onDisk(share.resolve(node)).forEach((path, sha) -> {
                    if (!sha.equals("dir")) {
                        expected.put(node + "/" + path, sha);
                    }
                });
            }
            Map<String, String> got = new TreeMap<>();
            for (Map.Entry<String, byte[]> file : files.entrySet()) {
                got.put(file.getKey(), sha256(file.getValue()));
            }
            assertThat(got).isEqualTo(expected);
            // In name order, each directory whole before the next.
            assertThat(new ArrayList<>(files.keySet())).isSorted();
        }
    }

    @Test
    void sinceAndOnlyAreRefusedWhereTheyDoNotApply(@TempDir Path dir) throws Exception {
        Sandbox sandbox = Sandbox.create(dir);
        NodeKeys relay = sandbox.addNode("relay-1", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        NodeKeys other = sandbox.addNode("node-2", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        rudderTree(sandbox, "relay-1/share/n1", 3);
        try (TestServer server = TestServer.start(sandbox)) {
            PintleClient client = server.client(relay);
            String share = "/policies/relay-1/share/";
            assertProblem(get(client, share + "?view=archive&since=", null), 400, "bad-query");
            assertProblem(get(client, share + "n1/rules/rudder.json?since=x", null), 400, "bad-query");
            assertProblem(get(client, share + "?view=manifest&only=n1", null), 400, "bad-query");
            assertProblem(get(client, share + "?view=archive&only=n1&wait=5", null), 400, "bad-query");
            assertProblem(get(client, share + "?view=archive&only=..", null), 400, "bad-name");
            assertProblem(get(client, share + "?view=archive&only=n1%2Frules", null), 400, "bad-name");
            assertProblem(get(client, share + "?view=archive&only=", null), 400, "bad-name");
            StringBuilder many = new StringBuilder(share + "?view=archive");
            for (int i = 0; i <= io.pintle.api.Routes.MAX_ONLY; i++) {
                many.append("&only=n").append(i);
            }
            assertProblem(get(client, many.toString(), null), 400, "too-many-names");
            assertProblem(get(client, share + "n1/rules/cfengine-community/promises.cf?view=archive&only=x", null), 404,
                    "not-a-directory");
            // Another node's tree: refused whatever the parameters.
            assertThat(get(server.client(other), share + "?view=archive&only=n1", null).statusCode()).isEqualTo(403);
            assertThat(get(server.client(other), share + "?view=manifest&since=", null).statusCode()).isEqualTo(403);
        }
    }

    private static String encode(String value) {
        return java.net.URLEncoder.encode(value, StandardCharsets.UTF_8);
    }

    @Test
    void everyManifestDescribesOneSideOfRepeatedRulesSwaps(@TempDir Path dir) throws Exception {
        Sandbox sandbox = Sandbox.create(dir);
        NodeKeys node = sandbox.addNode("node-1", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        Path rules = generation(sandbox.share().resolve("node-1/rules"), 0);
        try (TestServer server = TestServer.start(sandbox)) {
            PintleClient client = server.client(node);
            CompletableFuture<Integer> reader = CompletableFuture.supplyAsync(() -> {
                int checked = 0;
                try {
                    long until = System.nanoTime() + Duration.ofSeconds(4).toNanos();
                    while (System.nanoTime() < until) {
                        HttpResponse<String> response = get(client, "/policies/node-1/rules/?view=manifest", null);
                        if (response.statusCode() == 503 || response.statusCode() == 404) {
                            // The tree kept changing during every attempt (503), or the request fell between the
                            // two renames of the swap, when there is no "rules" (404): allowed, never a mix.
                            continue;
                        }
                        assertThat(response.statusCode()).isEqualTo(200);
                        Manifest manifest = JSON.readValue(response.body(), Manifest.class);
                        // Every file of a generation holds the same digest: one generation per manifest.
                        assertThat(manifest.entries()).hasSize(30);
                        assertThat(manifest.entries().stream().map(Manifest.Entry::sha256).distinct()).hasSize(1);
                        checked++;
                    }
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
                return checked;
            });
            int swaps = 0;
            while (!reader.isDone()) {
                Path next = generation(rules.resolveSibling("rules.new"), ++swaps);
                Path old = Files.move(rules, rules.resolveSibling("rules.old"));
                Files.move(next, rules);
                deleteTree(old);
            }
            assertThat(reader.get()).isGreaterThan(10);
            assertThat(swaps).isGreaterThan(10);
        }
    }

    /** One new client (so one new connection) per request. */
    private record TestClients(TestServer server, NodeKeys node) {
        PintleClient fresh() throws Exception {
            return server.client(node);
        }

        CompletableFuture<HttpResponse<String>> sendAsync(String path, String ifNoneMatch) throws Exception {
            PintleClient client = fresh();
            HttpRequest.Builder request = PolicyServingIT.request(client, path).timeout(Duration.ofSeconds(90));
            if (ifNoneMatch != null) {
                request.header("If-None-Match", ifNoneMatch);
            }
            return client.httpClient().sendAsync(request.build(), HttpResponse.BodyHandlers.ofString());
        }
    }

    private static void awaitWaiters(TestServer server, int count,
            List<CompletableFuture<HttpResponse<String>>> sent) throws Exception {
        Await.until(Duration.ofSeconds(10), count + " parked requests", () -> {
            for (CompletableFuture<HttpResponse<String>> request : sent) {
                if (request.isDone()) {
                    HttpResponse<String> answered = request.join();
                    throw new AssertionError("a request meant to wait was answered at once: "
                            + answered.statusCode() + " " + answered.body());
                }
            }
            Double parked = server.metric("pintle_change_waiters");
            return parked != null && parked >= count;
        });
        // Parked, and their download workers given back.
        awaitMetric(server, "pintle_inflight_requests{class=\"files\"}", 0);
    }

    private static void awaitMetric(TestServer server, String series, double value) throws Exception {
        Await.asserted(Duration.ofSeconds(10), () -> assertThat(server.metric(series)).as(series).isEqualTo(value));
    }

    private static Path generation(Path directory, int number) throws IOException {
        Files.createDirectories(directory);
        for (int i = 0; i < 30; i++) {
            Files.writeString(directory.resolve("file-" + i), "generation " + number + "\n");
        }
        return directory;
    }

    private static void assertProblem(HttpResponse<String> response, int status, String reason) throws IOException {
        assertThat(response.statusCode()).as(response.body()).isEqualTo(status);
        assertThat(response.headers().firstValue("content-type")).hasValue("application/problem+json");
        JsonNode problem = JSON.readTree(response.body());
        assertThat(problem.path("reason").asText()).isEqualTo(reason);
        assertThat(problem.path("detail").asText()).isNotBlank();
    }

    static HttpResponse<String> get(PintleClient client, String path, String ifNoneMatch) throws Exception {
        HttpRequest.Builder request = PolicyServingIT.request(client, path).timeout(Duration.ofSeconds(90));
        if (ifNoneMatch != null) {
            request.header("If-None-Match", ifNoneMatch);
        }
        return client.httpClient().send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** A small Rudder-like tree: {@code rules/cfengine-community/{promises.cf,file-N.cf,certs/root.pem}}. */
    static Path rudderTree(Sandbox sandbox, String node, int files) throws IOException {
        String base = node + "/rules/cfengine-community/";
        sandbox.shareFile(base + "promises.cf", "bundle agent main {}\n".getBytes(StandardCharsets.UTF_8));
        sandbox.shareFile(base + "certs/root.pem", "-----BEGIN CERTIFICATE-----\n".getBytes(StandardCharsets.UTF_8));
        for (int i = 0; i < files - 2; i++) {
            sandbox.randomShareFile(base + "file-" + i + ".cf", 100 + i * 37, i);
        }
        return sandbox.share().resolve(node + "/rules");
    }

    /** Every path below {@code root} (links not followed), with the SHA-256 of files, "dir" or "link:target". */
    static Map<String, String> onDisk(Path root) throws Exception {
        Map<String, String> result = new TreeMap<>();
        try (Stream<Path> walk = Files.walk(root)) {
            for (Path path : walk.skip(1).toList()) {
                String relative = root.relativize(path).toString();
                if (Files.isSymbolicLink(path)) {
                    Path target = Files.readSymbolicLink(path);
                    if (!target.isAbsolute() && path.getParent().resolve(target).normalize().startsWith(root)) {
                        result.put(relative, "link:" + target);
                    }
                } else if (Files.isDirectory(path)) {
                    result.put(relative, "dir");
                } else {
                    result.put(relative, sha256(Files.readAllBytes(path)));
                }
            }
        }
        return result;
    }

    private static Map<String, byte[]> untar(InputStream in) throws IOException {
        Map<String, byte[]> files = new TreeMap<>();
        try (TarArchiveInputStream tar = new TarArchiveInputStream(new GzipCompressorInputStream(in))) {
            TarArchiveEntry entry;
            while ((entry = tar.getNextEntry()) != null) {
                if (entry.isFile()) {
                    byte[] content = tar.readAllBytes();
                    if (content.length != entry.getSize()) {
                        throw new IOException("truncated entry " + entry.getName());
                    }
                    files.put(entry.getName(), content);
                }
            }
        }
        return files;
    }

    private static int mode(Path path) throws IOException {
        int mode = 0;
        for (var permission : Files.getPosixFilePermissions(path)) {
            mode |= 1 << (8 - permission.ordinal());
        }
        return mode;
    }

    private static String sha256(byte[] bytes) throws java.security.NoSuchAlgorithmException {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    }

    static void replace(Path file, String content) throws IOException {
        Path temporary = file.resolveSibling(file.getFileName() + ".tmp");
        Files.writeString(temporary, content);
        Files.move(temporary, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    static void deleteTree(Path root) throws IOException {
        try (Stream<Path> walk = Files.walk(root)) {
            for (Path path : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.delete(path);
            }
        }
    }
}
