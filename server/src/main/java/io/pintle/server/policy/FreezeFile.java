package io.pintle.server.policy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.pintle.server.nodes.NodeId;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Set;
import java.util.TreeSet;

/**
 * The freeze in force, kept in {@code [paths] state}/{@value #DIRECTORY}/{@value #FILE} beside the copies, so that
 * a restart holds the same nodes on the same bytes. Written to a temporary file, fsync'd and renamed; removed when
 * the freeze is released.
 */
public final class FreezeFile {
    /** Directory of freezes in the state directory. */
    public static final String DIRECTORY = "freezes";
    /** The file naming the freeze in force. */
    public static final String FILE = "current.json";

    private final Path file;
    private final ObjectMapper json = new ObjectMapper();

    /**
     * @param stateDirectory {@code [paths] state}
     */
    public FreezeFile(Path stateDirectory) {
        this.file = stateDirectory.resolve(DIRECTORY).resolve(FILE);
    }

    /** @return the directory where freezes' copies are made */
    public Path freezes() {
        return file.getParent();
    }

    /**
     * @return the freeze in force, or {@link Freeze#NONE} when there is no file
     * @throws IOException when the file cannot be read, or names a copy that is not there: the server must not
     *     quietly serve what an operator froze
     */
    public Freeze read() throws IOException {
        if (!Files.exists(file)) {
            return Freeze.NONE;
        }
        JsonNode root = json.readTree(file.toFile());
        String id = root.path("id").asText();
        if (!id.matches("[0-9A-Za-z-]{1,64}")) {
            throw new IOException(file + ": bad freeze id '" + id + "'");
        }
        Set<NodeId> nodes = new TreeSet<>();
        for (JsonNode node : root.path("nodes")) {
            nodes.add(new NodeId(node.asText()));
        }
        Path directory = freezes().resolve(id);
        for (NodeId node : nodes) {
            if (!Files.isDirectory(directory.resolve(node.value()), LinkOption.NOFOLLOW_LINKS)) {
                throw new IOException(file + " freezes node " + node.value() + " but its copy "
                        + directory.resolve(node.value()) + " is missing; release the freeze (remove " + file
                        + ") to serve the current policies");
            }
        }
        JsonNode reason = root.get("reason");
        return new Freeze(id, Instant.parse(root.path("since").asText()), root.path("rollback").asBoolean(),
                root.path("all").asBoolean(), nodes, directory, reason == null || reason.isNull() ? null
                        : reason.asText());
    }

    /**
     * @param freeze the freeze now in force; {@link Freeze#NONE} removes the file
     * @throws IOException when it cannot be written or removed
     */
    public void write(Freeze freeze) throws IOException {
        if (!freeze.active()) {
            Files.deleteIfExists(file);
            return;
        }
        ObjectNode root = json.createObjectNode();
        root.put("id", freeze.id()).put("since", freeze.since().toString()).put("rollback", freeze.rollback())
                .put("all", freeze.all());
        if (freeze.reason() != null) {
            root.put("reason", freeze.reason());
        }
        ArrayNode nodes = root.putArray("nodes");
        new TreeSet<>(freeze.nodes()).forEach(node -> nodes.add(node.value()));
        StateFile.write(file, json.writeValueAsBytes(root));
    }
}
