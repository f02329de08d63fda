package io.pintle.server.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.pintle.api.dto.Manifest;
import io.pintle.api.dto.ManifestEtag;
import io.pintle.server.testing.TestThreads;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** Change lists ({@code ?since=}): what {@link TreeManifest} writes against the versions it remembers. */
class TreeManifestChangesTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @RegisterExtension
    final TestThreads threads = new TestThreads();

    private final DigestCache digests = new DigestCache(1000, 3, threads.workers());
    private final TreeScanner scanner = new TreeScanner(digests, 10_000);

    @AfterEach
    void close() {
        digests.close();
    }

    @Test
    void aChangeListHoldsExactlyTheTopLevelEntriesThatChangedWholeAndWhatWentAway(@TempDir Path dir)
            throws Exception {
        // Names that interleave in manifest order: "a-b" and "a.c" sort between "a" and "a/...".
        for (String node : List.of("a", "a-b", "a.c", "b", "c")) {
            write(dir.resolve(node).resolve("rules/rudder.tar.bz2"), node + " generation 1");
            write(dir.resolve(node).resolve("rules/rudder.json"), "{}");
        }
        write(dir.resolve("top-file"), "a file at the top");
        TreeManifest manifests = new TreeManifest();
        Manifest first = read(manifests, dir, "");
        assertThat(first.isChangeList()).isFalse();
        assertThat(first).isEqualTo(whole(dir)); // asked with an empty since: the whole manifest, remembered

        write(dir.resolve("a/rules/rudder.tar.bz2"), "a generation 2");
        write(dir.resolve("a-b/rules/new-file"), "added");
        write(dir.resolve("c/rules/rudder.json"), "{\"x\":1}");
        deleteTree(dir.resolve("b"));
        Files.delete(dir.resolve("top-file"));
        write(dir.resolve("d/rules/rudder.tar.bz2"), "d generation 1");
        Manifest changes = read(manifests, dir, first.etag());
        Manifest now = whole(dir);

        assertThat(changes.isChangeList()).isTrue();
        assertThat(changes.since()).isEqualTo(first.etag());
        assertThat(changes.etag()).isEqualTo(now.etag());
        assertThat(changes.files()).isEqualTo(now.files());
        assertThat(changes.bytes()).isEqualTo(now.bytes());
        assertThat(changes.removed()).containsExactly("b", "top-file");
        // Every entry of a changed top-level entry, as the whole manifest has it, in manifest order; "a.c" unchanged.
        List<Manifest.Entry> expected = now.entries().stream()
                .filter(entry -> List.of("a", "a-b", "c", "d").contains(top(entry.path()))).toList();
        assertThat(changes.entries()).containsExactlyElementsOf(expected);

        // Nothing changed since: an empty change list.
        Manifest none = read(manifests, dir, now.etag());
        assertThat(none.since()).isEqualTo(now.etag());
        assertThat(none.entries()).isEmpty();
        assertThat(none.removed()).isEmpty();
    }

    @Test
    void aPassByTopLevelDirectoryGivesTheScansEtagAtRestAndEachDirectoryWholeWhileOthersAreReplaced(
            @TempDir Path dir) throws Exception {
        for (String node : List.of("a", "a-b", "b", "c")) {
            generation(dir.resolve(node), "rules", node + " 1");
        }
        write(dir.resolve("top-file"), "x");
        TreeVersion scanned = scanner.scan(dir, false);
        List<Manifest.Entry> passed = new ArrayList<>();
        TreeVersion version = scanner.walkByTopLevel(dir, false, (entry, stat) -> passed.add(entry));
        assertThat(version.etag()).isEqualTo(scanned.etag());
        assertThat(version.files()).isEqualTo(scanned.files());
        assertThat(passed).isEqualTo(whole(dir).entries());

        // While the pass hands out b, c's rules/ is replaced as Rudder does: a scan and its replay would find the tree
        // changed; the pass reads c after, whole, as its new version.
        TreeVersion before = scanner.scan(dir, false);
        List<Manifest.Entry> during = new ArrayList<>();
        boolean[] swapped = {false};
        scanner.walkByTopLevel(dir, false, (entry, stat) -> {
            if (entry.path().startsWith("b/") && !swapped[0]) {
                swapped[0] = true;
                try {
                    generation(dir.resolve("c"), "rules.new", "c 2");
                    Files.move(dir.resolve("c/rules"), dir.resolve("c/rules.old"));
                    Files.move(dir.resolve("c/rules.new"), dir.resolve("c/rules"));
                    deleteTree(dir.resolve("c/rules.old"));
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }
            during.add(entry);
        });
        assertThat(swapped[0]).isTrue();
        assertThat(during).isEqualTo(whole(dir).entries()); // c's new version, whole
        assertThat(during).filteredOn(entry -> entry.path().equals("c/rules/promises.cf")).singleElement()
                .extracting(Manifest.Entry::sha256).isEqualTo(sha256("bundle agent main { } # c 2\n"));
        assertThatThrownBy(() -> scanner.replay(before, (entry, stat) -> {}))
                .isInstanceOf(FileVersion.FileChangedException.class);
    }

    @Test
    void aTouchedDirectoryOrAModeIsAChangeOfItsTopLevelEntry(@TempDir Path dir) throws Exception {
        write(dir.resolve("n1/rules/f"), "x");
        write(dir.resolve("n2/rules/f"), "x");
        TreeManifest manifests = new TreeManifest();
        Manifest first = read(manifests, dir, "");
        Files.setLastModifiedTime(dir.resolve("n2/rules"), FileTime.from(Instant.parse("2020-01-01T00:00:00Z")));
        Manifest changes = read(manifests, dir, first.etag());
        assertThat(changes.entries()).extracting(Manifest.Entry::path).containsExactly("n2", "n2/rules",
                "n2/rules/f");
    }

    @Test
    void aVersionNoLongerHeldIsAnsweredWhole(@TempDir Path dir) throws Exception {
        write(dir.resolve("n1/f"), "1");
        ManifestHistory history = new ManifestHistory(100);
        TreeManifest manifests = new TreeManifest(history);
        Manifest first = read(manifests, dir, "");
        write(dir.resolve("n1/f"), "2");
        Manifest second = read(manifests, dir, first.etag());
        write(dir.resolve("n1/f"), "3");
        Manifest third = read(manifests, dir, second.etag());
        assertThat(third.isChangeList()).isTrue();
        // Two versions per tree: the first is gone, so a follower still on it gets the whole manifest.
        Manifest again = read(manifests, dir, first.etag());
        assertThat(again.isChangeList()).isFalse();
        assertThat(again).isEqualTo(whole(dir));
        Manifest unknown = read(manifests, dir, "\"m-00000000000000000000000000000000\"");
        assertThat(unknown.isChangeList()).isFalse();
    }

    @Test
    void aTopLevelEntryPastTheHeldLimitIsWrittenAsChanged(@TempDir Path dir) throws Exception {
        for (int i = 0; i <= TreeManifest.MAX_HELD + 10; i++) {
            write(dir.resolve("big/f" + i), "same");
        }
        write(dir.resolve("small/f"), "x");
        write(dir.resolve("big-sibling/f"), "sorts between big and big/f0");
        TreeManifest manifests = new TreeManifest();
        Manifest first = read(manifests, dir, "");
        assertThat(first).isEqualTo(whole(dir)); // in manifest order, though big streamed beside its sibling
        write(dir.resolve("small/f"), "y");
        Manifest changes = read(manifests, dir, first.etag());
        assertThat(changes.entries()).extracting(entry -> top(entry.path()))
                .containsOnly("big", "big-sibling", "small");
        assertThat(changes.entries()).hasSize(first.entries().size());
        assertThat(changes.entries()).extracting(Manifest.Entry::path).isSorted();
        // Unchanged since, yet too large to hold: written again with the sibling held beside it (a follower finds
        // them identical); "small" not.
        assertThat(read(manifests, dir, changes.etag()).entries()).extracting(entry -> top(entry.path()))
                .containsOnly("big", "big-sibling");
    }

    @Test
    void aChangeListLargerThanTheSpoolsHeapPartGoesThroughAFileAndLeavesNothing(@TempDir Path dir,
            @TempDir Path spools) throws Exception {
        for (int node = 0; node < 40; node++) {
            generation(dir.resolve("n" + node), "rules", "n" + node + " 1");
        }
        List<Spool> made = new ArrayList<>();
        TreeManifest manifests = new TreeManifest(new ManifestHistory(1000), () -> {
            Spool spool = new Spool(spools, 1 << 20, 512);
            made.add(spool);
            return spool;
        });
        Manifest first = read(manifests, dir, "");
        for (int node = 0; node < 40; node += 2) {
            generation(dir.resolve("n" + node), "rules", "n" + node + " 2");
        }
        Manifest changes = read(manifests, dir, first.etag());
        Manifest now = whole(dir);
        assertThat(made).singleElement().satisfies(spool -> {
            assertThat(spool.spilled()).isTrue();
            assertThat(spool.references()).isZero(); // read() released it
        });
        assertThat(changes.etag()).isEqualTo(now.etag());
        assertThat(changes.entries()).hasSize(20 * 4).containsExactlyElementsOf(now.entries().stream()
                .filter(entry -> Integer.parseInt(top(entry.path()).substring(1)) % 2 == 0).toList());
        try (java.util.stream.Stream<Path> left = Files.list(spools)) {
            assertThat(left).isEmpty();
        }

        // A change list past the spool's bound is refused, its spool freed.
        TreeManifest bounded = new TreeManifest(new ManifestHistory(1000), () -> {
            Spool spool = new Spool(spools, 1000, 512);
            made.add(spool);
            return spool;
        });
        Manifest again = read(bounded, dir, "");
        generation(dir.resolve("n1"), "rules", "n1 3");
        generation(dir.resolve("n3"), "rules", "n3 3");
        generation(dir.resolve("n5"), "rules", "n5 3");
        assertThatThrownBy(() -> read(bounded, dir, again.etag())).isInstanceOf(Spool.TooLargeException.class);
        assertThat(made).hasSize(2).last().satisfies(spool -> assertThat(spool.references()).isZero());
    }

    @Test
    void theHistoryKeepsTwoVersionsPerTreeAndItsBoundOverAll() {
        ManifestHistory history = new ManifestHistory(10);
        Path tree1 = Path.of("/t1");
        Path tree2 = Path.of("/t2");
        history.put(tree1, "\"e1\"", fingerprints(4));
        history.put(tree1, "\"e2\"", fingerprints(4));
        history.put(tree1, "\"e3\"", fingerprints(4));
        assertThat(history.get(tree1, "\"e1\"")).isNull();
        assertThat(history.get(tree1, "\"e2\"")).isNotNull();
        assertThat(history.versions()).isEqualTo(2);
        assertThat(history.names()).isEqualTo(8);
        history.get(tree1, "\"e2\""); // now the most recently used of tree1's
        history.put(tree2, "\"f1\"", fingerprints(4)); // 12 > 10: the least recently used goes (e3)
        assertThat(history.get(tree1, "\"e3\"")).isNull();
        assertThat(history.get(tree1, "\"e2\"")).isNotNull();
        assertThat(history.get(tree2, "\"f1\"")).isNotNull();
        assertThat(history.names()).isEqualTo(8);
        history.put(tree2, "\"big\"", fingerprints(11)); // larger than the whole history: not held
        assertThat(history.get(tree2, "\"big\"")).isNull();
        assertThat(history.names()).isLessThanOrEqualTo(10);
    }

    private static ManifestHistory.Fingerprints fingerprints(int names) {
        ManifestHistory.Builder builder = new ManifestHistory.Builder();
        for (int i = 0; i < names; i++) {
            builder.add("n" + i, new ManifestEtag().add(new Manifest.Entry("n" + i, "directory", null, "0755",
                    null, null, null)).value());
        }
        return builder.build();
    }

    /** As the server answers {@code ?since=}: a change list when the version is held, else the whole manifest. */
    private Manifest read(TreeManifest manifests, Path dir, String since) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ManifestHistory.Fingerprints before = since.isEmpty() ? null : manifests.held(dir, since);
        if (before == null) {
            manifests.writeRemembered(scanner, scanner.scan(dir, false), out);
        } else {
            TreeManifest.ChangeList changes = manifests.changes(scanner, dir, since, before, false);
            try {
                manifests.remember(changes);
                manifests.write(changes, out);
            } finally {
                changes.release();
            }
        }
        return JSON.readValue(out.toByteArray(), Manifest.class);
    }

    private Manifest whole(Path dir) throws Exception {
        TreeVersion version = scanner.scan(dir, false);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        new TreeManifest().write(scanner, version, out);
        String text = out.toString(StandardCharsets.UTF_8);
        assertThat(text).doesNotContain("since").doesNotContain("removed");
        return JSON.readValue(text, Manifest.class);
    }

    private static void generation(Path node, String rules, String content) throws Exception {
        write(node.resolve(rules).resolve("rudder.tar.bz2"), content);
        write(node.resolve(rules).resolve("promises.cf"), "bundle agent main { } # " + content + "\n");
    }

    private static String sha256(String content) throws Exception {
        return java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-256")
                .digest(content.getBytes(StandardCharsets.UTF_8)));
    }

    private static String top(String path) {
        int slash = path.indexOf('/');
        return slash < 0 ? path : path.substring(0, slash);
    }

    private static void write(Path file, String content) throws Exception {
        Files.createDirectories(file.getParent());
        Files.writeString(file, content);
        // Each write a new mtime, even within the file system's clock tick.
        Files.setLastModifiedTime(file, FileTime.from(Instant.now().plusNanos(System.nanoTime() % 1_000_000)));
    }

    private static void deleteTree(Path root) throws Exception {
        try (var walk = Files.walk(root)) {
            List<Path> paths = new ArrayList<>(walk.toList());
            java.util.Collections.reverse(paths);
            for (Path path : paths) {
                Files.delete(path);
            }
        }
    }

}
