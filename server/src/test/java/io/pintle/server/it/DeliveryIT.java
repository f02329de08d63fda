package io.pintle.server.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.pintle.server.testing.AgentReports;
import io.pintle.server.testing.Await;
import io.pintle.server.testing.NodeKeys;
import io.pintle.server.testing.Sandbox;
import io.pintle.server.testing.TestServer;
import io.pintle.server.tls.SelfSigned;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Who has what: real agents' requests (curl with rudder-client's flags and {@code --etag-save/--etag-compare}, as
 * {@code agent-update} fetches {@code rules/rudder.tar.bz2}) against the real server, and what {@code /v1/nodes}
 * says after each; a generation made as Rudder's webapp makes it ({@code rules.new}, the old {@code rules} moved to
 * its backup, the new one renamed in place).
 */
class DeliveryIT {
    private static final Duration WAIT = Duration.ofSeconds(20);

    @Test
    void behindListsExactlyTheNodesThatHaveNotFetchedTheGenerationAndEmptiesAsTheyDo(@TempDir Path dir)
            throws Exception {
        assumeTrue(CurlIT.available("curl"), "curl is not installed");
        Sandbox sandbox = Sandbox.create(dir);
        List<NodeKeys> nodes = new ArrayList<>();
        for (String id : List.of("node-1", "node-2", "node-3")) {
            nodes.add(sandbox.addNode(id, SelfSigned.KeyType.RSA_2048, Sandbox.Pinning.BOTH));
            generation(sandbox.share(), id, 1, null);
        }
        try (TestServer server = TestServer.start(sandbox)) {
            assertThat(behind(server)).containsExactly("node-1", "node-2", "node-3");
            JsonNode never = server.admin("GET", "/v1/nodes/node-1").body();
            assertThat(never.path("behind").asBoolean()).isTrue();
            assertThat(never.path("policies").isNull()).isTrue();
            assertThat(never.path("current_etag").asText()).startsWith("\"");

            fetch(sandbox, server, nodes.get(0), dir);
            fetch(sandbox, server, nodes.get(1), dir);
            Await.until(WAIT, () -> behind(server).equals(List.of("node-3")));
            // The copy of what node-2 fetched, kept for its diff, is taken after the fetch.
            Await.until(WAIT, () -> Files.exists(dir.resolve("state/fetched/node-2/etag")));

            for (String id : List.of("node-1", "node-2", "node-3")) {
                generation(sandbox.share(), id, 2, null);
            }
            assertThat(behind(server)).containsExactly("node-1", "node-2", "node-3");
            JsonNode list = server.admin("GET", "/v1/nodes?behind=true").body();
            assertThat(list.path("total").asInt()).isEqualTo(3);
            assertThat(list.path("current_share").asDouble()).isZero();

            CurlIT.Result first = fetch(sandbox, server, nodes.get(0), dir);
            assertThat(first.stdout()).isEqualTo("200");
            Await.until(WAIT, () -> behind(server).equals(List.of("node-2", "node-3")));
            fetch(sandbox, server, nodes.get(2), dir);
            Await.until(WAIT, () -> behind(server).equals(List.of("node-2")));

            // What changed for node-2 since the generation it fetched.
            JsonNode diff = server.admin("GET", "/v1/nodes/node-2/diff").body();
            assertThat(diff.path("behind").asBoolean()).isTrue();
            assertThat(diff.path("added")).extracting(JsonNode::asText).containsExactly("added-in-2.cf");
            assertThat(diff.path("removed")).extracting(JsonNode::asText).containsExactly("only-in-1.cf");
            assertThat(diff.path("changed")).extracting(change -> change.path("path").asText())
                    .containsExactlyInAnyOrder("promises.cf", "rudder-promises-generated");
            String promises = diffOf(diff, "promises.cf");
            assertThat(promises).contains("-bundle agent generation_1").contains("+bundle agent generation_2")
                    .contains(" # unchanged line");

            fetch(sandbox, server, nodes.get(1), dir);
            Await.until(WAIT, () -> behind(server).isEmpty());
            assertThat(server.admin("GET", "/v1/nodes/node-2/diff").body().path("changed")).isEmpty();

            // Up to date: curl's --etag-compare gets a 304, and the node stays current with what it had.
            CurlIT.Result again = fetch(sandbox, server, nodes.get(0), dir);
            assertThat(again.stdout()).isEqualTo("304");
            Await.until(WAIT, () -> server.admin("GET", "/v1/nodes/node-1").body().path("policies").path("status")
                    .asInt() == 304);
            JsonNode node1 = server.admin("GET", "/v1/nodes/node-1").body();
            assertThat(node1.path("behind").asBoolean()).isFalse();
            assertThat(node1.path("policies").path("etag").asText()).isEqualTo(node1.path("current_etag").asText());
            assertThat(node1.path("policies").path("door").asText()).isEqualTo("https");
            assertThat(node1.path("last_request").path("route").asText()).isEqualTo("policies");

            // A report and an inventory as rudder-agent names them are the node's last uploads.
            Path report = AgentReports.report(Files.createDirectories(dir.resolve("agent")),
                    "2026-12-06T10:00:00+00:00@node-3.log.gz", nodes.get(2), "run log\n");
            CurlIT.Result put = CurlIT.curl(agentFlags(sandbox, nodes.get(2)), "--user",
                    "rudder:" + Sandbox.WEBDAV_PASSWORD, "--upload-file", report.toString(), "-w", "%{http_code}",
                    server.uri() + "/reports/2026-12-06T10:00:00+00:00@node-3.log.gz");
            assertThat(put.stdout()).isEqualTo("201");
            Path inventoryFile = Files.writeString(dir.resolve("inventory"), "an inventory whose .sign is not sent");
            CurlIT.Result inventory = CurlIT.curl(agentFlags(sandbox, nodes.get(2)), "--user",
                    "rudder:" + Sandbox.WEBDAV_PASSWORD, "--upload-file", inventoryFile.toString(), "-w", "%{http_code}",
                    server.uri() + "/inventory-updates/node-3_2026-12-06T10:00:00.ocs.gz");
            assertThat(inventory.stdout()).isEqualTo("201");
            Await.until(WAIT, () -> server.admin("GET", "/v1/nodes/node-3").body().path("uploads").size() == 2);
            JsonNode uploads = server.admin("GET", "/v1/nodes/node-3").body().path("uploads");
            assertThat(uploads.path("reports").path("name").asText())
                    .isEqualTo("2026-12-06T10:00:00+00:00@node-3.log.gz");
            assertThat(uploads.path("inventory-updates").path("status").asInt()).isEqualTo(201);

            // Silent: none of them for a second; all of them for an hour.
            assertThat(server.admin("GET", "/v1/nodes?silent_for=3600").body().path("nodes")).isEmpty();
            assertThat(server.admin("GET", "/v1/nodes?silent_for=x").status()).isEqualTo(400);
            assertThat(server.admin("GET", "/v1/nodes/no-such-node").status()).isEqualTo(404);
        }

        // A restart keeps what each node fetched: the saved state is read back.
        try (TestServer server = TestServer.start(sandbox)) {
            assertThat(behind(server)).isEmpty();
            JsonNode status = server.admin("GET", "/v1/status").body();
            assertThat(status.path("delivery").path("nodes").asInt()).isEqualTo(3);
            assertThat(status.path("delivery").path("behind").asInt()).isZero();
            assertThat(status.path("freeze").path("active").asBoolean()).isFalse();
            assertThat(server.metric("pintle_nodes_behind")).isZero();
            assertThat(server.metric("pintle_nodes_served")).isEqualTo(3.0);
            assertThat(server.admin("GET", "/v1/nodes/node-3").body().path("uploads").size()).isEqualTo(2);
        }
        assertThat(Files.readString(dir.resolve("state/delivery.json"))).contains("\"node-1\"", "\"etag\"");
    }

