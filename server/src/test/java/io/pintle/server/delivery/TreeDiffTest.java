package io.pintle.server.delivery;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TreeDiffTest {
    @Test
    void addedRemovedChangedTextAndBinary(@TempDir Path dir) throws Exception {
        Path before = Files.createDirectories(dir.resolve("before/sub"));
        Path after = Files.createDirectories(dir.resolve("after/sub"));
        Files.writeString(before.resolve("same.cf"), "same\n");
        Files.writeString(after.resolve("same.cf"), "same\n");
        Files.writeString(before.resolve("gone.cf"), "x\n");
        Files.writeString(after.resolve("new.cf"), "y\n");
        Files.writeString(before.resolve("text.cf"), "a\nb\nc\n");
        Files.writeString(after.resolve("text.cf"), "a\nB\nc\n");
        Files.write(before.resolve("blob"), new byte[] {0, 1});
        Files.write(after.resolve("blob"), new byte[] {0, 2});
        Files.createLink(after.resolve("linked.cf"), Files.writeString(before.resolve("linked.cf"), "l\n"));

        TreeDiff.Result result = TreeDiff.compare(dir.resolve("before"), dir.resolve("after"));

        assertThat(result.added()).containsExactly("sub/new.cf");
        assertThat(result.removed()).containsExactly("sub/gone.cf");
        assertThat(result.unchanged()).isEqualTo(2);
        assertThat(result.changed()).extracting(TreeDiff.Change::path).containsExactly("sub/blob", "sub/text.cf");
        TreeDiff.Change blob = result.changed().get(0);
        assertThat(blob.binary()).isTrue();
        assertThat(blob.diff()).isNull();
        assertThat(result.changed().get(1).diff()).contains("--- a/sub/text.cf", "+++ b/sub/text.cf", "-b", "+B",
                " a");
        assertThat(result.truncated()).isFalse();
    }

    @Test
    void largeFilesAreComparedButNotDiffedAndAnAbsentSideIsAllAddedOrRemoved(@TempDir Path dir) throws Exception {
        Path before = Files.createDirectories(dir.resolve("before"));
        Path after = Files.createDirectories(dir.resolve("after"));
        Files.writeString(before.resolve("big.cf"), "a\n".repeat(TreeDiff.MAX_TEXT_BYTES));
        Files.writeString(after.resolve("big.cf"), "b\n".repeat(TreeDiff.MAX_TEXT_BYTES));
        TreeDiff.Result result = TreeDiff.compare(before, after);
        assertThat(result.changed()).singleElement().satisfies(change -> {
            assertThat(change.diff()).isNull();
            assertThat(change.truncated()).isTrue();
        });
        assertThat(result.truncated()).isTrue();
        assertThat(TreeDiff.compare(null, after).added()).containsExactly("big.cf");
        assertThat(TreeDiff.compare(before, dir.resolve("absent")).removed()).containsExactly("big.cf");
    }
}
