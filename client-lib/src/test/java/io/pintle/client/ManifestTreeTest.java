package io.pintle.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pintle.api.dto.Manifest;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** What a manifest from the network may say, checked before anything is written. */
class ManifestTreeTest {
    private static final String SHA = "a".repeat(64);

    private static Manifest.Entry dir(String path) {
        return new Manifest.Entry(path, Manifest.Types.DIRECTORY, null, "0755", null, null, null);
    }

    private static Manifest.Entry file(String path) {
        return new Manifest.Entry(path, Manifest.Types.FILE, 3L, "0644", "2026-12-02T15:00:00.123456789Z", SHA, null);
    }

    private static Manifest.Entry link(String path, String target) {
        return new Manifest.Entry(path, Manifest.Types.SYMLINK, null, null, null, null, target);
    }

    private static ManifestTree tree(Manifest.Entry... entries) {
        return ManifestTree.of(new Manifest(1, "\"e\"", 0, 0, List.of(entries)));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "/abs", "../up", "a/../b", "a//b", "a/", "./a", ".", "..", "nul\u0000", "tab\there",
            "back\\slash"})
    void unsafePathsAreNotTreePaths(String path) {
        assertThatThrownBy(() -> new TreePath(path)).isInstanceOf(IllegalArgumentException.class);
    }

    @ParameterizedTest
    @ValueSource(strings = {"a", "a/b", "..a", "a..", ".hidden/x", "sp ace/ünï€"})
    void ordinaryPathsAreTreePaths(String path) {
        assertThat(new TreePath(path).value()).isEqualTo(path);
    }

    @Test
    void aWellFormedManifestIsAccepted() {
        ManifestTree tree = tree(dir("d"), dir("d/e"), file("d/e/f"), link("d/l", "e/f"), link("top", "d/e/../e"),
                link("self", "."));

        assertThat(tree.fileBytes()).isEqualTo(3);
        assertThat(tree.directories()).extracting(TreePath::value).containsExactly("d", "d/e");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "/etc/shadow     | absolute target",
        "../..           | leaves the tree",
        "../../x         | leaves the tree",
        "e/../../..      | leaves the tree",
        "loop/../..      | leaves the tree",
        "deep/../../..   | leaves the tree",
    })
    void linkTargetsLeavingTheTreeAreRefused(String target, String rule) {
        assertThatThrownBy(() -> tree(dir("d"), dir("d/e"), link("d/loop", "."), link("d/deep", "e/."),
                link("d/evil", target)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'d/evil'")
                .hasMessageContaining(rule);
    }

    @Test
    void aLinkLoopIsRefusedNotFollowedForever() {
        assertThatThrownBy(() -> tree(link("a", "b/x"), link("b", "a/x"), link("c", "a/y")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("leaves the tree");
    }

    @Test
    void anEntryInsideALinkIsRefused() {
        assertThatThrownBy(() -> tree(dir("d"), link("l", "d"), file("l/f")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'l/f' is not inside a directory entry");
    }

    @Test
    void anEntryWithoutItsParentDirectoryIsRefused() {
        assertThatThrownBy(() -> tree(file("missing/f")))
                .hasMessageContaining("'missing/f' is not inside a directory entry");
    }

    @Test
    void aPathTwiceIsRefused() {
        assertThatThrownBy(() -> tree(file("f"), dir("f"))).hasMessageContaining("'f' appears twice");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "file   | -1 | SHA  | 0644 | 2026-12-02T15:00:00Z | no valid size",
        "file   | 3  | ABC  | 0644 | 2026-12-02T15:00:00Z | no valid sha256",
        "file   | 3  | SHA  | rwxr | 2026-12-02T15:00:00Z | invalid mode",
        "file   | 3  | SHA  | 0644 | yesterday | invalid mtime",
        "device | 3  | SHA  | 0644 | 2026-12-02T15:00:00Z | unknown type",
    })
    void malformedEntriesAreRefusedNamingTheRule(String type, long size, String sha, String mode, String mtime,
            String rule) {
        List<Manifest.Entry> entries = new ArrayList<>();
        entries.add(new Manifest.Entry("f", type, size, mode, mtime, sha.equals("SHA") ? SHA : sha, null));
        assertThatThrownBy(() -> ManifestTree.of(new Manifest(1, "\"e\"", 1, 3, entries)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'f'")
                .hasMessageContaining(rule);
    }

    @Test
    void setuidSetgidAndStickyBitsAreNeverApplied() {
        assertThat(ManifestTree.permissions(new Manifest.Entry("f", "file", 1L, "6755", null, SHA, null)))
                .isEqualTo(java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    @Test
    void eachEntrysModeAndMtimeAreParsedOnceAndKept() {
        ManifestTree tree = tree(dir("rules"), file("rules/promises.cf"), link("rules/l", "promises.cf"));
        TreePath file = new TreePath("rules/promises.cf");
        assertThat(tree.mtime(file)).isEqualTo(java.time.Instant.parse("2026-12-02T15:00:00.123456789Z"));
        assertThat(java.nio.file.attribute.PosixFilePermissions.toString(tree.permissions(file))).isEqualTo("rw-r--r--");
        assertThat(java.nio.file.attribute.PosixFilePermissions.toString(tree.permissions(new TreePath("rules"))))
                .isEqualTo("rwxr-xr-x");
        assertThat(tree.mtime(new TreePath("rules"))).isNull();
        assertThat(tree.permissions(new TreePath("rules/l"))).isNull();
        assertThat(tree.permissions(file)).isEqualTo(ManifestTree.permissions(tree.entries().get(file)));
    }
}
