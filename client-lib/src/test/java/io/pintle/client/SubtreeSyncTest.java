package io.pintle.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.pintle.api.dto.Manifest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.SortedMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code syncSubtrees} fetching directories file by file (each reuses most of its bytes), against the client's
 * stand-in server and its injected faults: a file that is not its manifest's makes its directory stale and the
 * others go on; a transfer refused fails its directory and every one not completed yet, at once. The real server
 * with the real client: server's SubtreeSyncIT.
 */
class SubtreeSyncTest {
    private static final List<String> NODES = List.of("a", "b", "c", "d");

    @TempDir
    Path dir;

    Path source;
    Path local;
    FakeTreeServer server;

    @BeforeEach
    void start() throws Exception {
        source = Files.createDirectories(dir.resolve("source"));
        local = Files.createDirectories(dir.resolve("share"));
        for (String node : NODES) {
            for (int i = 0; i < 6; i++) {
                byte[] content = new byte[2000];
                new Random(node.hashCode() * 31L + i).nextBytes(content);
                Path file = source.resolve(node + "/rules/file-" + i + ".cf");
                Files.createDirectories(file.getParent());
                Files.write(file, content);
            }
        }
        // The local share: a copy of the source, which each directory's plan reuses (hashed: no sidecar yet).
        try (Stream<Path> walk = Files.walk(source)) {
            for (Path path : walk.toList()) {
                Path copy = local.resolve(source.relativize(path).toString());
                if (Files.isDirectory(path)) {
                    Files.createDirectories(copy);
                } else {
                    Files.copy(path, copy, StandardCopyOption.COPY_ATTRIBUTES);
                }
            }
        }
        for (String node : NODES) {
            Files.writeString(source.resolve(node + "/rules/file-0.cf"), node + " generation 2\n");
        }
        server = new FakeTreeServer(source);
    }

    @AfterEach
    void stop() {
        server.close();
    }

    private List<SubtreeOutcome> syncAll() throws Exception {
        SortedMap<String, Manifest> manifests = DirectorySync.subtreeManifests(server.manifest(), Set.copyOf(NODES));
        return server.sync(TreeSwap.atomic()).syncSubtrees(FakeTreeServer.REMOTE + "/", local, manifests);
    }

    @Test
    void eachDirectoryGetsItsChangedFileAloneNoArchive() throws Exception {
        List<SubtreeOutcome> outcomes = syncAll();
        assertThat(outcomes).allSatisfy(outcome -> {
            assertThat(outcome.ok()).as(outcome.failure()).isTrue();
            assertThat(outcome.filesDownloaded()).isEqualTo(1);
        });
        assertThat(server.requests).containsExactlyInAnyOrder("/tree/a/rules/file-0.cf", "/tree/b/rules/file-0.cf",
                "/tree/c/rules/file-0.cf", "/tree/d/rules/file-0.cf");
        for (String node : NODES) {
            assertThat(local.resolve(node + "/rules/file-0.cf")).hasContent(node + " generation 2\n");
        }
    }

    @Test
    void aFileNotTheManifestsMakesItsDirectoryStaleAndTheOthersAreSynced() throws Exception {
        server.tampered.put("b/rules/file-0.cf", "b generation 3\n".getBytes(java.nio.charset.StandardCharsets.UTF_8));
        List<SubtreeOutcome> outcomes = syncAll();
        assertThat(outcomes.get(1).stale()).as(outcomes.get(1).failure()).isTrue();
        assertThat(local.resolve("b/rules/file-0.cf")).as("left as it was").content().doesNotContain("generation");
        assertThat(List.of(outcomes.get(0), outcomes.get(2), outcomes.get(3))).allMatch(SubtreeOutcome::ok);
        assertThat(local.resolve("d/rules/file-0.cf")).hasContent("d generation 2\n");
    }

    @Test
    void aTransferRefusedFailsItsDirectoryAndEveryOneNotCompletedAtOnce() throws Exception {
        server.refused.put("b/rules/file-0.cf", 500);
        List<SubtreeOutcome> outcomes = syncAll();
        assertThat(outcomes.get(0).ok()).as(outcomes.get(0).failure()).isTrue();
        for (SubtreeOutcome outcome : outcomes.subList(1, 4)) {
            assertThat(outcome.ok()).as(outcome.name()).isFalse();
            assertThat(outcome.stale()).as(outcome.name()).isFalse();
            assertThat(outcome.failure()).as(outcome.name()).contains("refused by the test");
        }
        for (String node : List.of("b", "c", "d")) {
            assertThat(local.resolve(node + "/rules/file-0.cf")).as(node + " left as it was").content()
                    .doesNotContain("generation");
        }
        // Nothing left behind: no staging tree beside them.
        try (Stream<Path> entries = Files.list(local)) {
            assertThat(entries.map(path -> path.getFileName().toString()))
                    .noneMatch(name -> name.contains("pintle-staging"));
        }
    }
}
