package io.pintle.server.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.pintle.client.PintleClient;
import io.pintle.server.testing.Await;
import io.pintle.server.testing.NodeKeys;
import io.pintle.server.testing.RawHttp;
import io.pintle.server.testing.Sandbox;
import io.pintle.server.testing.TestServer;
import io.pintle.server.tls.SelfSigned;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.net.Socket;
import java.net.SocketException;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Overload control on the real server: bounded download workers with a bounded queue and a 503 past it, the
 * admin listener answering throughout, and the header and idle timeouts closing connections that hold the
 * listener without using it.
 */
class OverloadIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** Far more than socket buffers hold, so that a download whose body is not read keeps its worker. */
    private static final int LARGE = 24 * 1024 * 1024;
    private static final String LARGE_FILE = "/policies/node-a/rules/large.bin";
    private static final String SMALL_FILE = "/policies/node-a/rules/rudder.tar.bz2";
    private static final int SMALL = 2000;
    private static final String LIMITS = String.join("\n",
            "[limits]",
            "queue_timeout_seconds = 20",
            "retry_after_seconds = 10",
            "retry_after_jitter_seconds = 5",
            // Every request here is node-a's: let it take the whole class too, as a fleet of nodes would.
            "max_requests_per_node = 100",
            "[limits.files]",
            "concurrency = 2",
            "queue = 2",
            // Every client here is 127.0.0.1: let it take the whole class, as a fleet of addresses would.
            "per_address = 100",
            "");

    private Sandbox sandbox;
    private NodeKeys nodeA;

    @BeforeEach
    void setUp(@TempDir Path dir) throws Exception {
        sandbox = Sandbox.create(dir);
        nodeA = sandbox.addNode("node-a", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        sandbox.randomShareFile("node-a/rules/rudder.tar.bz2", SMALL, 2);
    }

    @Test
    void aBurstPastWorkersAndQueueGets200sOr503sWithRetryAfterWhileAdminAnswers() throws Exception {
        sandbox.randomShareFile("node-a/rules/large.bin", LARGE, 1);
        try (TestServer server = TestServer.start(sandbox, LIMITS)) {
            // Two slow downloads hold both file workers: their bodies are not read yet.
            List<HttpResponse<InputStream>> holders = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                PintleClient holder = server.client(nodeA, HttpClient.Version.HTTP_1_1);
                holders.add(PolicyServingIT.get(holder, LARGE_FILE, HttpResponse.BodyHandlers.ofInputStream()));
            }
            assertThat(holders).allSatisfy(response -> assertThat(response.statusCode()).isEqualTo(200));
            assertThat(server.metric("pintle_inflight_requests{class=\"files\"}")).isEqualTo(2.0);

            // A burst of 20: two fit in the queue, the rest are refused at once.
            PintleClient burst = server.client(nodeA, HttpClient.Version.HTTP_1_1);
            List<CompletableFuture<HttpResponse<byte[]>>> responses = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                responses.add(burst.httpClient().sendAsync(PolicyServingIT.request(burst, SMALL_FILE).GET().build(),
                        HttpResponse.BodyHandlers.ofByteArray()));
            }
            Await.until(Duration.ofSeconds(8), "18 of the burst answered", () -> {
                assertAdminAnswersPromptly(server);
                return responses.stream().filter(CompletableFuture::isDone).count() >= 18;
            });
            assertThat(responses.stream().filter(CompletableFuture::isDone).count()).isEqualTo(18);
            assertAdminAnswersPromptly(server);
            assertThat(server.metric("pintle_queued_requests{class=\"files\"}")).isEqualTo(2.0);
            assertThat(server.metric("pintle_inflight_requests{class=\"files\"}")).isEqualTo(2.0);

            // The holders finish; the two queued requests are then served.
            for (HttpResponse<InputStream> holder : holders) {
                try (InputStream body = holder.body()) {
                    assertThat(body.transferTo(OutputStream.nullOutputStream())).isEqualTo(LARGE);
                }
            }
            CompletableFuture.allOf(responses.toArray(new CompletableFuture<?>[0])).get(10, TimeUnit.SECONDS);

            int ok = 0;
            int refused = 0;
            for (CompletableFuture<HttpResponse<byte[]>> future : responses) {
                HttpResponse<byte[]> response = future.get();
                assertThat(response.statusCode()).isIn(200, 503);
                if (response.statusCode() == 200) {
                    ok++;
                    assertThat(response.body()).hasSize(SMALL);
                } else {
                    refused++;
                    assertThat(response.headers().firstValueAsLong("Retry-After").orElse(-1)).isBetween(5L, 15L);
                    assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
                    JsonNode problem = JSON.readTree(response.body());
                    assertThat(problem.path("status").asInt()).isEqualTo(503);
                    assertThat(problem.path("reason").asText()).isEqualTo("overloaded");
                    assertThat(problem.path("type").asText()).isEqualTo("urn:pintle:problem:overloaded");
                    assertThat(problem.path("detail").asText()).contains("files workers");
                    assertThat(problem.has("incident")).isFalse();
                }
            }
            assertThat(ok).isEqualTo(2);
            assertThat(refused).isEqualTo(18);
            assertThat(server.metric("pintle_overload_rejections_total{class=\"files\",reason=\"overloaded\"}"))
                    .isEqualTo(18.0);
            assertThat(server.metric("pintle_overload_rejections_total{class=\"api\",reason=\"overloaded\"}"))
                    .isEqualTo(0.0);
            // Other classes keep their own workers: /uuid is answered while downloads are saturated.
            assertThat(PolicyServingIT.get(burst, "/uuid", HttpResponse.BodyHandlers.ofString()).statusCode())
                    .isEqualTo(200);
        }
    }

    /**
     * Bursts that the gate mostly refuses (one worker, no queue), from several HTTP/2 connections at once, so that
     * refusals and leaves interleave; then, idle, no thread of the server burns CPU. A refusal that a leaving
     * request could take for a waiter once left that request's thread spinning for good.
     */
    @Test
    void anIdleServerAfterBurstsOfRefusedRequestsUsesNoCpu() throws Exception {
        String limits = "[limits.files]\nconcurrency = 1\nqueue = 0\nper_address = 100\n";
        try (TestServer server = TestServer.start(sandbox, limits)) {
            List<PintleClient> clients = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                clients.add(server.client(nodeA, HttpClient.Version.HTTP_2));
            }
            int ok = 0;
            int refused = 0;
            for (int burst = 0; burst < 5; burst++) {
                List<CompletableFuture<HttpResponse<byte[]>>> responses = new ArrayList<>();
                for (int i = 0; i < 100; i++) {
                    PintleClient client = clients.get(i % clients.size());
                    responses.add(client.httpClient().sendAsync(PolicyServingIT.request(client, SMALL_FILE).GET()
                            .build(), HttpResponse.BodyHandlers.ofByteArray()));
                }
                for (CompletableFuture<HttpResponse<byte[]>> response : responses) {
                    int status = response.get(30, TimeUnit.SECONDS).statusCode();
                    assertThat(status).isIn(200, 503);
                    if (status == 200) {
                        ok++;
                    } else {
                        refused++;
                    }
                }
            }
            assertThat(ok).isPositive();
            assertThat(refused).isPositive();
            Await.asserted(Duration.ofSeconds(10), () ->
                    assertThat(server.metric("pintle_inflight_requests{class=\"files\"}")).isEqualTo(0.0));

            // Idle now: over two seconds, no thread may have run for more than a fraction of that (a spinning
            // thread runs all of it, or at least a third of it on a machine whose cores are busy elsewhere).
            ThreadMXBean threads = ManagementFactory.getThreadMXBean();
            Map<Long, Long> before = new HashMap<>();
            for (long id : threads.getAllThreadIds()) {
                before.put(id, threads.getThreadCpuTime(id));
            }
            Thread.sleep(2_000); // the idle window whose CPU time is measured
            List<String> busy = new ArrayList<>();
            for (ThreadInfo info : threads.getThreadInfo(threads.getAllThreadIds())) {
                if (info == null || info.getThreadId() == Thread.currentThread().getId()) {
                    continue;
                }
                long now = threads.getThreadCpuTime(info.getThreadId());
                long used = now - before.getOrDefault(info.getThreadId(), 0L);
                if (now >= 0 && used > TimeUnit.MILLISECONDS.toNanos(300)) {
                    busy.add(info.getThreadName() + ": " + used / 1_000_000 + " ms");
                }
            }
            assertThat(busy).as("threads that ran while the server was idle").isEmpty();
        }
    }

    @Test
    void aRequestWaitingPastTheQueueTimeoutGets503() throws Exception {
        String limits = "[limits]\nqueue_timeout_seconds = 1\n[limits.files]\nconcurrency = 1\nqueue = 5\n"
                + "per_address = 6\n";
        sandbox.randomShareFile("node-a/rules/large.bin", LARGE, 1);
        try (TestServer server = TestServer.start(sandbox, limits)) {
            PintleClient holder = server.client(nodeA, HttpClient.Version.HTTP_1_1);
            HttpResponse<InputStream> held =
                    PolicyServingIT.get(holder, LARGE_FILE, HttpResponse.BodyHandlers.ofInputStream());
            PintleClient waiter = server.client(nodeA, HttpClient.Version.HTTP_1_1);
            long start = System.nanoTime();
            HttpResponse<String> refused = PolicyServingIT.get(waiter, SMALL_FILE, HttpResponse.BodyHandlers.ofString());
            long waitedMs = (System.nanoTime() - start) / 1_000_000;
            assertThat(refused.statusCode()).isEqualTo(503);
            assertThat(refused.headers().firstValue("Retry-After")).isPresent();
            assertThat(JSON.readTree(refused.body()).path("detail").asText()).contains("waited 1 s");
            assertThat(waitedMs).isBetween(900L, 5_000L);
            try (InputStream body = held.body()) {
                assertThat(body.transferTo(OutputStream.nullOutputStream())).isEqualTo(LARGE);
            }
        }
    }

    @Test
    void aClientSendingItsHeadersTooSlowlyIsCutOff() throws Exception {
        try (TestServer server = TestServer.start(sandbox, "[limits]\nheader_timeout_seconds = 1\n")) {
            try (SSLSocket socket = server.rawTls(nodeA)) {
                OutputStream out = socket.getOutputStream();
                out.write("GET /uuid HTTP/1.1\r\nHost: localhost\r\n".getBytes(StandardCharsets.US_ASCII));
                long start = System.nanoTime();
                boolean cut = false;
                for (int i = 0; i < 40 && !cut; i++) {
                    Thread.sleep(100); // the slow client under test: a header line every 100 ms
                    try {
                        out.write(("X-Slow-" + i + ": loris\r\n").getBytes(StandardCharsets.US_ASCII));
                        out.flush();
                    } catch (IOException e) {
                        cut = true;
                    }
                    if (!cut) {
                        cut = closedByServer(socket, 1);
                    }
                }
                long elapsedMs = (System.nanoTime() - start) / 1_000_000;
                assertThat(cut).as("connection closed by the server").isTrue();
                assertThat(elapsedMs).isBetween(500L, 3_000L);
            }
            // A plain TCP connection that never starts its handshake goes the same way.
            try (Socket silent = new Socket("127.0.0.1", server.port())) {
                long start = System.nanoTime();
                silent.setSoTimeout(5_000);
                assertThat(silent.getInputStream().read()).isEqualTo(-1);
                assertThat((System.nanoTime() - start) / 1_000_000).isBetween(500L, 3_000L);
            }
            assertThat(server.metric("pintle_connections_closed_total{reason=\"header-timeout\"}")).isEqualTo(2.0);
            // Well-behaved clients are unaffected.
            assertThat(PolicyServingIT.get(server.client(nodeA), "/uuid", HttpResponse.BodyHandlers.ofString())
                    .statusCode()).isEqualTo(200);
        }
    }

    @Test
    void anIdleConnectionIsClosedAfterTheIdleTimeout() throws Exception {
        try (TestServer server = TestServer.start(sandbox, "[limits]\nidle_timeout_seconds = 1\n")) {
            try (SSLSocket socket = server.rawTls(nodeA)) {
                socket.getOutputStream().write(
                        ("GET " + SMALL_FILE + " HTTP/1.1\r\nHost: localhost\r\n\r\n")
                                .getBytes(StandardCharsets.US_ASCII));
                socket.getOutputStream().flush();
                socket.setSoTimeout(5_000);
                InputStream in = socket.getInputStream();
                String head = RawHttp.readHead(in);
                assertThat(head).startsWith("HTTP/1.1 200");
                int length = Integer.parseInt(head.replaceAll("(?is).*content-length: *(\\d+).*", "$1"));
                assertThat(length).isEqualTo(SMALL);
                assertThat(in.readNBytes(length)).hasSize(length);
                long start = System.nanoTime();
                assertThat(in.read()).isEqualTo(-1);
                assertThat((System.nanoTime() - start) / 1_000_000).isBetween(500L, 3_000L);
            }
        }
    }

    /** @return true when the server closed the connection (EOF or reset) within the wait */
    private static boolean closedByServer(SSLSocket socket, int waitMs) throws IOException {
        socket.setSoTimeout(waitMs);
        try {
            return socket.getInputStream().read() == -1;
        } catch (java.net.SocketTimeoutException e) {
            return false;
        } catch (SocketException | javax.net.ssl.SSLException e) {
            return true;
        }
    }

    private final HttpClient admin = HttpClient.newHttpClient();

    private void assertAdminAnswersPromptly(TestServer server) throws Exception {
        for (String path : List.of("/health", "/v1/status")) {
            long start = System.nanoTime();
            HttpResponse<String> response = admin.send(java.net.http.HttpRequest.newBuilder(
                    server.server().adminUri().resolve(path)).timeout(Duration.ofSeconds(5)).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(response.statusCode()).isEqualTo(200);
            // Generous for a shared, loaded build machine; a saturated listener would make it time out instead.
            assertThat((System.nanoTime() - start) / 1_000_000).as(path + " round trip in ms").isLessThan(2_000L);
        }
    }
}
