package io.pintle.server.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.pintle.api.dto.Manifest;
import io.pintle.server.testing.TestThreads;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.security.MessageDigest;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

class TreeScannerTest {
    @RegisterExtension
    final TestThreads threads = new TestThreads();

    private final DigestCache digests = new DigestCache(1000, 3, threads.workers());
    private final TreeScanner scanner = new TreeScanner(digests, 1000);

    @AfterEach
    void close() {
        digests.close();
    }

    /**
     * A change wait watches every directory of a tree up to 4,096 of them; a larger tree (a relay's share of Rudder
     * nodes, 12 directories a node) its root and the directories directly in it, where Rudder's rename of a node's
     * rules.new over rules shows. Both passes (a scan, a change list's pass by top-level directory) say so.
     */
    @Test
    void aTreeOfManyDirectoriesIsWatchedAtItsTopTwoLevels(@TempDir Path dir) throws Exception {
        Path small = dir.resolve("small");
        Files.createDirectories(small.resolve("n1/rules/cfengine-community/technique/1.0"));
        TreeVersion few = scanner.scan(small, true);
        assertThat(few.directories()).containsExactly(small, small.resolve("n1"), small.resolve("n1/rules"),
                small.resolve("n1/rules/cfengine-community"), small.resolve("n1/rules/cfengine-community/technique"),
                small.resolve("n1/rules/cfengine-community/technique/1.0"));
        assertThat(scanner.scan(small, false).directories()).isEmpty();

        Path share = dir.resolve("share");
        int nodes = TreeScanner.MAX_WATCHED_DIRECTORIES / 4 + 1;
        List<Path> expected = new ArrayList<>();
        expected.add(share);
        for (int node = 0; node < nodes; node++) {
            Path nodeDirectory = share.resolve(String.format("node-%04d", node));
            Files.createDirectories(nodeDirectory.resolve("rules/cfengine-community/technique"));
            expected.add(nodeDirectory);
        }
        TreeScanner large = new TreeScanner(digests, 100_000);
        assertThat(large.scan(share, true).directories()).containsExactlyElementsOf(expected);
        assertThat(large.walkByTopLevel(share, true, (entry, stat) -> {}).directories())
                .containsExactlyElementsOf(expected);
        assertThat(large.walkByTopLevel(share, false, (entry, stat) -> {}).directories()).isEmpty();
    }

    @Test
    void digestsAreComputedOncePerFileVersion(@TempDir Path dir) throws Exception {
        for (int i = 0; i < 20; i++) {
            Files.writeString(Files.createDirectories(dir.resolve("d" + i % 3)).resolve("f" + i), "content " + i);
        }
        Manifest first = manifest(dir);
        assertThat(digests.computed()).isEqualTo(20);
        // A manifest walks the tree twice (its ETag, then its body): the second walk found every digest kept.
        assertThat(digests.hits()).isEqualTo(20);
        assertThat(manifest(dir)).isEqualTo(first);
        assertThat(digests.computed()).isEqualTo(20);
        assertThat(digests.hits()).isEqualTo(60);

        // Rewritten in place (same inode, same size) with a new mtime: computed again, and only that file.
        Path file = dir.resolve("d1/f1");
        Files.writeString(file, "CONTENT 1");
        Files.setLastModifiedTime(file, FileTime.from(Instant.now().plusSeconds(5)));
        Manifest second = manifest(dir);
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
        Manifest manifest = manifest(dir);
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
        assertThatThrownBy(() -> scanner.scan(dir.resolve("file"), false))
                .isInstanceOf(TreeScanner.NotADirectoryException.class);
        for (int i = 0; i < 1001; i++) {
            Files.writeString(dir.resolve("f" + i), "x");
        }
        assertThatThrownBy(() -> scanner.scan(dir, false)).isInstanceOf(TreeScanner.TreeTooLargeException.class)
                .hasMessageContaining("more than 1000 entries");
    }

    /**
     * A small directory is listed in one call, a large one name by name: the same names, the same order, the same
     * bound on entries, whatever their characters.
     */
    @Test
    void largeDirectoriesAreListedNameByNameWithTheSameResultAndBound(@TempDir Path dir) throws Exception {
        Path small = Files.createDirectories(dir.resolve("small"));
        Path large = Files.createDirectories(dir.resolve("large"));
        List<String> names = new ArrayList<>(List.of("été", "日本", "a b", "a-b", "Z"));
        for (String name : names) {
            Files.writeString(small.resolve(name), name);
            Files.writeString(large.resolve(name), name);
        }
        // Enough entries that the directory's stat says more than a small directory's size, whatever the file system.
        String filler = "x".repeat(100);
        for (int i = 0; Files.size(large) <= TreeScanner.SMALL_DIRECTORY_BYTES; i++) {
            assertThat(i).as("entries needed to grow the directory past a small one's size").isLessThan(20_000);
            Files.createDirectory(large.resolve(filler + i));
            names.add(filler + i);
        }
        assertThat(Files.size(small)).isLessThanOrEqualTo(TreeScanner.SMALL_DIRECTORY_BYTES);
        List<String> sorted = names.stream().sorted().toList();
        TreeScanner unbounded = new TreeScanner(digests, 100_000);
        List<String> listed = new ArrayList<>();
        unbounded.replay(unbounded.scan(large, false), (entry, stat) -> listed.add(entry.path()));
        assertThat(listed).containsExactlyElementsOf(sorted);
        List<String> listedSmall = new ArrayList<>();
        unbounded.replay(unbounded.scan(small, false), (entry, stat) -> listedSmall.add(entry.path()));
        assertThat(listedSmall).containsExactlyElementsOf(names.subList(0, 5).stream().sorted().toList());
        // One entry past the bound is refused on both ways.
        assertThatThrownBy(() -> new TreeScanner(digests, names.size() - 1).scan(large, false))
                .isInstanceOf(TreeScanner.TreeTooLargeException.class);
        assertThatThrownBy(() -> new TreeScanner(digests, 4).scan(small, false))
                .isInstanceOf(TreeScanner.TreeTooLargeException.class);
        assertThat(new TreeScanner(digests, 5).scan(small, false).files()).isEqualTo(5);
    }

