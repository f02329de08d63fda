package io.pintle.server.testing;

import io.pintle.client.ClientTls;
import io.pintle.client.PintleClient;
import io.pintle.server.Bootstrap;
import io.pintle.server.PintleServer;
import io.pintle.server.config.ConfigLoader;
import java.net.InetAddress;
import java.net.URI;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.nio.file.Path;
import java.util.Set;
import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import org.slf4j.bridge.SLF4JBridgeHandler;

/**
 * The real server, built by the production {@link Bootstrap} from a sandbox configuration, listening on
 * 127.0.0.1 with a port picked by the kernel. Ready when {@link #start} returns.
 */
public final class TestServer implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();

    static {
        // As Main does in production: Jersey's java.util.logging goes through SLF4J and logback-test.xml.
        if (!SLF4JBridgeHandler.isInstalled()) {
            SLF4JBridgeHandler.removeHandlersForRootLogger();
            SLF4JBridgeHandler.install();
        }
    }

    private final Sandbox sandbox;
    private final PintleServer server;

    private TestServer(Sandbox sandbox, PintleServer server) {
        this.sandbox = sandbox;
        this.server = server;
    }

    /**
     * @param sandbox the layout to serve
     * @param extraToml extra {@code [tls]} keys, or empty
     * @return a started server
     * @throws Exception when it cannot start
     */
    public static TestServer start(Sandbox sandbox, String extraToml) throws Exception {
        Path config = sandbox.config(extraToml);
        PintleServer server = Bootstrap.build(ConfigLoader.load(config));
        server.start();
        return new TestServer(sandbox, server);
    }

    /**
     * @param sandbox the layout to serve
     * @return a started server with the default configuration
     * @throws Exception when it cannot start
     */
    public static TestServer start(Sandbox sandbox) throws Exception {
        return start(sandbox, "");
    }

    /** @return {@code https://127.0.0.1:<port>} */
    public URI uri() {
        return server.uri();
    }

    /** @return the port */
    public int port() {
        return server.port();
    }

    /** @return the running server */
    public PintleServer server() {
        return server;
    }

    /**
     * @param node the identity to present, or null for none
     * @return a JDK HttpClient-based client pinning this server's key
     * @throws Exception when the identity cannot be read
     */
    public PintleClient client(NodeKeys node) throws Exception {
        return client(node, HttpClient.Version.HTTP_2);
    }

    /**
     * @param node the identity to present, or null for none
     * @param version preferred HTTP version
     * @return a JDK HttpClient-based client pinning this server's key
     * @throws Exception when the identity cannot be read
     */
    public PintleClient client(NodeKeys node, HttpClient.Version version) throws Exception {
        PintleClient.Builder builder = PintleClient.builder(uri()).pin(sandbox.serverPin()).version(version);
        if (node != null) {
            builder.identity(node.certificatePath(), node.keyPath());
        }
        return builder.build();
    }

    /**
     * An agent's upload as rudder-client sends it: {@code PUT <route><name>} with HTTP Basic (the initial password
     * for {@code /inventories/}, the WebDAV one for the others), the server's key pinned.
     *
     * @param route {@code /reports/}, {@code /inventories/} or {@code /inventory-updates/}
     * @param file what to send, under its own name
     * @return the answer
     * @throws Exception when it cannot be sent
     */
    public HttpResponse<String> upload(String route, Path file) throws Exception {
        return upload(route, file, null);
    }

    /**
     * As {@link #upload(String, Path)}, presenting a certificate too.
     *
     * @param route {@code /reports/}, {@code /inventories/} or {@code /inventory-updates/}
     * @param file what to send, under its own name
     * @param certificate the identity to present as well, or null for none
     * @return the answer
     * @throws Exception when it cannot be sent
     */
    public HttpResponse<String> upload(String route, Path file, NodeKeys certificate) throws Exception {
        SSLContext tls = certificate == null
                ? ClientTls.context((KeyManager[]) null, Set.of(sandbox.serverPin()))
                : ClientTls.context(certificate.certificatePath(), certificate.keyPath(), Set.of(sandbox.serverPin()));
        HttpClient client = HttpClient.newBuilder().sslContext(tls).connectTimeout(Duration.ofSeconds(10)).build();
        String password = route.equals("/inventories/") ? Sandbox.INITIAL_PASSWORD : Sandbox.WEBDAV_PASSWORD;
        String basic = "Basic " + java.util.Base64.getEncoder().encodeToString((Sandbox.UPLOAD_USER + ":" + password)
                .getBytes(java.nio.charset.StandardCharsets.UTF_8));
        return client.send(HttpRequest.newBuilder(URI.create(uri() + route
                        + PintleClient.encodeSegment(file.getFileName().toString())))
                .header("Authorization", basic).PUT(HttpRequest.BodyPublishers.ofFile(file)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /**
     * A raw TLS socket to the node-facing listener, handshake done, presenting a node's certificate and pinning the
     * server's key: for tests that write bytes a well-behaved HTTP client would not.
     *
     * @param node the identity to present
     * @return the connected socket; the caller closes it
     * @throws Exception when it cannot connect or the handshake fails
     */
    public SSLSocket rawTls(NodeKeys node) throws Exception {
        return rawTls(node, "127.0.0.1");
    }

    /**
     * As {@link #rawTls(NodeKeys)}, from another loopback address (any of 127.0.0.0/8 on Linux): a client the
     * server counts apart from the others, for per-address limits.
     *
     * @param node the identity to present, or null for none
     * @param localAddress the address to connect from
     * @return the connected socket; the caller closes it
     * @throws Exception when it cannot connect or the handshake fails
     */
    public SSLSocket rawTls(NodeKeys node, String localAddress) throws Exception {
        SSLContext context = node != null
                ? ClientTls.context(node.certificatePath(), node.keyPath(), Set.of(sandbox.serverPin()))
                : ClientTls.context((KeyManager[]) null, Set.of(sandbox.serverPin()));
        SSLSocket socket = (SSLSocket) context.getSocketFactory().createSocket("127.0.0.1", port(),
                InetAddress.getByName(localAddress), 0);
        try {
            socket.startHandshake();
            return socket;
        } catch (Exception e) {
            socket.close();
            throw e;
        }
    }

    /**
     * Calls the admin listener.
     *
     * @param method GET or POST
     * @param path for example {@code /v1/status}
     * @return status code and parsed JSON body
     * @throws Exception on I/O errors
     */
    public AdminResponse admin(String method, String path) throws Exception {
        HttpResponse<String> response = HttpClient.newHttpClient().send(
                HttpRequest.newBuilder(server.adminUri().resolve(path))
                        .method(method, HttpRequest.BodyPublishers.noBody())
                        .timeout(Duration.ofSeconds(60))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        return new AdminResponse(response.statusCode(), JSON.readTree(response.body()), response.headers());
    }

    /**
     * Calls the admin listener with a JSON body.
     *
     * @param method POST, DELETE, ...
     * @param path for example {@code /v1/freeze}
     * @param json the body
     * @return status code and parsed JSON body
     * @throws Exception on I/O errors
     */
    public AdminResponse admin(String method, String path, String json) throws Exception {
        HttpResponse<String> response = HttpClient.newHttpClient().send(
                HttpRequest.newBuilder(server.adminUri().resolve(path))
                        .method(method, HttpRequest.BodyPublishers.ofString(json))
                        .header("Content-Type", "application/json")
                        .timeout(Duration.ofSeconds(60))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        return new AdminResponse(response.statusCode(), JSON.readTree(response.body()), response.headers());
    }

    /**
     * @param status HTTP status
     * @param body parsed body
     * @param headers the response headers
     */
    public record AdminResponse(int status, JsonNode body, java.net.http.HttpHeaders headers) {
        /**
         * @param name a header name
         * @return its first value, or null
         */
        public String header(String name) {
            return headers.firstValue(name).orElse(null);
        }
    }

    /**
     * GETs a path of the admin listener as text.
     *
     * @param path for example {@code /metrics}
     * @return the response
     * @throws Exception on I/O errors
     */
    public HttpResponse<String> adminText(String path) throws Exception {
        return HttpClient.newHttpClient().send(
                HttpRequest.newBuilder(server.adminUri().resolve(path)).timeout(Duration.ofSeconds(60)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /**
     * Scrapes {@code /metrics} and reads one sample.
     *
     * @param series the series as written in the exposition, labels included, e.g.
     *     {@code pintle_requests_total{route="policies",status="200"}}
     * @return its value, or null when the series is absent
     * @throws Exception on I/O errors
     */
    public Double metric(String series) throws Exception {
        for (String line : adminText("/metrics").body().split("\n")) {
            if (line.startsWith(series + " ")) {
                return Double.valueOf(line.substring(series.length() + 1).strip());
            }
        }
        return null;
    }

    /**
     * Stops the server at the end of a test: as in production, except that the connections the test's clients left
     * idle are closed at once rather than after Jetty's shutdown idle timeout (1 s), which only gives a client time
     * to bring one more request (see {@link PintleServer#close(Duration)}). A stop that is part of the scenario
     * (the root goes away, the relay restarts) is {@link #stopAsInProduction()}.
     */
    @Override
    public void close() {
        try {
            server.close(Duration.ofMillis(1));
        } catch (Exception e) {
            throw new IllegalStateException("server did not stop cleanly", e);
        }
    }

    /** Stops the server exactly as production does (SIGTERM): for a stop that the scenario under test goes through. */
    public void stopAsInProduction() {
        try {
            server.close();
        } catch (Exception e) {
            throw new IllegalStateException("server did not stop cleanly", e);
        }
    }
}
