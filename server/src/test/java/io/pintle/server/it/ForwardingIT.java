package io.pintle.server.it;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.fasterxml.jackson.databind.JsonNode;
import io.pintle.server.testing.AgentReports;
import io.pintle.server.testing.Await;
import io.pintle.server.testing.LogCapture;
import io.pintle.server.testing.NodeKeys;
import io.pintle.server.testing.Sandbox;
import io.pintle.server.testing.TestServer;
import io.pintle.server.uploads.UploadKind;
import io.pintle.server.upstream.UploadForwarder;
import io.pintle.server.tls.SelfSigned;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A relay without relayd: two Pintle servers over loopback, the relay forwarding what its nodes upload to the root
 * on the same route with its own certificate. A report reaches the root within seconds; with the root down it waits
 * on the relay (nothing deleted), survives a relay restart, and arrives once the root is back. A file the root
 * refuses for good is moved to the relay's {@code failed/} with the reason; an inventory goes with its signature.
 */
class ForwardingIT {
    private static final Duration PROMPT = Duration.ofSeconds(15);

    @Test
    void reportsReachTheRootAndWaitOnTheRelayWhileItIsDown(@TempDir Path dir) throws Exception {
        Sandbox root = Sandbox.create(dir.resolve("root"));
        Sandbox relay = Sandbox.create(dir.resolve("relay"), "relay-1", "relay");
        root.register("relay-1", relay.server().certificate(), Sandbox.Pinning.BOTH);
        NodeKeys node = relay.addNode("node-x", SelfSigned.KeyType.RSA_2048, Sandbox.Pinning.BOTH);
        root.register("node-x", node.certificate(), "node-x.example.org", "relay-1");
        Path made = Files.createDirectories(dir.resolve("agent"));
        Path rootReports = root.uploads(UploadKind.REPORTS);
        Path relayReports = relay.uploads(UploadKind.REPORTS);

        TestServer rootServer = TestServer.start(root);
        int rootPort = rootServer.port();
        String upstream = upstream(rootServer.uri().toString(), root, "");
        TestServer relayServer = TestServer.start(relay, upstream);
        try {
            // The agent's upload, as report.sh sends it (Basic, no client certificate), to its relay.
            Path first = AgentReports.report(made, "2026-12-06T10:00:00+00:00@node-x.log.gz", node, "run 1\n");
            assertThat(relayServer.upload("/reports/", first).statusCode()).isEqualTo(201);
            Await.until(PROMPT, () -> Files.exists(rootReports.resolve(first.getFileName())));
            assertThat(Files.readAllBytes(rootReports.resolve(first.getFileName())))
                    .isEqualTo(Files.readAllBytes(first));
            Await.until(PROMPT, () -> !Files.exists(relayReports.resolve(first.getFileName())));
            assertThat(forwarding(relayServer).path("queues").path("reports").path("forwarded").asLong())
                    .isEqualTo(1);

            // The root goes away: the next report waits on the relay, and says why.
            rootServer.stopAsInProduction();
            Path second = AgentReports.report(made, "2026-12-06T10:05:00+00:00@node-x.log.gz", node, "run 2\n");
            assertThat(relayServer.upload("/reports/", second).statusCode()).isEqualTo(201);
            TestServer running = relayServer;
            Await.until(PROMPT, () -> !forwarding(running).path("last_error").isNull()
                    && forwarding(running).path("queues").path("reports").path("files").asInt() == 1);
            assertThat(forwarding(relayServer).path("last_error").asText()).contains("policy server");
            assertThat(relayServer.metric("pintle_forward_queue_files{route=\"reports\"}")).isEqualTo(1.0);
            assertThat(relayReports.resolve(second.getFileName())).exists();

            // The relay restarts: nothing lost.
            relayServer.stopAsInProduction();
            assertThat(relayReports.resolve(second.getFileName())).exists();
            relayServer = TestServer.start(relay, upstream);
            assertThat(relayReports.resolve(second.getFileName())).exists();

            // The root is back on its address: the report arrives, and only then leaves the relay.
            root.listen("127.0.0.1:" + rootPort);
            rootServer = TestServer.start(root);
            Await.until(Duration.ofSeconds(30), () -> Files.exists(rootReports.resolve(second.getFileName())));
            assertThat(Files.readAllBytes(rootReports.resolve(second.getFileName())))
                    .isEqualTo(Files.readAllBytes(second));
            TestServer restarted = relayServer;
            Await.until(PROMPT, () -> !Files.exists(relayReports.resolve(second.getFileName())));
            assertThat(forwarding(restarted).path("last_success").isNull()).isFalse();
        } finally {
            relayServer.close();
            rootServer.close();
        }
    }

