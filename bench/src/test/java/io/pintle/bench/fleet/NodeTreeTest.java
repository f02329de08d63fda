package io.pintle.bench.fleet;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What {@link FleetLayout} writes in a node's {@code rules/} for each {@code --node-tree}, at first and later. */
class NodeTreeTest {
    private static FleetLayout layout(Path work, NodeTree tree) throws Exception {
        RelaySyncOptions options = RelaySyncOptions.parse(new String[] {"--pintle-jar", "pintle.jar", "--wrapper",
            "deploy/bin/pintle", "--work", work.toString(), "--output", work.resolve("out.md").toString(), "--nodes",
            "2", "--relays", "1", "--node-tree", tree.option()});
        FleetLayout layout = new FleetLayout(options.fleet(), tree);
        layout.write(1, new PrintStream(OutputStream.nullOutputStream()));
        return layout;
    }

    /** @return each entry under {@code rules} (relative, directories with a trailing /), with its attributes */
    private static Map<String, BasicFileAttributes> entries(Path rules) throws IOException {
        Map<String, BasicFileAttributes> entries = new HashMap<>();
        try (Stream<Path> walk = Files.walk(rules)) {
            for (Path path : walk.filter(p -> !p.equals(rules)).toList()) {
                BasicFileAttributes attributes = Files.readAttributes(path, BasicFileAttributes.class,
                        LinkOption.NOFOLLOW_LINKS);
                entries.put(rules.relativize(path) + (attributes.isDirectory() ? "/" : ""), attributes);
            }
        }
        return entries;
    }

    @Test
    void ruddersShapeHasTheFixturesFilesAndDirectoriesWithTheirSizes(@TempDir Path work) throws Exception {
        FleetLayout layout = layout(work, NodeTree.RUDDER);
        Path rules = layout.rootPolicies(0);
        Map<String, BasicFileAttributes> entries = entries(rules);
        assertThat(entries.keySet().stream().filter(e -> e.endsWith("/"))).hasSize(12);
        assertThat(entries.keySet().stream().filter(e -> !e.endsWith("/"))).hasSize(37 + 1)
                .contains("rudder.tar.bz2", "cfengine-community/promises.cf",
                        "cfengine-community/common/1.0/hooks.cf", "cfengine-community/rudder-promises-generated");
        for (NodeTree.Entry entry : NodeTree.RUDDER_ENTRIES) {
            Path file = rules.resolve(entry.path());
            if (entry.linkTarget() != null) {
                assertThat(Files.readSymbolicLink(file)).hasToString("root.pem");
            } else {
                assertThat(Files.size(file)).as(entry.path()).isEqualTo(entry.bytes());
            }
        }
        assertThat(NodeTree.RUDDER_ENTRIES.stream().mapToInt(NodeTree.Entry::bytes).sum()).isEqualTo(164_880);
        assertThat(entries).hasSize(NodeTree.RUDDER.entriesPerNode() - 2);
        String library = "cfengine-community/common/1.0/update.cf";
        assertThat(Files.readString(rules.resolve(library))).as("each node's own")
                .isNotEqualTo(Files.readString(layout.rootPolicies(1).resolve(library)));
    }

    @Test
    void aGenerationChangesTheNodesOwnFilesAndRewritesTheLibraryUnchanged(@TempDir Path work) throws Exception {
        FleetLayout layout = layout(work, NodeTree.RUDDER);
        Path rules = layout.rootPolicies(0);
        Map<String, byte[]> before = new HashMap<>();
        Map<String, Object> inodes = new HashMap<>();
        for (NodeTree.Entry entry : NodeTree.RUDDER_ENTRIES) {
            if (entry.linkTarget() == null) {
                before.put(entry.path(), Files.readAllBytes(rules.resolve(entry.path())));
                inodes.put(entry.path(), Files.readAttributes(rules.resolve(entry.path()),
                        BasicFileAttributes.class).fileKey());
            }
        }
        layout.writeGeneration(2);
        assertThat(entries(rules).keySet()).isEqualTo(entries(layout.rootPolicies(1)).keySet());
        for (NodeTree.Entry entry : NodeTree.RUDDER_ENTRIES) {
            if (entry.linkTarget() != null) {
                continue;
            }
            Path file = rules.resolve(entry.path());
            assertThat(Files.readAttributes(file, BasicFileAttributes.class).fileKey()).as(entry.path())
                    .isNotEqualTo(inodes.get(entry.path()));
            assertThat(Files.size(file)).as(entry.path()).isEqualTo(entry.bytes());
            if (entry.change() == NodeTree.Change.EACH_GENERATION) {
                assertThat(Files.readAllBytes(file)).as(entry.path()).isNotEqualTo(before.get(entry.path()));
            } else {
                assertThat(Files.readAllBytes(file)).as(entry.path()).isEqualTo(before.get(entry.path()));
            }
        }
        assertThat(Files.readString(rules.resolve("cfengine-community/rudder-promises-generated")))
                .as("shorter than its head line: the line's end").isEqualTo(" generation 2\n");
    }

    @Test
    void theSmallShapeIsThreeFilesBesideTheArchive(@TempDir Path work) throws Exception {
        FleetLayout layout = layout(work, NodeTree.SMALL);
        Path rules = layout.rootPolicies(0);
        assertThat(entries(rules).keySet()).containsExactlyInAnyOrderElementsOf(List.of("rudder.tar.bz2",
                "cfengine-community/", "cfengine-community/promises.cf",
                "cfengine-community/rudder-promises-generated", "cfengine-community/rudder.json"));
        assertThat(entries(rules)).hasSize(NodeTree.SMALL.entriesPerNode() - 2);
        assertThat(Files.readString(rules.resolve("cfengine-community/rudder-promises-generated"))).isEqualTo("1\n");
        layout.writeGeneration(2);
        assertThat(Files.readString(rules.resolve("cfengine-community/promises.cf")))
                .isEqualTo("bundle agent main { } # generation 2\n");
    }
}
