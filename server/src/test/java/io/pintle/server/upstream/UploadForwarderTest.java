package io.pintle.server.upstream;

import static org.assertj.core.api.Assertions.assertThat;

import io.pintle.server.reload.ServerSnapshot;
import io.pintle.server.uploads.UploadKind;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class UploadForwarderTest {
    private static final Instant NOW = Instant.parse("2026-12-06T12:00:00Z");

    @Test
    void onlyRefusalsOfTheFileItselfAreForGood() {
        assertThat(UploadForwarder.permanent(400, "invalid-name")).isTrue();
        assertThat(UploadForwarder.permanent(413, null)).isTrue();
        assertThat(UploadForwarder.permanent(403, "report-signature")).isTrue();
        assertThat(UploadForwarder.permanent(403, "not-below-relay")).isTrue();
        // The relay itself is not let in, or the policy server is not well: everything waits.
        assertThat(UploadForwarder.permanent(403, "network-denied")).isFalse();
        assertThat(UploadForwarder.permanent(403, null)).isFalse();
        assertThat(UploadForwarder.permanent(401, "credentials-missing")).isFalse();
        assertThat(UploadForwarder.permanent(404, null)).isFalse();
        assertThat(UploadForwarder.permanent(429, null)).isFalse();
        assertThat(UploadForwarder.permanent(503, null)).isFalse();
    }

    @Test
    void queueIsOldestFirstAndAnInventoryWaitsForItsSignatureAWhile(@TempDir Path dir) throws Exception {
        Path reports = Files.createDirectories(dir.resolve("reports"));
        Path updates = Files.createDirectories(dir.resolve("updates"));
        write(reports.resolve("2026-12-06T11:00:00+00:00@b.log.gz"), NOW.minusSeconds(60));
        write(reports.resolve("2026-12-06T10:00:00+00:00@a.log.gz"), NOW.minusSeconds(120));
        write(reports.resolve(".pintle-upload-0123.tmp"), NOW.minusSeconds(500));
        Files.createDirectory(reports.resolve("a-directory.log.gz"));
        // A fresh inventory without its signature waits; an old one goes alone; a pair goes inventory first.
        write(updates.resolve("fresh_2026.ocs.gz"), NOW.minusSeconds(10));
        write(updates.resolve("old_2026.ocs.gz"), NOW.minus(Duration.ofMinutes(10)));
        write(updates.resolve("pair_2026.ocs.sign"), NOW.minusSeconds(30));
        write(updates.resolve("pair_2026.ocs.gz"), NOW.minusSeconds(31));

        UploadForwarder forwarder = new UploadForwarder(() -> (ServerSnapshot) null, new UpstreamClient(),
                Clock.fixed(NOW, ZoneOffset.UTC), Duration.ofSeconds(1), Duration.ofMinutes(5));
        List<UploadForwarder.Unit> units = forwarder.scan(kind -> switch (kind) {
            case REPORTS -> reports;
            case INVENTORY_UPDATES -> updates;
            case INVENTORIES -> dir.resolve("absent");
        });

        assertThat(units).extracting(unit -> unit.files().stream().map(f -> f.getFileName().toString()).toList())
                .containsExactly(List.of("old_2026.ocs.gz"), List.of("2026-12-06T10:00:00+00:00@a.log.gz"),
                        List.of("2026-12-06T11:00:00+00:00@b.log.gz"),
                        List.of("pair_2026.ocs.gz", "pair_2026.ocs.sign"));
        UploadForwarder.QueueView queue = forwarder.status().queue().get(UploadKind.INVENTORY_UPDATES);
        assertThat(queue.files()).isEqualTo(4);
        assertThat(queue.oldest()).isEqualTo(NOW.minus(Duration.ofMinutes(10)));
        assertThat(forwarder.status().queue().get(UploadKind.REPORTS).files()).isEqualTo(2);
        assertThat(forwarder.status().queue().get(UploadKind.INVENTORIES).files()).isZero();
    }

    @Test
    void refusedFilesGoBesideTheUploadDirectories() {
        assertThat(UploadForwarder.failedDirectory(Path.of("/var/rudder/reports/incoming")))
                .isEqualTo(Path.of("/var/rudder/reports/failed"));
        assertThat(UploadForwarder.failedDirectory(Path.of("/var/rudder/inventories/accepted-nodes-updates")))
                .isEqualTo(Path.of("/var/rudder/inventories/failed"));
    }

    private static void write(Path file, Instant modified) throws Exception {
        Files.writeString(file, file.getFileName().toString());
        Files.setLastModifiedTime(file, FileTime.from(modified));
    }
}
