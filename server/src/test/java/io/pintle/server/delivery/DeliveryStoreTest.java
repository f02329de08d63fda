package io.pintle.server.delivery;

import static org.assertj.core.api.Assertions.assertThat;

import io.pintle.server.nodes.NodeId;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DeliveryStoreTest {
    @Test
    void savedRecordsReadBackTheSame(@TempDir Path dir) throws Exception {
        NodeRecord record = NodeRecord.NONE
                .withRequest(new NodeRecord.Seen(Instant.parse("2026-12-06T10:00:00Z"), "10.0.0.1", "policies", 304))
                .withFetch(new NodeRecord.Fetch(PolicyEntry.LINUX_ARCHIVE, "\"abc\"", 304,
                        Instant.parse("2026-12-06T10:00:01Z"), "https"))
                .withUpload("reports", new NodeRecord.Seen(Instant.parse("2026-12-06T10:00:02Z"), "10.0.0.1",
                        "x@node-1.log.gz", 201));
        DeliveryStore store = new DeliveryStore(dir.resolve("state"));
        store.save(Map.of(new NodeId("node-1"), record, new NodeId("node-2"), NodeRecord.NONE));
        assertThat(store.load()).isEqualTo(Map.of(new NodeId("node-1"), record, new NodeId("node-2"),
                NodeRecord.NONE));
        try (var left = Files.list(dir.resolve("state"))) {
            assertThat(left.map(path -> path.getFileName().toString())).containsExactly(DeliveryStore.FILE);
        }
    }

    @Test
    void anUnreadableFileIsSetAsideAndTheServerStartsEmpty(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve(DeliveryStore.FILE), "{\"format\": 1, \"nodes\": {\"node-1\": {\"policies\": 3");
        DeliveryStore store = new DeliveryStore(dir);
        assertThat(store.load()).isEmpty();
        assertThat(dir.resolve(DeliveryStore.FILE + ".unreadable")).exists();
        assertThat(dir.resolve(DeliveryStore.FILE)).doesNotExist();
        assertThat(new DeliveryStore(dir.resolve("absent")).load()).isEmpty();
    }
}
