package io.pintle.server.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import io.pintle.api.Routes;
import io.pintle.server.testing.FakeAgent;
import io.pintle.server.testing.RunEvents;
import io.pintle.server.testing.Sandbox;
import io.pintle.server.testing.TestServer;
import io.pintle.server.tls.SelfSigned;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * "Run now" for a relay itself, when that relay runs relayd: a Pintle root asks the relay for its own id over HTTPS
 * (a Pintle relay then runs its agent), and relayd answers that with nothing run; the root then runs it as relayd's
 * root runs a neighbour ({@code rudder remote run}, cf-runagent to its cf-serverd). The relay here is a
 * stand-in that answers as relayd does (Normation/rudder {@code relay/sources/relayd/src/api/remote_run.rs} and
 * {@code src/data/node.rs}): it runs the listed nodes that are its neighbours and skips the ids it does not hold,
 * its own among them, since a relay's {@code nodeslist.json} lists the nodes below it, not itself. {@code rudder
 * remote run} is {@code fake-rudder-remote-run.sh}, which records its argv. A Pintle relay running its own agent
 * when asked for its own id is {@code RemoteRunIT}'s.
 */
class RelayOwnRunIT {
    private static final String RELAY = "relay-d";
    /** The relay's address, as the root's node list has it: where both HTTPS and cf-runagent reach it. */
    private static final String RELAY_HOST = "127.0.0.1";
    /** The relay's own node list: node-a below it, at this address. */
    private static final Map<String, String> RELAYS_NODES = Map.of("node-a", "192.0.2.10");

    @TempDir
    static Path shared;

    static HttpsServer relayd;
    static SelfSigned.Identity relayKey;
    static FakeAgent rudderRemoteRun;
    static final List<Map<String, String>> CALLS = new CopyOnWriteArrayList<>();

    @BeforeAll
    static void startRelay() throws Exception {
        rudderRemoteRun = FakeAgent.install(shared.resolve("rudder"), "/fake-rudder-remote-run.sh");
        relayKey = SelfSigned.generate(SelfSigned.KeyType.EC_P256, RELAY);
        relayd = HttpsServer.create(new InetSocketAddress(RELAY_HOST, 0), 16);
        relayd.setHttpsConfigurator(new HttpsConfigurator(RelaydRelayIT.serverContext(relayKey)));
        relayd.createContext("/", exchange -> {
            Map<String, String> call = new LinkedHashMap<>();
            call.put("request", exchange.getRequestMethod() + " " + exchange.getRequestURI().getRawPath());
            String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
            for (String field : body.split("&")) {
                String[] pair = field.split("=", 2);
                call.put("form." + pair[0], URLDecoder.decode(pair.length > 1 ? pair[1] : "", StandardCharsets.UTF_8));
            }
            CALLS.add(call);
            String path = exchange.getRequestURI().getPath();
            String prefix = Routes.RELAY_API_ALIAS + "/remote-run/nodes";
            List<String> asked = path.startsWith(prefix + "/")
                    ? List.of(path.substring(prefix.length() + 1))
                    : List.of(call.getOrDefault("form.nodes", "").split(","));
            // relayd: its neighbours among the ids asked for go to one rudder remote run; the rest it does not
            // hold are logged and skipped; no neighbour, no command: an empty answer.
            StringBuilder answer = new StringBuilder();
            List<String> hosts = asked.stream().filter(RELAYS_NODES::containsKey).map(RELAYS_NODES::get).toList();
            if (!hosts.isEmpty()) {
                answer.append("Hostname        M| State         Technique\n");
                hosts.forEach(host -> answer.append(host).append("> Rudder agent: done\n"));
                answer.append("## Summary #####\n");
            }
            byte[] bytes = answer.toString().getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().add("Content-Type", "text/plain; charset=utf-8");
            // Streamed, as relayd's warp answers a run: chunked, and no chunk at all when nothing ran.
            exchange.sendResponseHeaders(200, 0);
            exchange.getResponseBody().write(bytes);
            exchange.close();
        });
        relayd.start();
    }

    @AfterAll
    static void stopRelay() {
        if (relayd != null) {
            relayd.stop(0);
        }
    }

    @BeforeEach
    void reset() throws Exception {
        CALLS.clear();
        rudderRemoteRun.reset();
    }

