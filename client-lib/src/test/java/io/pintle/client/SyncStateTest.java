package io.pintle.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.pintle.api.dto.Manifest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The sidecar beside a synced directory: written whole or not at all, owner-only, read back as written. */
class SyncStateTest {
    private static final Manifest MANIFEST = new Manifest(Manifest.FORMAT, "\"etag-1\"", 1, 3, List.of(
            new Manifest.Entry("rules", Manifest.Types.DIRECTORY, null, "0755", null, null, null),
            new Manifest.Entry("rules/promises.cf", Manifest.Types.FILE, 3L, "0644", "2026-12-02T15:00:00Z",
                    "a".repeat(64), null)));

    @Test
    void writtenOwnerOnlyReadBackAndNoTemporaryFileLeft(@TempDir Path dir) throws Exception {
        Path local = dir.resolve("node-1");
        new SyncState(SyncState.FORMAT, "/policies/relay/share/node-1/", MANIFEST).write(local);

        Path sidecar = dir.resolve(".node-1.pintle-sync.json");
        assertThat(SyncState.file(local)).isEqualTo(sidecar);
        try (var siblings = Files.list(dir)) {
            assertThat(siblings.map(path -> path.getFileName().toString())).containsExactly(".node-1.pintle-sync.json");
        }
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(sidecar))).isEqualTo("rw-------");
        SyncState read = SyncState.read(local, "/policies/relay/share/node-1/");
        assertThat(read).isNotNull();
        assertThat(read.manifest().etag()).isEqualTo("\"etag-1\"");
        assertThat(read.manifest().entries()).isEqualTo(MANIFEST.entries());
        assertThat(SyncState.read(local, "/policies/relay/share/node-2/")).as("another remote").isNull();
    }

    @Test
    void aTemporaryFileLeftByACrashIsWrittenOverNotAppendedTo(@TempDir Path dir) throws Exception {
        Path local = dir.resolve("node-1");
        Path temporary = SyncState.temporary(SyncState.file(local));
        assertThat(temporary.getFileName().toString()).isEqualTo(".node-1.pintle-sync.json.tmp");
        Files.writeString(temporary, "{\"format\": 1, \"remote\": \"garbage that is longer than nothing" + "x".repeat(4096));

        new SyncState(SyncState.FORMAT, "/r/", MANIFEST).write(local);

        assertThat(temporary).doesNotExist();
        assertThat(SyncState.read(local, "/r/")).isNotNull();
        Manifest second = new Manifest(Manifest.FORMAT, "\"etag-2\"", 0, 0, List.of());
        new SyncState(SyncState.FORMAT, "/r/", second).write(local);
        assertThat(SyncState.read(local, "/r/").manifest().etag()).isEqualTo("\"etag-2\"");
        assertThat(temporary).doesNotExist();
    }

    @Test
    void retiredBeforeASwapItIsMissingToReadersAndASwapThatFailedPutsItBack(@TempDir Path dir) throws Exception {
        Path local = dir.resolve("node-1");
        assertThat(SyncState.retire(local)).as("no sidecar: nothing to retire").isNull();
        new SyncState(SyncState.FORMAT, "/r/", MANIFEST).write(local);
        Path retired = dir.resolve(".node-1.pintle-sync.json.retired");
        Files.writeString(retired, "left by a crash");

        assertThat(SyncState.retire(local)).isEqualTo(retired);

        assertThat(SyncState.file(local)).doesNotExist();
        assertThat(SyncState.read(local, "/r/")).as("to a sync, as if deleted").isNull();
        assertThat(retired).content().contains("etag-1");
        assertThat(SyncState.restore(retired, local)).isTrue();
        assertThat(SyncState.read(local, "/r/").manifest().etag()).isEqualTo("\"etag-1\"");
        assertThat(retired).doesNotExist();
        assertThat(SyncState.restore(null, local)).isFalse();
        assertThat(SyncState.restore(retired, local)).as("nothing retired any more").isFalse();
    }

    @Test
    void aTemporaryFileLeftAsALinkIsReplacedNeverWrittenThrough(@TempDir Path dir) throws Exception {
        Path local = dir.resolve("node-1");
        Path elsewhere = Files.writeString(dir.resolve("elsewhere"), "untouched");
        Files.setPosixFilePermissions(elsewhere, PosixFilePermissions.fromString("rw-r--r--"));
        Files.createSymbolicLink(SyncState.temporary(SyncState.file(local)), elsewhere);

        new SyncState(SyncState.FORMAT, "/r/", MANIFEST).write(local);

        assertThat(elsewhere).hasContent("untouched");
        assertThat(Files.isSymbolicLink(SyncState.file(local))).isFalse();
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(SyncState.file(local))))
                .isEqualTo("rw-------");
        assertThat(SyncState.read(local, "/r/")).isNotNull();
    }
}
