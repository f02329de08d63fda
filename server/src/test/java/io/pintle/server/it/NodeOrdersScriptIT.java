package io.pintle.server.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.pintle.api.Routes;
import io.pintle.server.testing.Await;
import io.pintle.server.testing.NodeKeys;
import io.pintle.server.testing.RunEvents;
import io.pintle.server.testing.Sandbox;
import io.pintle.server.testing.TestServer;
import java.io.IOException;
import java.io.InputStream;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The node side of the pull channel, as shipped: {@code deploy/node/pintle-run-orders} run by dash with the real
 * curl, on a node that has no Pintle server and accepts no connection. Chain: root (127.0.0.31) → relay
 * (127.0.0.32) → node-1, whose listed address (127.0.0.33) has nothing listening. The script finds the relay, its
 * port and its pin through the same files a Rudder agent has ({@code agent.conf}, {@code policy_server_hash}),
 * pointed to by its environment overrides, and runs {@code fake-agent.sh} as its {@code rudder}. A webapp-style
 * caller asks root's admin listener for the run, as Rudder's webapp asks relayd.
 */
class NodeOrdersScriptIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Path SCRIPT = Path.of("../deploy/node/pintle-run-orders").toAbsolutePath().normalize();
    private static final String ROOT = "127.0.0.31";
    private static final String RELAY = "127.0.0.32";
    private static final String NODE = "127.0.0.33";
    private static final int RUN_TIMEOUT_SECONDS = 20;
    /**
     * The relay's {@code [remote_run] reconnect_grace}: far longer than the script takes to poll again after an order
     * (a curl started at once), shorter than the default 10 s, which the stopped script's test would wait out.
     */
    private static final Duration RECONNECT_GRACE = Duration.ofSeconds(3);

    @TempDir
    static Path dir;

    private static int port;
    private static Sandbox rootBox;
    private static Sandbox relayBox;
    private static NodeKeys nodeKeys;
    private static TestServer root;
    private static TestServer relay;
    private static Path agent;
    private static Path nodeHome;
    private static Process script;
    private static Path scriptLog;

    @BeforeAll
    static void startChain() throws Exception {
        assumeTrue(CurlIT.available("curl"), "curl is not installed");
        port = RemoteRunIT.freePort();
        rootBox = Sandbox.create(dir.resolve("root"));
        relayBox = Sandbox.create(dir.resolve("relay"), "relay-1", "relay");
        // The node's identity as Rudder's agent writes it (agent.cert, PKCS#1 localhost.priv); no server of its own.
        nodeKeys = Sandbox.create(dir.resolve("node-identity"), "node-1", "node").server();
        rootBox.register("relay-1", relayBox.server().certificate(), RELAY, "root");
        rootBox.register("node-1", nodeKeys.certificate(), NODE, "relay-1");
        // The relay pins its direct child twice, as Rudder writes it: nodescerts.pem and nodeslist.json's key-hash.
        relayBox.register("node-1", nodeKeys.certificate(), Sandbox.Pinning.BOTH);
        relayBox.register("node-1", nodeKeys.certificate(), NODE, "relay-1");
        rootBox.listen(ROOT + ":" + port);
        relayBox.listen(RELAY + ":" + port);
        root = TestServer.start(rootBox, remoteRun("root"));
        relay = startRelay();

        nodeHome = dir.resolve("node");
        agent = nodeHome.resolve("agent");
        Files.createDirectories(agent);
        try (InputStream in = NodeOrdersScriptIT.class.getResourceAsStream("/fake-agent.sh")) {
            Files.copy(in, agent.resolve("rudder"));
        }
        agent.resolve("rudder").toFile().setExecutable(true);
        // What `rudder agent policy-server` leaves on a node: the server in agent.conf, its key's pin beside it.
        Files.writeString(nodeHome.resolve("agent.conf"), "server=" + RELAY + "\nhttps_port = " + port + "\n");
        Files.writeString(nodeHome.resolve("policy_server_hash"), relayBox.serverPin() + "\n");
        scriptLog = nodeHome.resolve("pintle-run-orders.log");
    }

    @AfterAll
    static void stopAll() throws Exception {
        try {
            stopScript();
        } finally {
            for (TestServer server : new TestServer[] {relay, root}) {
                if (server != null) {
                    server.close();
                }
            }
        }
    }

    @BeforeEach
    void scriptRunsAndAgentIsReset() throws Exception {
        for (String control : List.of("block", "release", "sleep", "exit-code")) {
            Files.deleteIfExists(agent.resolve(control));
        }
        if (script == null || !script.isAlive()) {
            startScript();
        }
        awaitChannel();
        RemoteRunIT.deleteTree(agent.resolve("runs"));
    }

    @Test
    void relaydFormThroughRootAndRelayRunsTheNodesAgentOverItsPullChannel() throws Exception {
        HttpResponse<String> response = rootPost(Routes.RELAY_API + "/remote-run/nodes/node-1",
                "application/x-www-form-urlencoded", "asynchronous=false&keep_output=true&conditions=c1");

        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        assertThat(response.body()).as(log()).contains("fake agent: started agent run -uR -D c1", "fake agent: done");
        assertThat(runs()).containsExactly(List.of("agent", "run", "-uR", "-D", "c1"));
        // The script logs the order once its report's answer came, a moment after the caller had the run's end.
        Await.asserted(Duration.ofSeconds(20), () -> assertThat(log()).matches(
                "(?s).*order [0-9a-f]{32} \\(run -D c1\\): agent exit 0 after \\d+ s, reported\n.*"));
    }

    @Test
    void jsonUpdateReportsTheNodesOutputAndSuccess() throws Exception {
        List<JsonNode> events = RunEvents.of(rootPost(Routes.RELAY_API + "/remote-run/nodes/node-1", "application/json",
                "{\"command\": \"update\"}"));

        JsonNode status = RunEvents.status(events, "node-1");
        assertThat(status.path("status").asText()).as(log()).isEqualTo("success");
        assertThat(status.path("exitCode").asInt()).isZero();
        assertThat(RunEvents.outputs(events, "node-1")).contains("fake agent: started agent update", "fake agent: done");
        assertThat(runs()).containsExactly(List.of("agent", "update"));
    }

    @Test
    void anAgentExitingWith3IsFailedWithExitCode3() throws Exception {
        Files.writeString(agent.resolve("exit-code"), "3");
        List<JsonNode> events = RunEvents.of(rootPost(Routes.RELAY_API + "/remote-run/nodes/node-1", "application/json",
                "{\"command\": \"inventory\", \"conditions\": [\"a\", \"b_2\"]}"));

        JsonNode status = RunEvents.status(events, "node-1");
        assertThat(status.path("status").asText()).as(log()).isEqualTo("failed");
        assertThat(status.path("exitCode").asInt()).isEqualTo(3);
        assertThat(runs()).containsExactly(List.of("agent", "inventory", "-D", "a,b_2"));
    }

    @Test
    void aStoppedScriptMakesTheNodeUnreachable() throws Exception {
        stopScript();
        long start = System.nanoTime();
        List<JsonNode> events = RunEvents.of(rootPost(Routes.RELAY_API + "/remote-run/nodes/node-1", "application/json",
                "{\"command\": \"run\"}"));
        Duration took = Duration.ofNanos(System.nanoTime() - start);

        JsonNode status = RunEvents.status(events, "node-1");
        assertThat(status.path("status").asText()).as(status.toString()).isEqualTo("unreachable");
        // Its poll's connection closed with the script: the relay drops the channel, keeps it RECONNECT_GRACE
        // ([remote_run] reconnect_grace) for a reconnect, then reports the node unreachable. The bound leaves room
        // for a loaded machine and stays far below the order's own deadline (timeout + 30 s = 50 s), which is what a
        // poll never seen closed would cost.
        assertThat(took).as(status.toString()).isLessThan(Duration.ofSeconds(25));
        System.out.println("NodeOrdersScriptIT: a stopped script's node was reported unreachable after "
                + took.toMillis() + " ms: " + status);
        assertThat(runs()).isEmpty();
        assertThat(log()).contains("pintle-run-orders: stopped");
    }

    @Test
    void theScriptReconnectsAfterTheRelayRestarts() throws Exception {
        relay.stopAsInProduction();
        relay = startRelay();
        awaitChannel();
        List<JsonNode> events = RunEvents.of(rootPost(Routes.RELAY_API + "/remote-run/nodes/node-1", "application/json",
                "{\"command\": \"run\"}"));
        // The stopping relay answered the parked poll with 204 (or the connection dropped and the script backed
        // off): either way the script polls the new one, with no restart of its own.
        assertThat(RunEvents.status(events, "node-1").path("status").asText()).as(log()).isEqualTo("success");
        assertThat(script.isAlive()).isTrue();
    }

    // --- helpers ---------------------------------------------------------------------------------------------

    private static TestServer startRelay() throws Exception {
        return TestServer.start(relayBox, "[upstream]\nurl = \"https://" + ROOT + ":" + port + "\"\nkey_hash = \""
                + rootBox.serverPin() + "\"\nsync = false\n" + remoteRun("relay-1") + "reconnect_grace = "
                + RECONNECT_GRACE.toSeconds() + "\n");
    }

    /** [remote_run] with a fake agent of the server's own (never run here: only the node's is). */
    private static String remoteRun(String server) throws IOException {
        Path agentDir = dir.resolve("agents/" + server);
        Files.createDirectories(agentDir);
        Path program = agentDir.resolve("rudder");
        try (InputStream in = NodeOrdersScriptIT.class.getResourceAsStream("/fake-agent.sh")) {
            Files.copy(in, program, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        }
        program.toFile().setExecutable(true);
        String quoted = "\"" + program + "\"";
        return "[remote_run]\nport = " + port + "\ntimeout = " + RUN_TIMEOUT_SECONDS + "\nrun = [" + quoted
                + ", \"agent\", \"run\", \"-uR\"]\nupdate = [" + quoted + ", \"agent\", \"update\"]\ninventory = ["
                + quoted + ", \"agent\", \"inventory\"]\n"
                // An HTTPS-only fleet: a node without its channel is unreachable, never tried through cf-serverd.
                + "transports = [\"pull\"]\n";
    }

    static void startScript() throws IOException {
        String shell = CurlIT.available("dash") ? "dash" : "sh";
        ProcessBuilder builder = new ProcessBuilder(shell, SCRIPT.toString());
        Map<String, String> env = builder.environment();
        env.put("PINTLE_AGENT_CONF", nodeHome.resolve("agent.conf").toString());
        env.put("PINTLE_POLICY_SERVER_DAT", nodeHome.resolve("absent/policy_server.dat").toString());
        env.put("PINTLE_RUDDER_JSON", nodeHome.resolve("absent/rudder.json").toString());
        env.put("PINTLE_SERVER_HASH_FILE", nodeHome.resolve("policy_server_hash").toString());
        env.put("PINTLE_SERVER_CA", nodeHome.resolve("absent/policy_server_ca.pem").toString());
        env.put("PINTLE_AGENT_CERT", nodeKeys.certificatePath().toString());
        env.put("PINTLE_AGENT_KEY", nodeKeys.keyPath().toString());
        env.put("PINTLE_RUDDER", agent.resolve("rudder").toString());
        env.put("PINTLE_CURL", "curl");
        env.put("PINTLE_STATE_DIR", nodeHome.resolve("state").toString());
        env.put("PINTLE_RUN_TIMEOUT", String.valueOf(RUN_TIMEOUT_SECONDS));
        env.remove("RUNTIME_DIRECTORY");
        builder.redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(scriptLog.toFile()));
        script = builder.start();
    }

    /** SIGTERM, as systemd stops the unit; then anything left of it (its curl) is killed. */
    static void stopScript() throws InterruptedException {
        if (script == null) {
            return;
        }
        List<ProcessHandle> children = script.descendants().toList();
        script.destroy();
        boolean exited = script.waitFor(10, TimeUnit.SECONDS);
        children.forEach(ProcessHandle::destroyForcibly);
        if (!exited) {
            script.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
        }
        assertThat(exited).as("the script ends on SIGTERM: " + log()).isTrue();
        assertThat(script.exitValue()).isZero();
    }

    /**
     * Waits until the relay holds the node's channel. No gauge tells it, so a run is the probe: before the script's
     * first poll is parked the relay answers {@code unreachable} at once (the node's own address refuses), after it
     * the run succeeds. The probe's run is then forgotten.
     */
    private static void awaitChannel() throws Exception {
        Await.until(Duration.ofSeconds(20), () -> "the script polls: " + log(), () -> {
            List<JsonNode> events = RunEvents.of(rootPost(Routes.RELAY_API + "/remote-run/nodes/node-1",
                    "application/json", "{\"command\": \"run\", \"conditions\": [\"probe\"]}"));
            String status = RunEvents.status(events, "node-1").path("status").asText();
            if (status.equals("success")) {
                return true;
            }
            assertThat(status).as(log()).isEqualTo("unreachable");
            return false;
        });
    }

    private static HttpResponse<String> rootPost(String path, String type, String body) throws Exception {
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(root.server().adminUri().resolve(path))
                        .header("Content-Type", type)
                        .POST(HttpRequest.BodyPublishers.ofString(body))
                        .timeout(Duration.ofSeconds(60))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** The argv of every run of the node's agent, oldest first. */
    private static List<List<String>> runs() throws IOException {
        Path runs = agent.resolve("runs");
        if (!Files.isDirectory(runs)) {
            return List.of();
        }
        Map<Long, List<String>> byStart = new java.util.TreeMap<>();
        try (Stream<Path> files = Files.list(runs)) {
            for (Path argv : files.filter(f -> f.toString().endsWith(".argv")).toList()) {
                long start = Long.parseLong(Files.readString(
                        Path.of(argv.toString().replace(".argv", ".start"))).trim());
                String text = Files.readString(argv);
                byStart.put(start, text.isEmpty() ? List.of() : List.of(text.split("\n")));
            }
        }
        return new ArrayList<>(byStart.values());
    }

    static String log() {
        try {
            return Files.exists(scriptLog) ? "script log:\n" + Files.readString(scriptLog, StandardCharsets.UTF_8) : "";
        } catch (IOException e) {
            return e.toString();
        }
    }
}