    @Test
    void refusedForGoodIsMovedAsideAndAnInventoryGoesWithItsSignature(@TempDir Path dir) throws Exception {
        Sandbox root = Sandbox.create(dir.resolve("root"));
        Sandbox relay = Sandbox.create(dir.resolve("relay"), "relay-1", "relay");
        root.register("relay-1", relay.server().certificate(), Sandbox.Pinning.BOTH);
        NodeKeys node = relay.addNode("node-x", SelfSigned.KeyType.RSA_2048, Sandbox.Pinning.BOTH);
        root.register("node-x", node.certificate(), "node-x.example.org", "relay-1");
        // node-y is the relay's as far as the relay knows, but the root has it under another relay.
        NodeKeys other = relay.addNode("node-y", SelfSigned.KeyType.RSA_2048, Sandbox.Pinning.BOTH);
        root.register("node-y", other.certificate(), "node-y.example.org", "root");
        Path made = Files.createDirectories(dir.resolve("agent"));

        try (TestServer rootServer = TestServer.start(root);
                TestServer relayServer = TestServer.start(relay, upstream(rootServer.uri().toString(), root, ""))) {
            Path refused = AgentReports.report(made, "2026-12-06T11:00:00+00:00@node-y.log.gz", other, "run\n");
            assertThat(relayServer.upload("/reports/", refused).statusCode()).isEqualTo(201);
            Path failed = UploadForwarder.failedDirectory(relay.uploads(UploadKind.REPORTS));
            Await.until(PROMPT, () -> Files.exists(failed.resolve(refused.getFileName())));
            assertThat(relay.uploads(UploadKind.REPORTS).resolve(refused.getFileName())).doesNotExist();
            assertThat(Files.readString(failed.resolve(refused.getFileName() + ".reason")))
                    .contains("HTTP 403 (not-below-relay)");
            assertThat(root.uploads(UploadKind.REPORTS).resolve(refused.getFileName())).doesNotExist();

            // An inventory update and its signature, the inventory first, both forwarded.
            Path inventory = AgentReports.inventory(made, "node-x_2026-12-06T11:00:00+00:00", node,
                    "<?xml version=\"1.0\"?><REQUEST><DEVICEID>node-x</DEVICEID></REQUEST>\n");
            Path signature = inventory.resolveSibling("node-x_2026-12-06T11:00:00+00:00.ocs.sign");
            assertThat(relayServer.upload("/inventory-updates/", inventory).statusCode()).isEqualTo(201);
            assertThat(relayServer.upload("/inventory-updates/", signature).statusCode()).isEqualTo(201);
            Path rootUpdates = root.uploads(UploadKind.INVENTORY_UPDATES);
            Await.until(PROMPT, () -> Files.exists(rootUpdates.resolve(signature.getFileName())));
            assertThat(Files.readAllBytes(rootUpdates.resolve(inventory.getFileName())))
                    .isEqualTo(Files.readAllBytes(inventory));
            assertThat(Files.getLastModifiedTime(rootUpdates.resolve(inventory.getFileName())))
                    .isLessThanOrEqualTo(Files.getLastModifiedTime(rootUpdates.resolve(signature.getFileName())));
            Await.until(PROMPT, () -> !Files.exists(relay.uploads(UploadKind.INVENTORY_UPDATES)
                    .resolve(signature.getFileName())));
            JsonNode queues = forwarding(relayServer).path("queues");
            assertThat(queues.path("reports").path("refused").asLong()).isEqualTo(1);
            assertThat(queues.path("inventory-updates").path("forwarded").asLong()).isEqualTo(2);
            assertThat(relayServer.metric("pintle_forward_refused_total{route=\"reports\"}")).isEqualTo(1.0);
        }
    }

