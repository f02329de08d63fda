package io.pintle.server.it;

import static io.pintle.server.it.DeliveryIT.fetch;
import static io.pintle.server.it.DeliveryIT.generation;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.pintle.server.testing.Cli;
import io.pintle.server.testing.NodeKeys;
import io.pintle.server.testing.Sandbox;
import io.pintle.server.testing.TestServer;
import io.pintle.server.tls.SelfSigned;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Freeze and roll back, with the real server and curl as {@code agent-update} fetches: a frozen node gets the
 * frozen bytes across a new generation and a restart, the others the current ones; release serves the current
 * ones; a rollback serves Rudder's backup of the previous generation.
 */
class FreezeIT {
    @Test
    void aFreezeHoldsItsNodesOnTheFrozenBytesAcrossAGenerationAndARestart(@TempDir Path dir) throws Exception {
        assumeTrue(CurlIT.available("curl"), "curl is not installed");
        Sandbox sandbox = Sandbox.create(dir);
        NodeKeys frozen = sandbox.addNode("node-f", SelfSigned.KeyType.RSA_2048, Sandbox.Pinning.BOTH);
        NodeKeys free = sandbox.addNode("node-g", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        generation(sandbox.share(), "node-f", 1, null);
        generation(sandbox.share(), "node-g", 1, null);
        try (TestServer server = TestServer.start(sandbox)) {
            assertThat(fetch(sandbox, server, frozen, dir).stdout()).isEqualTo("200");
            String etag = Files.readString(dir.resolve("node-f.etag")).strip();

            TestServer.AdminResponse taken = server.admin("POST", "/v1/freeze",
                    "{\"nodes\": [\"node-f\"], \"reason\": \"bad generation coming\"}");
            assertThat(taken.status()).as(taken.body().toString()).isEqualTo(200);
            assertThat(taken.body().path("active").asBoolean()).isTrue();
            assertThat(taken.body().path("nodes")).extracting(JsonNode::asText).containsExactly("node-f");
            assertThat(taken.body().path("linked").asInt()).isEqualTo(taken.body().path("files").asInt());

            generation(sandbox.share(), "node-f", 2, null);
            generation(sandbox.share(), "node-g", 2, null);

            // Frozen: the same bytes, under the same ETag (a hard link keeps the inode): curl's compare says 304.
            assertThat(fetch(sandbox, server, frozen, dir).stdout()).isEqualTo("304");
            Files.delete(dir.resolve("node-f.etag"));
            assertThat(fetch(sandbox, server, frozen, dir).stdout()).isEqualTo("200");
            assertThat(Files.readString(dir.resolve("node-f.tar.bz2"))).isEqualTo("node-f archive of generation 1");
            assertThat(Files.readString(dir.resolve("node-f.etag")).strip()).isEqualTo(etag);
            assertThat(fetch(sandbox, server, free, dir).stdout()).isEqualTo("200");
            assertThat(Files.readString(dir.resolve("node-g.tar.bz2"))).isEqualTo("node-g archive of generation 2");
            // A frozen node holding its frozen bytes is not behind: it has what it is served.
            assertThat(server.admin("GET", "/v1/nodes/node-f").body().path("frozen").asBoolean()).isTrue();

            JsonNode status = server.admin("GET", "/v1/status").body();
            assertThat(status.path("freeze").path("reason").asText()).isEqualTo("bad generation coming");
            assertThat(server.metric("pintle_freeze_active")).isEqualTo(1.0);
            assertThat(server.admin("POST", "/v1/freeze", "{}").status()).isEqualTo(409);
        }

        // A restart keeps the freeze.
        try (TestServer server = TestServer.start(sandbox)) {
            assertThat(server.admin("GET", "/v1/freeze").body().path("nodes")).extracting(JsonNode::asText)
                    .containsExactly("node-f");
            Files.delete(dir.resolve("node-f.etag"));
            fetch(sandbox, server, frozen, dir);
            assertThat(Files.readString(dir.resolve("node-f.tar.bz2"))).isEqualTo("node-f archive of generation 1");

            TestServer.AdminResponse released = server.admin("DELETE", "/v1/freeze");
            assertThat(released.status()).isEqualTo(200);
            assertThat(released.body().path("active").asBoolean()).isFalse();
            assertThat(fetch(sandbox, server, frozen, dir).stdout()).isEqualTo("200");
            assertThat(Files.readString(dir.resolve("node-f.tar.bz2"))).isEqualTo("node-f archive of generation 2");
            assertThat(server.admin("DELETE", "/v1/freeze").status()).isEqualTo(409);
        }
        assertThat(dir.resolve("state/freezes/current.json")).doesNotExist();
        assertThat(dir.resolve("state/freezes/previous/node-f/rules/rudder.tar.bz2")).hasContent(
                "node-f archive of generation 1");
    }

    @Test
    void theCommandLineListsNodesFreezesAndReleases(@TempDir Path dir) throws Exception {
        assumeTrue(CurlIT.available("curl"), "curl is not installed");
        Sandbox sandbox = Sandbox.create(dir);
        NodeKeys node = sandbox.addNode("node-c", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        sandbox.addNode("node-d", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        generation(sandbox.share(), "node-c", 1, null);
        generation(sandbox.share(), "node-d", 1, null);
        try (TestServer server = TestServer.start(sandbox)) {
            fetch(sandbox, server, node, dir);
            // The copy of what it fetched, for its diff, is taken just after the fetch.
            io.pintle.server.testing.Await.until(java.time.Duration.ofSeconds(20),
                    () -> Files.exists(dir.resolve("state/fetched/node-c/etag")));
            generation(sandbox.share(), "node-c", 2, null);
            // The commands find the admin listener in the configuration they are given.
            Path cli = Files.writeString(dir.resolve("cli.toml"), "[general]\nnode_id = \"root\"\n[admin]\nlisten = "
                    + "\"127.0.0.1:" + server.server().adminUri().getPort() + "\"\n");

            Cli.Run nodes = Cli.pintle("nodes", "-c", cli.toString(), "--behind");
            assertThat(nodes.exitCode()).as(nodes.err()).isZero();
            assertThat(nodes.out()).contains("node-c", "node-d", "2 of 2 served node(s) shown; 2 behind");
            Cli.Run diff = Cli.pintle("nodes", "-c", cli.toString(), "node-c", "--diff");
            assertThat(diff.out()).contains("added   added-in-2.cf", "removed only-in-1.cf",
                    "+bundle agent generation_2");
            assertThat(Cli.pintle("nodes", "-c", cli.toString(), "node-x").exitCode()).isEqualTo(1);

            Cli.Run frozen = Cli.pintle("freeze", "-c", cli.toString(), "--reason", "hold on", "node-d");
            assertThat(frozen.exitCode()).as(frozen.err()).isZero();
            assertThat(frozen.out()).contains("1 node(s) frozen since", ": hold on");
            Cli.Run again = Cli.pintle("freeze", "-c", cli.toString());
            assertThat(again.exitCode()).isEqualTo(1);
            assertThat(again.err()).contains("release it first", "already-frozen");
            Cli.Run released = Cli.pintle("freeze", "-c", cli.toString(), "--release");
            assertThat(released.out()).contains("nothing frozen");
        }
    }

    @Test
    void aRollbackServesRuddersBackupOfThePreviousGeneration(@TempDir Path dir) throws Exception {
        assumeTrue(CurlIT.available("curl"), "curl is not installed");
        Sandbox sandbox = Sandbox.create(dir);
        NodeKeys node = sandbox.addNode("node-r", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        sandbox.addNode("node-s", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        Path backup = dir.resolve("backup");
        generation(sandbox.share(), "node-r", 1, backup);
        generation(sandbox.share(), "node-r", 2, backup);
        try (TestServer server = TestServer.start(sandbox, "[delivery]\nrudder_backup = \"backup\"\n")) {
            assertThat(server.admin("POST", "/v1/freeze", "{\"nodes\": [\"node-x\"]}").status()).isEqualTo(404);
            TestServer.AdminResponse noBackup = server.admin("POST", "/v1/freeze",
                    "{\"nodes\": [\"node-s\"], \"rollback\": true}");
            assertThat(noBackup.status()).isEqualTo(409);
            assertThat(noBackup.body().path("detail").asText()).contains("no previous generation for node-s");
            assertThat(server.admin("POST", "/v1/freeze", "{\"nodes\": 3}").status()).isEqualTo(400);

            TestServer.AdminResponse rolled = server.admin("POST", "/v1/freeze",
                    "{\"nodes\": [\"node-r\"], \"rollback\": true}");
            assertThat(rolled.status()).as(rolled.body().toString()).isEqualTo(200);
            assertThat(rolled.body().path("rollback").asBoolean()).isTrue();
            fetch(sandbox, server, node, dir);
            assertThat(Files.readString(dir.resolve("node-r.tar.bz2"))).isEqualTo("node-r archive of generation 1");
            // Written meanwhile: still the rolled-back bytes.
            generation(sandbox.share(), "node-r", 3, backup);
            Files.delete(dir.resolve("node-r.etag"));
            fetch(sandbox, server, node, dir);
            assertThat(Files.readString(dir.resolve("node-r.tar.bz2"))).isEqualTo("node-r archive of generation 1");
        }
    }
}
