package io.pintle.server.policy;

import static org.assertj.core.api.Assertions.assertThat;

import io.pintle.server.testing.TestThreads;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.zip.GZIPInputStream;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.apache.commons.compress.compressors.gzip.GzipCompressorInputStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The archive view's {@code tar.gz}: files that are already compressed are stored, everything else deflated, in one
 * stream that both gzip readers (the JDK's, commons-compress's) take whole.
 */
class TreeArchiveTest {
    @RegisterExtension
    final TestThreads threads = new TestThreads();

    private final DigestCache digests = new DigestCache(1000, 3, threads.workers());
    private final TreeScanner scanner = new TreeScanner(digests, 10_000);

    @AfterEach
    void close() {
        digests.close();
    }

    @Test
    void compressedFilesAreKnownByTheirFirstBytes() {
        assertThat(TreeArchive.compressed(bytes("BZh91AY&SY"), 10)).isTrue();
        assertThat(TreeArchive.compressed(new byte[] {0x1f, (byte) 0x8b, 8, 0}, 4)).isTrue();
        assertThat(TreeArchive.compressed(new byte[] {(byte) 0xfd, '7', 'z', 'X', 'Z', 0, 0}, 7)).isTrue();
        assertThat(TreeArchive.compressed(new byte[] {0x28, (byte) 0xb5, 0x2f, (byte) 0xfd}, 4)).isTrue();
        assertThat(TreeArchive.compressed(new byte[] {0x04, 0x22, 0x4d, 0x18}, 4)).isTrue();
        assertThat(TreeArchive.compressed(bytes("PK\u0003\u0004rest"), 8)).isTrue();
        // Text, a "BZh" not followed by a block size, and magic bytes cut short are not.
        assertThat(TreeArchive.compressed(bytes("bundle agent main {}"), 20)).isFalse();
        assertThat(TreeArchive.compressed(bytes("BZhx"), 4)).isFalse();
        assertThat(TreeArchive.compressed(bytes("BZh9"), 3)).isFalse();
        assertThat(TreeArchive.compressed(new byte[] {0x1f}, 1)).isFalse();
        assertThat(TreeArchive.compressed(new byte[0], 0)).isFalse();
    }

    @Test
    void aCompressedFileIsStoredAndTheFilesAfterItAreDeflatedAgain(@TempDir Path dir) throws Exception {
        // bzip2's magic before 200 KB of zeros: stored, it makes the archive at least that large; a text file of
        // 200 KB after it would add ~200 KB too if the level were not set back, and adds ~1 KB deflated.
        byte[] lookalike = new byte[200_000];
        System.arraycopy(bytes("BZh9"), 0, lookalike, 0, 4);
        byte[] random = new byte[40_960];
        new Random(39).nextBytes(random);
        System.arraycopy(bytes("BZh9"), 0, random, 0, 4);
        byte[] text = "bundle agent main { }\n".repeat(9_000).getBytes(StandardCharsets.UTF_8);
        byte[] smallLookalike = Arrays.copyOf(bytes("BZh9"), TreeArchive.MIN_STORED_BYTES - 1);
        Map<String, byte[]> files = new LinkedHashMap<>();
        files.put("n1/rules/a-lookalike.bz2", lookalike);
        files.put("n1/rules/b-text.cf", text);
        files.put("n1/rules/c-random.tar.bz2", random);
        files.put("n1/rules/d-small.bz2", smallLookalike);
        files.put("n2/rules/promises.cf", text);
        for (Map.Entry<String, byte[]> file : files.entrySet()) {
            Files.createDirectories(dir.resolve(file.getKey()).getParent());
            Files.write(dir.resolve(file.getKey()), file.getValue());
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        TreeArchive.write(scanner, scanner.scan(dir, false), out);
        byte[] archive = out.toByteArray();

        assertThat(read(new GzipCompressorInputStream(new ByteArrayInputStream(archive)))).containsOnlyKeys(
                files.keySet()).allSatisfy((name, content) -> assertThat(content).isEqualTo(files.get(name)));
        assertThat(read(new GZIPInputStream(new ByteArrayInputStream(archive)))).containsOnlyKeys(files.keySet());
        // Stored: the lookalike's 200,000 bytes and the random ones; deflated: the two texts and the small one.
        assertThat(archive.length).isBetween(lookalike.length + random.length,
                lookalike.length + random.length + 8_000);
    }

    @Test
    void withoutCompressedFilesEverythingIsDeflated(@TempDir Path dir) throws Exception {
        byte[] zeros = new byte[200_000];
        Files.createDirectories(dir.resolve("n1"));
        Files.write(dir.resolve("n1/zeros.bin"), zeros);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        TreeArchive.write(scanner, scanner.scan(dir, false), out);
        assertThat(out.size()).isLessThan(5_000);
        assertThat(read(new GZIPInputStream(new ByteArrayInputStream(out.toByteArray()))).get("n1/zeros.bin"))
                .isEqualTo(zeros);
    }

    @Test
    void modificationTimesAreWholeSecondsInTheUstarHeaderWithNoPaxHeaderAnEntry(@TempDir Path dir) throws Exception {
        Files.createDirectories(dir.resolve("n1/rules"));
        Files.writeString(dir.resolve("n1/rules/promises.cf"), "bundle agent main { }\n");
        Instant fraction = Instant.parse("2026-12-08T01:02:03.123456789Z");
        for (String path : List.of("n1/rules/promises.cf", "n1/rules", "n1")) {
            Files.setLastModifiedTime(dir.resolve(path), FileTime.from(fraction));
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        TreeArchive.write(scanner, scanner.scan(dir, false), out);
        byte[] tar = new GZIPInputStream(new ByteArrayInputStream(out.toByteArray())).readAllBytes();

        // The raw records: each header's type flag, its data records skipped, up to the end's zero block.
        List<Character> types = new ArrayList<>();
        for (int at = 0; at + 512 <= tar.length && tar[at] != 0; ) {
            types.add((char) tar[at + 156]);
            long size = Long.parseLong(new String(tar, at + 124, 11, StandardCharsets.US_ASCII).trim(), 8);
            at += 512 + (int) ((size + 511) / 512 * 512);
        }
        assertThat(types).as("directories n1/, n1/rules/, then the file; no 'x' (PAX) record")
                .containsExactly('5', '5', '0');
        try (TarArchiveInputStream entries = new TarArchiveInputStream(new ByteArrayInputStream(tar))) {
            for (TarArchiveEntry entry = entries.getNextEntry(); entry != null; entry = entries.getNextEntry()) {
                assertThat(entry.getLastModifiedTime().toInstant()).as(entry.getName())
                        .isEqualTo(Instant.parse("2026-12-08T01:02:03Z"));
            }
        }
    }

    private static Map<String, byte[]> read(InputStream gzip) throws Exception {
        Map<String, byte[]> files = new LinkedHashMap<>();
        try (TarArchiveInputStream tar = new TarArchiveInputStream(gzip)) {
            for (TarArchiveEntry entry = tar.getNextEntry(); entry != null; entry = tar.getNextEntry()) {
                if (entry.isFile()) {
                    files.put(entry.getName(), tar.readAllBytes());
                }
            }
        }
        return files;
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.ISO_8859_1);
    }
}
