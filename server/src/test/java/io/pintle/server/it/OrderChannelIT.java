package io.pintle.server.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.pintle.api.Routes;
import io.pintle.client.PintleClient;
import io.pintle.server.testing.Await;
import io.pintle.server.testing.NodeKeys;
import io.pintle.server.testing.RunEvents;
import io.pintle.server.testing.Sandbox;
import io.pintle.server.testing.TestServer;
import io.pintle.server.tls.SelfSigned;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The pull channel against a real server, the nodes played by the JDK's HTTP client with their own certificates:
 * a node's parked poll receives the order the moment a run asks for it, its report reaches the caller line by
 * line with its status, and everything outside the protocol is refused with its reason. {@code NodeOrdersScriptIT}
 * runs the node side's real script.
 */
class OrderChannelIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String ORDERS = Routes.RELAY_API_ALIAS + Routes.REMOTE_RUN_ORDERS;

    @TempDir
    static java.nio.file.Path dir;

    static Sandbox sandbox;
    static TestServer server;
    static PintleClient node1;
    static PintleClient node2;
    static PintleClient node3;
    static PintleClient node4;
    static PintleClient elsewhere;
    static PintleClient node6;
    static NodeKeys node3Keys;

    @BeforeAll
    static void start() throws Exception {
        sandbox = Sandbox.create(dir.resolve("root"));
        NodeKeys n1 = sandbox.addNode("node-1", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        NodeKeys n2 = sandbox.addNode("node-2", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        NodeKeys n3 = sandbox.addNode("node-3", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        NodeKeys n4 = sandbox.addNode("node-4", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        // Never polls.
        sandbox.addNode("node-5", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        NodeKeys n6 = sandbox.addNode("node-6", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        // Below a relay of this root: its orders go through the relay, so its channel belongs there.
        NodeKeys below = sandbox.addNode("below-relay", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        sandbox.register("relay-1", SelfSigned.generate(SelfSigned.KeyType.EC_P256, "relay-1").certificate(),
                "relay-1.example.org", "root");
        sandbox.register("below-relay", below.certificate(), "below.example.org", "relay-1");
        // Archives looked at every second rather than every 5 s: the policy update test waits for two looks.
        server = TestServer.start(sandbox, "[remote_run]\ntransports = [\"pull\"]\ntimeout = 20\n"
                + "policy_update_splay = 0\npolicy_update_scan = 1\n");
        node1 = server.client(n1);
        node2 = server.client(n2);
        node3 = server.client(n3);
        node3Keys = n3;
        node4 = server.client(n4);
        elsewhere = server.client(below);
        node6 = server.client(n6);
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void aPollingNodeGetsTheOrderAndItsReportReachesTheCallerWithItsStatus() throws Exception {
        CompletableFuture<HttpResponse<String>> poll = poll(node1, 60);
        awaitPolling(1);
        assertThat(server.metric("pintle_remote_run_order_polls")).isEqualTo(1.0);
        CompletableFuture<HttpResponse<String>> run = runAsync("{\"command\": \"run\", \"conditions\": [\"c1\", "
                + "\"c_2\"], \"nodes\": [\"node-1\"]}");

        HttpResponse<String> order = poll.get(10, TimeUnit.SECONDS);
        assertThat(order.statusCode()).isEqualTo(200);
        assertThat(order.headers().firstValue("Content-Type")).hasValue("text/plain; charset=utf-8");
        assertThat(order.headers().firstValue("Pintle-Run-Timeout")).as("[remote_run] timeout").hasValue("20");
        assertThat(order.body()).matches("[0-9a-f]{32} run c1,c_2\n");
        String id = order.body().substring(0, 32);
        assertThat(status().path("awaited").asInt()).isEqualTo(1);
        assertThat(server.metric("pintle_remote_run_orders_awaited")).isEqualTo(1.0);

        HttpResponse<String> report = report(node1, id, "agent: started\r\nagent: done\n\n" + id + " exit 0\n");
        assertThat(report.statusCode()).as(report.body()).isEqualTo(204);

        List<JsonNode> events = ndjson(run.get(10, TimeUnit.SECONDS));
        assertThat(outputs(events)).containsExactly("agent: started", "agent: done");
        JsonNode status = statusOf(events);
        assertThat(status.path("node").asText()).isEqualTo("node-1");
        assertThat(status.path("status").asText()).isEqualTo("success");
        assertThat(status().path("awaited").asInt()).isZero();
        // Reported once: a second report is refused.
        assertThat(report(node1, id, id + " exit 0\n").statusCode()).isEqualTo(404);
    }

    @Test
    void relaydsTextFormShowsTheNodesLinesUnderItsHostName() throws Exception {
        CompletableFuture<HttpResponse<String>> poll = poll(node2, 60);
        awaitPolling(1);
        CompletableFuture<HttpResponse<String>> run = HttpClient.newHttpClient().sendAsync(HttpRequest.newBuilder(
                        server.server().adminUri().resolve(Routes.RELAY_API + "/remote-run/nodes/node-2"))
                .header("Content-Type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString("asynchronous=false&keep_output=true&classes=web"))
                .build(), HttpResponse.BodyHandlers.ofString());

        String id = poll.get(10, TimeUnit.SECONDS).body().substring(0, 32);
        assertThat(poll.get().body()).isEqualTo(id + " run web\n");
        report(node2, id, "R: done\n\n" + id + " exit 0\n");

        assertThat(run.get(10, TimeUnit.SECONDS).body()).isEqualTo("node-2.example.org> R: done\n");
    }

    @Test
    void theAgentsExitCodeAndAReportWithoutItsStatusLine() throws Exception {
        CompletableFuture<HttpResponse<String>> poll = poll(node3, 60);
        awaitPolling(1);
        CompletableFuture<HttpResponse<String>> run = runAsync("{\"command\": \"update\", \"nodes\": [\"node-3\"]}");
        String id = poll.get(10, TimeUnit.SECONDS).body().substring(0, 32);
        assertThat(poll.get().body()).isEqualTo(id + " update\n");
        report(node3, id, "E: broken\n\n" + id + " exit 3\n");
        JsonNode failed = statusOf(ndjson(run.get(10, TimeUnit.SECONDS)));
        assertThat(failed.path("status").asText()).isEqualTo("failed");
        assertThat(failed.path("exitCode").asInt()).isEqualTo(3);

        poll = poll(node3, 60);
        awaitPolling(1);
        run = runAsync("{\"command\": \"inventory\", \"nodes\": [\"node-3\"]}");
        id = poll.get(10, TimeUnit.SECONDS).body().substring(0, 32);
        // The agent's own text can never pass for the status line: another id, or no id at all.
        report(node3, id, "something\n\n" + "f".repeat(32) + " exit 0\n");
        List<JsonNode> events = ndjson(run.get(10, TimeUnit.SECONDS));
        assertThat(outputs(events)).containsExactly("something", "", "f".repeat(32) + " exit 0");
        assertThat(statusOf(events).path("status").asText()).isEqualTo("error");
        assertThat(statusOf(events).path("detail").asText()).contains("without the agent's exit status");
    }

    @Test
    void aReportCutMidwayEndsTheRunAndGivesBackItsWorker() throws Exception {
        CompletableFuture<HttpResponse<String>> poll = poll(node3, 60);
        awaitPolling(1);
        CompletableFuture<HttpResponse<String>> run = runAsync("{\"command\": \"run\", \"nodes\": [\"node-3\"]}");
        String id = poll.get(10, TimeUnit.SECONDS).body().substring(0, 32);

        // Half a chunked body, then the connection goes away.
        try (javax.net.ssl.SSLSocket socket = server.rawTls(node3Keys)) {
            socket.getOutputStream().write(("PUT " + ORDERS + "/" + id + " HTTP/1.1\r\nHost: x\r\n"
                    + "Transfer-Encoding: chunked\r\n\r\n10\r\nagent: started\n\r\n8\r\nhalf")
                    .getBytes(StandardCharsets.US_ASCII));
            socket.getOutputStream().flush();
        }

        List<JsonNode> events = ndjson(run.get(30, TimeUnit.SECONDS));
        assertThat(outputs(events)).containsExactly("agent: started");
        assertThat(statusOf(events).path("status").asText()).isEqualTo("error");
        assertThat(statusOf(events).path("detail").asText()).contains("cut before its end");
        Await.asserted(Duration.ofSeconds(10), () -> assertThat(
                server.metric("pintle_inflight_requests{class=\"uploads\"}")).as("the report's worker given back")
                .isEqualTo(0.0));
        // The run's last event reaches the caller before the order leaves the awaited ones.
        Await.asserted(Duration.ofSeconds(10),
                () -> assertThat(status().path("awaited").asInt()).as("orders awaited").isZero());
    }

    @Test
    void aNodeWithoutAChannelIsUnreachableAtOnce() throws Exception {
        List<JsonNode> events = ndjson(runAsync("{\"command\": \"run\", \"nodes\": [\"node-5\"]}")
                .get(30, TimeUnit.SECONDS));

        JsonNode status = statusOf(events);
        // Reported as it was planned, not after a grace: no time passed for it.
        assertThat(status.path("durationMs").asLong()).isZero();
        assertThat(status.path("status").asText()).isEqualTo("unreachable");
        assertThat(status.path("detail").asText()).contains("holds no order channel");
    }

    @Test
    void aPollEndsWithNothingWhenItsWaitRunsOutOrANewerOneReplacesIt() throws Exception {
        long start = System.nanoTime();
        HttpResponse<String> empty = poll(node4, 1).get(10, TimeUnit.SECONDS);
        assertThat(empty.statusCode()).isEqualTo(204);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(900));

        CompletableFuture<HttpResponse<String>> older = poll(node4, 60);
        awaitPolling(1);
        CompletableFuture<HttpResponse<String>> newer = poll(node4, 60);
        HttpResponse<String> replaced = older.get(10, TimeUnit.SECONDS);
        assertThat(replaced.statusCode()).isEqualTo(409);
        assertThat(JSON.readTree(replaced.body()).path("reason").asText()).isEqualTo("poll-replaced");
        awaitPolling(1);
        assertThat(newer).isNotDone();
        // The last poll ends on its own: no poll of this test stays parked for the others.
        CompletableFuture<HttpResponse<String>> last = poll(node4, 1);
        assertThat(newer.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(409);
        assertThat(last.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(204);
        awaitPolling(0);
    }

    /** An agent that stops polling (its process ended: HTTP/2 stream reset) is no server error: 499, as nginx. */
    @Test
    void aPollWhoseClientGoesAwayIsCountedAs499() throws Exception {
        String closed = "pintle_requests_total{route=\"remote_run\",status=\"499\"}";
        String errors = "pintle_requests_total{route=\"remote_run\",status=\"500\"}";
        double closedBefore = orZero(server.metric(closed));
        double errorsBefore = orZero(server.metric(errors));
        CompletableFuture<HttpResponse<String>> polling = poll(node4, 60);
        awaitPolling(1);
        polling.cancel(true); // the JDK client resets the HTTP/2 stream
        awaitPolling(0);
        Await.until(Duration.ofSeconds(10), "the poll counted as 499",
                () -> orZero(server.metric(closed)) == closedBefore + 1);
        assertThat(orZero(server.metric(errors))).isEqualTo(errorsBefore);
    }

    private static double orZero(Double value) {
        return value == null ? 0 : value;
    }

    @Test
    void everythingOutsideTheProtocolIsRefusedWithItsReason() throws Exception {
        HttpResponse<String> wrongServer = elsewhere.httpClient().send(HttpRequest.newBuilder(
                elsewhere.uri(ORDERS + "?wait=1")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(wrongServer.statusCode()).isEqualTo(403);
        assertThat(JSON.readTree(wrongServer.body()).path("reason").asText()).isEqualTo("not-policy-server");

        HttpResponse<String> anonymous = server.client(null).httpClient().send(HttpRequest.newBuilder(
                server.client(null).uri(ORDERS + "?wait=1")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(anonymous.statusCode()).isEqualTo(403);

        HttpResponse<String> badWait = node4.httpClient().send(HttpRequest.newBuilder(
                node4.uri(ORDERS + "?wait=forever")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(badWait.statusCode()).isEqualTo(400);
        assertThat(JSON.readTree(badWait.body()).path("reason").asText()).isEqualTo("bad-wait");

        HttpResponse<String> unknown = report(node4, "0".repeat(32), "x\n");
        assertThat(unknown.statusCode()).isEqualTo(404);
        assertThat(JSON.readTree(unknown.body()).path("reason").asText()).isEqualTo("unknown-order");
        assertThat(report(node4, "../../etc", "x\n").statusCode()).isIn(400, 404);

        HttpResponse<String> post = node4.httpClient().send(HttpRequest.newBuilder(node4.uri(ORDERS))
                .POST(HttpRequest.BodyPublishers.ofString("x")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(post.statusCode()).isEqualTo(405);
        assertThat(post.headers().firstValue("Allow")).hasValue("GET");
    }

    @Test
    void anotherNodeCannotReportOnAnOrder() throws Exception {
        CompletableFuture<HttpResponse<String>> poll = poll(node1, 60);
        awaitPolling(1);
        CompletableFuture<HttpResponse<String>> run = runAsync("{\"command\": \"run\", \"nodes\": [\"node-1\"]}");
        String id = poll.get(10, TimeUnit.SECONDS).body().substring(0, 32);

        HttpResponse<String> stolen = report(node2, id, "forged\n\n" + id + " exit 0\n");
        assertThat(stolen.statusCode()).isEqualTo(404);
        assertThat(run).isNotDone();

        report(node1, id, "real\n\n" + id + " exit 0\n");
        List<JsonNode> events = ndjson(run.get(10, TimeUnit.SECONDS));
        assertThat(outputs(events)).containsExactly("real");
    }

    @Test
    void aNodeWhosePoliciesChangeIsToldToUpdateAtOnce() throws Exception {
        sandbox.shareFile("node-6/rules/rudder.tar.bz2", "generation 1".getBytes(StandardCharsets.US_ASCII));
        int watched = status().path("updates_watched").asInt();
        CompletableFuture<HttpResponse<String>> poll = poll(node6, 120);
        awaitPolling(1);
        // The server has looked at generation 1 while node-6 polls (it looks every second here; the bound is six
        // looks at the default 5 s).
        Await.asserted(Duration.ofSeconds(30),
                () -> assertThat(status().path("updates_watched").asInt()).as("node-6's archive looked at")
                        .isGreaterThan(watched));
        assertThat(poll).isNotDone();
        long released = status().path("updates_released").asLong();

        sandbox.shareFile("node-6/rules/rudder.tar.bz2", "generation 2, longer".getBytes(StandardCharsets.US_ASCII));

        HttpResponse<String> order = poll.get(30, TimeUnit.SECONDS);
        assertThat(order.statusCode()).isEqualTo(200);
        assertThat(order.body()).matches("[0-9a-f]{32} update\n");
        // The order reaches the node before the release is counted.
        Await.asserted(Duration.ofSeconds(10), () -> assertThat(status().path("updates_released").asLong())
                .as("updates released").isEqualTo(released + 1));
        // Nobody awaits its outcome, but the report is taken.
        String id = order.body().substring(0, 32);
        assertThat(report(node6, id, "updated\n\n" + id + " exit 0\n").statusCode()).isEqualTo(204);
    }

    private static CompletableFuture<HttpResponse<String>> poll(PintleClient node, int wait) {
        return node.httpClient().sendAsync(HttpRequest.newBuilder(node.uri(ORDERS + "?wait=" + wait))
                .timeout(Duration.ofSeconds(wait + 30)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static HttpResponse<String> report(PintleClient node, String id, String body) throws Exception {
        return node.httpClient().send(HttpRequest.newBuilder(node.uri(ORDERS + "/" + id))
                .PUT(HttpRequest.BodyPublishers.ofString(body)).timeout(Duration.ofSeconds(30)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static CompletableFuture<HttpResponse<String>> runAsync(String json) {
        return HttpClient.newHttpClient().sendAsync(HttpRequest.newBuilder(
                        server.server().adminUri().resolve(Routes.RELAY_API + "/remote-run/nodes"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json))
                .timeout(Duration.ofSeconds(60))
                .build(), HttpResponse.BodyHandlers.ofString());
    }

    private static JsonNode status() throws Exception {
        return server.admin("GET", "/v1/status").body().path("order_channels");
    }

    /** Waits until exactly this many polls are parked (a run before that would find the node not connected). */
    private static void awaitPolling(int count) throws Exception {
        Await.asserted(Duration.ofSeconds(10),
                () -> assertThat(status().path("polling").asInt()).as("polls parked").isEqualTo(count));
    }

    private static List<JsonNode> ndjson(HttpResponse<String> response) throws Exception {
        return RunEvents.of(response);
    }

    private static JsonNode statusOf(List<JsonNode> events) {
        List<JsonNode> statuses = RunEvents.statuses(events, null);
        assertThat(statuses).as("one status: %s", events).hasSize(1);
        return statuses.get(0);
    }

    private static List<String> outputs(List<JsonNode> events) {
        return RunEvents.outputs(events, null);
    }
}
