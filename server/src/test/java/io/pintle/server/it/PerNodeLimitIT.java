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
import io.pintle.server.uploads.UploadKind;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code [limits] max_requests_per_node} on the real server: a node's second request in flight is refused with a
 * 503 {@code node-busy} while its first is held open, and another node from the same address is served, for
 * downloads (the node of the client certificate) and uploads (the node of the file name). Every client here is
 * 127.0.0.1, so the per-address shares are the defaults and never reached.
 */
class PerNodeLimitIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String LIMITS = "[limits]\nmax_requests_per_node = 1\n";
    /** Far more than socket buffers hold, so that a download whose body is not read stays in flight. */
    private static final int LARGE = 24 * 1024 * 1024;
    private static final String REPORT_BODY = "report";

    private Sandbox sandbox;
    private NodeKeys nodeA;
    private NodeKeys nodeB;

    @BeforeEach
    void setUp(@TempDir Path dir) throws Exception {
        sandbox = Sandbox.create(dir);
        // The bound is counted before any body is read, so the uploads here are held bodies, not signed reports:
        // the edge check ([uploads] verify_signatures) has its own test, UploadSignaturesIT.
        sandbox.uploadsConfig("verify_signatures = false");
        nodeA = sandbox.addNode("node-a", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        nodeB = sandbox.addNode("node-b", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        sandbox.randomShareFile("node-a/rules/large.bin", LARGE, 1);
        sandbox.randomShareFile("node-a/rules/rudder.tar.bz2", 2000, 2);
        sandbox.randomShareFile("node-b/rules/rudder.tar.bz2", 2000, 3);
    }

    @Test
    void aNodesSecondDownloadInFlightIsRefusedWhileAnotherNodeOnTheSameAddressIsServed() throws Exception {
        try (TestServer server = TestServer.start(sandbox, LIMITS)) {
            // node-a's first download: its body is not read, so it stays in flight.
            PintleClient holderClient = server.client(nodeA, HttpClient.Version.HTTP_1_1);
            HttpResponse<InputStream> holder = PolicyServingIT.get(holderClient, "/policies/node-a/rules/large.bin",
                    HttpResponse.BodyHandlers.ofInputStream());
            assertThat(holder.statusCode()).isEqualTo(200);
            assertThat(server.metric("pintle_inflight_requests{class=\"files\"}")).isEqualTo(1.0);

            PintleClient secondA = server.client(nodeA, HttpClient.Version.HTTP_1_1);
            HttpResponse<byte[]> refused = PolicyServingIT.get(secondA, "/policies/node-a/rules/rudder.tar.bz2",
                    HttpResponse.BodyHandlers.ofByteArray());
            assertNodeBusy(refused.statusCode(), refused.headers().firstValue("Retry-After").orElse(null),
                    refused.headers().firstValue("Content-Type").orElse(null), refused.body(), "node-a");
            assertThat(server.metric("pintle_overload_rejections_total{class=\"files\",reason=\"node-busy\"}"))
                    .isEqualTo(1.0);

            // node-b, from the same address, while node-a's download is still in flight: its own budget.
            PintleClient clientB = server.client(nodeB, HttpClient.Version.HTTP_1_1);
            HttpResponse<byte[]> served = PolicyServingIT.get(clientB, "/policies/node-b/rules/rudder.tar.bz2",
                    HttpResponse.BodyHandlers.ofByteArray());
            assertThat(served.statusCode()).isEqualTo(200);
            assertThat(served.body()).hasSize(2000);

            // Once node-a's first download is complete, its budget is back.
            try (InputStream body = holder.body()) {
                assertThat(body.transferTo(OutputStream.nullOutputStream())).isEqualTo(LARGE);
            }
            Await.asserted(Duration.ofSeconds(10), () ->
                    assertThat(server.metric("pintle_inflight_requests{class=\"files\"}")).isEqualTo(0.0));
            assertThat(PolicyServingIT.get(secondA, "/policies/node-a/rules/rudder.tar.bz2",
                    HttpResponse.BodyHandlers.ofByteArray()).statusCode()).isEqualTo(200);
        }
    }

    @Test
    void aNodesSecondUploadInFlightIsRefusedWhileAnotherNodeOnTheSameAddressIsServed() throws Exception {
        try (TestServer server = TestServer.start(sandbox, LIMITS);
                SSLSocket held = server.rawTls(null)) {
            // node-a's first report: its headers and one byte of its body; the rest is sent at the end.
            held.setSoTimeout(10_000);
            OutputStream heldOut = held.getOutputStream();
            heldOut.write(putHeaders("2026-12-03T10:00:00+00:00@node-a.log.gz", REPORT_BODY.length())
                    .getBytes(StandardCharsets.US_ASCII));
            heldOut.write(REPORT_BODY.substring(0, 1).getBytes(StandardCharsets.US_ASCII));
            heldOut.flush();
            Await.asserted(Duration.ofSeconds(10), () ->
                    assertThat(server.metric("pintle_inflight_requests{class=\"uploads\"}")).isEqualTo(1.0));

            // node-a's inventory, named the do-inventory way: the same node, refused at once.
            String refused = put(server, "node-a_2026-12-03T10:00:00+00:00.ocs.gz");
            String[] headersAndBody = refused.split("\r\n\r\n", 2);
            assertNodeBusy(RawHttp.status(refused), header(headersAndBody[0], "Retry-After"),
                    header(headersAndBody[0], "Content-Type"), headersAndBody[1].getBytes(StandardCharsets.UTF_8),
                    "node-a");
            // Its report with the '@' escaped: the name as the upload would store it, the same node.
            assertThat(put(server, "2026-12-03T11:00:00+00:00%40node-a.log.gz")).startsWith("HTTP/1.1 503 ")
                    .contains("node-busy");
            assertThat(server.metric("pintle_overload_rejections_total{class=\"uploads\",reason=\"node-busy\"}"))
                    .isEqualTo(2.0);

            // node-b's report, from the same address, while node-a's is still in flight: its own budget.
            assertThat(RawHttp.status(put(server, "2026-12-03T10:00:00+00:00@node-b.log.gz"))).isEqualTo(201);
            // A name that names no node counts by its address only.
            assertThat(RawHttp.status(put(server, "report.log.gz"))).isEqualTo(201);

            heldOut.write(REPORT_BODY.substring(1).getBytes(StandardCharsets.US_ASCII));
            heldOut.flush();
            assertThat(RawHttp.status(RawHttp.readUntilClosed(held))).isEqualTo(201);
            assertThat(Files.readString(sandbox.uploads(UploadKind.REPORTS)
                    .resolve("2026-12-03T10:00:00+00:00@node-a.log.gz"))).isEqualTo(REPORT_BODY);
            Await.asserted(Duration.ofSeconds(10), () ->
                    assertThat(server.metric("pintle_inflight_requests{class=\"uploads\"}")).isEqualTo(0.0));
            assertThat(RawHttp.status(put(server, "node-a_2026-12-03T10:00:00+00:00.ocs.gz"))).isEqualTo(201);
        }
    }

    private static void assertNodeBusy(int status, String retryAfter, String contentType, byte[] body, String node)
            throws Exception {
        assertThat(status).isEqualTo(503);
        assertThat(retryAfter).isNotNull();
        assertThat(Long.parseLong(retryAfter.strip())).isPositive();
        assertThat(contentType).isEqualTo("application/problem+json");
        JsonNode problem = JSON.readTree(body);
        assertThat(problem.path("status").asInt()).isEqualTo(503);
        assertThat(problem.path("reason").asText()).isEqualTo("node-busy");
        assertThat(problem.path("detail").asText()).contains("node " + node).contains("limits.max_requests_per_node");
        assertThat(problem.has("incident")).isFalse();
    }

    private static String putHeaders(String name, int length) {
        return "PUT /reports/" + name + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Basic "
                + Base64.getEncoder().encodeToString((Sandbox.UPLOAD_USER + ":" + Sandbox.WEBDAV_PASSWORD)
                        .getBytes(StandardCharsets.UTF_8))
                + "\r\nContent-Length: " + length + "\r\nConnection: close\r\n\r\n";
    }

    /** A whole upload to /reports/ (an inventory's name there is still a name for the bound), its answer. */
    private static String put(TestServer server, String name) throws Exception {
        try (SSLSocket socket = server.rawTls(null)) {
            socket.setSoTimeout(10_000);
            socket.getOutputStream().write((putHeaders(name, REPORT_BODY.length()) + REPORT_BODY)
                    .getBytes(StandardCharsets.US_ASCII));
            return RawHttp.readUntilClosed(socket);
        }
    }

    private static String header(String head, String name) {
        for (String line : head.split("\r\n")) {
            int colon = line.indexOf(':');
            if (colon > 0 && line.substring(0, colon).equalsIgnoreCase(name)) {
                return line.substring(colon + 1).strip();
            }
        }
        return null;
    }
}
