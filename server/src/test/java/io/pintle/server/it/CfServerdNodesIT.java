package io.pintle.server.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.pintle.api.Routes;
import io.pintle.server.testing.FakeAgent;
import io.pintle.server.testing.RunEvents;
import io.pintle.server.testing.Sandbox;
import io.pintle.server.testing.TestServer;
import io.pintle.server.tls.SelfSigned;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Rudder's own nodes, which run cf-serverd and no Pintle: with the default {@code [remote_run] transports}, a run
 * for nodes that hold no order channel is one {@code rudder remote run [-D c] -- host1,host2}, as relayd runs it
 * (here a stand-in that answers as cf-runagent and Rudder's formatter do), its lines going to the nodes they name.
 */
class CfServerdNodesIT {
    @TempDir
    static Path dir;

    static FakeAgent agent;
    static TestServer server;

    @BeforeAll
    static void start() throws Exception {
        agent = FakeAgent.install(dir.resolve("agent"), "/fake-rudder-remote-run.sh");
        Sandbox box = Sandbox.create(dir.resolve("root"));
        for (String node : List.of("node-a", "node-b", "node-c")) {
            box.register(node, SelfSigned.generate(SelfSigned.KeyType.EC_P256, node).certificate(),
                    "127.0.0." + (node.charAt(5) - 'a' + 40), "root");
        }
        server = TestServer.start(box, "[remote_run]\nremote_command = [" + agent.toml() + ", \"remote\", \"run\"]\n");
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    @BeforeEach
    void reset() throws Exception {
        agent.reset();
    }

    @Test
    void nodesWithoutAChannelAreRunInOneBatchAsRelaydDoes() throws Exception {
        HttpResponse<String> response = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                        server.server().adminUri().resolve(Routes.RELAY_API + "/remote-run/nodes"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"command\": \"run\", \"conditions\": [\"c1\"], "
                        + "\"nodes\": [\"node-a\", \"node-b\", \"node-c\"]}"))
                .timeout(Duration.ofSeconds(60)).build(), HttpResponse.BodyHandlers.ofString());

        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        assertThat(runs()).containsExactly(List.of("remote", "run", "-D", "c1", "--",
                "127.0.0.40,127.0.0.41,127.0.0.42"));
        List<JsonNode> events = RunEvents.of(response);
        assertThat(RunEvents.statuses(events)).containsOnly(Map.entry("node-a", "success"),
                Map.entry("node-b", "success"), Map.entry("node-c", "success"));
        assertThat(RunEvents.outputs(events, "node-a")).contains("-> agent run on 127.0.0.40");
        assertThat(RunEvents.outputs(events, "node-c")).contains("-> agent run on 127.0.0.42");
    }

    @Test
    void relaydsCommandOnlyRunsTheAgentSoOtherCommandsAreRefused() throws Exception {
        HttpResponse<String> response = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                        server.server().adminUri().resolve(Routes.RELAY_API + "/remote-run/nodes/node-a"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"command\": \"inventory\"}"))
                .timeout(Duration.ofSeconds(60)).build(), HttpResponse.BodyHandlers.ofString());

        assertThat(response.body()).contains("\"status\":\"refused\"");
        assertThat(runs()).isEmpty();
    }

    private static List<List<String>> runs() throws Exception {
        return agent.runs();
    }
}
