package io.pintle.server.uploads;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pintle.server.problem.PintleException;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class UploadStoreTest {
    private final UploadStore store = new UploadStore();

    @TempDir
    Path dir;

    @Test
    void acceptsRuddersOwnNames() {
        for (String name : new String[] {"2026-12-03T10:00:00+00:00@0a1b2c3d-4e5f.log.gz",
                "0a1b2c3d-4e5f_2026-12-03T10:00:00+00:00.ocs.gz", "root-2026-12-03.ocs.sign", "a b%c,é"}) {
            assertThat(UploadStore.checkName(name)).isEqualTo(name);
        }
    }

    @Test
    void refusesNamesThatAreNotOnePlainFileName() {
        assertReason("", "name-missing");
        assertReason("..", "invalid-name");
        assertReason(".", "invalid-name");
        assertReason(".hidden", "invalid-name");
        assertReason(".pintle-upload-1.tmp", "invalid-name");
        assertReason("a/b", "invalid-name");
        assertReason("../etc/passwd", "invalid-name");
        assertReason("a\\b", "invalid-name");
        assertReason("a\0b", "invalid-name");
        assertReason("a\nb", "invalid-name");
        assertReason("a\u007fb", "invalid-name");
        assertReason("a\u0085b", "invalid-name");
        assertReason("x".repeat(256), "name-too-long");
        assertReason("é".repeat(128), "name-too-long");
        assertThat(UploadStore.checkName("x".repeat(255))).hasSize(255);
    }

    @Test
    void storesUnderTheFinalNameAndSaysWhetherItReplaced() throws IOException {
        byte[] body = "report".getBytes(StandardCharsets.UTF_8);

        UploadStore.Stored first = store.store(UploadKind.REPORTS, dir, "r.log.gz", new ByteArrayInputStream(body),
                body.length, 100);
        UploadStore.Stored second = store.store(UploadKind.REPORTS, dir, "r.log.gz",
                new ByteArrayInputStream(new byte[] {1, 2}), -1, 100);

        assertThat(first).isEqualTo(new UploadStore.Stored(false, body.length));
        assertThat(second).isEqualTo(new UploadStore.Stored(true, 2));
        assertThat(Files.readAllBytes(dir.resolve("r.log.gz"))).containsExactly(1, 2);
        assertThat(names()).containsExactly("r.log.gz");
    }

    @Test
    void aBodyOverTheLimitLeavesNothing() {
        assertThatThrownBy(() -> store.store(UploadKind.REPORTS, dir, "big", new ByteArrayInputStream(new byte[101]),
                -1, 100))
                .isInstanceOf(PintleException.TooLarge.class)
                .hasMessageContaining("[uploads] max_bytes");
        assertThatThrownBy(() -> store.store(UploadKind.REPORTS, dir, "big", new ByteArrayInputStream(new byte[1]),
                101, 100))
                .isInstanceOf(PintleException.TooLarge.class);
        assertThat(names()).isEmpty();
    }

    @Test
    void aBodyShorterThanItsLengthLeavesNothing() {
        assertThatThrownBy(() -> store.store(UploadKind.INVENTORIES, dir, "inv.ocs.gz",
                new ByteArrayInputStream(new byte[10]), 11, 100))
                .isInstanceOfSatisfying(PintleException.InvalidRequest.class,
                        e -> assertThat(e.reason()).isEqualTo("upload-incomplete"));
        assertThat(names()).isEmpty();
    }

    @Test
    void aClientFailingMidBodyLeavesNothingAndKeepsAnEarlierFile() throws IOException {
        Files.writeString(dir.resolve("inv.ocs.gz"), "earlier");
        InputStream cut = new InputStream() {
            private int sent;

            @Override
            public int read() throws IOException {
                if (sent++ > 70_000) {
                    throw new IOException("connection reset");
                }
                return 'x';
            }
        };

        assertThatThrownBy(() -> store.store(UploadKind.INVENTORIES, dir, "inv.ocs.gz", cut, 200_000, 1_000_000))
                .isInstanceOf(IOException.class)
                .isNotInstanceOf(UploadStore.DiskFailure.class)
                .hasMessage("connection reset");
        assertThat(names()).containsExactly("inv.ocs.gz");
        assertThat(Files.readString(dir.resolve("inv.ocs.gz"))).isEqualTo("earlier");
    }

    @Test
    void aFullDiskIsTheCallersInsufficientStorageAndOtherDiskErrorsAreTheServers() {
        assertThat(UploadStore.isNoSpace(new FileSystemException("/var/rudder/reports/incoming/x", null,
                "No space left on device"))).isTrue();
        assertThat(UploadStore.isNoSpace(new IOException("write failed", new IOException("Disk quota exceeded"))))
                .isTrue();
        assertThat(UploadStore.isNoSpace(new IOException("Input/output error"))).isFalse();
    }

    @Test
    void aDirectoryUnderTheNameIsRefused() throws IOException {
        Files.createDirectory(dir.resolve("taken"));

        assertThatThrownBy(() -> store.store(UploadKind.REPORTS, dir, "taken", new ByteArrayInputStream(new byte[1]),
                1, 10))
                .isInstanceOf(PintleException.InvalidRequest.class);
        assertThat(names()).containsExactly("taken");
    }

    @Test
    void removesOnlyOldTemporaryFilesOfItsOwnForm() throws IOException {
        Instant now = Instant.parse("2026-12-04T12:00:00Z");
        Path old = Files.writeString(dir.resolve(UploadStore.TEMP_PREFIX + "0123456789abcdef" + UploadStore.TEMP_SUFFIX),
                "x");
        Path young = Files.writeString(dir.resolve(UploadStore.TEMP_PREFIX + "fedcba9876543210"
                + UploadStore.TEMP_SUFFIX), "x");
        Path report = Files.writeString(dir.resolve("old-report.log.gz"), "x");
        Files.setLastModifiedTime(old, FileTime.from(now.minus(Duration.ofHours(2))));
        Files.setLastModifiedTime(young, FileTime.from(now.minus(Duration.ofMinutes(2))));
        Files.setLastModifiedTime(report, FileTime.from(now.minus(Duration.ofDays(2))));

        assertThat(UploadStore.removeLeftovers(dir, Duration.ofHours(1), now)).isEqualTo(1);
        assertThat(names()).containsExactlyInAnyOrder(young.getFileName().toString(), "old-report.log.gz");
    }

    private static void assertReason(String name, String reason) {
        assertThatThrownBy(() -> UploadStore.checkName(name))
                .as(name)
                .isInstanceOfSatisfying(PintleException.InvalidRequest.class,
                        e -> assertThat(e.reason()).isEqualTo(reason));
    }

    private String[] names() {
        try (Stream<Path> entries = Files.list(dir)) {
            return entries.map(path -> path.getFileName().toString()).sorted().toArray(String[]::new);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