    // ---- helpers shared with FreezeIT

    static List<String> behind(TestServer server) throws Exception {
        List<String> ids = new ArrayList<>();
        for (JsonNode node : server.admin("GET", "/v1/nodes?behind=true").body().path("nodes")) {
            ids.add(node.path("id").asText());
        }
        return ids;
    }

    static List<String> agentFlags(Sandbox sandbox, NodeKeys keys) {
        return List.of("-sS", "--tlsv1.3", "--location", "--fail", "--connect-timeout", "10", "--noproxy", "*",
                "--pinnedpubkey", sandbox.serverPin(), "--insecure",
                "--cert", keys.certificatePath().toString(), "--key", keys.keyPath().toString());
    }

    /** {@code agent-update}'s download of its archive: stdout is the status code; the archive in {@code dir}. */
    static CurlIT.Result fetch(Sandbox sandbox, TestServer server, NodeKeys node, Path dir) throws Exception {
        Path etag = dir.resolve(node.name() + ".etag");
        Path out = dir.resolve(node.name() + ".tar.bz2");
        Files.deleteIfExists(out);
        CurlIT.Result result = CurlIT.curl(agentFlags(sandbox, node), "--etag-save", etag.toString(),
                "--etag-compare", etag.toString(), "-w", "%{http_code}", "-o", out.toString(),
                server.uri() + "/policies/" + node.name() + "/rules/rudder.tar.bz2");
        assertThat(result.exit()).as(result.stderr()).isZero();
        return result;
    }

    /**
     * Writes generation {@code n} of a node's policies as Rudder's webapp does: {@code rules.new}, the old
     * {@code rules} moved to the backup (or removed), the new one renamed to {@code rules}.
     */
    static void generation(Path share, String node, int n, Path backup) throws Exception {
        Path next = share.resolve(node + "/rules.new");
        Path tree = Files.createDirectories(next.resolve("cfengine-community"));
        Files.writeString(tree.resolve("promises.cf"), "# unchanged line\nbundle agent generation_" + n
                + "\n{\n}\n", StandardCharsets.UTF_8);
        Files.writeString(tree.resolve("rudder-promises-generated"), "2026120600000" + n + "\n");
        Files.writeString(tree.resolve(n == 1 ? "only-in-1.cf" : "added-in-2.cf"), "# generation " + n + "\n");
        Files.write(tree.resolve("binary.dat"), new byte[] {0, 1, 2, 3});
        Files.writeString(next.resolve("rudder.tar.bz2"), node + " archive of generation " + n);
        Path rules = share.resolve(node + "/rules");
        if (Files.exists(rules)) {
            if (backup != null) {
                Path kept = backup.resolve(node + "/rules");
                delete(kept);
                Files.createDirectories(kept.getParent());
                Files.move(rules, kept);
            } else {
                delete(rules);
            }
        }
        Files.move(next, rules);
    }

    static void delete(Path root) throws Exception {
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(root)) {
            for (Path path : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(path);
            }
        }
    }

    private static String diffOf(JsonNode diff, String path) {
        for (JsonNode change : diff.path("changed")) {
            if (change.path("path").asText().equals(path)) {
                return change.path("diff").asText();
            }
        }
        throw new AssertionError("no change for " + path + " in " + diff);
    }
}
