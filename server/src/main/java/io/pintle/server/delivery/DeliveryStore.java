package io.pintle.server.delivery;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.pintle.server.nodes.NodeId;
import io.pintle.server.policy.StateFile;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the {@link DeliveryLog} in {@code [paths] state}/{@value #FILE}: written whole to a temporary file,
 * fsync'd and renamed, so a crash leaves the previous file or the new one, never half of one. Read once at start; a
 * file that cannot be read is set aside ({@code .unreadable}) and logged, and the server starts with what it sees
 * from then on.
 */
public final class DeliveryStore {
    /** The file's name in the state directory. */
    public static final String FILE = "delivery.json";
    private static final Logger LOG = LoggerFactory.getLogger(DeliveryStore.class);
    private static final int FORMAT = 1;

    private final Path file;
    private final ObjectMapper json = new ObjectMapper();

    /**
     * @param stateDirectory {@code [paths] state}
     */
    public DeliveryStore(Path stateDirectory) {
        this.file = stateDirectory.resolve(FILE);
    }

    /** @return the file */
    public Path file() {
        return file;
    }

    /**
     * @return what the last process saved; empty when there is no file or it cannot be read (then set aside)
     */
    public Map<NodeId, NodeRecord> load() {
        if (!Files.exists(file)) {
            return Map.of();
        }
        try {
            JsonNode root = json.readTree(file.toFile());
            if (root.path("format").asInt() != FORMAT) {
                throw new IOException("format " + root.path("format") + " is not " + FORMAT);
            }
            Map<NodeId, NodeRecord> records = new HashMap<>();
            for (Map.Entry<String, JsonNode> entry : root.path("nodes").properties()) {
                records.put(new NodeId(entry.getKey()), record(entry.getValue()));
            }
            return records;
        } catch (IOException | RuntimeException e) {
            Path aside = file.resolveSibling(FILE + ".unreadable");
            LOG.error("cannot read the delivery state {} ({}); moved to {}, starting from what nodes fetch from now "
                    + "on", file, e.getMessage(), aside);
            try {
                Files.move(file, aside, StandardCopyOption.REPLACE_EXISTING);
            } catch (IOException moveFailed) {
                LOG.error("cannot move {} aside: {}", file, moveFailed.getMessage());
            }
            return Map.of();
        }
    }

    /**
     * @param records every node's record
     * @throws IOException when it cannot be written (the previous file stays)
     */
    public void save(Map<NodeId, NodeRecord> records) throws IOException {
        ObjectNode root = json.createObjectNode();
        root.put("format", FORMAT);
        ObjectNode nodes = root.putObject("nodes");
        new TreeMap<>(toText(records)).forEach(nodes::set);
        StateFile.write(file, json.writeValueAsBytes(root));
    }

    private Map<String, JsonNode> toText(Map<NodeId, NodeRecord> records) {
        Map<String, JsonNode> out = new HashMap<>();
        records.forEach((node, record) -> {
            ObjectNode value = json.createObjectNode();
            if (record.lastRequest() != null) {
                value.set("last_request", seen(record.lastRequest()));
            }
            if (record.policies() != null) {
                NodeRecord.Fetch fetch = record.policies();
                ObjectNode f = value.putObject("policies");
                f.put("path", fetch.path()).put("etag", fetch.etag()).put("status", fetch.status())
                        .put("time", fetch.time().toString()).put("door", fetch.door());
            }
            if (!record.uploads().isEmpty()) {
                ObjectNode uploads = value.putObject("uploads");
                record.uploads().forEach((kind, seen) -> uploads.set(kind, seen(seen)));
            }
            out.put(node.value(), value);
        });
        return out;
    }

    private ObjectNode seen(NodeRecord.Seen seen) {
        return json.createObjectNode().put("time", seen.time().toString()).put("address", seen.address())
                .put("what", seen.what()).put("status", seen.status());
    }

    private static NodeRecord record(JsonNode value) {
        NodeRecord.Seen last = value.has("last_request") ? seen(value.get("last_request")) : null;
        NodeRecord.Fetch fetch = null;
        if (value.has("policies")) {
            JsonNode f = value.get("policies");
            fetch = new NodeRecord.Fetch(f.path("path").asText(), f.path("etag").asText(), f.path("status").asInt(),
                    Instant.parse(f.path("time").asText()), f.path("door").asText());
        }
        Map<String, NodeRecord.Seen> uploads = new HashMap<>();
        for (Map.Entry<String, JsonNode> entry : value.path("uploads").properties()) {
            uploads.put(entry.getKey(), seen(entry.getValue()));
        }
        return new NodeRecord(last, fetch, uploads);
    }

    private static NodeRecord.Seen seen(JsonNode node) {
        return new NodeRecord.Seen(Instant.parse(node.path("time").asText()), node.path("address").asText(),
                node.path("what").asText(), node.path("status").asInt());
    }
}
