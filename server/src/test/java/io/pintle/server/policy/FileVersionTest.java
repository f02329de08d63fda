package io.pintle.server.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FileVersionTest {
    @TempDir
    Path dir;

    private Path file;

    @BeforeEach
    void createFile() throws IOException {
        file = dir.resolve("rudder.tar.bz2");
        Files.writeString(file, "old-content");
    }

    /** Replaces {@code file} as Rudder does: write a new file next to it, then rename it over the old one. */
    private void replaceByRename(String content, FileTime modified) throws IOException {
        Path fresh = dir.resolve("rudder.tar.bz2.new");
        Files.writeString(fresh, content);
        Files.setLastModifiedTime(fresh, modified);
        Files.move(fresh, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    private static String readAll(FileChannel channel) throws IOException {
        ByteBuffer buffer = ByteBuffer.allocate((int) channel.size() + 16);
        while (channel.read(buffer) > 0) {
            // keep reading
        }
        buffer.flip();
        return StandardCharsets.UTF_8.decode(buffer).toString();
    }

    @Test
    void etagIsQuotedAndStableForTheSameFile() throws IOException {
        FileVersion first = FileVersion.of(file);
        FileVersion second = FileVersion.of(file);

        assertThat(first.etag()).matches("\"[0-9a-f]{32}\"");
        assertThat(second).isEqualTo(first);
        assertThat(second.etag()).isEqualTo(first.etag());
    }

    @Test
    void describesSizeTimeAndKind() throws IOException {
        Instant modified = Instant.parse("2024-05-01T12:00:00Z");
        Files.setLastModifiedTime(file, FileTime.from(modified));

        FileVersion version = FileVersion.of(file);

        assertThat(version.path()).isEqualTo(file);
        assertThat(version.size()).isEqualTo("old-content".length());
        assertThat(version.lastModified()).isEqualTo(modified);
        assertThat(version.directory()).isFalse();
        assertThat(FileVersion.of(dir).directory()).isTrue();
    }

    @Test
    void etagChangesWhenTheFileIsReplacedByRenameWithSameSizeAndTime() throws IOException {
        FileVersion before = FileVersion.of(file);

        // Same size and same modification time: only the file's identity (inode) tells the versions apart.
        replaceByRename("new-content", Files.getLastModifiedTime(file));
        FileVersion after = FileVersion.of(file);

        assertThat(after.size()).isEqualTo(before.size());
        assertThat(after.lastModified()).isEqualTo(before.lastModified());
        assertThat(after.identity()).isNotEqualTo(before.identity());
        assertThat(after.etag()).isNotEqualTo(before.etag());
    }

    @Test
    void etagChangesWhenTheFileIsRewrittenInPlaceWithANewTime() throws IOException {
        FileVersion before = FileVersion.of(file);

        Files.writeString(file, "new-content");
        Files.setLastModifiedTime(file, FileTime.from(before.lastModified().plusSeconds(1)));

        assertThat(FileVersion.of(file).etag()).isNotEqualTo(before.etag());
    }

    @Test
    void openReadsTheDescribedFile() throws IOException {
        FileVersion version = FileVersion.of(file);

        try (FileChannel channel = version.open()) {
            assertThat(readAll(channel)).isEqualTo("old-content");
        }
    }

    @Test
    void openFailsWhenTheFileWasReplacedAfterBeingDescribed() throws IOException {
        FileVersion version = FileVersion.of(file);
        replaceByRename("new-content", Files.getLastModifiedTime(file));

        assertThatThrownBy(version::open)
                .isInstanceOf(FileVersion.FileChangedException.class)
                .hasMessageContaining(file.toString());
    }

    @Test
    void aSymbolicLinkSwappedInForTheFileIsNeverFollowed(@TempDir Path elsewhere) throws IOException {
        FileVersion version = FileVersion.of(file);
        Path outside = Files.writeString(elsewhere.resolve("outside.txt"), "outside");
        Path link = file.resolveSibling("link.tmp");
        Files.createSymbolicLink(link, outside);
        Files.move(link, file, java.nio.file.StandardCopyOption.ATOMIC_MOVE,
                java.nio.file.StandardCopyOption.REPLACE_EXISTING);

        // Between stat and open: the open does not follow it.
        assertThatThrownBy(version::open)
                .isInstanceOf(FileVersion.FileChangedException.class)
                .hasMessageContaining("symbolic link");
        // Before the stat: the path is now a link, which SafePaths never returns, so it looks missing.
        assertThatThrownBy(() -> FileVersion.of(file))
                .isInstanceOf(java.nio.file.NoSuchFileException.class)
                .hasMessageContaining("symbolic link");
    }

    @Test
    void openChannelKeepsReadingTheOldVersionAfterARename() throws IOException {
        FileVersion version = FileVersion.of(file);

        try (FileChannel channel = version.open()) {
            replaceByRename("NEW-CONTENT-LONGER", FileTime.from(Instant.now()));

            assertThat(readAll(channel)).isEqualTo("old-content");
        }
        assertThat(Files.readString(file)).isEqualTo("NEW-CONTENT-LONGER");
    }
}