    @Test
    void withForwardingOffTheUploadsStayForRelayd(@TempDir Path dir) throws Exception {
        Sandbox root = Sandbox.create(dir.resolve("root"));
        Sandbox relay = Sandbox.create(dir.resolve("relay"), "relay-1", "relay");
        root.register("relay-1", relay.server().certificate(), Sandbox.Pinning.BOTH);
        NodeKeys node = relay.addNode("node-x", SelfSigned.KeyType.RSA_2048, Sandbox.Pinning.BOTH);
        Path made = Files.createDirectories(dir.resolve("agent"));
        try (TestServer rootServer = TestServer.start(root);
                TestServer relayServer = TestServer.start(relay, upstream(rootServer.uri().toString(), root,
                        "forward = false\n"))) {
            Path report = AgentReports.report(made, "2026-12-06T12:00:00+00:00@node-x.log.gz", node, "run\n");
            assertThat(relayServer.upload("/reports/", report).statusCode()).isEqualTo(201);
            Await.quietFor(Duration.ofSeconds(3), () -> assertThat(relay.uploads(UploadKind.REPORTS)
                    .resolve(report.getFileName())).exists());
            assertThat(root.uploads(UploadKind.REPORTS).resolve(report.getFileName())).doesNotExist();
            assertThat(relayServer.admin("GET", "/v1/status").body().path("forwarding").isNull()
                    || relayServer.admin("GET", "/v1/status").body().path("forwarding").isMissingNode()).isTrue();
        }
    }

    @Test
    void toAPolicyServerThatDoesNotKnowTheRelayItSendsTheAgentsWebdavPassword(@TempDir Path dir) throws Exception {
        // As to an Apache/relayd root: the relay's certificate names no node there, so only Basic lets it in, with
        // the agent's DAVUSER/DAVPASSWORD from rudder.json, and Rudder's initial password for a first inventory.
        Sandbox root = Sandbox.create(dir.resolve("root"));
        Sandbox relay = Sandbox.create(dir.resolve("relay"), "relay-1", "relay");
        NodeKeys node = relay.addNode("node-x", SelfSigned.KeyType.RSA_2048, Sandbox.Pinning.BOTH);
        root.register("node-x", node.certificate(), "node-x.example.org", "relay-1");
        Path rudderJson = Files.writeString(dir.resolve("rudder.json"), "{\n  \"DAVUSER\": \"" + Sandbox.UPLOAD_USER
                + "\",\n  \"DAVPASSWORD\": \"" + Sandbox.WEBDAV_PASSWORD + "\",\n  \"INITIAL\": false\n}\n");
        Path made = Files.createDirectories(dir.resolve("agent"));
        try (TestServer rootServer = TestServer.start(root);
                TestServer relayServer = TestServer.start(relay, upstream(rootServer.uri().toString(), root,
                        "forward_credentials = \"" + rudderJson + "\"\n"))) {
            Path report = AgentReports.report(made, "2026-12-06T13:00:00+00:00@node-x.log.gz", node, "run\n");
            assertThat(relayServer.upload("/reports/", report).statusCode()).isEqualTo(201);
            NodeKeys newcomer = relay.unregisteredIdentity("node-new", "node-new");
            Path first = AgentReports.inventory(made, "node-new_2026-12-06T13:00:00+00:00", newcomer,
                    "<?xml version=\"1.0\"?>\n<REQUEST/>\n");
            assertThat(relayServer.upload("/inventories/", first).statusCode()).isEqualTo(201);
            assertThat(relayServer.upload("/inventories/",
                    first.resolveSibling("node-new_2026-12-06T13:00:00+00:00.ocs.sign")).statusCode()).isEqualTo(201);

            Await.until(PROMPT, () -> Files.exists(root.uploads(UploadKind.REPORTS).resolve(report.getFileName())));
            Await.until(PROMPT, () -> Files.exists(root.uploads(UploadKind.INVENTORIES)
                    .resolve("node-new_2026-12-06T13:00:00+00:00.ocs.sign")));
            assertThat(root.uploads(UploadKind.INVENTORIES).resolve(first.getFileName())).exists();
            assertThat(forwarding(relayServer).path("last_error").isNull()).isTrue();
        }
    }