    @Test
    void withTheDefaultTransportsTheRelayIsRunAsRelaydRunsANeighbourAndOnlyItsNodesAreSentToIt(
            @TempDir Path dir) throws Exception {
        try (TestServer root = root(dir, "")) {
            List<JsonNode> events = RunEvents.of(run(root, "{\"command\": \"run\", \"conditions\": [\"c1\"], "
                    + "\"nodes\": [\"" + RELAY + "\", \"node-a\"]}"));

            assertThat(CALLS).containsExactlyInAnyOrder(
                    Map.of("request", "POST /rudder/relay-api/remote-run/nodes", "form.asynchronous", "false",
                            "form.keep_output", "true", "form.classes", "c1", "form.nodes", "node-a"),
                    Map.of("request", "POST /rudder/relay-api/remote-run/nodes/" + RELAY, "form.asynchronous",
                            "false", "form.keep_output", "true", "form.classes", "c1"));
            assertThat(rudderRemoteRun.runs()).containsExactly(List.of("remote", "run", "-D", "c1", "--", RELAY_HOST));
            assertThat(RunEvents.statuses(events)).containsOnly(Map.entry(RELAY, "success"),
                    Map.entry("node-a", "unknown"));
            assertThat(RunEvents.outputs(events, RELAY)).contains("-> agent run on " + RELAY_HOST);
            assertThat(RunEvents.outputs(events, "node-a")).contains("Rudder agent: done");
        }
    }

    @Test
    void askedOverHttpsForItsOwnIdARelaydRelayRunsNothingSoRelaydsWayReachesIt(@TempDir Path dir)
            throws Exception {
        try (TestServer root = root(dir, "transports = [\"pull\", \"pintle\", \"rudder-remote-run\"]")) {
            List<JsonNode> events = RunEvents.of(run(root, "{\"command\": \"run\", \"nodes\": [\"" + RELAY + "\"]}"));

            assertThat(CALLS).containsExactly(Map.of("request", "POST /rudder/relay-api/remote-run/nodes/" + RELAY,
                    "form.asynchronous", "false", "form.keep_output", "true"));
            assertThat(rudderRemoteRun.runs()).containsExactly(List.of("remote", "run", "--", RELAY_HOST));
            assertThat(RunEvents.statuses(events)).containsOnly(Map.entry(RELAY, "success"));
            assertThat(RunEvents.outputs(events, RELAY)).contains("-> agent run on " + RELAY_HOST);
        }
    }

    @Test
    void theRelayAndTheNodesBelowItAreTwoCallsAndTheRelayIsStillRunOnce(@TempDir Path dir) throws Exception {
        try (TestServer root = root(dir, "transports = [\"pull\", \"pintle\", \"rudder-remote-run\"]")) {
            List<JsonNode> events = RunEvents.of(run(root, "{\"command\": \"run\", \"nodes\": [\"" + RELAY
                    + "\", \"node-a\"]}"));

            assertThat(CALLS).extracting(call -> call.get("request") + " " + call.get("form.nodes"))
                    .containsExactlyInAnyOrder("POST /rudder/relay-api/remote-run/nodes node-a",
                            "POST /rudder/relay-api/remote-run/nodes/" + RELAY + " null");
            assertThat(rudderRemoteRun.runs()).containsExactly(List.of("remote", "run", "--", RELAY_HOST));
            assertThat(RunEvents.statuses(events)).containsOnly(Map.entry(RELAY, "success"),
                    Map.entry("node-a", "unknown"));
        }
    }

    @Test
    void withoutRelaydsWayTheRelayIsReportedRefusedWithWhatToChange(@TempDir Path dir) throws Exception {
        try (TestServer root = root(dir, "transports = [\"pull\"]")) {
            List<JsonNode> events = RunEvents.of(run(root, "{\"command\": \"run\", \"nodes\": [\"" + RELAY + "\"]}"));

            assertThat(CALLS).extracting(call -> call.get("request"))
                    .containsExactly("POST /rudder/relay-api/remote-run/nodes/" + RELAY);
            assertThat(rudderRemoteRun.runs()).isEmpty();
            JsonNode status = RunEvents.status(events, RELAY);
            assertThat(status.path("status").asText()).isEqualTo("refused");
            assertThat(status.path("detail").asText()).contains("runs relayd", "\"rudder-remote-run\"",
                    "[remote_run] transports");
        }
    }

    /** A root with relay-d (this test's relayd) under it and node-a under relay-d. */
    private static TestServer root(Path dir, String transports) throws Exception {
        Sandbox box = Sandbox.create(dir.resolve("root"));
        box.register(RELAY, relayKey.certificate(), RELAY_HOST, "root");
        box.register("node-a", SelfSigned.generate(SelfSigned.KeyType.EC_P256, "node-a").certificate(),
                RELAYS_NODES.get("node-a"), RELAY);
        return TestServer.start(box, "[remote_run]\nport = " + relayd.getAddress().getPort() + "\nremote_command = ["
                + rudderRemoteRun.toml() + ", \"remote\", \"run\"]\n" + transports + "\n");
    }

    private static HttpResponse<String> run(TestServer root, String json) throws Exception {
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                        root.server().adminUri().resolve(Routes.RELAY_API + "/remote-run/nodes"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json))
                .timeout(Duration.ofSeconds(60)).build(), HttpResponse.BodyHandlers.ofString());
    }
}
