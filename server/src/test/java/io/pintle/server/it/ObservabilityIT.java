package io.pintle.server.it;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.pintle.client.PintleClient;
import io.pintle.client.ProblemException;
import io.pintle.server.testing.Await;
import io.pintle.server.testing.NodeKeys;
import io.pintle.server.testing.Sandbox;
import io.pintle.server.testing.TestServer;
import io.pintle.server.tls.SelfSigned;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/** {@code /metrics}, {@code /health}, {@code /ready} and the access log, against the real server over real mTLS. */
class ObservabilityIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** How long a count or a log line written once the response is complete may take to show. */
    private static final Duration SETTLES = Duration.ofSeconds(5);
    private static final String FILE = "/policies/node-a/rules/rudder.tar.bz2";
    private static final byte[] CONTENT = new byte[4321];

    private final ListAppender<ILoggingEvent> access = new ListAppender<>();
    private final ListAppender<ILoggingEvent> all = new ListAppender<>();
    private Sandbox sandbox;
    private NodeKeys nodeA;
    private NodeKeys intruder;

    @BeforeEach
    void setUp(@TempDir Path dir) throws Exception {
        access.start();
        all.start();
        ((Logger) LoggerFactory.getLogger("io.pintle.access")).addAppender(access);
        ((Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME)).addAppender(all);
        sandbox = Sandbox.create(dir);
        nodeA = sandbox.addNode("node-a", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        // Claims to be node-a, with a key nobody pinned.
        intruder = sandbox.unregisteredIdentity("intruder", "node-a");
        sandbox.shareFile("node-a/rules/rudder.tar.bz2", CONTENT);
    }

    @AfterEach
    void tearDown() {
        ((Logger) LoggerFactory.getLogger("io.pintle.access")).detachAppender(access);
        ((Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME)).detachAppender(all);
    }

    /**
     * An agent's update is two connections in a row from its address: the second one's handshake goes before other
     * new ones (tls.ReturningPeers), once per new one: a returning handshake leaves no ticket, another address's
     * does not count, and the counter says how often it happened.
     */
    @Test
    void anAgentsNextConnectionGoesAheadOnceAfterEachNewOneAndIsCounted() throws Exception {
        try (TestServer server = TestServer.start(sandbox)) {
            String returning = "pintle_tls_handshakes_returning_total";
            assertThat(server.metric(returning)).isEqualTo(0.0);
            download(server, "127.0.0.11");
            download(server, "127.0.0.12");
            assertThat(server.metric(returning)).as("two addresses, one connection each").isEqualTo(0.0);
            download(server, "127.0.0.11");
            assertThat(server.metric(returning)).as("127.0.0.11's second connection").isEqualTo(1.0);
            download(server, "127.0.0.11");
            assertThat(server.metric(returning)).as("its third: the returning one left no ticket").isEqualTo(1.0);
            download(server, "127.0.0.11");
            download(server, "127.0.0.12");
            assertThat(server.metric(returning)).isEqualTo(3.0);
        }
    }

    /** One agent request on a new connection from {@code address}: the handshake, a GET, the answer, close. */
    private void download(TestServer server, String address) throws Exception {
        try (javax.net.ssl.SSLSocket socket = server.rawTls(nodeA, address)) {
            socket.getOutputStream().write(("GET " + FILE + " HTTP/1.1\r\nHost: node\r\nConnection: close\r\n\r\n")
                    .getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            socket.getOutputStream().flush();
            assertThat(new String(socket.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.ISO_8859_1))
                    .startsWith("HTTP/1.1 200");
        }
    }

    @Test
    void requestsDenialsHandshakesAndConnectionsAreCountedWithoutPerNodeLabels() throws Exception {
        try (TestServer server = TestServer.start(sandbox)) {
            assertThat(server.client(nodeA).fetch(FILE, sandbox.dir().resolve("got"), null).status()).isEqualTo(200);
            ProblemException denied = PolicyServingIT.problem(server.client(intruder), FILE, sandbox.dir());
            assertThat(denied.problem().reason()).isEqualTo("unknown-key");

            // Jetty logs a request once its response is complete, which may be just after the client has it.
            Await.asserted(SETTLES, () -> assertThat(
                    server.metric("pintle_denials_total{reason=\"unknown-key\"}")).isEqualTo(1.0));
            Await.asserted(SETTLES, () -> assertThat(
                    server.metric("pintle_requests_total{route=\"policies\",status=\"200\"}")).isEqualTo(1.0));
            assertThat(server.metric("pintle_requests_total{route=\"policies\",status=\"403\"}")).isEqualTo(1.0);
            assertThat(server.metric("pintle_response_bytes_total{route=\"policies\"}"))
                    .isGreaterThanOrEqualTo(CONTENT.length);
            assertThat(server.metric("pintle_request_duration_seconds_count{route=\"policies\"}")).isEqualTo(2.0);
            // Known reasons exist at zero before they ever happen.
            assertThat(server.metric("pintle_denials_total{reason=\"network-not-allowed\"}")).isEqualTo(0.0);
            assertThat(server.metric("pintle_tls_handshakes_total{protocol=\"TLSv1.3\"}")).isGreaterThanOrEqualTo(2.0);
            assertThat(server.metric("pintle_tls_handshake_failures_total")).isNotNull();
            assertThat(server.metric("pintle_connections{listener=\"tls\"}")).isNotNull();
            // Nobody handshakes while the scrape runs: the gate is idle.
            assertThat(server.metric("pintle_tls_handshakes_waiting")).isEqualTo(0.0);
            // Every permit came back: a lost one would show here, the gate shut for good.
            assertThat(server.metric("pintle_tls_handshake_steps_running")).isEqualTo(0.0);
            // This scrape's own connection is open on the admin listener.
            assertThat(server.metric("pintle_connections{listener=\"admin\"}")).isGreaterThanOrEqualTo(1.0);
            assertThat(server.metric("pintle_snapshot_generation")).isEqualTo(1.0);
            assertThat(server.metric("pintle_snapshot_nodes")).isEqualTo(1.0);
            assertThat(server.metric("jvm_threads_current")).isPositive();

            HttpResponse<String> metrics = server.adminText("/metrics");
            assertThat(metrics.statusCode()).isEqualTo(200);
            assertThat(metrics.headers().firstValue("Content-Type")).get().asString().startsWith("text/plain");
            assertThat(metrics.body()).doesNotContain("node-a").doesNotContain("rudder.tar.bz2");
        }
    }

    @Test
    void requestsJettyRefusesBeforeJerseyAreCountedToo() throws Exception {
        try (TestServer server = TestServer.start(sandbox)) {
            PintleClient client = server.client(nodeA, java.net.http.HttpClient.Version.HTTP_1_1);
            // A header block past the limit: Jetty answers 431 itself, through ProblemErrorHandler.
            HttpResponse<String> refused = client.httpClient().send(
                    PolicyServingIT.request(client, FILE).header("X-Padding", "x".repeat(16 * 1024)).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(refused.statusCode()).isEqualTo(431);
            Await.asserted(SETTLES, () -> assertThat(
                    server.metric("pintle_requests_total{route=\"policies\",status=\"431\"}")).isEqualTo(1.0));
        }
    }

    @Test
    void reloadsAreCountedByResultAndTheGenerationGaugeFollows() throws Exception {
        try (TestServer server = TestServer.start(sandbox, "[reload]\nwatch = false")) {
            assertThat(server.metric("pintle_reloads_total{result=\"applied\"}")).isEqualTo(0.0);
            sandbox.addNode("node-b", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
            assertThat(server.admin("POST", "/rudder/relay-api/1/system/reload").status()).isEqualTo(200);
            assertThat(server.metric("pintle_reloads_total{result=\"applied\"}")).isEqualTo(1.0);
            assertThat(server.metric("pintle_snapshot_generation")).isEqualTo(2.0);
            assertThat(server.metric("pintle_snapshot_nodes")).isEqualTo(2.0);

            assertThat(server.admin("POST", "/rudder/relay-api/1/system/reload").status()).isEqualTo(200);
            assertThat(server.metric("pintle_reloads_total{result=\"unchanged\"}")).isEqualTo(1.0);

            sandbox.nodesListContent("{ broken");
            assertThat(server.admin("POST", "/rudder/relay-api/1/system/reload").status()).isEqualTo(500);
            assertThat(server.metric("pintle_reloads_total{result=\"failed\"}")).isEqualTo(1.0);
            assertThat(server.metric("pintle_snapshot_generation")).isEqualTo(2.0);
            assertThat(server.metric("pintle_reload_duration_seconds_count")).isEqualTo(3.0);
            // A refused reload leaves the old snapshot serving: still ready.
            assertThat(server.admin("GET", "/ready").status()).isEqualTo(200);
        }
    }

    @Test
    void twoServersInOneJvmCountSeparately() throws Exception {
        try (TestServer first = TestServer.start(sandbox);
                TestServer second = TestServer.start(sandbox)) {
            assertThat(first.client(nodeA).fetch(FILE, sandbox.dir().resolve("got"), null).status()).isEqualTo(200);
            Await.asserted(SETTLES, () -> assertThat(
                    first.metric("pintle_requests_total{route=\"policies\",status=\"200\"}")).isEqualTo(1.0));
            assertThat(second.metric("pintle_requests_total{route=\"policies\",status=\"200\"}")).isNull();
        }
    }

    @Test
    void healthIsLiveAndReadyReportsTheGeneration() throws Exception {
        try (TestServer server = TestServer.start(sandbox)) {
            TestServer.AdminResponse health = server.admin("GET", "/health");
            assertThat(health.status()).isEqualTo(200);
            assertThat(health.body().path("status").asText()).isEqualTo("live");
            TestServer.AdminResponse ready = server.admin("GET", "/ready");
            assertThat(ready.status()).isEqualTo(200);
            assertThat(ready.body().path("status").asText()).isEqualTo("ready");
            assertThat(ready.body().path("generation").asLong()).isEqualTo(1);
            // Admin routes stay off the node-facing listener.
            HttpResponse<String> outside = PolicyServingIT.get(server.client(nodeA), "/metrics",
                    HttpResponse.BodyHandlers.ofString());
            assertThat(outside.statusCode()).isEqualTo(404);
        }
    }

    @Test
    void accessLogLinesCarryNodeIdStatusBytesAndDecisionInCommonFormat() throws Exception {
        try (TestServer server = TestServer.start(sandbox)) {
            server.client(nodeA).fetch(FILE, sandbox.dir().resolve("got"), null);
            PolicyServingIT.problem(server.client(intruder), FILE, sandbox.dir());
            List<String> lines = awaitLines(2);
            assertThat(lines.get(0))
                    .matches("127\\.0\\.0\\.1 - node-a \\[[^]]+\\] \"GET " + FILE + " HTTP/2\\.0\" 200 4321 "
                            + "[0-9.]+ms allowed \"policies: node node-a reads its own directory\" auth=cert_pinning");
            // The intruder's certificate says UID=node-a, but it authenticates no node: no node id is logged.
            assertThat(lines.get(1))
                    .matches("127\\.0\\.0\\.1 - - \\[[^]]+\\] \"GET " + FILE + " HTTP/2\\.0\" 403 \\d+ "
                            + "[0-9.]+ms denied:unknown-key");
        }
    }

    @Test
    void accessLogInJsonHasOneObjectPerRequest() throws Exception {
        try (TestServer server = TestServer.start(sandbox, "[log]\naccess_format = \"json\"")) {
            server.client(nodeA).fetch(FILE, sandbox.dir().resolve("got"), null);
            PolicyServingIT.problem(server.client(intruder), FILE, sandbox.dir());
            List<String> lines = awaitLines(2);
            JsonNode allowed = JSON.readTree(lines.get(0));
            assertThat(allowed.path("node").asText()).isEqualTo("node-a");
            assertThat(allowed.path("client").asText()).isEqualTo("127.0.0.1");
            assertThat(allowed.path("method").asText()).isEqualTo("GET");
            assertThat(allowed.path("path").asText()).isEqualTo(FILE);
            assertThat(allowed.path("status").asInt()).isEqualTo(200);
            assertThat(allowed.path("bytes").asLong()).isEqualTo(CONTENT.length);
            assertThat(allowed.path("decision").asText()).isEqualTo("allowed");
            assertThat(allowed.path("route").asText()).isEqualTo("policies");
            assertThat(allowed.path("auth").asText()).isEqualTo("cert_pinning");
            assertThat(allowed.path("duration_ms").asDouble()).isPositive();
            assertThat(allowed.has("time")).isTrue();
            JsonNode denied = JSON.readTree(lines.get(1));
            assertThat(denied.has("node")).isFalse();
            assertThat(denied.has("auth")).isFalse();
            assertThat(denied.path("status").asInt()).isEqualTo(403);
            assertThat(denied.path("decision").asText()).isEqualTo("denied");
            assertThat(denied.path("reason").asText()).isEqualTo("unknown-key");
        }
    }

    @Test
    void accessLogCanBeTurnedOffWhileMetricsStillCount() throws Exception {
        try (TestServer server = TestServer.start(sandbox, "[log]\naccess = false")) {
            server.client(nodeA).fetch(FILE, sandbox.dir().resolve("got"), null);
            Await.asserted(SETTLES, () -> assertThat(
                    server.metric("pintle_requests_total{route=\"policies\",status=\"200\"}")).isEqualTo(1.0));
            assertThat(access.list).isEmpty();
        }
    }

    @Test
    void serverErrorCarriesTheSameIncidentIdInBodyErrorLogAndAccessLine() throws Exception {
        // A symlink loop: resolving it fails with an I/O error that is neither "missing" nor "refused".
        Files.createSymbolicLink(sandbox.share().resolve("node-a/loop"), Path.of("loop"));
        try (TestServer server = TestServer.start(sandbox)) {
            ProblemException error = PolicyServingIT.problem(server.client(nodeA), "/policies/node-a/loop",
                    sandbox.dir());
            assertThat(error.problem().status()).isEqualTo(500);
            String incident = error.problem().incident();
            assertThat(incident).matches("[0-9a-f-]{36}");
            List<String> lines = awaitLines(1);
            assertThat(lines.get(0)).contains("\" 500 ").endsWith("incident=" + incident);
            List<ILoggingEvent> events;
            synchronized (all) {
                events = List.copyOf(all.list);
            }
            assertThat(events).anyMatch(event -> event.getLevel() == ch.qos.logback.classic.Level.ERROR
                    && event.getFormattedMessage().contains(incident));
            Await.asserted(SETTLES, () -> assertThat(
                    server.metric("pintle_requests_total{route=\"policies\",status=\"500\"}")).isEqualTo(1.0));
        }
    }

    @Test
    void noPrivateKeyMaterialReachesTheLogs() throws Exception {
        try (TestServer server = TestServer.start(sandbox)) {
            server.client(nodeA).fetch(FILE, sandbox.dir().resolve("got"), null);
            PolicyServingIT.problem(server.client(intruder), FILE, sandbox.dir());
            server.admin("POST", "/rudder/relay-api/1/system/reload");
            server.adminText("/metrics");
            awaitLines(2);
        }
        List<String> secrets = List.of(
                base64Head(sandbox.server().keyPair().getPrivate().getEncoded()),
                base64Head(nodeA.keyPair().getPrivate().getEncoded()),
                base64Head(intruder.keyPair().getPrivate().getEncoded()));
        assertThat(all.list).isNotEmpty();
        for (ILoggingEvent event : all.list) {
            String text = event.getFormattedMessage()
                    + (event.getThrowableProxy() != null ? event.getThrowableProxy().getMessage() : "");
            assertThat(text).doesNotContain("PRIVATE KEY");
            for (String secret : secrets) {
                assertThat(text).doesNotContain(secret);
            }
        }
    }

    private static String base64Head(byte[] encoded) {
        // The tail of a PKCS#8 encoding is private material (EC scalar, RSA CRT coefficient), never a shared header.
        String text = Base64.getEncoder().encodeToString(encoded);
        return text.substring(text.length() - 40, text.length() - 4);
    }

    /** Waits for the node-facing lines (admin requests are logged too); returns them sorted by status. */
    private List<String> awaitLines(int count) throws InterruptedException {
        Await.until(SETTLES, count + " access log lines", () -> policyLines().size() >= count);
        List<String> lines = policyLines();
        assertThat(lines).hasSize(count);
        return lines;
    }

    private List<String> policyLines() {
        List<ILoggingEvent> events;
        synchronized (access) { // the appender's own lock: Jetty threads append concurrently
            events = List.copyOf(access.list);
        }
        return events.stream()
                .map(ILoggingEvent::getFormattedMessage)
                .filter(line -> line.contains("/policies/"))
                .sorted(java.util.Comparator.comparing(line -> line.replaceAll(".*(\\\" |\"status\":)(\\d{3}).*", "$2")))
                .toList();
    }
}
