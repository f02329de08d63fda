package io.pintle.server.it;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.pintle.client.ClientTls;
import io.pintle.server.testing.Await;
import io.pintle.server.testing.Sandbox;
import io.pintle.server.testing.TestServer;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.zip.GZIPInputStream;
import javax.net.ssl.KeyManager;
import org.eclipse.jetty.client.BytesRequestContent;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.InputStreamResponseListener;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.Response;
import org.eclipse.jetty.client.StringRequestContent;
import org.eclipse.jetty.client.transport.HttpClientTransportOverHTTP;
import org.eclipse.jetty.io.ClientConnector;
import org.eclipse.jetty.util.ssl.SslContextFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * A root whose TLS listener also carries the web interface, as Rudder's single vhost: {@code /rudder/...} goes to a
 * stand-in webapp (the JDK's HTTP server on 127.0.0.1, port 0) through the real server, and the webapp's own
 * remote-run call ({@code POST https://localhost/rudder/relay-api/remote-run/nodes/<id>}, no client certificate)
 * is admitted from this machine and refused from another address (127.0.0.2).
 */
class WebappProxyIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String FORM = "application/x-www-form-urlencoded";
    /** The large answer: several MB, in chunks. */
    private static final int CHUNK = 256 * 1024;
    private static final int CHUNKS = 24;
    /** A script of the web interface, as the webapp sends it: not compressed. */
    private static final byte[] SCRIPT = "function f(x) { return x + 1; }\n".repeat(1000)
            .getBytes(StandardCharsets.US_ASCII);

    @TempDir
    static Path dir;

    static HttpServer webapp;
    static ExecutorService webappThreads;
    static final AtomicInteger webappRequests = new AtomicInteger();
    /** Released by the test once the first bytes of the large answer reached it. */
    static final CountDownLatch firstBytesSeen = new CountDownLatch(1);
    static final AtomicBoolean largeAnswerFinished = new AtomicBoolean();
    /** Released when the tests are over, so that the slow answer's thread ends. */
    static final CountDownLatch slowReleased = new CountDownLatch(1);
    static Sandbox sandbox;
    static TestServer server;
    static HttpClient client;
    static HttpClient otherAddressClient;
    static ListAppender<ILoggingEvent> accessLog;

    @BeforeAll
    static void start() throws Exception {
        accessLog = new ListAppender<>();
        accessLog.start();
        ((Logger) LoggerFactory.getLogger("io.pintle.access")).addAppender(accessLog);

        webappThreads = Executors.newCachedThreadPool();
        webapp = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        webapp.createContext("/", WebappProxyIT::standIn);
        webapp.setExecutor(webappThreads);
        webapp.start();

        sandbox = Sandbox.create(dir.resolve("root"));
        server = TestServer.start(sandbox, "[webapp]\nproxy = \"http://127.0.0.1:" + webapp.getAddress().getPort()
                + "\"\ntimeout = 30\n" + remoteRun(dir.resolve("agent")));
        client = client(null);
        otherAddressClient = client("127.0.0.2");
    }

    @AfterAll
    static void stop() throws Exception {
        slowReleased.countDown();
        firstBytesSeen.countDown();
        client.stop();
        otherAddressClient.stop();
        server.close();
        webapp.stop(0);
        webappThreads.shutdownNow();
        ((Logger) LoggerFactory.getLogger("io.pintle.access")).detachAppender(accessLog);
    }

    /** The webapp as the tests need it: an echo, a large slow stream, a redirect, a silent answer. */
    private static void standIn(HttpExchange exchange) throws IOException {
        webappRequests.incrementAndGet();
        String path = exchange.getRequestURI().getRawPath();
        try (exchange) {
            switch (path) {
                case "/rudder/large" -> large(exchange);
                case "/rudder/redirect" -> {
                    exchange.getResponseHeaders().add("Location",
                            "http://" + exchange.getRequestHeaders().getFirst("Host") + "/rudder/secure/index.html");
                    exchange.sendResponseHeaders(302, -1);
                }
                case "/rudder/app.js" -> {
                    exchange.getResponseHeaders().add("Content-Type", "application/javascript");
                    exchange.sendResponseHeaders(200, SCRIPT.length);
                    exchange.getResponseBody().write(SCRIPT);
                }
                case "/rudder/thinking" -> {
                    try {
                        Thread.sleep(2_500); // a webapp slower than the proxy's idle timeout (2 s), on purpose
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    byte[] answer = "thought".getBytes(StandardCharsets.US_ASCII);
                    exchange.sendResponseHeaders(200, answer.length);
                    exchange.getResponseBody().write(answer);
                }
                case "/rudder/login" -> {
                    exchange.getResponseHeaders().add("Set-Cookie", "JSESSIONID=abc; Path=/rudder");
                    exchange.getResponseHeaders().add("Set-Cookie", "theme=dark; Path=/; secure; HttpOnly");
                    exchange.sendResponseHeaders(204, -1);
                }
                case "/rudder/silent" -> {
                    try {
                        slowReleased.await(60, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    exchange.sendResponseHeaders(200, -1);
                }
                default -> echo(exchange);
            }
        }
    }

    private static void echo(HttpExchange exchange) throws IOException {
        byte[] body = exchange.getRequestBody().readAllBytes();
        Map<String, Object> seen = new LinkedHashMap<>();
        seen.put("method", exchange.getRequestMethod());
        seen.put("path", exchange.getRequestURI().getRawPath());
        seen.put("query", exchange.getRequestURI().getRawQuery());
        seen.put("body_sha256", sha256(body));
        seen.put("body_length", body.length);
        seen.put("content_type", exchange.getRequestHeaders().getFirst("Content-Type"));
        for (String header : List.of("Host", "X-Forwarded-For", "X-Forwarded-Proto", "X-Forwarded-Host",
                "Forwarded", "Via", "User-Agent")) {
            seen.put(header, exchange.getRequestHeaders().get(header));
        }
        byte[] answer = JSON.writeValueAsBytes(seen);
        exchange.getResponseHeaders().add("Content-Type", "application/json");
        exchange.getResponseHeaders().add("Server", "Jetty(10.0.0)");
        exchange.sendResponseHeaders(200, answer.length);
        exchange.getResponseBody().write(answer);
    }

    /** One chunk, then a byte now and then until the test saw the first bytes, then the rest with pauses. */
    private static void large(HttpExchange exchange) throws IOException {
        exchange.getResponseHeaders().add("Content-Type", "application/octet-stream");
        exchange.sendResponseHeaders(200, 0);
        OutputStream out = exchange.getResponseBody();
        byte[] chunk = new byte[CHUNK];
        new Random(7).nextBytes(chunk);
        out.write(chunk);
        out.flush();
        try {
            // Keeps the proxy's idle timeout (2 s) from firing while the test looks for the first bytes.
            while (!firstBytesSeen.await(200, TimeUnit.MILLISECONDS)) {
                out.write('.');
                out.flush();
            }
            for (int i = 1; i < CHUNKS; i++) {
                out.write(chunk);
                out.flush();
                Thread.sleep(5); // a slow webapp on purpose: the response streams in pieces
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        largeAnswerFinished.set(true);
    }

    @Test
    void aGetReachesTheWebappWithItsPathQueryAndForwardedHeaders() throws Exception {
        ContentResponse response = client.newRequest(server.uri() + "/rudder/secure/api/a%20b;x=1?q=1&r=two%2Fthree")
                .headers(h -> h.put("X-Forwarded-For", "203.0.113.9").put("Forwarded", "for=203.0.113.9"))
                .timeout(30, TimeUnit.SECONDS).send();
        assertThat(response.getStatus()).isEqualTo(200);
        JsonNode seen = JSON.readTree(response.getContentAsString());
        assertThat(seen.path("method").asText()).isEqualTo("GET");
        assertThat(seen.path("path").asText()).isEqualTo("/rudder/secure/api/a%20b;x=1");
        assertThat(seen.path("query").asText()).isEqualTo("q=1&r=two%2Fthree");
        // As Apache without ProxyPreserveHost: the webapp sees its own address, and the client's in X-Forwarded-*.
        assertThat(seen.path("Host").toString()).isEqualTo("[\"127.0.0.1:" + webapp.getAddress().getPort() + "\"]");
        assertThat(seen.path("X-Forwarded-For").toString()).isEqualTo("[\"127.0.0.1\"]");
        assertThat(seen.path("X-Forwarded-Proto").toString()).isEqualTo("[\"https\"]");
        assertThat(seen.path("X-Forwarded-Host").toString()).isEqualTo("[\"127.0.0.1:" + server.port() + "\"]");
        assertThat(seen.path("Forwarded").isNull()).isTrue();
        assertThat(seen.path("Via").isNull()).isTrue();
        // Rudder's webapp vhost removes the webapp's Server header ("jetty is leaking its version").
        assertThat(response.getHeaders().get("Server")).isNull();
        assertThat(response.getHeaders().get("Content-Type")).isEqualTo("application/json");

        Await.asserted(Duration.ofSeconds(30), () -> assertThat(accessLines()).anyMatch(line ->
                line.contains("/rudder/secure/api/") && line.contains(" 200 ")
                        && line.contains("allowed \"webapp: proxied to http://127.0.0.1:")));
        assertThat(server.metric("pintle_requests_total{route=\"webapp\",status=\"200\"}")).isGreaterThanOrEqualTo(1.0);
    }

    @Test
    void aBrowserOverHttp2ReachesTheWebappToo() throws Exception {
        java.net.http.HttpClient http2 = java.net.http.HttpClient.newBuilder()
                .sslContext(ClientTls.context((KeyManager[]) null, Set.of(sandbox.serverPin())))
                .version(java.net.http.HttpClient.Version.HTTP_2).build();
        HttpResponse<String> response = http2.send(HttpRequest.newBuilder(
                        URI.create(server.uri() + "/rudder/secure/nodeManager/nodes?x=1"))
                        .POST(HttpRequest.BodyPublishers.ofString("{\"a\": 1}"))
                        .header("Content-Type", "application/json").timeout(Duration.ofSeconds(30)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(response.version()).isEqualTo(java.net.http.HttpClient.Version.HTTP_2);
        assertThat(response.statusCode()).isEqualTo(200);
        JsonNode seen = JSON.readTree(response.body());
        assertThat(seen.path("path").asText()).isEqualTo("/rudder/secure/nodeManager/nodes");
        assertThat(seen.path("query").asText()).isEqualTo("x=1");
        assertThat(seen.path("body_length").asInt()).isEqualTo(8);
        assertThat(seen.path("X-Forwarded-Host").toString()).isEqualTo("[\"127.0.0.1:" + server.port() + "\"]");
        assertThat(seen.path("Host").toString()).isEqualTo("[\"127.0.0.1:" + webapp.getAddress().getPort() + "\"]");
    }

    @Test
    void theWebappsTextIsGzippedForClientsThatAcceptItAsRuddersVhostDeflatesIt() throws Exception {
        java.net.http.HttpClient jdk = java.net.http.HttpClient.newBuilder()
                .sslContext(ClientTls.context((KeyManager[]) null, Set.of(sandbox.serverPin()))).build();
        URI script = URI.create(server.uri() + "/rudder/app.js");
        HttpResponse<byte[]> gzipped = jdk.send(HttpRequest.newBuilder(script).header("Accept-Encoding", "gzip")
                .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofByteArray());
        assertThat(gzipped.statusCode()).isEqualTo(200);
        assertThat(gzipped.headers().firstValue("Content-Encoding")).hasValue("gzip");
        try (InputStream in = new GZIPInputStream(new ByteArrayInputStream(gzipped.body()))) {
            assertThat(in.readAllBytes()).isEqualTo(SCRIPT);
        }
        HttpResponse<byte[]> plain = jdk.send(HttpRequest.newBuilder(script).timeout(Duration.ofSeconds(30)).build(),
                HttpResponse.BodyHandlers.ofByteArray());
        assertThat(plain.headers().firstValue("Content-Encoding")).isEmpty();
        assertThat(plain.body()).isEqualTo(SCRIPT);
    }

    @Test
    void aPostReachesTheWebappWithItsBody() throws Exception {
        byte[] body = new byte[300 * 1024];
        new Random(3).nextBytes(body);
        ContentResponse response = client.newRequest(server.uri() + "/rudder/api/latest/nodes?include=full")
                .method("POST").body(new BytesRequestContent("application/octet-stream", body))
                .timeout(30, TimeUnit.SECONDS).send();
        assertThat(response.getStatus()).isEqualTo(200);
        JsonNode seen = JSON.readTree(response.getContentAsString());
        assertThat(seen.path("method").asText()).isEqualTo("POST");
        assertThat(seen.path("path").asText()).isEqualTo("/rudder/api/latest/nodes");
        assertThat(seen.path("query").asText()).isEqualTo("include=full");
        assertThat(seen.path("body_length").asInt()).isEqualTo(body.length);
        assertThat(seen.path("body_sha256").asText()).isEqualTo(sha256(body));
        assertThat(seen.path("content_type").asText()).isEqualTo("application/octet-stream");

        ContentResponse form = client.newRequest(server.uri() + "/rudder/j_spring_security_check").method("POST")
                .body(new StringRequestContent(FORM, "username=admin&password=x")).timeout(30, TimeUnit.SECONDS)
                .send();
        assertThat(JSON.readTree(form.getContentAsString()).path("body_length").asInt()).isEqualTo(25);
    }

    @Test
    void aLargeAnswerStreamsBackBeforeTheWebappHasFinishedIt() throws Exception {
        InputStreamResponseListener listener = new InputStreamResponseListener();
        client.newRequest(server.uri() + "/rudder/large").timeout(60, TimeUnit.SECONDS).send(listener);
        Response response = listener.get(30, TimeUnit.SECONDS);
        assertThat(response.getStatus()).isEqualTo(200);
        long total = 0;
        try (InputStream in = listener.getInputStream()) {
            byte[] first = in.readNBytes(CHUNK);
            assertThat(first).hasSize(CHUNK);
            // The stand-in holds the rest until this point: a proxy that buffered the answer would deliver nothing.
            assertThat(largeAnswerFinished).isFalse();
            firstBytesSeen.countDown();
            total += first.length;
            byte[] buffer = new byte[64 * 1024];
            for (int read; (read = in.read(buffer)) >= 0; ) {
                total += read;
            }
        }
        assertThat(largeAnswerFinished).isTrue();
        assertThat(total).isGreaterThanOrEqualTo((long) CHUNK * CHUNKS);
    }

    @Test
    void aRedirectToTheWebappsOwnAddressGoesBackToTheClientsAsApachesProxyPassReverse() throws Exception {
        ContentResponse response = client.newRequest(server.uri() + "/rudder/redirect")
                .timeout(30, TimeUnit.SECONDS).send();
        assertThat(response.getStatus()).isEqualTo(302);
        assertThat(response.getHeaders().get("Location"))
                .isEqualTo("https://127.0.0.1:" + server.port() + "/rudder/secure/index.html");
    }

    @Test
    void theRestOfRuddersWebappVhostHoldsToo() throws Exception {
        // RewriteRule ^/$ /rudder [R]
        ContentResponse root = client.newRequest(server.uri() + "/").timeout(30, TimeUnit.SECONDS).send();
        assertThat(root.getStatus()).isEqualTo(302);
        assertThat(root.getHeaders().get("Location")).endsWith("/rudder");
        Await.asserted(Duration.ofSeconds(30), () -> assertThat(accessLines()).anyMatch(line ->
                line.contains("\"GET / HTTP/") && line.contains(" 302 ")
                        && line.contains("allowed \"webapp: / redirected to /rudder")));
        // Header edit Set-Cookie: HttpOnly and secure on every cookie, never twice.
        ContentResponse login = client.newRequest(server.uri() + "/rudder/login").timeout(30, TimeUnit.SECONDS).send();
        assertThat(login.getHeaders().getValuesList("Set-Cookie")).containsExactly(
                "JSESSIONID=abc; Path=/rudder; HttpOnly; Secure", "theme=dark; Path=/; secure; HttpOnly");
        // <LocationMatch "^/rudder/api/(status|archives)$"> Require local (and the legacy API only).
        int before = webappRequests.get();
        ContentResponse remote = otherAddressClient.newRequest(server.uri() + "/rudder/api/status")
                .timeout(30, TimeUnit.SECONDS).send();
        assertThat(remote.getStatus()).isEqualTo(403);
        assertThat(JSON.readTree(remote.getContentAsString()).path("reason").asText()).isEqualTo("not-local");
        // Matched as Apache and the webapp see the path: decoded, parameters and repeated slashes gone.
        for (String path : List.of("/rudder/api/deploy/reload", "/rudder/api/stat%75s", "/rudder//api/status",
                "/rudder/api/archives;x=1", "/rudder/secure/../api/status")) {
            ContentResponse refused = otherAddressClient.newRequest(server.uri() + path)
                    .timeout(30, TimeUnit.SECONDS).send();
            assertThat(refused.getStatus()).as(path).isEqualTo(403);
        }
        ContentResponse newApi = client.newRequest(server.uri() + "/rudder/api/status")
                .headers(h -> h.put("X-API-Version", "12")).timeout(30, TimeUnit.SECONDS).send();
        assertThat(newApi.getStatus()).isEqualTo(403);
        assertThat(webappRequests.get()).isEqualTo(before);
        ContentResponse local = client.newRequest(server.uri() + "/rudder/api/status")
                .timeout(30, TimeUnit.SECONDS).send();
        assertThat(local.getStatus()).isEqualTo(200);
        // Anything else under /rudder/api/ is the webapp's to authenticate, from anywhere.
        assertThat(otherAddressClient.newRequest(server.uri() + "/rudder/api/latest/status")
                .timeout(30, TimeUnit.SECONDS).send().getStatus()).isEqualTo(200);
    }

    @Test
    void aWebappThatStaysSilentPastTheTimeoutIsA504Problem() throws Exception {
        // Its own server with a short timeout: the shared one's is long, so that no other test's answer, slowed by
        // a busy machine, ever meets it.
        Sandbox impatient = Sandbox.create(dir.resolve("impatient"));
        try (TestServer other = TestServer.start(impatient, "[webapp]\nproxy = \"http://127.0.0.1:"
                + webapp.getAddress().getPort() + "\"\ntimeout = 2\n")) {
            HttpClient pinned = client(null, impatient);
            ContentResponse response = pinned.newRequest(other.uri() + "/rudder/silent")
                    .timeout(30, TimeUnit.SECONDS).send();
            pinned.stop();
            assertThat(response.getStatus()).isEqualTo(504);
            assertThat(response.getHeaders().get("Content-Type")).isEqualTo("application/problem+json");
            JsonNode problem = JSON.readTree(response.getContentAsString());
            assertThat(problem.path("reason").asText()).isEqualTo("webapp-timeout");
            assertThat(problem.path("detail").asText()).contains("2 s", "[webapp] timeout");
        }
    }

    @Test
    void relaydsApiIsStillAnsweredByPintle() throws Exception {
        int before = webappRequests.get();
        ContentResponse sharedFolder = client.newRequest(server.uri() + "/rudder/relay-api/shared-folder/x")
                .timeout(30, TimeUnit.SECONDS).send();
        // Pintle's own refusal: a shared-folder download needs a node's certificate.
        assertThat(sharedFolder.getStatus()).isEqualTo(403);
        assertThat(sharedFolder.getHeaders().get("Content-Type")).isEqualTo("application/problem+json");
        // Apache's <Location /rudder/relay-api/> denies what it does not proxy (403 relay-api-denied); the bare
        // prefix is no route at all.
        for (Map.Entry<String, Integer> expected : Map.of("/rudder/relay-api", 404,
                "/rudder/relay-api/1/no-such-route", 403, "/rudder/relay-api/no-such-route", 403).entrySet()) {
            String path = expected.getKey();
            ContentResponse unknown = client.newRequest(server.uri() + path).timeout(30, TimeUnit.SECONDS).send();
            assertThat(unknown.getStatus()).as(path).isEqualTo(expected.getValue());
            assertThat(unknown.getHeaders().get("Content-Type")).as(path).isEqualTo("application/problem+json");
        }
        assertThat(webappRequests.get()).isEqualTo(before);
    }

    @Test
    void theWebappsOwnRemoteRunCallIsAdmittedFromThisMachineWithoutCertificate() throws Exception {
        // rudder-rest NodeApi: POST ${rudder.server.relay.api}/remote-run/nodes/<id>, relay.api defaulting to
        // https://localhost/rudder/relay-api, no client certificate.
        ContentResponse response = webappRemoteRun(client);
        assertThat(response.getStatus()).isEqualTo(200);
        assertThat(response.getContentAsString()).contains("fake agent: started agent run -uR", "fake agent: done");
        Await.asserted(Duration.ofSeconds(30), () -> assertThat(accessLines()).anyMatch(line ->
                line.contains("/rudder/relay-api/remote-run/nodes/root") && line.contains(" 200 ")
                        && line.contains("remote-run: a caller on this machine (127.0.0.1)")));
    }

    @Test
    void theSameCallFromAnotherAddressIsRefused() throws Exception {
        ContentResponse response = webappRemoteRun(otherAddressClient);
        assertThat(response.getStatus()).isEqualTo(403);
        JsonNode problem = JSON.readTree(response.getContentAsString());
        assertThat(problem.path("reason").asText()).isEqualTo("no-policy-server");
        assertThat(problem.path("detail").asText()).contains("127.0.0.2");
    }

    @Test
    void anUnreachableWebappIsA502ProblemAndNoProxyIsA404() throws Exception {
        int closed;
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            closed = socket.getLocalPort();
        }
        Sandbox down = Sandbox.create(dir.resolve("down"));
        try (TestServer other = TestServer.start(down, "[webapp]\nproxy = \"http://127.0.0.1:" + closed + "\"\n")) {
            HttpClient pinned = client(null, down);
            ContentResponse response = pinned.newRequest(other.uri() + "/rudder/secure/index.html")
                    .timeout(30, TimeUnit.SECONDS).send();
            assertThat(response.getStatus()).isEqualTo(502);
            assertThat(response.getHeaders().get("Content-Type")).isEqualTo("application/problem+json");
            JsonNode problem = JSON.readTree(response.getContentAsString());
            assertThat(problem.path("reason").asText()).isEqualTo("webapp-unreachable");
            assertThat(problem.path("detail").asText()).contains("127.0.0.1:" + closed, "refused");
            pinned.stop();
        }

        Sandbox off = Sandbox.create(dir.resolve("off"));
        try (TestServer other = TestServer.start(off)) {
            HttpClient pinned = client(null, off);
            for (String path : List.of("/rudder/secure/index.html", "/rudder")) {
                ContentResponse response = pinned.newRequest(other.uri() + path).timeout(30, TimeUnit.SECONDS).send();
                assertThat(response.getStatus()).as(path).isEqualTo(404);
                assertThat(response.getHeaders().get("Content-Type")).as(path).isEqualTo("application/problem+json");
            }
            pinned.stop();
        }
    }

    @Test
    void theWebappMayThinkLongerThanTheListenersIdleTimeout() throws Exception {
        // An API call that runs agents takes minutes: [webapp] timeout bounds it, not [limits] idle_timeout_seconds.
        Sandbox slow = Sandbox.create(dir.resolve("slow"));
        try (TestServer other = TestServer.start(slow, "[webapp]\nproxy = \"http://127.0.0.1:"
                + webapp.getAddress().getPort() + "\"\ntimeout = 10\n[limits]\nidle_timeout_seconds = 1\n")) {
            HttpClient pinned = client(null, slow);
            ContentResponse response = pinned.newRequest(other.uri() + "/rudder/thinking")
                    .timeout(30, TimeUnit.SECONDS).send();
            assertThat(response.getStatus()).isEqualTo(200);
            assertThat(response.getContentAsString()).isEqualTo("thought");
            pinned.stop();
            java.net.http.HttpClient http2 = java.net.http.HttpClient.newBuilder()
                    .sslContext(ClientTls.context((KeyManager[]) null, Set.of(slow.serverPin())))
                    .version(java.net.http.HttpClient.Version.HTTP_2).build();
            HttpResponse<String> overHttp2 = http2.send(HttpRequest.newBuilder(
                            URI.create(other.uri() + "/rudder/thinking")).timeout(Duration.ofSeconds(30)).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(overHttp2.statusCode()).isEqualTo(200);
            assertThat(overHttp2.body()).isEqualTo("thought");
        }
    }

    private static ContentResponse webappRemoteRun(HttpClient from) throws Exception {
        Request request = from.newRequest(server.uri() + "/rudder/relay-api/remote-run/nodes/root").method("POST")
                .headers(h -> h.put("User-Agent", "rudder/remote run query for node root"))
                .body(new StringRequestContent(FORM, "classes=&keep_output=true&asynchronous=false"))
                .timeout(60, TimeUnit.SECONDS);
        return request.send();
    }

    private static HttpClient client(String bindAddress) throws Exception {
        return client(bindAddress, sandbox);
    }

    /** Jetty's client over HTTP/1.1, no certificate, pinning the server's key, optionally from another address. */
    private static HttpClient client(String bindAddress, Sandbox of) throws Exception {
        SslContextFactory.Client tls = new SslContextFactory.Client();
        tls.setSslContext(ClientTls.context((KeyManager[]) null, Set.of(of.serverPin())));
        tls.setEndpointIdentificationAlgorithm(null);
        ClientConnector connector = new ClientConnector();
        connector.setSslContextFactory(tls);
        if (bindAddress != null) {
            connector.setBindAddress(new InetSocketAddress(bindAddress, 0));
        }
        HttpClient http = new HttpClient(new HttpClientTransportOverHTTP(connector));
        http.setFollowRedirects(false);
        http.start();
        return http;
    }

    /** [remote_run] with the fake agent standing in for /opt/rudder/bin/rudder. */
    private static String remoteRun(Path agentDir) throws IOException {
        Files.createDirectories(agentDir);
        Path script = agentDir.resolve("rudder");
        try (InputStream in = WebappProxyIT.class.getResourceAsStream("/fake-agent.sh")) {
            Files.copy(in, script);
        }
        assertThat(script.toFile().setExecutable(true)).isTrue();
        String program = "\"" + script + "\"";
        return "[remote_run]\nrun = [" + program + ", \"agent\", \"run\", \"-uR\"]\nupdate = [" + program
                + ", \"agent\", \"update\"]\ninventory = [" + program + ", \"agent\", \"inventory\"]\n";
    }

    /** The access log so far; the appender adds to its list under its own lock, on the server's threads. */
    private static List<String> accessLines() {
        synchronized (accessLog) {
            return accessLog.list.stream().map(ILoggingEvent::getFormattedMessage).toList();
        }
    }

    private static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