    @Test
    void aBusyPolicyServerIsAskedAgainWhenItSaysAndTheRelaySendsFewerAtOnce(@TempDir Path dir) throws Exception {
        // The root takes one upload at a time from an address, the relay would send eight: the root answers the
        // rest 503 client-limit with Retry-After. That is not a failure to back off from for minutes: the relay
        // comes back when told, with fewer at once, and everything arrives.
        Sandbox root = Sandbox.create(dir.resolve("root"));
        Sandbox relay = Sandbox.create(dir.resolve("relay"), "relay-1", "relay");
        root.register("relay-1", relay.server().certificate(), Sandbox.Pinning.BOTH);
        NodeKeys node = relay.addNode("node-x", SelfSigned.KeyType.RSA_2048, Sandbox.Pinning.BOTH);
        root.register("node-x", node.certificate(), "node-x.example.org", "relay-1");
        Path made = Files.createDirectories(dir.resolve("agent"));
        Path relayReports = Files.createDirectories(relay.uploads(UploadKind.REPORTS));
        // Left by the relay's previous run (taken and checked then): the queue it starts with.
        List<Path> queued = new ArrayList<>();
        for (int i = 0; i < 16; i++) {
            Path report = AgentReports.report(made, String.format("2026-12-06T14:%02d:00+00:00@node-x.log.gz", i),
                    node, "run " + i + "\n");
            queued.add(Files.copy(report, relayReports.resolve(report.getFileName())));
        }
        try (TestServer rootServer = TestServer.start(root, "[limits]\nretry_after_seconds = 2\n"
                        + "retry_after_jitter_seconds = 1\n[limits.uploads]\nper_address = 1\n");
                TestServer relayServer = TestServer.start(relay, upstream(rootServer.uri().toString(), root,
                        "forward_in_flight = 8\n"))) {
            Path rootReports = root.uploads(UploadKind.REPORTS);
            // About 10 s here (the window shrinks to what the root takes within three rounds); backed off from as
            // failures (1, 2, 4 ... 60 s, one file per round) it took minutes.
            Await.until(Duration.ofSeconds(60), () -> queued.stream()
                    .allMatch(file -> Files.exists(rootReports.resolve(file.getFileName()))));
            Await.until(PROMPT, () -> queued.stream().noneMatch(Files::exists));
            assertThat(rootServer.metric("pintle_overload_rejections_total{class=\"uploads\",reason=\"client-limit\"}"))
                    .as("the root did refuse some: the case under test happened").isPositive();
            assertThat(forwarding(relayServer).path("last_error").isNull()).as("busy is not a failure").isTrue();
        }
    }

    @Test
    void uploadsDuringAnOutageDoNotCutTheBackOffShort(@TempDir Path dir) throws Exception {
        // Each upload wakes the forwarder; after a failure it must still wait its delay (1, 2, 4 ... s), or a relay
        // whose nodes upload many times a second would try a dead root as often.
        Sandbox root = Sandbox.create(dir.resolve("root"));
        Sandbox relay = Sandbox.create(dir.resolve("relay"), "relay-1", "relay");
        NodeKeys node = relay.addNode("node-x", SelfSigned.KeyType.RSA_2048, Sandbox.Pinning.BOTH);
        Path made = Files.createDirectories(dir.resolve("agent"));
        List<Path> reports = new ArrayList<>();
        for (int i = 0; i < 60; i++) {
            reports.add(AgentReports.report(made, String.format("2026-12-06T15:%02d:00+00:00@node-x.log.gz", i),
                    node, "run " + i + "\n"));
        }
        int deadPort;
        try (TestServer rootServer = TestServer.start(root)) {
            deadPort = rootServer.port();
        }
        ListAppender<ILoggingEvent> log = LogCapture.attach(UploadForwarder.class.getName());
        try (TestServer relayServer = TestServer.start(relay,
                upstream("https://127.0.0.1:" + deadPort, root, ""))) {
            long start = System.nanoTime();
            for (Path report : reports) {
                assertThat(relayServer.upload("/reports/", report).statusCode()).isEqualTo(201);
            }
            long uploadsTook = Duration.ofNanos(System.nanoTime() - start).toSeconds();
            Thread.sleep(3_000); // a window for retries to happen in, not a synchronisation
            long seconds = Duration.ofNanos(System.nanoTime() - start).toSeconds();
            long failures = log.list.stream().filter(event -> event.getFormattedMessage()
                    .startsWith("upload forwarding:")).count();
            // One line per round; doubling from 1 s: about log2(seconds) + 1 rounds. Woken by every upload it would
            // be a round per upload (60).
            assertThat(failures).as("attempts in %d s (uploads took %d s)", seconds, uploadsTook)
                    .isBetween(1L, 2L + (long) Math.ceil(Math.log(seconds + 1.0) / Math.log(2)));
            assertThat(reports).allMatch(report -> Files.exists(relay.uploads(UploadKind.REPORTS)
                    .resolve(report.getFileName())));
        } finally {
            LogCapture.detach(UploadForwarder.class.getName(), log);
        }
    }

    /**
     * @param url the policy server
     * @param root its sandbox, whose key the relay pins
     * @param more further keys of the table
     * @return the relay's {@code [upstream]} table: forwarding to {@code url}, no policy sync (not under test here)
     */
    private static String upstream(String url, Sandbox root, String more) {
        return "[upstream]\nurl = \"" + url + "\"\nkey_hash = \"" + root.serverPin() + "\"\nsync = false\n" + more;
    }

    private static JsonNode forwarding(TestServer server) throws Exception {
        return server.admin("GET", "/v1/status").body().path("forwarding");
    }

}
