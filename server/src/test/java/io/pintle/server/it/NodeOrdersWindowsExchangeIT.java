package io.pintle.server.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.pintle.api.Routes;
import io.pintle.server.testing.Await;
import io.pintle.server.testing.NodeKeys;
import io.pintle.server.testing.Sandbox;
import io.pintle.server.testing.TestServer;
import io.pintle.server.tls.SelfSigned;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.SocketTimeoutException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Windows client's HTTP exchange ({@code deploy/node/pintle-run-orders.ps1}, which no PowerShell here can run),
 * replayed from its recorded fixture {@code node-orders/windows-exchange.txt} against a real Pintle server: its poll
 * gets the order a webapp-style run gives it, its chunked report (with {@code Expect: 100-continue}, as curl sends
 * it) reaches the caller line by line and ends the node's status from the framing.
 */
class NodeOrdersWindowsExchangeIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern ORDER_LINE = Pattern.compile("([0-9a-f]{32}) run win_1\n");

    @TempDir
    Path dir;

    @Test
    void theRecordedWindowsExchangeRunsAnOrderAndReportsIt() throws Exception {
        Map<String, List<String>> sections = fixture();
        Sandbox box = Sandbox.create(dir.resolve("root"));
        NodeKeys node = box.addNode("win-node-1", SelfSigned.KeyType.RSA_2048, Sandbox.Pinning.BOTH);
        // Listed at an address where nothing listens: a run before the poll is parked fails at once.
        box.register("win-node-1", node.certificate(), "127.0.0.9", "root");
        try (TestServer server = TestServer.start(box, "[remote_run]\ntimeout = 20\ntransports = [\"pull\"]\n")) {
            String host = "127.0.0.1:" + server.port();

            // The poll, parked on the server; then a run for the node (a run that came before the poll is parked
            // would find the node not connected and end at once, unreachable).
            SSLSocket poll = server.rawTls(node);
            poll.getOutputStream().write(head(sections.get("poll"), host, null));
            poll.getOutputStream().flush();
            Await.asserted(Duration.ofSeconds(20), () -> assertThat(server.admin("GET", "/v1/status").body()
                    .path("order_channels").path("polling").asInt()).as("polls parked").isEqualTo(1));
            CompletableFuture<HttpResponse<String>> run = runFor(server, "win-node-1");
            Answer order = read(poll.getInputStream());
            poll.close();
            assertThat(order.status()).isEqualTo(200);
            assertThat(sections.get("expect 200 text/plain")).isNotNull();
            assertThat(order.headers().get("content-type")).startsWith("text/plain");
            Matcher line = ORDER_LINE.matcher(order.body());
            assertThat(line.matches()).as(order.body()).isTrue();
            String id = line.group(1);

            // The report, on a new connection as curl opens one: head, then each chunk as the agent's lines come.
            try (SSLSocket report = server.rawTls(node)) {
                OutputStream out = report.getOutputStream();
                out.write(head(sections.get("report"), host, id));
                out.flush();
                // curl waits up to 1 s for "100 Continue", then sends the body anyway.
                report.setSoTimeout(1000);
                Answer interim = null;
                try {
                    interim = read(report.getInputStream());
                } catch (SocketTimeoutException nothingYet) {
                    // sent without it, as curl does
                }
                report.setSoTimeout(20_000);
                if (interim != null) {
                    assertThat(interim.status()).isEqualTo(100);
                }
                for (String chunk : chunks(sections, id)) {
                    byte[] bytes = chunk.getBytes(StandardCharsets.UTF_8);
                    out.write((Integer.toHexString(bytes.length) + "\r\n").getBytes(StandardCharsets.US_ASCII));
                    out.write(bytes);
                    out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
                    out.flush();
                }
                out.write("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                out.flush();
                Answer answer = read(report.getInputStream());
                if (answer.status() == 100) {
                    answer = read(report.getInputStream());
                }
                assertThat(sections).containsKey("expect 204");
                assertThat(answer.status()).as(answer.body()).isEqualTo(204);
            }

            HttpResponse<String> done = run.get(20, TimeUnit.SECONDS);
            List<JsonNode> events = new ArrayList<>();
            for (String event : done.body().split("\n")) {
                if (!event.isBlank()) {
                    events.add(JSON.readTree(event));
                }
            }
            List<String> output = events.stream().filter(e -> e.path("type").asText().equals("output"))
                    .map(e -> e.path("line").asText()).filter(s -> !s.isEmpty()).toList();
            assertThat(output).containsExactly("Rudder agent 8.3.0 (DSC) on WIN-NODE1",
                    "Start execution with config [20261204-143000-1a2b3c4d]",
                    sections.get("chunk").get(3).strip(), sections.get("chunk").get(4).strip(),
                    sections.get("chunk").get(5).strip());
            JsonNode status = events.stream().filter(e -> e.path("type").asText().equals("status")).findFirst()
                    .orElseThrow();
            assertThat(status.path("node").asText()).isEqualTo("win-node-1");
            assertThat(status.path("status").asText()).as(status.toString()).isEqualTo("success");
            assertThat(status.path("exitCode").asInt()).isZero();
        }
    }

    private static CompletableFuture<HttpResponse<String>> runFor(TestServer server, String node) {
        return HttpClient.newHttpClient().sendAsync(HttpRequest.newBuilder(server.server().adminUri()
                        .resolve(Routes.RELAY_API + "/remote-run/nodes/" + node))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString("{\"command\": \"run\", \"conditions\": [\"win_1\"]}"))
                        .timeout(Duration.ofSeconds(60)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** The fixture's sections, in order; the chunks of a repeated name are kept one per entry. */
    private static Map<String, List<String>> fixture() throws IOException {
        Map<String, List<String>> sections = new LinkedHashMap<>();
        try (InputStream in = NodeOrdersWindowsExchangeIT.class.getResourceAsStream(
                "/node-orders/windows-exchange.txt")) {
            String name = null;
            StringBuilder current = null;
            for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n", -1)) {
                if (line.startsWith("#")) {
                    continue;
                }
                if (line.startsWith("=== ")) {
                    if (name != null) {
                        sections.computeIfAbsent(name, k -> new ArrayList<>()).add(current.toString());
                    }
                    name = line.substring(4);
                    current = new StringBuilder();
                } else if (name != null && !(line.isEmpty() && current.length() == 0 && !name.equals("chunk"))) {
                    current.append(line.equals("<empty>") ? "" : line).append('\n');
                }
            }
            if (name != null) {
                sections.computeIfAbsent(name, k -> new ArrayList<>()).add(current.toString());
            }
        }
        return sections;
    }

    private static List<String> chunks(Map<String, List<String>> sections, String order) {
        List<String> chunks = new ArrayList<>();
        for (String chunk : sections.get("chunk")) {
            chunks.add(chunk.replace("{order}", order));
        }
        return chunks;
    }

    private static byte[] head(List<String> section, String host, String order) {
        String text = section.get(0).strip().replace("{host}", host);
        if (order != null) {
            text = text.replace("{order}", order);
        }
        return (String.join("\r\n", text.split("\n")) + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
    }

    record Answer(int status, Map<String, String> headers, String body) {}

    /** One HTTP/1.1 answer: status line, headers, and a body by Content-Length or chunked (none for 1xx, 204). */
    private static Answer read(InputStream in) throws IOException {
        String statusLine = readLine(in);
        int status = Integer.parseInt(statusLine.split(" ")[1]);
        Map<String, String> headers = new LinkedHashMap<>();
        for (String line; !(line = readLine(in)).isEmpty(); ) {
            int colon = line.indexOf(':');
            headers.put(line.substring(0, colon).strip().toLowerCase(java.util.Locale.ROOT),
                    line.substring(colon + 1).strip());
        }
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        if (status >= 200 && status != 204 && status != 304) {
            if (headers.containsKey("content-length")) {
                body.write(in.readNBytes(Integer.parseInt(headers.get("content-length"))));
            } else if ("chunked".equalsIgnoreCase(headers.get("transfer-encoding"))) {
                for (int size; (size = Integer.parseInt(readLine(in).split(";")[0].strip(), 16)) > 0; ) {
                    body.write(in.readNBytes(size));
                    readLine(in);
                }
                readLine(in);
            }
        }
        return new Answer(status, headers, body.toString(StandardCharsets.UTF_8));
    }

    private static String readLine(InputStream in) throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        for (int b; (b = in.read()) != '\n'; ) {
            if (b < 0) {
                throw new IOException("connection closed mid-line: " + line);
            }
            line.write(b);
        }
        String text = line.toString(StandardCharsets.US_ASCII);
        return text.endsWith("\r") ? text.substring(0, text.length() - 1) : text;
    }
}
