package io.pintle.server.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pintle.api.dto.Manifest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.security.MessageDigest;
import java.time.Instant;
import java.util.HexFormat;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TreeScannerTest {
    private final DigestCache digests = new DigestCache(1000, 3);
    private final TreeScanner scanner = new TreeScanner(digests, 100);

    @AfterEach
    void close() {
        digests.close();
    }

    @Test
    void digestsAreComputedOncePerFileVersion(@TempDir Path dir) throws Exception {
        for (int i = 0; i < 20; i++) {
            Files.writeString(Files.createDirectories(dir.resolve("d" + i % 3)).resolve("f" + i), "content " + i);
        }
        Manifest first = scanner.scan(dir).manifest();
        assertThat(digests.computed()).isEqualTo(20);
        assertThat(scanner.scan(dir).manifest()).isEqualTo(first);
        assertThat(digests.computed()).isEqualTo(20);
        assertThat(digests.hits()).isEqualTo(20);

        // Rewritten in place (same inode, same size) with a new mtime: computed again, and only that file.
        Path file = dir.resolve("d1/f1");
        Files.writeString(file, "CONTENT 1");
        Files.setLastModifiedTime(file, FileTime.from(Instant.now().plusSeconds(5)));
        Manifest second = scanner.scan(dir).manifest();
        assertThat(digests.computed()).isEqualTo(21);
        assertThat(second.etag()).isNotEqualTo(first.etag());
        assertThat(second.entries()).filteredOn(e -> e.path().equals("d1/f1")).singleElement()
                .extracting(Manifest.Entry::sha256).isEqualTo(sha256("CONTENT 1"));
    }

    @Test
    void entriesAreSortedByWholePathAndLinksOutsideAreLeftOut(@TempDir Path dir) throws Exception {
        Files.createDirectories(dir.resolve("a"));
        Files.writeString(dir.resolve("a/x"), "x");
        Files.writeString(dir.resolve("a-b"), "ab");
        Files.createSymbolicLink(dir.resolve("a/inside"), Path.of("x"));
        Files.createSymbolicLink(dir.resolve("a/up"), Path.of("../a-b"));
        Files.createSymbolicLink(dir.resolve("a/out"), Path.of("../../elsewhere"));
        Files.createSymbolicLink(dir.resolve("absolute"), Path.of("/etc/passwd"));
        // Lexically "a/loop/../.." is the tree's root; physically (loop -> .) it is the tree's parent.
        Files.createSymbolicLink(dir.resolve("a/loop"), Path.of("."));
        Files.createSymbolicLink(dir.resolve("a/evil"), Path.of("loop/../.."));
        Files.createSymbolicLink(dir.resolve("a/dangling-up"), Path.of("../missing"));
        Manifest manifest = scanner.scan(dir).manifest();
        assertThat(manifest.entries()).extracting(Manifest.Entry::path)
                .containsExactly("a", "a-b", "a/inside", "a/loop", "a/up", "a/x");
        assertThat(manifest.entries()).filteredOn(Manifest.Entry::isSymlink).extracting(Manifest.Entry::target)
                .containsExactly("x", ".", "../a-b");
        assertThat(manifest.files()).isEqualTo(2);
        assertThat(manifest.bytes()).isEqualTo(3);
    }

    @Test
    void refusesFilesAndTreesPastTheLimit(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("file"), "x");
        assertThatThrownBy(() -> scanner.scan(dir.resolve("file")))
                .isInstanceOf(TreeScanner.NotADirectoryException.class);
        for (int i = 0; i < 101; i++) {
            Files.writeString(dir.resolve("f" + i), "x");
        }
        assertThatThrownBy(() -> scanner.scan(dir)).isInstanceOf(TreeScanner.TreeTooLargeException.class)
                .hasMessageContaining("more than 100 entries");
    }

    @Test
    void theEtagCoversEveryField(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("f"), "x");
        String before = scanner.scan(dir).etag();
        Files.setPosixFilePermissions(dir.resolve("f"), java.nio.file.attribute.PosixFilePermissions.fromString("rwx------"));
        String afterMode = scanner.scan(dir).etag();
        assertThat(afterMode).isNotEqualTo(before);
        Files.createDirectory(dir.resolve("empty"));
        assertThat(scanner.scan(dir).etag()).isNotEqualTo(afterMode);
        assertThat(before).matches("\"m-[0-9a-f]{32}\"");
    }

    private static String sha256(String text) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
    }
}
