package io.pintle.server.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.pintle.client.PintleClient;
import io.pintle.server.policy.FileCache;
import io.pintle.server.testing.NodeKeys;
import io.pintle.server.testing.Sandbox;
import io.pintle.server.testing.TestServer;
import io.pintle.server.tls.SelfSigned;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The download cache over real mutual TLS: repeated downloads are answered from it, and every way a file can
 * change since (in place, by a rename, a link in its place, a directory swapped for a link out of the tree) is
 * served or refused as without it.
 */
class FileCacheIT {
    private static final String RULES = "/policies/linux-a/rules/";

    @TempDir
    static Path dir;

    static Sandbox sandbox;
    static TestServer server;
    static NodeKeys linux;
    static Path rules;

    @BeforeAll
    static void start() throws Exception {
        sandbox = Sandbox.create(dir);
        linux = sandbox.addNode("linux-a", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        for (String name : new String[] {"steady.cf", "in-place.cf", "renamed.cf", "linked.cf", "sub/moved.cf"}) {
            sandbox.shareFile("linux-a/rules/" + name, ("content of " + name).getBytes(StandardCharsets.UTF_8));
        }
        rules = sandbox.share().resolve("linux-a/rules");
        Files.writeString(dir.resolve("secret.cf"), "outside the share");
        Files.createDirectories(dir.resolve("outside"));
        Files.writeString(dir.resolve("outside/moved.cf"), "outside the share too");
        server = TestServer.start(sandbox);
        // Bytes are kept once a file's times are FileCache.SETTLED old; before, only its version is.
        Thread.sleep(FileCache.SETTLED.toMillis() + 200); // the files must be this old: their age is the point
    }

    @AfterAll
    static void stop() throws Exception {
        server.close();
    }

    private static HttpResponse<String> get(String path) throws Exception {
        PintleClient client = server.client(linux);
        return client.httpClient().send(HttpRequest.newBuilder(client.uri(path)).GET().build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** Downloads a file twice, so that the second answer comes from the cache, and checks both bodies. */
    private static void downloadTwice(String name) throws Exception {
        for (int i = 0; i < 2; i++) {
            assertThat(get(RULES + name).body()).isEqualTo("content of " + name);
        }
    }

    private static void assertLooksMissing(String name) throws Exception {
        HttpResponse<String> refused = get(RULES + name);
        assertThat(refused.statusCode()).isEqualTo(404);
        assertThat(refused.body()).doesNotContain("outside the share").contains("no-such-file");
    }

    private static double hits() throws Exception {
        Double hits = server.metric("pintle_file_cache_hits_total");
        return hits != null ? hits : 0;
    }

    @Test
    void repeatedDownloadsOfAnUnchangedFileAreAnsweredFromTheCache() throws Exception {
        HttpResponse<String> first = get(RULES + "steady.cf");
        double before = hits();

        HttpResponse<String> second = get(RULES + "steady.cf");
        HttpResponse<String> third = get(RULES + "steady.cf");

        assertThat(hits()).isGreaterThanOrEqualTo(before + 2);
        for (HttpResponse<String> response : java.util.List.of(first, second, third)) {
            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(response.body()).isEqualTo("content of steady.cf");
            assertThat(response.headers().firstValue("ETag")).isEqualTo(first.headers().firstValue("ETag"));
            assertThat(response.headers().firstValueAsLong("Content-Length")).hasValue(20);
        }
        assertThat(server.metric("pintle_file_cache_bytes")).isPositive();
    }

    @Test
    void aFileRewrittenInPlaceWithItsSizeAndTimeRestoredIsServedAfresh() throws Exception {
        Path file = rules.resolve("in-place.cf");
        FileTime modified = Files.getLastModifiedTime(file);
        downloadTwice("in-place.cf");

        Files.writeString(file, "CONTENT OF IN-PLACE.CF", StandardOpenOption.TRUNCATE_EXISTING);
        Files.setLastModifiedTime(file, modified);

        assertThat(get(RULES + "in-place.cf").body()).isEqualTo("CONTENT OF IN-PLACE.CF");
    }

    @Test
    void aFileReplacedByARenameIsServedWithItsNewContentAndETag() throws Exception {
        HttpResponse<String> before = get(RULES + "renamed.cf");
        downloadTwice("renamed.cf");

        Path fresh = Files.writeString(rules.resolve("renamed.cf.new"), "generation 2 of renamed.cf");
        Files.move(fresh, rules.resolve("renamed.cf"), StandardCopyOption.ATOMIC_MOVE,
                StandardCopyOption.REPLACE_EXISTING);

        HttpResponse<String> after = get(RULES + "renamed.cf");
        assertThat(after.statusCode()).isEqualTo(200);
        assertThat(after.body()).isEqualTo("generation 2 of renamed.cf");
        assertThat(after.headers().firstValue("ETag")).isNotEqualTo(before.headers().firstValue("ETag"));
    }

    @Test
    void aCachedFileReplacedByALinkOutOfTheTreeLooksMissing() throws Exception {
        downloadTwice("linked.cf");

        Path file = rules.resolve("linked.cf");
        Files.delete(file);
        Files.createSymbolicLink(file, dir.resolve("secret.cf"));

        assertLooksMissing("linked.cf");
    }

    @Test
    void aCachedFileWhoseDirectoryBecomesALinkOutOfTheTreeLooksMissing() throws Exception {
        downloadTwice("sub/moved.cf");

        Path sub = rules.resolve("sub");
        Files.move(sub, dir.resolve("sub-away"));
        Files.createSymbolicLink(sub, dir.resolve("outside"));

        assertLooksMissing("sub/moved.cf");
    }

    @Test
    void aRemovedFileIs404AfterBeingCached() throws Exception {
        Path file = sandbox.shareFile("linux-a/rules/removed.cf", "short-lived".getBytes(StandardCharsets.UTF_8));
        Files.setLastModifiedTime(file, FileTime.from(Instant.now().minusSeconds(3600)));
        assertThat(get(RULES + "removed.cf").statusCode()).isEqualTo(200);
        assertThat(get(RULES + "removed.cf").statusCode()).isEqualTo(200);

        Files.delete(file);

        assertThat(get(RULES + "removed.cf").statusCode()).isEqualTo(404);
    }
}
