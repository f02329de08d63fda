package io.pintle.server.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.pintle.client.PintleClient;
import io.pintle.server.testing.Await;
import io.pintle.server.testing.NodeKeys;
import io.pintle.server.testing.Sandbox;
import io.pintle.server.testing.TestServer;
import io.pintle.server.tls.SelfSigned;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.slf4j.LoggerFactory;

/**
 * Every request a node makes is answered, access-logged and counted exactly once (issue 17: over HTTP/2, routes
 * answered by Jersey lost access-log lines and {@code pintle_requests_total} increments). For each route family
 * nodes call on the TLS listener, N sequential requests on one connection, over HTTP/1.1 and HTTP/2, from curl
 * (with rudder-client's TLS flags) and from the JDK's HttpClient.
 */
class RequestCountIT {
    /** Requests per route, protocol and client; {@code -Dpintle.it.requests=...} to stress one combination. */
    private static final int N = Integer.getInteger("pintle.it.requests", 200);
    /** How long the last access line and metric increment may trail the last response on a loaded machine. */
    private static final Duration SETTLE = Duration.ofSeconds(10);
    private static final String ACCESS_LOGGER = "io.pintle.access";
    /**
     * curl's pace through its URLs over HTTP/2, for the routes whose every request leaves Jetty a frame on a
     * stream it has closed: curl (7.88) resets every stream a 304 closed (RST_STREAM STREAM_CLOSED), and after a
     * manifest it sends a WINDOW_UPDATE for the stream the response ended. Jetty's rapid-reset defence counts such
     * frames and closes a connection past 128 a second (GOAWAY ENHANCE_YOUR_CALM: curl's "Error in the HTTP2
     * framing layer"), so 200 of those requests in a second over one connection are cut. The other routes leave
     * none (they pass unpaced, 200 requests in well under a second); HTTP/1.1 has no streams: unpaced.
     */
    private static final String CURL_RATE = "100/s";
    private static final byte[] ARCHIVE = new byte[4321];
    private static final byte[] SCRIPT = "#!/bin/sh\necho shared\n".getBytes(StandardCharsets.UTF_8);

    @TempDir
    static Path dir;

    private static final ListAppender<ILoggingEvent> access = new ListAppender<>();
    private static Sandbox sandbox;
    private static TestServer server;
    private static NodeKeys node;
    private static String archiveEtag;

    /** How a route is called and what it answers. */
    enum Route {
        UUID("GET", "/uuid", 200, "uuid"),
        WHOAMI("GET", "/v1/whoami", 200, "whoami"),
        POLICY_FILE("GET", "/policies/node-a/rules/rudder.tar.bz2", 200, "policies"),
        POLICY_FILE_UNCHANGED("GET", "/policies/node-a/rules/rudder.tar.bz2", 304, "policies"),
        COMMON_FILE("GET", "/common/tools/lib.cf", 200, "common"),
        SHARED_FOLDER_FILE("GET", "/rudder/relay-api/shared-folder/tools/script.sh", 200, "shared_folder"),
        SHARED_FOLDER_HASH("HEAD", "/rudder/relay-api/shared-folder/tools/script.sh?hash=" + sha256(SCRIPT), 304,
                "shared_folder"),
        POLICY_MANIFEST("GET", "/policies/node-a/rules/?view=manifest", 200, "policies"),
        SHARED_FILES_HASH("HEAD", "/rudder/relay-api/shared-files/node-b/node-a/absent?hash=" + "0".repeat(64),
                404, "shared_files"),
        UNKNOWN_ROUTE("GET", "/no/such/route", 404, "other"),
        OTHER_NODES_POLICIES("GET", "/policies/node-b/rules/rudder.tar.bz2", 403, "policies");

        final String method;
        final String target;
        final int status;
        final String routeClass;

        Route(String method, String target, int status, String routeClass) {
            this.method = method;
            this.target = target;
            this.status = status;
            this.routeClass = routeClass;
        }

        /** @return whether curl is paced over HTTP/2 for this route (see {@link #CURL_RATE}) */
        boolean pacedOverHttp2() {
            return status == 304 || this == POLICY_MANIFEST;
        }

