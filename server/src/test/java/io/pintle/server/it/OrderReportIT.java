package io.pintle.server.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

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
import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A node's report on an order from its order channel ({@code PUT …/remote-run/orders/<order>}, its agent's output as
 * it comes, sent by curl as the node's script sends it): the order's deadline bounds it, not the idle timeout. An agent is often silent for longer than the idle
 * timeout (a package manager); once its order has ended, nothing more of the report is read.
 */
class OrderReportIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String NODE = "node-1";
    /** Far below the silences below: an idle timeout that cut the report would show at once. */
    private static final String LIMITS = "[limits]\nidle_timeout_seconds = 1\n";

    @TempDir
    Path dir;

    private Sandbox sandbox;
    private NodeKeys node;

    @BeforeAll
    static void needsCurl() {
        assumeTrue(CurlIT.available("curl"), "curl is not installed");
    }

    /** A root and one node under it, whose order channel the tests use. */
    @BeforeEach
    void layOut() throws IOException {
        sandbox = Sandbox.create(dir);
        node = sandbox.addNode(NODE, SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
    }

    /** A silence three idle timeouts long, mid-report: the report goes on and its exit status is the run's. */
    @ParameterizedTest
    @EnumSource(value = HttpClient.Version.class)
    void aReportSilentLongerThanTheIdleTimeoutLastsUntilItsOrdersDeadline(HttpClient.Version version)
            throws Exception {
        try (TestServer server = TestServer.start(sandbox, LIMITS + remoteRun(60, 30))) {
            PintleClient client = server.client(node, version);
            Run run = start(server, client);

            try (Report report = new Report(server, sandbox, node, run.order(), version, dir)) {
                report.send("apt-get: reading package lists\n");
                Thread.sleep(3_000); // the silence under test: three idle timeouts with nothing sent
                report.send("apt-get: done\n\n" + run.order() + " exit 0\n");
                report.end();
                assertThat(report.status()).isEqualTo(204);
            }
            List<JsonNode> events = RunEvents.of(run.events().get(30, TimeUnit.SECONDS));
            assertThat(RunEvents.status(events, NODE).path("status").asText()).isEqualTo("success");
            assertThat(events.stream().filter(e -> e.path("type").asText().equals("output"))
                    .map(e -> e.path("line").asText()))
                    .containsExactly("apt-get: reading package lists", "apt-get: done");
        }
    }

    /**
     * A report that goes on past its order's deadline (the run's timeout and the report grace), a few bytes every
     * half second: the order ends as timed out at its deadline, and the report is refused at its next bytes (408),
     * its connection not held on by the trickle.
     */
    @ParameterizedTest
    @EnumSource(value = HttpClient.Version.class)
    void aReportTricklingPastItsOrdersDeadlineIsCutThere(HttpClient.Version version) throws Exception {
        // Deadline: 1 s of run and 1 s of grace.
        try (TestServer server = TestServer.start(sandbox, LIMITS + remoteRun(1, 1))) {
            PintleClient client = server.client(node, version);
            Run run = start(server, client);

            try (Report report = new Report(server, sandbox, node, run.order(), version, dir)) {
                report.send("started\n");
                List<JsonNode> events = RunEvents.of(run.events().get(30, TimeUnit.SECONDS));
                JsonNode status = RunEvents.status(events, NODE);
                assertThat(status.path("status").asText()).isEqualTo("timeout");
                long endedAt = System.nanoTime();
                // The node goes on, a line every half second, until the server stops it.
                int sent = 0;
                while (!report.answered() && sent < 40) {
                    if (!report.trySend("still going " + sent++ + "\n")) {
                        break;
                    }
                    Thread.sleep(500); // the node's trickle under test: a line every half second
                }
                assertThat(report.status()).isEqualTo(408);
                assertThat(JSON.readTree(report.body()).path("reason").asText()).isEqualTo("order-ended");
                assertThat(Duration.ofNanos(System.nanoTime() - endedAt))
                        .as("cut at its first bytes after the deadline, not at the end of the trickle")
                        .isLessThan(Duration.ofSeconds(10));
            }
        }
    }

    private static String remoteRun(int timeoutSeconds, int graceSeconds) {
        return "[remote_run]\ntransports = [\"pull\"]\ntimeout = " + timeoutSeconds + "\nreport_grace = "
                + graceSeconds + "\n";
    }

    /** A run for the node, started once its order channel is parked, and the order the node received. */
    private record Run(String order, CompletableFuture<HttpResponse<String>> events) {}

    private static Run start(TestServer server, PintleClient node) throws Exception {
        CompletableFuture<HttpResponse<String>> poll = node.httpClient().sendAsync(HttpRequest.newBuilder(
                node.uri(Routes.RELAY_API_ALIAS + Routes.REMOTE_RUN_ORDERS + "?wait=60"))
                .timeout(Duration.ofSeconds(90)).build(), HttpResponse.BodyHandlers.ofString());
        Await.asserted(Duration.ofSeconds(20), () -> assertThat(server.metric("pintle_remote_run_order_polls"))
                .as("the node's poll is parked").isEqualTo(1.0));
        CompletableFuture<HttpResponse<String>> events = HttpClient.newHttpClient().sendAsync(
                HttpRequest.newBuilder(server.server().adminUri().resolve(Routes.RELAY_API + Routes.REMOTE_RUN
                                + "/nodes/" + NODE))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString("{\"command\": \"run\"}"))
                        .timeout(Duration.ofSeconds(90)).build(),
                HttpResponse.BodyHandlers.ofString());
        HttpResponse<String> order = poll.get(30, TimeUnit.SECONDS);
        assertThat(order.statusCode()).as(order.body()).isEqualTo(200);
        return new Run(order.body().strip().split(" ")[0], events);
    }

    /**
     * The node's {@code PUT} of its report, written as its agent prints: curl reading the body from its standard
     * input, with the flags {@code deploy/node/pintle-run-orders} gives it.
     */
    private static final class Report implements AutoCloseable {
        private final Process curl;
        private final Path answer;

        Report(TestServer server, Sandbox sandbox, NodeKeys node, String order, HttpClient.Version version,
                Path dir) throws IOException {
            answer = dir.resolve("report-answer");
            curl = new ProcessBuilder("curl", "--tlsv1.3", "--silent", "--show-error", "--connect-timeout", "10",
                    "--cert", node.certificatePath().toString(), "--key", node.keyPath().toString(),
                    "--pinnedpubkey", sandbox.serverPin(), "--insecure",
                    version == HttpClient.Version.HTTP_2 ? "--http2" : "--http1.1",
                    "--max-time", "60", "--request", "PUT", "--upload-file", "-",
                    "--header", "Content-Type: text/plain; charset=utf-8", "--output", answer.toString(),
                    "--write-out", "%{http_code}",
                    server.uri() + Routes.RELAY_API_ALIAS + Routes.REMOTE_RUN_ORDERS + "/" + order)
                    .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        }

        void send(String text) throws IOException {
            curl.getOutputStream().write(text.getBytes(StandardCharsets.UTF_8));
            curl.getOutputStream().flush();
        }

        /** @return false when curl no longer takes the body (it has its answer, or the stream is gone) */
        boolean trySend(String text) {
            try {
                send(text);
                return true;
            } catch (IOException gone) {
                return false;
            }
        }

        void end() throws IOException {
            curl.getOutputStream().close();
        }

        boolean answered() {
            return !curl.isAlive();
        }

        int status() throws Exception {
            assertThat(curl.waitFor(30, TimeUnit.SECONDS)).as("curl ends").isTrue();
            return Integer.parseInt(new String(curl.getInputStream().readAllBytes(), StandardCharsets.US_ASCII));
        }

        String body() throws IOException {
            return Files.readString(answer);
        }

        @Override
        public void close() {
            curl.destroyForcibly();
        }
    }
}
