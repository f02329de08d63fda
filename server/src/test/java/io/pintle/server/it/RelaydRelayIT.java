package io.pintle.server.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import io.pintle.api.Routes;
import io.pintle.server.testing.Sandbox;
import io.pintle.server.testing.TestServer;
import io.pintle.server.tls.SelfSigned;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A Pintle root calling a relay that runs relayd behind Rudder's Apache: the call goes to the unversioned path
 * Apache proxies, in relayd's own form (which relayd parses; it knows no JSON), pinned to the relay's key, and the
 * relay's {@code text/plain} answer ({@code host> line}, no status) becomes output events for the nodes it names.
 * The relay is a stand-in with relayd's answer shape (relayd's {@code tests/remote_run.rs}): it records what it
 * was sent.
 */
class RelaydRelayIT {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    static java.nio.file.Path dir;

    static HttpsServer relayd;
    static TestServer root;
    static final List<Map<String, String>> CALLS = new CopyOnWriteArrayList<>();

    @BeforeAll
    static void start() throws Exception {
        SelfSigned.Identity relayKey = SelfSigned.generate(SelfSigned.KeyType.EC_P256, "relay-d");
        relayd = HttpsServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
        relayd.setHttpsConfigurator(new HttpsConfigurator(serverContext(relayKey)));
        relayd.createContext("/", exchange -> {
            Map<String, String> call = new LinkedHashMap<>();
            call.put("path", exchange.getRequestURI().getRawPath());
            call.put("content-type", exchange.getRequestHeaders().getFirst("Content-Type"));
            String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
            for (String field : body.split("&")) {
                String[] pair = field.split("=", 2);
                call.put("form." + pair[0], URLDecoder.decode(pair.length > 1 ? pair[1] : "", StandardCharsets.UTF_8));
            }
            CALLS.add(call);
            // relayd: text/plain, the output of `rudder remote run` as fake-rudder-remote-run.sh answers it:
            // cf-runagent prefixes each line with the address it connected to, Rudder's formatter adds rows
            // whose first column is that address, and cf-runagent logs the hosts it could not reach.
            byte[] answer = ("Hostname        M| State         Technique\n"
                    + "192.0.2.10> Rudder agent: run started\n"
                    + "192.0.2.10> Rudder agent: done\n"
                    + "192.0.2.10      E| compliant     row\n"
                    + "   error: Failed to connect to host: 192.0.2.11\n"
                    + "## Summary #####\n").getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().add("Content-Type", "text/plain; charset=utf-8");
            exchange.sendResponseHeaders(200, answer.length);
            exchange.getResponseBody().write(answer);
            exchange.close();
        });
        relayd.start();
        int port = relayd.getAddress().getPort();

        Sandbox box = Sandbox.create(dir.resolve("root"));
        box.register("relay-d", relayKey.certificate(), "127.0.0.1", "root");
        box.register("node-a", SelfSigned.generate(SelfSigned.KeyType.EC_P256, "node-a").certificate(),
                "192.0.2.10", "relay-d");
        box.register("node-b", SelfSigned.generate(SelfSigned.KeyType.EC_P256, "node-b").certificate(),
                "192.0.2.11", "relay-d");
        root = TestServer.start(box, "[remote_run]\nport = " + port + "\n");
    }

    @AfterAll
    static void stop() {
        if (root != null) {
            root.close();
        }
        if (relayd != null) {
            relayd.stop(0);
        }
    }

    @Test
    void aRunForNodesBehindARelaydRelayUsesApachesPathAndRelaydsForm() throws Exception {
        CALLS.clear();
        HttpResponse<String> response = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                        root.server().adminUri().resolve(Routes.RELAY_API + "/remote-run/nodes"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"command\": \"run\", \"conditions\": [\"c1\", \"c2\"], "
                        + "\"nodes\": [\"node-a\", \"node-b\"]}"))
                .timeout(Duration.ofSeconds(60)).build(), HttpResponse.BodyHandlers.ofString());

        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        assertThat(CALLS).hasSize(1);
        Map<String, String> call = CALLS.get(0);
        assertThat(call.get("path")).isEqualTo("/rudder/relay-api/remote-run/nodes");
        assertThat(call.get("content-type")).isEqualTo("application/x-www-form-urlencoded");
        assertThat(call).containsEntry("form.asynchronous", "false").containsEntry("form.keep_output", "true")
                .containsEntry("form.classes", "c1,c2").containsEntry("form.nodes", "node-a,node-b");

        List<JsonNode> events = new ArrayList<>();
        for (String line : response.body().split("\n")) {
            events.add(JSON.readTree(line));
        }
        assertThat(events).filteredOn(e -> e.path("type").asText().equals("output"))
                .extracting(e -> e.path("node").asText() + ": " + e.path("line").asText())
                .contains("node-a: Rudder agent: run started", "node-a: Rudder agent: done",
                        "node-a: 192.0.2.10      E| compliant     row",
                        "node-b:    error: Failed to connect to host: 192.0.2.11")
                .doesNotContain("node-b: Rudder agent: done");
        Map<String, JsonNode> statuses = new LinkedHashMap<>();
        events.stream().filter(e -> e.path("type").asText().equals("status"))
                .forEach(e -> statuses.put(e.path("node").asText(), e));
        // relayd reports output, never an outcome: not counted as a success; a host cf-runagent could not reach
        // is unreachable.
        assertThat(statuses.get("node-a").path("status").asText()).isEqualTo("unknown");
        assertThat(statuses.get("node-a").path("detail").asText()).contains("relayd relay");
        assertThat(statuses.get("node-b").path("status").asText()).isEqualTo("unreachable");
        assertThat(statuses.get("node-b").path("detail").asText()).contains("Failed to connect to host: 192.0.2.11");
    }

    @Test
    void aRelaydRelaysOwnTextReachesTheWebappsTextFormUnderEachHost() throws Exception {
        CALLS.clear();
        HttpResponse<String> response = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                        root.server().adminUri().resolve(Routes.RELAY_API + "/remote-run/nodes/node-a"))
                .header("Content-Type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString("asynchronous=false&keep_output=true"))
                .timeout(Duration.ofSeconds(60)).build(), HttpResponse.BodyHandlers.ofString());

        assertThat(response.body()).contains("192.0.2.10> Rudder agent: run started\n"
                + "192.0.2.10> Rudder agent: done\n");
        assertThat(CALLS.get(0)).containsEntry("form.nodes", "node-a").doesNotContainKey("form.classes");
    }

    /** @return a TLS 1.3 server context presenting the identity, as a relayd relay behind its Apache does */
    static SSLContext serverContext(SelfSigned.Identity identity) throws Exception {
        KeyStore store = KeyStore.getInstance("PKCS12");
        store.load(null, null);
        char[] password = "x".toCharArray();
        store.setKeyEntry("relay", identity.keyPair().getPrivate(), password,
                new Certificate[] {identity.certificate()});
        KeyManagerFactory keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        keys.init(store, password);
        SSLContext context = SSLContext.getInstance("TLSv1.3");
        context.init(keys.getKeyManagers(), null, null);
        return context;
    }
}