        /** The one conditional request: If-None-Match with the file's current ETag. */
        List<String> headers() {
            return this == POLICY_FILE_UNCHANGED ? List.of("If-None-Match", archiveEtag) : List.of();
        }
    }

    enum Protocol {
        HTTP_1_1("--http1.1", "1.1", HttpClient.Version.HTTP_1_1, "HTTP/1.1"),
        HTTP_2("--http2", "2", HttpClient.Version.HTTP_2, "HTTP/2.0");

        final String curlFlag;
        final String curlVersion;
        final HttpClient.Version jdkVersion;
        final String logged;

        Protocol(String curlFlag, String curlVersion, HttpClient.Version jdkVersion, String logged) {
            this.curlFlag = curlFlag;
            this.curlVersion = curlVersion;
            this.jdkVersion = jdkVersion;
            this.logged = logged;
        }
    }

    enum Client {
        CURL, JDK
    }

    @BeforeAll
    static void start() throws Exception {
        assumeTrue(CurlIT.available("curl"), "curl is not installed");
        sandbox = Sandbox.create(dir);
        node = sandbox.addNode("node-a", SelfSigned.KeyType.RSA_2048, Sandbox.Pinning.BOTH);
        sandbox.addNode("node-b", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        new java.util.Random(17).nextBytes(ARCHIVE);
        sandbox.shareFile("node-a/rules/rudder.tar.bz2", ARCHIVE);
        sandbox.shareFile("node-a/rules/cfengine-community/promises.cf",
                "bundle agent main {}\n".getBytes(StandardCharsets.UTF_8));
        sandbox.shareFile("node-b/rules/rudder.tar.bz2", ARCHIVE);
        sandbox.shareFile("common/tools/lib.cf", "bundle common lib {}\n".getBytes(StandardCharsets.UTF_8));
        Files.createDirectories(dir.resolve("shared-folder/tools"));
        Files.write(dir.resolve("shared-folder/tools/script.sh"), SCRIPT);

        Logger logger = (Logger) LoggerFactory.getLogger(ACCESS_LOGGER);
        access.start();
        logger.addAppender(access);
        // Thousands of lines: kept in the appender only, and quoted in a failure message where they matter.
        logger.setAdditive(false);
        server = TestServer.start(sandbox);

        PintleClient client = server.client(node);
        HttpResponse<Void> archive = send(client, PolicyServingIT.request(client, Route.POLICY_FILE.target)
                .method("HEAD", HttpRequest.BodyPublishers.noBody()).build());
        archiveEtag = archive.headers().firstValue("etag").orElseThrow();
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
        Logger logger = (Logger) LoggerFactory.getLogger(ACCESS_LOGGER);
        logger.detachAppender(access);
        logger.setAdditive(true);
    }

    static Stream<Arguments> combinations() {
        return Arrays.stream(Route.values()).flatMap(route -> Arrays.stream(Protocol.values())
                .flatMap(protocol -> Arrays.stream(Client.values())
                        .map(client -> Arguments.of(route, protocol, client))));
    }

    @ParameterizedTest(name = "{0} over {1} from {2}")
    @MethodSource("combinations")
    void everyRequestIsAnsweredLoggedAndCountedOnce(Route route, Protocol protocol, Client client) throws Exception {
        clearAccessLines();
        double countedBefore = requestsTotal(route.routeClass);

        List<String> answers = client == Client.CURL ? curl(route, protocol) : jdk(route, protocol);

        assertThat(answers).as("status and protocol of each response").hasSize(N)
                .containsOnly(route.status + " " + protocol.curlVersion);
        String requestLine = "\"" + route.method + " " + route.target + " " + protocol.logged + "\" " + route.status
                + " ";
        // Logged and counted once each response is complete, which may be after the client has it.
        Await.asserted(SETTLE, () -> {
            assertThat(accessLines(requestLine)).as("access log lines with %s", requestLine).isGreaterThanOrEqualTo(N);
            assertThat(requestsTotal(route.routeClass) - countedBefore).as("pintle_requests_total increments")
                    .isGreaterThanOrEqualTo(N);
        });
        assertThat(accessLines(requestLine)).as("access log lines with %s", requestLine).isEqualTo(N);
        assertThat(requestsTotal(route.routeClass) - countedBefore)
                .as("pintle_requests_total{route=\"%s\"} increments", route.routeClass).isEqualTo(N);
    }

    /** One curl process, N URLs on one connection, rudder-client's TLS flags; one status line per transfer. */
    private static List<String> curl(Route route, Protocol protocol) throws Exception {
        StringBuilder config = new StringBuilder();
        for (int i = 0; i < N; i++) {
            config.append("url = \"").append(server.uri()).append(route.target).append("\"\n")
                    .append("output = \"/dev/null\"\n");
        }
        Path file = Files.writeString(dir.resolve("curl-" + route + "-" + protocol + ".conf"), config);
        List<String> command = new ArrayList<>(List.of("-sS", "--tlsv1.3", "--connect-timeout", "10", "--noproxy",
                "*", "--pinnedpubkey", sandbox.serverPin(), "--insecure", "--cert",
                node.certificatePath().toString(), "--key", node.keyPath().toString(), "--globoff", protocol.curlFlag,
                "--max-time", "60", "-w", "%{http_code} %{http_version} %{num_connects}\\n", "--config",
                file.toString()));
        if (protocol == Protocol.HTTP_2 && route.pacedOverHttp2()) {
            command.addAll(List.of("--rate", CURL_RATE));
        }
        if (route.method.equals("HEAD")) {
            command.add("--head");
        }
        List<String> headers = route.headers();
        for (int i = 0; i < headers.size(); i += 2) {
            command.addAll(List.of("-H", headers.get(i) + ": " + headers.get(i + 1)));
        }
        CurlIT.Result result = CurlIT.curl(command);
        assertThat(result.stderr()).as("curl's errors").isEmpty();
        List<String[]> lines = result.stdout().lines().map(line -> line.split(" ")).toList();
        // One connection for all: a server that closes it (HTTP/2 GOAWAY, a reset) makes curl connect again.
        assertThat(lines.stream().mapToInt(line -> Integer.parseInt(line[2])).sum()).as("connections opened")
                .isEqualTo(1);
        return lines.stream().map(line -> line[0] + " " + line[1]).toList();
    }

    /** One JDK HttpClient, N requests one after the other. */
    private static List<String> jdk(Route route, Protocol protocol) throws Exception {
        PintleClient client = server.client(node, protocol.jdkVersion);
        List<String> answers = new ArrayList<>();
        for (int i = 0; i < N; i++) {
            HttpRequest.Builder request = PolicyServingIT.request(client, route.target)
                    .method(route.method, HttpRequest.BodyPublishers.noBody());
            List<String> headers = route.headers();
            for (int h = 0; h < headers.size(); h += 2) {
                request.header(headers.get(h), headers.get(h + 1));
            }
            HttpResponse<Void> response = send(client, request.build());
            answers.add(response.statusCode() + " " + (response.version() == HttpClient.Version.HTTP_2 ? "2" : "1.1"));
        }
        return answers;
    }

    private static HttpResponse<Void> send(PintleClient client, HttpRequest request) throws Exception {
        return client.httpClient().send(request, HttpResponse.BodyHandlers.discarding());
    }

    /** {@code pintle_requests_total} summed over the statuses of one route class. */
    private static double requestsTotal(String routeClass) throws Exception {
        String series = "pintle_requests_total{route=\"" + routeClass + "\",";
        return server.adminText("/metrics").body().lines()
                .filter(line -> line.startsWith(series))
                .mapToDouble(line -> Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1)))
                .sum();
    }

    private static void clearAccessLines() {
        synchronized (access) { // the appender's own lock: Jetty threads append concurrently
            access.list.clear();
        }
    }

    private static long accessLines(String requestLine) {
        List<ILoggingEvent> events;
        synchronized (access) {
            events = List.copyOf(access.list);
        }
        return events.stream().filter(event -> event.getFormattedMessage().contains(requestLine)).count();
    }

    private static String sha256(byte[] content) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(content));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
