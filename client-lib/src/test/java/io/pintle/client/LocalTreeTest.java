package io.pintle.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What a scan of a local tree sees: every entry once, with the attributes a stat gives, links never followed. */
class LocalTreeTest {
    @Test
    void everyEntryWithItsKindSizeModeAndMtimeLinksNotFollowed(@TempDir Path dir) throws Exception {
        Path root = dir.resolve("node");
        Path outside = Files.createDirectories(dir.resolve("outside"));
        Files.writeString(outside.resolve("secret"), "not to be seen");
        Files.createDirectories(root.resolve("rules/cfengine-community/deep/er"));
        Files.writeString(root.resolve("rules/rudder.tar.bz2"), "12345");
        Files.writeString(root.resolve("rules/cfengine-community/deep/er/promises.cf"), "bundle");
        Files.setPosixFilePermissions(root.resolve("rules/cfengine-community/deep/er/promises.cf"),
                PosixFilePermissions.fromString("rw-r-----"));
        Files.setPosixFilePermissions(root.resolve("rules/cfengine-community/deep"),
                PosixFilePermissions.fromString("rwxr-x---"));
        FileTime when = FileTime.from(Instant.parse("2026-12-02T15:00:00.123456Z"));
        Files.setLastModifiedTime(root.resolve("rules/rudder.tar.bz2"), when);
        Files.createSymbolicLink(root.resolve("rules/out"), outside);
        Files.createSymbolicLink(root.resolve("rules/dangling"), Path.of("nowhere"));

        LocalTree tree = LocalTree.scan(root);

        assertThat(tree.exists()).isTrue();
        Map<String, LocalTree.Entry> entries = tree.entries();
        assertThat(entries).containsOnlyKeys("rules", "rules/rudder.tar.bz2", "rules/cfengine-community",
                "rules/cfengine-community/deep", "rules/cfengine-community/deep/er",
                "rules/cfengine-community/deep/er/promises.cf", "rules/out", "rules/dangling");
        assertThat(entries.get("rules/rudder.tar.bz2").kind()).isEqualTo(LocalTree.Kind.FILE);
        assertThat(entries.get("rules/rudder.tar.bz2").size()).isEqualTo(5);
        assertThat(entries.get("rules/rudder.tar.bz2").mtime()).isEqualTo(when);
        assertThat(PosixFilePermissions.toString(entries.get("rules/cfengine-community/deep/er/promises.cf")
                .permissions())).isEqualTo("rw-r-----");
        assertThat(entries.get("rules/cfengine-community/deep").kind()).isEqualTo(LocalTree.Kind.DIRECTORY);
        assertThat(PosixFilePermissions.toString(entries.get("rules/cfengine-community/deep").permissions()))
                .isEqualTo("rwxr-x---");
        LocalTree.Entry link = entries.get("rules/out");
        assertThat(link.kind()).isEqualTo(LocalTree.Kind.SYMLINK);
        assertThat(link.target()).isEqualTo(outside.toString());
        assertThat(link.permissions()).isNull();
        assertThat(entries.get("rules/dangling").target()).isEqualTo("nowhere");
        assertThat(entries.keySet()).noneMatch(path -> path.contains("secret"));
        // The attributes are the entry's own (lstat), as Files reads them.
        assertThat(entries.get("rules/cfengine-community/deep/er/promises.cf").mtime()).isEqualTo(
                Files.getLastModifiedTime(root.resolve("rules/cfengine-community/deep/er/promises.cf"),
                        LinkOption.NOFOLLOW_LINKS));
    }

    @Test
    void aMissingRootIsAnEmptyTreeAndAFileRootIsRefused(@TempDir Path dir) throws Exception {
        LocalTree missing = LocalTree.scan(dir.resolve("none"));
        assertThat(missing.exists()).isFalse();
        assertThat(missing.entries()).isEmpty();
        assertThat(LocalTree.scan(Files.createDirectory(dir.resolve("empty"))).entries()).isEmpty();
        Path file = Files.writeString(dir.resolve("file"), "x");
        assertThatThrownBy(() -> LocalTree.scan(file)).isInstanceOf(IOException.class)
                .hasMessageContaining("is not a directory");
        Path link = Files.createSymbolicLink(dir.resolve("link"), dir.resolve("empty"));
        assertThatThrownBy(() -> LocalTree.scan(link)).as("a link is not followed").isInstanceOf(IOException.class);
    }
}