    @Test
    void theEtagCoversEveryField(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("f"), "x");
        String before = scanner.scan(dir, false).etag();
        Files.setPosixFilePermissions(dir.resolve("f"), java.nio.file.attribute.PosixFilePermissions.fromString("rwx------"));
        String afterMode = scanner.scan(dir, false).etag();
        assertThat(afterMode).isNotEqualTo(before);
        Files.createDirectory(dir.resolve("empty"));
        assertThat(scanner.scan(dir, false).etag()).isNotEqualTo(afterMode);
        assertThat(before).matches("\"m-[0-9a-f]{32}\"");
    }

    @Test
    void treesDeeperThan64DirectoriesAreTooLarge(@TempDir Path dir) throws Exception {
        Path deep = dir;
        for (int level = 1; level < TreeScanner.MAX_DEPTH; level++) {
            deep = deep.resolve("d");
        }
        Files.createDirectories(deep);
        Files.writeString(deep.resolve("f"), "x");
        // 63 directories, one in the other, and a file in the deepest: 64 levels, the most that is described.
        assertThat(scanner.scan(dir, false).files()).isOne();
        Files.createDirectory(deep.resolve("d"));
        assertThatThrownBy(() -> scanner.scan(dir, false)).isInstanceOf(TreeScanner.TreeTooLargeException.class)
                .hasMessageContaining("more than 64 directories deep");
    }

    /**
     * The manifest written as the tree is walked is, byte for byte, Jackson's serialization of the whole {@link
     * Manifest} record with its entries sorted by whole path (what a manifest was before it was streamed), and
     * its ETag is that of those entries.
     */
    @Test
    void theStreamedManifestIsJacksonsSerializationOfTheSortedRecord(@TempDir Path dir) throws Exception {
        String[] names = {"a", "a-b", "a.c", "a0", "ab", "a b", "a!", "é", "z", "Z", "~", "a+"};
        for (String first : names) {
            for (String second : names) {
                Path parent = dir.resolve(first);
                if (!Files.exists(parent)) {
                    Files.createDirectories(parent);
                }
                if (second.compareTo(first) < 0) {
                    Files.createDirectories(parent.resolve(second).resolve("x"));
                    Files.writeString(parent.resolve(second).resolve("x").resolve(first), first + second);
                } else {
                    Files.writeString(parent.resolve(second), second + "\n" + first);
                }
            }
        }
        Files.writeString(dir.resolve("quote\"and\\back\u0001slash"), "odd");
        Files.createSymbolicLink(dir.resolve("a-link"), Path.of("a/a-b"));

        List<String> onDisk = new ArrayList<>();
        try (Stream<Path> walk = Files.walk(dir)) {
            walk.filter(path -> !path.equals(dir)).forEach(path -> onDisk.add(dir.relativize(path).toString()));
        }
        Collections.sort(onDisk);

        TreeVersion version = scanner.scan(dir, false);
        List<Manifest.Entry> entries = new ArrayList<>();
        scanner.replay(version, (entry, stat) -> entries.add(entry));
        assertThat(entries).extracting(Manifest.Entry::path).containsExactlyElementsOf(onDisk);
        assertThat(TreeScanner.etag(entries)).isEqualTo(version.etag());

        ByteArrayOutputStream streamed = new ByteArrayOutputStream();
        new TreeManifest().write(scanner, version, streamed);
        Manifest whole = new Manifest(Manifest.FORMAT, version.etag(), version.files(), version.bytes(), entries);
        assertThat(streamed.toString(StandardCharsets.UTF_8))
                .isEqualTo(new String(new ObjectMapper().writeValueAsBytes(whole), StandardCharsets.UTF_8));
        assertThat(whole.files()).isEqualTo(entries.stream().filter(Manifest.Entry::isFile).count());
    }

    @Test
    void aReplayOfAVersionNoLongerThereFailsBeforeItsEnd(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("f"), "x");
        Files.writeString(dir.resolve("g"), "y");
        TreeVersion version = scanner.scan(dir, false);
        Files.writeString(dir.resolve("h"), "z");
        ByteArrayOutputStream streamed = new ByteArrayOutputStream();
        assertThatThrownBy(() -> new TreeManifest().write(scanner, version, streamed))
                .isInstanceOf(FileVersion.FileChangedException.class);
        assertThat(streamed.toString(StandardCharsets.UTF_8)).doesNotEndWith("]}");
    }

    @Test
    void aWatchedVersionListsItsDirectories(@TempDir Path dir) throws Exception {
        Files.createDirectories(dir.resolve("a/b"));
        Files.createDirectories(dir.resolve("c"));
        assertThat(scanner.scan(dir, true).directories())
                .containsExactly(dir, dir.resolve("a"), dir.resolve("a/b"), dir.resolve("c"));
        assertThat(scanner.scan(dir, false).directories()).isEmpty();
    }

    private Manifest manifest(Path dir) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        new TreeManifest().write(scanner, scanner.scan(dir, false), out);
        return new ObjectMapper().readValue(out.toByteArray(), Manifest.class);
    }

    private static String sha256(String text) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
    }
}
