package io.pintle.server.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.pintle.api.MediaTypes;
import io.pintle.api.Routes;
import io.pintle.api.dto.RemoteRunEvent;
import io.pintle.api.dto.RemoteRunRequest;
import io.pintle.client.ClientTls;
import io.pintle.client.ProblemException;
import io.pintle.client.RemoteRunClient;
import io.pintle.server.testing.Await;
import io.pintle.server.testing.NodeKeys;
import io.pintle.server.testing.Sandbox;
import io.pintle.server.testing.TestServer;
import io.pintle.server.tls.SelfSigned;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.PrivateKey;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Remote run through a chain of real Pintle servers on loopback, each on its own address and one port as in a real
 * fleet: root (127.0.0.2) → relay (127.0.0.3) → node-1 (127.0.0.4), and node-2 (127.0.0.5) directly under root; a
 * fourth node, ghost (127.0.0.9), is in root's list but nothing listens there. Every agent is {@code
 * fake-agent.sh}, which records its exact argv. Every hop is mutual TLS with the callee's key pinned from the
 * caller's node list and the caller's key checked against the callee's {@code [upstream]} pin.
 */
class RemoteRunIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** How long a run started in the background, a reload or an agent's end may take to show. */
    private static final Duration SETTLES = Duration.ofSeconds(20);
    private static final String ROOT = "127.0.0.2";
    private static final String RELAY = "127.0.0.3";
    private static final String NODE_1 = "127.0.0.4";
    private static final String NODE_2 = "127.0.0.5";
    private static final String GHOST = "127.0.0.9";
    /** node-2's agent is stopped after this; every other agent of a test ends well before it. */
    private static final int NODE_2_TIMEOUT_SECONDS = 3;

    @TempDir
    static Path dir;

    private static Sandbox rootBox;
    private static Sandbox relayBox;
    private static Sandbox node1Box;
    private static Sandbox node2Box;
    private static TestServer root;
    private static TestServer relay;
    private static TestServer node1;
    private static TestServer node2;
    private static final Map<String, Path> AGENTS = new LinkedHashMap<>();

    @BeforeAll
    static void startChain() throws Exception {
        int port = freePort();
        rootBox = Sandbox.create(dir.resolve("root"));
        relayBox = Sandbox.create(dir.resolve("relay"), "relay-1", "relay");
        node1Box = Sandbox.create(dir.resolve("node-1"), "node-1", "node");
        node2Box = Sandbox.create(dir.resolve("node-2"), "node-2", "node");
        // Root's list holds every node below it, recursively, as Rudder's nodeslist.json does.
        rootBox.register("relay-1", relayBox.server().certificate(), RELAY, "root");
        rootBox.register("node-1", node1Box.server().certificate(), NODE_1, "relay-1");
        rootBox.register("node-2", node2Box.server().certificate(), NODE_2, "root");
        rootBox.register("ghost", SelfSigned.generate(SelfSigned.KeyType.EC_P256, "ghost").certificate(), GHOST,
                "root");
        relayBox.register("node-1", node1Box.server().certificate(), NODE_1, "relay-1");
        rootBox.listen(ROOT + ":" + port);
        relayBox.listen(RELAY + ":" + port);
        node1Box.listen(NODE_1 + ":" + port);
        node2Box.listen(NODE_2 + ":" + port);
        root = TestServer.start(rootBox, remoteRun("root", port, 60, 8));
        relay = TestServer.start(relayBox, upstream(ROOT, port, rootBox) + remoteRun("relay-1", port, 60, 8));
        node1 = TestServer.start(node1Box, upstream(RELAY, port, relayBox) + remoteRun("node-1", port, 60, 8));
        node2 = TestServer.start(node2Box, upstream(ROOT, port, rootBox)
                + remoteRun("node-2", port, NODE_2_TIMEOUT_SECONDS, 8));
    }

    @AfterAll
    static void stopChain() {
        for (TestServer server : new TestServer[] {node2, node1, relay, root}) {
            if (server != null) {
                server.close();
            }
        }
    }

    @BeforeEach
    void resetAgents() throws IOException {
        for (Path agent : AGENTS.values()) {
            for (String control : List.of("block", "release", "sleep", "exit-code")) {
                Files.deleteIfExists(agent.resolve(control));
            }
            deleteTree(agent.resolve("runs"));
        }
    }

    @Test
    void relaydFormRunsTheAgentOfANodeBehindTheRelayWithItsConditions() throws Exception {
        HttpResponse<String> response = adminPost(Routes.RELAY_API + "/remote-run/nodes/node-1",
                "application/x-www-form-urlencoded", "asynchronous=false&keep_output=true&conditions=class2,class3");

        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        assertThat(response.headers().firstValue("Content-Type")).hasValueSatisfying(
                type -> assertThat(type).startsWith("text/plain"));
        assertThat(response.body()).contains(NODE_1 + "> fake agent: started agent run -uR -D class2,class3",
                NODE_1 + "> fake agent: done");
        assertThat(runs("node-1")).containsExactly(List.of("agent", "run", "-uR", "-D", "class2,class3"));
        assertThat(runs("relay-1")).isEmpty();
        assertThat(runs("root")).isEmpty();
    }

    @Test
    void ruddersHookCommandWorksWithCurl() throws Exception {
        assumeTrue(CurlIT.available("curl"), "curl is not installed");
        // What Rudder's 60-trigger-node-update hook sends to relayd, node ids on standard input.
        CurlIT.Result curl = CurlIT.curl(List.of("-sS", "--fail", "-X", "POST", "-d", "asynchronous=false",
                "-d", "keep_output=true", "-d", "conditions=hook_class", "-d", "nodes=node-1,node-2"),
                root.server().adminUri() + Routes.RELAY_API_ALIAS + "/remote-run/nodes");
        assertThat(curl.exit()).as(curl.stderr()).isZero();
        assertThat(curl.stdout()).contains(NODE_1 + "> fake agent: done", NODE_2 + "> fake agent: done");
        assertThat(runs("node-1")).containsExactly(List.of("agent", "run", "-uR", "-D", "hook_class"));
        assertThat(runs("node-2")).containsExactly(List.of("agent", "run", "-uR", "-D", "hook_class"));
    }

    @Test
    void synchronousWithoutOutputAnswersEmptyAfterTheRun() throws Exception {
        // relayd's "classes" alias, the Apache path, and no output kept.
        HttpResponse<String> response = adminPost(Routes.RELAY_API_ALIAS + "/remote-run/nodes",
                "application/x-www-form-urlencoded", "nodes=node-2&classes=only_this");

        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        assertThat(response.body()).isEmpty();
        assertThat(runs("node-2")).containsExactly(List.of("agent", "run", "-uR", "-D", "only_this"));
    }

    @Test
    void eachJsonCommandRunsItsExactArgvOnEveryTargetedNode() throws Exception {
        Map<String, List<String>> expected = Map.of(
                "run", List.of("agent", "run", "-uR", "-D", "a,b_2,debug"),
                "update", List.of("agent", "update", "-D", "a,b_2,debug"),
                "inventory", List.of("agent", "inventory", "-D", "a,b_2,debug"));
        for (String command : List.of("run", "update", "inventory")) {
            resetAgents();
            List<JsonNode> events = ndjson(adminPost(Routes.RELAY_API + "/remote-run/nodes", "application/json",
                    JSON.writeValueAsString(new RemoteRunRequest(command, List.of("a", "b_2"), "debug",
                            List.of("node-1", "node-2"), false))));

            assertThat(statuses(events)).as(command).isEqualTo(Map.of("node-1", "success", "node-2", "success"));
            assertThat(runs("node-1")).as(command).containsExactly(expected.get(command));
            assertThat(runs("node-2")).as(command).containsExactly(expected.get(command));
            assertThat(outputs(events, "node-1")).contains("fake agent: done");
            JsonNode done = events.get(events.size() - 1);
            assertThat(done.path("type").asText()).isEqualTo("done");
            assertThat(done.path("nodes").asInt()).isEqualTo(2);
            assertThat(done.path("succeeded").asInt()).isEqualTo(2);
        }
        // No conditions: no -D at all.
        resetAgents();
        ndjson(adminPost(Routes.RELAY_API + "/remote-run/nodes/node-2", "application/json",
                "{\"command\": \"update\"}"));
        assertThat(runs("node-2")).containsExactly(List.of("agent", "update"));
    }

    @Test
    void aPintleRelayAskedForItselfRunsItsOwnAgentApartFromTheNodesBelowIt() throws Exception {
        // With transports ["pull", "pintle"], the relay itself is a call for its own id, which a Pintle relay runs.
        List<JsonNode> alone = ndjson(adminPost(Routes.RELAY_API + "/remote-run/nodes", "application/json",
                "{\"command\": \"run\", \"conditions\": [\"c1\"], \"nodes\": [\"relay-1\"]}"));
        assertThat(statuses(alone)).isEqualTo(Map.of("relay-1", "success"));
        assertThat(outputs(alone, "relay-1")).contains("fake agent: done");
        assertThat(runs("relay-1")).containsExactly(List.of("agent", "run", "-uR", "-D", "c1"));
        assertThat(runs("node-1")).isEmpty();

        resetAgents();
        List<JsonNode> both = ndjson(adminPost(Routes.RELAY_API + "/remote-run/nodes", "application/json",
                "{\"command\": \"run\", \"nodes\": [\"relay-1\", \"node-1\"]}"));
        assertThat(statuses(both)).isEqualTo(Map.of("relay-1", "success", "node-1", "success"));
        assertThat(runs("relay-1")).containsExactly(List.of("agent", "run", "-uR"));
        assertThat(runs("node-1")).containsExactly(List.of("agent", "run", "-uR"));
        assertThat(runs("root")).isEmpty();
    }

    @Test
    void allReachesEveryServerOfTheTreeAndReportsTheUnreachableNodeApart() throws Exception {
        List<JsonNode> events = ndjson(adminPost(Routes.RELAY_API + "/remote-run/all", "application/json",
                "{\"command\": \"run\"}"));

        Map<String, String> statuses = statuses(events);
        assertThat(statuses).containsEntry("root", "success").containsEntry("relay-1", "success")
                .containsEntry("node-1", "success").containsEntry("node-2", "success")
                .containsEntry("ghost", "unreachable").hasSize(5);
        JsonNode ghost = status(events, "ghost");
        assertThat(ghost.path("detail").asText()).contains("ghost", GHOST);
        for (String server : List.of("root", "relay-1", "node-1", "node-2")) {
            assertThat(runs(server)).as(server).containsExactly(List.of("agent", "run", "-uR"));
        }
        // The relay's and node-1's output came through the relay, merged with the others'.
        assertThat(outputs(events, "node-1")).contains("fake agent: done");
        assertThat(outputs(events, "relay-1")).contains("fake agent: done");
    }

    @Test
    void asynchronousWithOutputStreamsLinesWhileTheAgentStillRuns() throws Exception {
        Path agent = AGENTS.get("node-1");
        Files.writeString(agent.resolve("block"), "");
        HttpResponse<InputStream> response = HttpClient.newHttpClient().send(
                HttpRequest.newBuilder(root.server().adminUri().resolve(Routes.RELAY_API_ALIAS
                                + "/remote-run/nodes/node-1"))
                        .header("Content-Type", "application/x-www-form-urlencoded")
                        .POST(HttpRequest.BodyPublishers.ofString("asynchronous=true&keep_output=true"))
                        .timeout(Duration.ofSeconds(60))
                        .build(),
                HttpResponse.BodyHandlers.ofInputStream());
        assertThat(response.statusCode()).isEqualTo(200);
        try (BufferedReader lines = new BufferedReader(
                new InputStreamReader(response.body(), StandardCharsets.UTF_8))) {
            String first = CompletableFuture.supplyAsync(() -> readLine(lines)).get(20, TimeUnit.SECONDS);
            assertThat(first).isEqualTo(NODE_1 + "> fake agent: started agent run -uR");
            // The agent is still blocked: nothing has ended yet.
            assertThat(ends("node-1")).isZero();
            Files.writeString(agent.resolve("release"), "");
            assertThat(CompletableFuture.supplyAsync(() -> readLine(lines)).get(20, TimeUnit.SECONDS))
                    .isEqualTo(NODE_1 + "> fake agent: done");
            assertThat(readLine(lines)).isNull();
        }
    }

    @Test
    void asynchronousWithoutOutputAnswersAtOnceAndRunsInTheBackground() throws Exception {
        Path agent = AGENTS.get("node-1");
        Files.writeString(agent.resolve("block"), "");
        HttpResponse<String> response = adminPost(Routes.RELAY_API + "/remote-run/nodes/node-1",
                "application/x-www-form-urlencoded", "asynchronous=true&keep_output=false");
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.body()).isEmpty();
        // The answer came while the agent waits for its release: it started, it has not ended.
        Await.until(SETTLES, () -> runs("node-1").size() == 1);
        assertThat(ends("node-1")).isZero();
        Files.writeString(agent.resolve("release"), "");
        Await.until(SETTLES, () -> ends("node-1") == 1);

        // JSON: 202 with the targets, at once.
        resetAgents();
        Files.writeString(agent.resolve("block"), "");
        HttpResponse<String> accepted = adminPost(Routes.RELAY_API + "/remote-run/nodes/node-1", "application/json",
                "{\"command\": \"inventory\", \"asynchronous\": true}");
        assertThat(accepted.statusCode()).isEqualTo(202);
        assertThat(JSON.readTree(accepted.body()).path("nodes").toString()).isEqualTo("[\"node-1\"]");
        Await.until(SETTLES, () -> runs("node-1").size() == 1);
        assertThat(runs("node-1")).containsExactly(List.of("agent", "inventory"));
        Files.writeString(agent.resolve("release"), "");
        Await.until(SETTLES, () -> ends("node-1") == 1);
    }

    @Test
    void aNodeRefusesEveryCallerButItsPolicyServer() throws Exception {
        RemoteRunRequest run = new RemoteRunRequest("run", null, null, null, false);
        URI node1Url = URI.create(node1.uri() + Routes.RELAY_API_ALIAS + "/remote-run/nodes/node-1");
        // Root is node-1's grandparent, not its policy server; node-2 is a sibling; an unknown key; no certificate.
        for (NodeKeys caller : List.of(rootBox.server(), node2Box.server(),
                rootBox.unregisteredIdentity("stranger", "stranger"))) {
            assertThatThrownBy(() -> call(caller, node1Url, node1Box.serverPin(), run))
                    .as(caller.name()).isInstanceOfSatisfying(ProblemException.class, e -> {
                        assertThat(e.problem().status()).isEqualTo(403);
                        assertThat(e.problem().reason()).isEqualTo("not-policy-server");
                    });
        }
        HttpResponse<String> anonymous = HttpClient.newBuilder()
                .sslContext(ClientTls.context(null, null, Set.of(node1Box.serverPin()))).build()
                .send(HttpRequest.newBuilder(node1Url).header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString("{\"command\": \"run\"}")).build(),
                        HttpResponse.BodyHandlers.ofString());
        assertThat(anonymous.statusCode()).isEqualTo(403);
        assertThat(JSON.readTree(anonymous.body()).path("reason").asText()).isEqualTo("no-certificate");
        // Root has no policy server: its TLS listener takes remote runs from its own machine only (Rudder's webapp);
        // this test's clients connect from 127.0.0.1, so WebappProxyIT checks that from another address.
        assertThat(runs("node-1")).isEmpty();
        assertThat(runs("root")).isEmpty();

        // Its policy server, the relay, is accepted.
        List<RemoteRunEvent> events = new ArrayList<>();
        call(relayBox.server(), node1Url, node1Box.serverPin(), run, events);
        assertThat(events).filteredOn(e -> e.type().equals("status")).singleElement()
                .satisfies(e -> assertThat(e.status()).isEqualTo("success"));
        assertThat(runs("node-1")).containsExactly(List.of("agent", "run", "-uR"));
    }

    @Test
    void aReplacedPolicyServerCertificateDecidesAfterItsReloadAndABrokenOneKeepsThePreviousPin() throws Exception {
        Sandbox box = Sandbox.create(dir.resolve("p-node"), "p-node", "node");
        Path certificate = box.dir().resolve("policy_server.pem");
        SelfSigned.writeCertificates(certificate, relayBox.server().certificate());
        String config = "[upstream]\nurl = \"https://" + RELAY + ":1\"\ncertificate = \"" + certificate
                + "\"\nsync = false\n" + remoteRun("p-node", 1, 60, 8);
        try (TestServer server = TestServer.start(box, config)) {
            URI url = URI.create(server.uri() + Routes.RELAY_API_ALIAS + "/remote-run/nodes/p-node");
            RemoteRunRequest run = new RemoteRunRequest("run", null, null, null, false);
            call(relayBox.server(), url, box.serverPin(), run);
            assertNotPolicyServer(rootBox.server(), url, box.serverPin(), run);
            assertThat(server.admin("GET", "/v1/status").body().path("inputs").findValuesAsText("path"))
                    .contains(certificate.toString());

            // The node moves under root: Rudder renames the new certificate into place; the file watch reloads.
            Path next = certificate.resolveSibling("policy_server.pem.new");
            SelfSigned.writeCertificates(next, rootBox.server().certificate());
            Files.move(next, certificate, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            Await.until(SETTLES, () -> status(server).path("generation").asLong() == 2);
            call(rootBox.server(), url, box.serverPin(), run);
            assertNotPolicyServer(relayBox.server(), url, box.serverPin(), run);

            // A broken certificate is rejected whole: reported, and root's pin keeps deciding.
            Files.writeString(next,
                    "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n");
            Files.move(next, certificate, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            Await.until(SETTLES, () -> status(server).path("reloads").path("failed").asLong() >= 1);
            JsonNode status = status(server);
            assertThat(status.path("generation").asLong()).isEqualTo(2);
            assertThat(status.path("last_failure").path("error").asText()).contains(certificate.toString())
                    .contains("upstream.certificate");
            assertThat(server.metric("pintle_reloads_total{result=\"failed\"}")).isGreaterThanOrEqualTo(1.0);
            call(rootBox.server(), url, box.serverPin(), run);
            assertNotPolicyServer(relayBox.server(), url, box.serverPin(), run);
            assertThat(runs("p-node")).hasSize(3);
        }
    }

    @Test
    void invalidConditionsAndUnknownCommandsAreRefusedAndStartNothing() throws Exception {
        String path = Routes.RELAY_API + "/remote-run/nodes";
        String form = "application/x-www-form-urlencoded";
        Map<String, String[]> cases = new LinkedHashMap<>();
        cases.put("form: shell in a condition", new String[] {form, "nodes=node-1&conditions=a;reboot",
                "invalid-condition"});
        cases.put("form: leading underscore", new String[] {form, "nodes=node-1&conditions=_a", "invalid-condition"});
        cases.put("form: empty condition", new String[] {form, "nodes=node-1&conditions=a,,b", "invalid-condition"});
        cases.put("form: 1025 characters", new String[] {form, "nodes=node-1&conditions=" + "a".repeat(1025),
                "invalid-condition"});
        cases.put("form: bad flag", new String[] {form, "nodes=node-1&asynchronous=yes", "invalid-form"});
        cases.put("form: no nodes", new String[] {form, "conditions=a", "missing-nodes"});
        cases.put("form: bad node id", new String[] {form, "nodes=node-1,../x", "invalid-node-id"});
        cases.put("json: unknown command", new String[] {"application/json",
                "{\"command\": \"shell\", \"nodes\": [\"node-1\"]}", "unknown-command"});
        cases.put("json: no command", new String[] {"application/json", "{\"nodes\": [\"node-1\"]}",
                "unknown-command"});
        cases.put("json: bad verbosity", new String[] {"application/json",
                "{\"command\": \"run\", \"verbosity\": \"loud\", \"nodes\": [\"node-1\"]}", "invalid-verbosity"});
        cases.put("json: bad condition", new String[] {"application/json",
                "{\"command\": \"run\", \"conditions\": [\"a b\"], \"nodes\": [\"node-1\"]}", "invalid-condition"});
        cases.put("json: free-form argument", new String[] {"application/json",
                "{\"command\": \"run\", \"args\": [\"-f\", \"/tmp/x.cf\"], \"nodes\": [\"node-1\"]}", "invalid-json"});
        for (Map.Entry<String, String[]> c : cases.entrySet()) {
            HttpResponse<String> response = adminPost(path, c.getValue()[0], c.getValue()[1]);
            assertThat(response.statusCode()).as(c.getKey()).isEqualTo(400);
            assertThat(response.headers().firstValue("Content-Type")).as(c.getKey())
                    .hasValue(MediaTypes.PROBLEM_JSON);
            assertThat(JSON.readTree(response.body()).path("reason").asText()).as(c.getKey())
                    .isEqualTo(c.getValue()[2]);
        }
        HttpResponse<String> unknown = adminPost(Routes.RELAY_API + "/remote-run/nodes/nobody", form, "");
        assertThat(unknown.statusCode()).isEqualTo(404);
        assertThat(JSON.readTree(unknown.body()).path("reason").asText()).isEqualTo("unknown-node");
        // Past 1 MiB: refused from its Content-Length, before any of the body is read (raw socket: only the
        // headers are sent, so the answer cannot race a client still writing).
        URI admin = root.server().adminUri();
        try (java.net.Socket socket = new java.net.Socket(admin.getHost(), admin.getPort())) {
            socket.setSoTimeout(20_000);
            socket.getOutputStream().write(("POST " + path + " HTTP/1.1\r\nHost: localhost\r\nContent-Type: " + form
                    + "\r\nContent-Length: " + (2 * 1024 * 1024) + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            String statusLine = new BufferedReader(new InputStreamReader(socket.getInputStream(),
                    StandardCharsets.US_ASCII)).readLine();
            assertThat(statusLine).startsWith("HTTP/1.1 413");
        }
        // ... and without one (chunked), after reading at most 1 MiB and a byte.
        HttpResponse<String> chunked = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                        root.server().adminUri().resolve(path)).header("Content-Type", form)
                        .POST(HttpRequest.BodyPublishers.ofInputStream(() -> new java.io.ByteArrayInputStream(
                                ("nodes=node-1&x=" + "y".repeat(1024 * 1024)).getBytes(StandardCharsets.UTF_8))))
                        .timeout(Duration.ofSeconds(60)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(chunked.statusCode()).isEqualTo(413);
        // The same refusal one hop down: the relay validates what root passes on too.
        assertThatThrownBy(() -> call(rootBox.server(),
                URI.create(relay.uri() + Routes.RELAY_API_ALIAS + "/remote-run/nodes"), relayBox.serverPin(),
                new RemoteRunRequest("run", List.of("-f"), null, List.of("node-1"), false)))
                .isInstanceOfSatisfying(ProblemException.class,
                        e -> assertThat(e.problem().reason()).isEqualTo("invalid-condition"));
        Await.quietFor(Duration.ofMillis(200), () -> {
            for (String server : AGENTS.keySet()) {
                assertThat(runs(server)).as(server).isEmpty();
            }
        });
    }

    @Test
    void aTimedOutAgentIsStoppedAndReportedWhileTheOthersSucceed() throws Exception {
        Files.writeString(AGENTS.get("node-2").resolve("sleep"), "60");
        long start = System.nanoTime();
        List<JsonNode> events = ndjson(adminPost(Routes.RELAY_API + "/remote-run/nodes", "application/json",
                "{\"command\": \"run\", \"nodes\": [\"node-1\", \"node-2\", \"ghost\", \"nobody\"]}"));

        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(30));
        assertThat(statuses(events)).isEqualTo(Map.of("node-1", "success", "node-2", "timeout",
                "ghost", "unreachable", "nobody", "unknown"));
        JsonNode timedOut = status(events, "node-2");
        assertThat(timedOut.path("timedOut").asBoolean()).isTrue();
        assertThat(timedOut.path("durationMs").asLong()).isGreaterThanOrEqualTo(NODE_2_TIMEOUT_SECONDS * 1000L);
        assertThat(timedOut.has("exitCode")).isFalse();
        assertThat(status(events, "node-1").path("exitCode").asInt()).isZero();
        assertThat(root.metric("pintle_remote_run_nodes_total{status=\"timeout\"}")).isGreaterThanOrEqualTo(1.0);
        assertThat(node2.metric("pintle_remote_run_nodes_total{status=\"timeout\"}")).isGreaterThanOrEqualTo(1.0);
        assertThat(root.metric("pintle_remote_run_nodes_total{status=\"unreachable\"}")).isGreaterThanOrEqualTo(1.0);
        // The agent (and its sleep) is gone, not left running.
        long pid = Long.parseLong(pidFiles("node-2").get(0).trim());
        Await.until(SETTLES, () -> ProcessHandle.of(pid).map(p -> !p.isAlive()).orElse(true));
    }

    @Test
    void aFailingAgentIsReportedWithItsExitCode() throws Exception {
        Files.writeString(AGENTS.get("node-1").resolve("exit-code"), "3");
        List<JsonNode> events = ndjson(adminPost(Routes.RELAY_API + "/remote-run/nodes", "application/json",
                "{\"command\": \"run\", \"nodes\": [\"node-1\", \"node-2\"]}"));
        assertThat(statuses(events)).isEqualTo(Map.of("node-1", "failed", "node-2", "success"));
        assertThat(status(events, "node-1").path("exitCode").asInt()).isEqualTo(3);
        JsonNode done = events.get(events.size() - 1);
        assertThat(done.path("succeeded").asInt()).isEqualTo(1);
    }

    @Test
    void noMoreThanMaxParallelAgentsRunAtOnce() throws Exception {
        int port = freePort();
        Sandbox hub = Sandbox.create(dir.resolve("c-root"));
        hub.listen("127.0.0.20:" + port);
        List<TestServer> servers = new ArrayList<>();
        try {
            List<String> nodes = new ArrayList<>();
            for (int i = 1; i <= 5; i++) {
                String id = "c-" + i;
                Sandbox box = Sandbox.create(dir.resolve(id), id, "node");
                box.listen("127.0.0.2" + i + ":" + port);
                hub.register(id, box.server().certificate(), "127.0.0.2" + i, "root");
                servers.add(TestServer.start(box, upstream("127.0.0.20", port, hub) + remoteRun(id, port, 60, 8)));
                Files.writeString(AGENTS.get(id).resolve("sleep"), "0.7");
                nodes.add(id);
            }
            TestServer hubServer = TestServer.start(hub, remoteRun("c-root", port, 60, 2));
            servers.add(hubServer);
            HttpResponse<String> response = HttpClient.newHttpClient().send(
                    HttpRequest.newBuilder(hubServer.server().adminUri().resolve(Routes.RELAY_API
                                    + "/remote-run/nodes"))
                            .header("Content-Type", "application/json")
                            .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(
                                    new RemoteRunRequest("run", null, null, nodes, false))))
                            .timeout(Duration.ofSeconds(60)).build(),
                    HttpResponse.BodyHandlers.ofString());
            List<JsonNode> events = ndjson(response);
            assertThat(statuses(events)).hasSize(5).allSatisfy((node, status) -> assertThat(status).isEqualTo("success"));

            // Every run's [start, end]: at no instant were more than two agents running, and two did run together.
            List<long[]> intervals = new ArrayList<>();
            for (String node : nodes) {
                Path runs = AGENTS.get(node).resolve("runs");
                try (Stream<Path> files = Files.list(runs)) {
                    for (Path start : files.filter(f -> f.toString().endsWith(".start")).toList()) {
                        long begin = Long.parseLong(Files.readString(start).trim());
                        long end = Long.parseLong(Files.readString(
                                Path.of(start.toString().replace(".start", ".end"))).trim());
                        intervals.add(new long[] {begin, end});
                    }
                }
            }
            assertThat(intervals).hasSize(5);
            int most = 0;
            for (long[] interval : intervals) {
                // Agents running at the moment this one started (itself included).
                long at = interval[0];
                int running = (int) intervals.stream().filter(o -> o[0] <= at && at < o[1]).count();
                most = Math.max(most, running);
            }
            assertThat(most).isEqualTo(2);
        } finally {
            for (TestServer server : servers) {
                server.close();
            }
        }
    }

    // --- helpers ---------------------------------------------------------------------------------------------

    /** [remote_run] with the fake agent copied into the server's own directory. */
    private static String remoteRun(String server, int port, int timeoutSeconds, int maxParallel) throws IOException {
        Path agentDir = dir.resolve("agents/" + server);
        Files.createDirectories(agentDir);
        Path script = agentDir.resolve("rudder");
        try (InputStream in = RemoteRunIT.class.getResourceAsStream("/fake-agent.sh")) {
            Files.copy(in, script);
        }
        script.toFile().setExecutable(true);
        AGENTS.put(server, agentDir);
        String program = "\"" + script + "\"";
        // Every node here runs Pintle: reached over its own listener (Rudder's nodes: cf-serverd, the default).
        return "[remote_run]\nport = " + port + "\ntimeout = " + timeoutSeconds + "\nmax_parallel = " + maxParallel
                + "\ntransports = [\"pull\", \"pintle\"]"
                + "\nrun = [" + program + ", \"agent\", \"run\", \"-uR\"]\nupdate = [" + program
                + ", \"agent\", \"update\"]\ninventory = [" + program + ", \"agent\", \"inventory\"]\n";
    }

    private static String upstream(String host, int port, Sandbox policyServer) {
        return "[upstream]\nurl = \"https://" + host + ":" + port + "\"\nkey_hash = \"" + policyServer.serverPin()
                + "\"\nsync = false\n";
    }

    /** A port free on every address (the servers share it, each on its own loopback address). */
    static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    private static HttpResponse<String> adminPost(String path, String type, String body) throws Exception {
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(root.server().adminUri().resolve(path))
                        .header("Content-Type", type)
                        .POST(HttpRequest.BodyPublishers.ofString(body))
                        .timeout(Duration.ofSeconds(60))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static List<JsonNode> ndjson(HttpResponse<String> response) throws IOException {
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        assertThat(response.headers().firstValue("Content-Type")).hasValue(MediaTypes.NDJSON);
        List<JsonNode> events = new ArrayList<>();
        for (String line : response.body().split("\n")) {
            if (!line.isEmpty()) {
                events.add(JSON.readTree(line));
            }
        }
        assertThat(events).isNotEmpty();
        assertThat(events.get(events.size() - 1).path("type").asText()).isEqualTo("done");
        return events;
    }

    private static Map<String, String> statuses(List<JsonNode> events) {
        Map<String, String> statuses = new LinkedHashMap<>();
        for (JsonNode event : events) {
            if (event.path("type").asText().equals("status")) {
                String previous = statuses.put(event.path("node").asText(), event.path("status").asText());
                assertThat(previous).as("one status per node: %s", event).isNull();
            }
        }
        return statuses;
    }

    private static JsonNode status(List<JsonNode> events, String node) {
        return events.stream().filter(e -> e.path("type").asText().equals("status"))
                .filter(e -> e.path("node").asText().equals(node)).findFirst().orElseThrow();
    }

    private static List<String> outputs(List<JsonNode> events, String node) {
        return events.stream().filter(e -> e.path("type").asText().equals("output"))
                .filter(e -> e.path("node").asText().equals(node)).map(e -> e.path("line").asText()).toList();
    }

    /** The argv of every run the server's agent made, oldest first. */
    static List<List<String>> runs(String server) {
        Path runs = AGENTS.get(server).resolve("runs");
        if (!Files.isDirectory(runs)) {
            return List.of();
        }
        try (Stream<Path> files = Files.list(runs)) {
            List<List<String>> argvs = new ArrayList<>();
            for (Path file : files.filter(f -> f.toString().endsWith(".argv"))
                    .sorted(Comparator.comparing(RemoteRunIT::startOf)).toList()) {
                String text = Files.readString(file);
                argvs.add(text.isEmpty() ? List.of() : List.of(text.split("\n")));
            }
            return argvs;
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static long startOf(Path argv) {
        try {
            return Long.parseLong(Files.readString(Path.of(argv.toString().replace(".argv", ".start"))).trim());
        } catch (IOException | NumberFormatException e) {
            return Long.MAX_VALUE;
        }
    }

    private static long ends(String server) {
        Path runs = AGENTS.get(server).resolve("runs");
        if (!Files.isDirectory(runs)) {
            return 0;
        }
        try (Stream<Path> files = Files.list(runs)) {
            return files.filter(f -> f.toString().endsWith(".end")).count();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static List<String> pidFiles(String server) throws IOException {
        try (Stream<Path> files = Files.list(AGENTS.get(server).resolve("runs"))) {
            List<String> pids = new ArrayList<>();
            for (Path file : files.filter(f -> f.toString().endsWith(".pid")).toList()) {
                pids.add(Files.readString(file));
            }
            return pids;
        }
    }

    private static void assertNotPolicyServer(NodeKeys caller, URI url, String pin, RemoteRunRequest request) {
        assertThatThrownBy(() -> call(caller, url, pin, request)).as(caller.name())
                .isInstanceOfSatisfying(ProblemException.class, e -> {
                    assertThat(e.problem().status()).isEqualTo(403);
                    assertThat(e.problem().reason()).isEqualTo("not-policy-server");
                });
    }

    private static JsonNode status(TestServer server) {
        try {
            return server.admin("GET", "/v1/status").body();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static void call(NodeKeys caller, URI url, String pin, RemoteRunRequest request) throws Exception {
        call(caller, url, pin, request, new ArrayList<>());
    }

    private static void call(NodeKeys caller, URI url, String pin, RemoteRunRequest request,
            List<RemoteRunEvent> events) throws Exception {
        PrivateKey key = io.pintle.client.Pem.readPrivateKey(caller.keyPath());
        new RemoteRunClient(List.of(caller.certificate()), key, Duration.ofSeconds(5), Duration.ofSeconds(60))
                .run(url, pin, request, Map.of(), events::add);
    }

    private static String readLine(BufferedReader reader) {
        try {
            return reader.readLine();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    static void deleteTree(Path root) throws IOException {
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(root)) {
            for (Path path : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(path);
            }
        }
    }
}
