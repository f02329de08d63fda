package io.pintle.server.nodes;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Reads Rudder's {@code nodeslist.json}: {@code {"<id>": {"hostname", "key-hash", "policy-server"}}}, listing
 * every node below this server. A missing or malformed {@code key-hash} is ignored, as relayd does; a missing
 * {@code hostname} or {@code policy-server}, or a malformed id, is an error naming the node. Unknown fields are
 * ignored so that newer Rudder versions can add some.
 */
public final class NodesListLoader {
    private static final ObjectMapper JSON = new ObjectMapper();

    private NodesListLoader() {}

    /**
     * @param file the nodes list
     * @return its entries
     * @throws IOException naming the file and the entry when it cannot be read or is invalid
     */
    public static List<Node> load(Path file) throws IOException {
        try {
            return parse(Files.readAllBytes(file), file);
        } catch (NoSuchFileException e) {
            throw new IOException(file + ": no such file", e);
        }
    }

    /**
     * @param content the file's bytes
     * @param file its name, for messages
     * @return its entries
     * @throws IOException naming the file and the entry when it is invalid
     */
    public static List<Node> parse(byte[] content, Path file) throws IOException {
        JsonNode root;
        try {
            root = JSON.readTree(content);
        } catch (JsonProcessingException e) {
            throw new IOException(file + ": invalid JSON: " + e.getOriginalMessage(), e);
        }
        if (root == null || root.isMissingNode()) {
            throw new IOException(file + ": empty file (expected a JSON object, {} for no nodes)");
        }
        if (!root.isObject()) {
            throw new IOException(file + ": expected a JSON object keyed by node id");
        }
        List<Node> nodes = new ArrayList<>();
        for (Map.Entry<String, JsonNode> entry : root.properties()) {
            String where = file + ": node '" + entry.getKey() + "'";
            JsonNode value = entry.getValue();
            if (!value.isObject()) {
                throw new IOException(where + ": expected an object");
            }
            try {
                nodes.add(new Node(
                        new NodeId(entry.getKey()),
                        text(value, "hostname", where),
                        KeyHash.parse(value.path("key-hash").asText(null)),
                        new NodeId(text(value, "policy-server", where))));
            } catch (IllegalArgumentException e) {
                throw new IOException(where + ": " + e.getMessage(), e);
            }
        }
        return List.copyOf(nodes);
    }

    private static String text(JsonNode object, String field, String where) throws IOException {
        JsonNode value = object.get(field);
        if (value == null || !value.isTextual() || value.asText().isEmpty()) {
            throw new IOException(where + ": missing or empty '" + field + "'");
        }
        return value.asText();
    }
}
