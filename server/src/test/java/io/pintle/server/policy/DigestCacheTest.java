package io.pintle.server.policy;

import static org.assertj.core.api.Assertions.assertThat;

import io.pintle.server.testing.TestThreads;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.HexFormat;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

class DigestCacheTest {
    @RegisterExtension
    final TestThreads threads = new TestThreads();

    private final DigestCache digests = new DigestCache(1000, 2, threads.workers());

    @AfterEach
    void close() {
        digests.close();
    }

    /**
     * A file that changed is hashed again, and its entry then holds one path object, the new version's, as key and
     * in its version: a root's cache of 333,000 Rudder files held two paths an entry after a generation (~200
     * bytes each).
     */
    @Test
    void aChangedFileIsHashedAgainAndItsEntryKeepsOnePathObject(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("rules/promises.cf");
        Files.createDirectories(file.getParent());
        Files.writeString(file, "generation 1\n");
        FileStat first = FileStat.of(Path.of(file.toString()));
        assertThat(digests.sha256(first).get(10, TimeUnit.SECONDS)).isEqualTo(sha256("generation 1\n"));
        assertThat(digests.key(file)).isSameAs(first.path());
        assertThat(digests.sha256(FileStat.of(Path.of(file.toString()))).get(10, TimeUnit.SECONDS))
                .isEqualTo(sha256("generation 1\n"));
        assertThat(digests.hits()).isEqualTo(1);

        Files.writeString(file, "generation 2, longer\n");
        Files.setLastModifiedTime(file, FileTime.from(Instant.parse("2030-01-01T00:00:00Z")));
        FileStat second = FileStat.of(Path.of(file.toString()));
        assertThat(second.path()).isNotSameAs(first.path());
        assertThat(digests.sha256(second).get(10, TimeUnit.SECONDS)).isEqualTo(sha256("generation 2, longer\n"));
        assertThat(digests.cached(file)).isEqualTo(second);
        assertThat(digests.key(file)).isSameAs(second.path()).isSameAs(digests.cached(file).path());
        assertThat(digests.computed()).isEqualTo(2);
    }

    private static String sha256(String content) throws Exception {
        return HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-256")
                .digest(content.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
    }
}
