package io.pintle.server.nodes;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

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
        // Streamed rather than read as a tree: a root's list has an entry per node of the fleet, and it is
        // parsed again at each reload that changes it.
        List<Node> nodes = new ArrayList<>();
        try (JsonParser parser = JSON.createParser(content)) {
            JsonToken first = parser.nextToken();
            if (first == null) {
                throw new IOException(file + ": empty file (expected a JSON object, {} for no nodes)");
            }
            if (first != JsonToken.START_OBJECT) {
                throw new IOException(file + ": expected a JSON object keyed by node id");
            }
            while (parser.nextToken() == JsonToken.FIELD_NAME) {
                String id = parser.currentName();
                String where = file + ": node '" + id + "'";
                if (parser.nextToken() != JsonToken.START_OBJECT) {
                    throw new IOException(where + ": expected an object");
                }
                String hostname = null;
                String keyHash = null;
                String policyServer = null;
                while (parser.nextToken() == JsonToken.FIELD_NAME) {
                    String field = parser.currentName();
                    JsonToken value = parser.nextToken();
                    String text = value == JsonToken.VALUE_STRING ? parser.getText() : null;
                    switch (field) {
                        case "hostname" -> hostname = text;
                        case "key-hash" -> keyHash = text;
                        case "policy-server" -> policyServer = text;
                        default -> parser.skipChildren();
                    }
                }
                try {
                    nodes.add(new Node(new NodeId(id), required(hostname, "hostname", where), KeyHash.parse(keyHash),
                            new NodeId(required(policyServer, "policy-server", where))));
                } catch (IllegalArgumentException e) {
                    throw new IOException(where + ": " + e.getMessage(), e);
                }
            }
            if (parser.currentToken() != JsonToken.END_OBJECT || parser.nextToken() != null) {
                throw new IOException(file + ": invalid JSON: unexpected content after the nodes object");
            }
        } catch (JsonProcessingException e) {
            throw new IOException(file + ": invalid JSON: " + e.getOriginalMessage(), e);
        }
        return List.copyOf(nodes);
    }

    private static String required(String value, String field, String where) throws IOException {
        if (value == null || value.isEmpty()) {
            throw new IOException(where + ": missing or empty '" + field + "'");
        }
        return value;
    }
}
