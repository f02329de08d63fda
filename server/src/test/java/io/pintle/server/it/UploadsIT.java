package io.pintle.server.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.pintle.client.ClientTls;
import io.pintle.server.reload.ReloadOutcome;
import io.pintle.server.testing.Await;
import io.pintle.server.testing.Inotify;
import io.pintle.server.testing.RawHttp;
import io.pintle.server.testing.Sandbox;
import io.pintle.server.testing.TestServer;
import io.pintle.server.uploads.Htpasswd;
import io.pintle.server.uploads.UploadKind;
import io.pintle.server.uploads.UploadStore;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpURI;
import org.eclipse.jetty.http.HttpVersion;
import org.eclipse.jetty.http.MetaData;
import org.eclipse.jetty.http2.ErrorCode;
import org.eclipse.jetty.http2.api.Session;
import org.eclipse.jetty.http2.client.HTTP2Client;
import org.eclipse.jetty.http2.frames.DataFrame;
import org.eclipse.jetty.http2.frames.HeadersFrame;
import org.eclipse.jetty.http2.frames.ResetFrame;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.ssl.SslContextFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Agents' uploads against the real server: Rudder's own curl lines (rudder-agent {@code bin/do-inventory},
 * {@code share/lib/report.sh}, through {@code rudder-client} without {@code -c}: Basic auth, no client certificate,
 * {@code --upload-file} onto the route's directory URL), what relayd's inotify watch sees, and every refusal.
 */
class UploadsIT {
    private static final String NODE = "0e2d8f4c-5b7a-4f5e-9a59-3c4d5e6f7a8b";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long MAX_BYTES = 300_000;

    @TempDir
    static Path dir;

    static Sandbox sandbox;
    static TestServer server;
    static HttpClient http;

    @BeforeAll
    static void start() throws Exception {
        sandbox = Sandbox.create(dir.resolve("server"));
        // This test is about the WebDAV store and its access rules, with bodies that are not agents' signed reports:
        // the edge check ([uploads] verify_signatures) has its own, UploadSignaturesIT.
        sandbox.uploadsConfig("max_bytes = " + MAX_BYTES + "\nverify_signatures = false");
        // 200 uploads at once from one address: the per-address share would otherwise refuse most of them (503).
        server = TestServer.start(sandbox, "[limits.uploads]\nconcurrency = 20\nqueue = 250\nper_address = 250");
        http = client(HttpClient.Version.HTTP_1_1);
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void doInventorysCurlLinesStoreTheInventoryAndItsSignature() throws Exception {
        assumeThat(CurlIT.available("curl")).as("curl is installed").isTrue();
        byte[] inventory = random(60_000, 1);
        byte[] signature = random(600, 2);
        Path ocs = Files.write(dir.resolve(NODE + "_2026-12-03T10:00:00+00:00.ocs.gz"), inventory);
        Path sign = Files.write(dir.resolve(NODE + "_2026-12-03T10:00:00+00:00.ocs.sign"), signature);

        // A new node: /inventories/ with the initial password; then as an accepted node: /inventory-updates/.
        for (Path file : List.of(ocs, sign)) {
            assertThat(curl(Sandbox.INITIAL_PASSWORD, "/inventories/", file).exit()).isZero();
            assertThat(curl(Sandbox.WEBDAV_PASSWORD, "/inventory-updates/", file).exit()).isZero();
        }

        for (UploadKind kind : List.of(UploadKind.INVENTORIES, UploadKind.INVENTORY_UPDATES)) {
            assertThat(Files.readAllBytes(sandbox.uploads(kind).resolve(ocs.getFileName()))).isEqualTo(inventory);
            assertThat(Files.readAllBytes(sandbox.uploads(kind).resolve(sign.getFileName()))).isEqualTo(signature);
            assertThat(temporaries(kind)).isEmpty();
        }
    }

    @Test
    void reportShsCurlLineStoresTheReportAndAnAgainReplacesIt() throws Exception {
        assumeThat(CurlIT.available("curl")).as("curl is installed").isTrue();
        String name = "2026-12-03T10:05:00+00:00@" + NODE + ".log.gz";
        byte[] report = random(5_000, 3);
        Path file = Files.write(dir.resolve(name), report);

        CurlIT.Result first = curl(Sandbox.WEBDAV_PASSWORD, "/reports/", file);
        CurlIT.Result again = curl(Sandbox.WEBDAV_PASSWORD, "/reports/", file);

        assertThat(first.exit()).as(first.stderr()).isZero();
        assertThat(again.exit()).as(again.stderr()).isZero();
        assertThat(Files.readAllBytes(sandbox.uploads(UploadKind.REPORTS).resolve(name))).isEqualTo(report);
        // The initial password is for new nodes' inventories only: curl --fail exits 22 on the 401.
        CurlIT.Result refused = curl(Sandbox.INITIAL_PASSWORD, "/reports/", file);
        assertThat(refused.exit()).isEqualTo(22);
        assertThat(refused.stderr()).contains("401");
    }

    @Test
    void answers201ThenReplaces204() throws Exception {
        String name = "2026-12-03T11:00:00+00:00@" + NODE + ".log.gz";

        HttpResponse<String> created = put("/reports/" + name, Sandbox.WEBDAV_PASSWORD, random(10, 4));
        HttpResponse<String> replaced = put("/reports/" + name, Sandbox.WEBDAV_PASSWORD, random(20, 5));

        assertThat(created.statusCode()).isEqualTo(201);
        assertThat(replaced.statusCode()).isEqualTo(204);
        assertThat(Files.readAllBytes(sandbox.uploads(UploadKind.REPORTS).resolve(name))).isEqualTo(random(20, 5));
        JsonNode reports = server.admin("GET", "/v1/status").body().path("uploads").path("reports");
        assertThat(reports.path("results").path("created").asLong()).isPositive();
        assertThat(reports.path("results").path("replaced").asLong()).isPositive();
        assertThat(reports.path("bytes").asLong()).isGreaterThanOrEqualTo(30);
        assertThat(server.metric("pintle_uploads_total{kind=\"reports\",result=\"replaced\"}")).isPositive();
        assertThat(server.metric("pintle_upload_bytes_total{kind=\"reports\"}")).isGreaterThanOrEqualTo(30);
    }

    @Test
    void withoutOrWithWrongCredentialsAsksForThemAndKeepsNothing() throws Exception {
        // Empty bodies: a refusal comes before the body is read, and a body still on its way when the server closes
        // the connection could reset it before the client reads the answer (curl sends Expect: 100-continue for
        // large bodies; the JDK 17 client with it hung here on one refusal).
        String name = "unauthorized.log.gz";
        HttpResponse<String> none = send(request("/reports/" + name, null)
                .PUT(HttpRequest.BodyPublishers.noBody()).build());
        HttpResponse<String> wrong = put("/reports/" + name, "not-the-password", new byte[0]);
        HttpResponse<String> initial = put("/inventory-updates/" + name, Sandbox.INITIAL_PASSWORD, new byte[0]);
        HttpResponse<String> webdavOnInitial = put("/inventories/" + name, Sandbox.WEBDAV_PASSWORD, new byte[0]);

        for (HttpResponse<String> response : List.of(none, wrong, initial, webdavOnInitial)) {
            assertThat(response.statusCode()).isEqualTo(401);
            assertThat(response.headers().firstValue("WWW-Authenticate")).hasValue("Basic realm=\"WebDAV Storage\"");
            assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        }
        assertThat(JSON.readTree(none.body()).path("reason").asText()).isEqualTo("credentials-missing");
        assertThat(JSON.readTree(wrong.body()).path("reason").asText()).isEqualTo("credentials-invalid");
        assertThat(JSON.readTree(wrong.body()).path("detail").asText()).contains("htpasswd-webdav")
                .doesNotContain("not-the-password");
        for (UploadKind kind : UploadKind.values()) {
            assertThat(sandbox.uploads(kind).resolve(name)).doesNotExist();
        }
    }

    /**
     * Hostile testing, issue 34 N5: wrong passwords from one address were all checked, 146 a second. With three
     * failures allowed per address and window, the fourth attempt from that address is a 429 at once (even with the
     * right password), another address uploads, and the right password works again once the window ends. Failures
     * with a user the file does not hold count as any other.
     */
    @Test
    void failedLoginsFromOneAddressAreRefusedForAWhileAndNoOneElse(@TempDir Path own) throws Exception {
        Sandbox throttled = Sandbox.create(own);
        throttled.uploadsConfig("max_failures_per_address = 3\nfailure_window = 6\nverify_signatures = false");
        try (TestServer target = TestServer.start(throttled)) {
            String guesser = "127.0.0.3";
            for (String credentials : List.of("rudder:guess-1", "admin:guess-2", "rudder:guess-3")) {
                String failed = rawPut(target, guesser, credentials);
                assertThat(RawHttp.status(failed)).as(failed).isEqualTo(401);
                assertThat(failed).contains("credentials-invalid");
            }
            String right = Sandbox.UPLOAD_USER + ":" + Sandbox.WEBDAV_PASSWORD;
            for (String credentials : List.of("rudder:guess-4", right)) {
                String refused = rawPut(target, guesser, credentials);
                assertThat(RawHttp.status(refused)).as(refused).isEqualTo(429);
                assertThat(refused).contains("Content-Type: application/problem+json")
                        .containsPattern("(?i)Retry-After: [1-6]\r\n")
                        .contains("\"reason\":\"too-many-failures\"")
                        .contains("3 failed logins from 127.0.0.3 within 6 s")
                        .doesNotContain("WWW-Authenticate");
            }
            assertThat(target.metric("pintle_uploads_total{kind=\"reports\",result=\"throttled\"}")).isEqualTo(2);
            assertThat(target.metric("pintle_upload_throttled_addresses")).isEqualTo(1);

            // Another address, the nodes behind it uploading as ever.
            assertThat(RawHttp.status(rawPut(target, "127.0.0.4", right))).isEqualTo(201);

            // The window ends 6 s after the first failure, however often the address was refused meanwhile.
            int[] status = {0};
            Await.until(Duration.ofSeconds(30), "the window ends",
                    () -> (status[0] = RawHttp.status(rawPut(target, guesser, right))) != 429);
            assertThat(status[0]).isEqualTo(204);
            assertThat(target.metric("pintle_upload_throttled_addresses")).isZero();
        }
    }

    private static String rawPut(TestServer target, String from, String credentials) throws Exception {
        try (SSLSocket socket = target.rawTls(null, from)) {
            socket.setSoTimeout(10_000);
            socket.getOutputStream().write(("PUT /reports/throttled.log.gz HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    + "Authorization: Basic " + Base64.getEncoder().encodeToString(
                            credentials.getBytes(StandardCharsets.UTF_8))
                    + "\r\nContent-Length: 6\r\nConnection: close\r\n\r\nreport").getBytes(StandardCharsets.US_ASCII));
            return RawHttp.readUntilClosed(socket);
        }
    }

    @Test
    void aLinkPlantedUnderTheNameIsReplacedNeverFollowed() throws Exception {
        Path outside = Files.writeString(dir.resolve("outside.txt"), "not for agents");
        Path reports = sandbox.uploads(UploadKind.REPORTS);
        Files.createSymbolicLink(reports.resolve("planted.log.gz"), outside);
        Files.createDirectory(reports.resolve("a-directory.log.gz"));

        HttpResponse<String> overLink = put("/reports/planted.log.gz", Sandbox.WEBDAV_PASSWORD, random(50, 10));
        // Refused before its body is read: an empty one (see the credentials test).
        HttpResponse<String> overDirectory = put("/reports/a-directory.log.gz", Sandbox.WEBDAV_PASSWORD, new byte[0]);

        assertThat(overLink.statusCode()).isEqualTo(204);
        assertThat(Files.isSymbolicLink(reports.resolve("planted.log.gz"))).isFalse();
        assertThat(Files.readAllBytes(reports.resolve("planted.log.gz"))).isEqualTo(random(50, 10));
        assertThat(Files.readString(outside)).isEqualTo("not for agents");
        assertThat(overDirectory.statusCode()).isEqualTo(400);
        assertThat(reports.resolve("a-directory.log.gz")).isDirectory().isEmptyDirectory();
    }

    @Test
    void everyOtherMethodIsRefusedAsApachesLimitExceptPut() throws Exception {
        String name = "kept.log.gz";
        assertThat(put("/reports/" + name, Sandbox.WEBDAV_PASSWORD, random(10, 7)).statusCode()).isEqualTo(201);

        for (String method : List.of("GET", "HEAD", "DELETE", "POST", "OPTIONS", "PROPFIND", "MKCOL", "MOVE", "COPY",
                "LOCK")) {
            HttpResponse<String> response = send(request("/reports/" + name, Sandbox.WEBDAV_PASSWORD)
                    .method(method, HttpRequest.BodyPublishers.noBody()).build());
            assertThat(response.statusCode()).as(method).isEqualTo(403);
            if (!method.equals("HEAD")) {
                assertThat(JSON.readTree(response.body()).path("reason").asText()).isEqualTo("method-not-allowed");
            }
        }
        assertThat(Files.readAllBytes(sandbox.uploads(UploadKind.REPORTS).resolve(name))).isEqualTo(random(10, 7));
    }

    @Test
    void namesThatAreNotOnePlainFileNameAreRefusedWithAReason() throws Exception {
        for (String path : List.of("/reports/.hidden.log.gz", "/reports/%2e%2e", "/reports/a%2Fb.log.gz",
                "/reports/a%00b.log.gz", "/reports/a%0Ab.log.gz", "/reports/a%5Cb", "/reports/" + "x".repeat(256),
                "/reports/sub/dir.log.gz")) {
            String response = raw("PUT " + path + " HTTP/1.1\r\nHost: pintle\r\nAuthorization: " + basic(
                    Sandbox.WEBDAV_PASSWORD) + "\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc");
            assertThat(RawHttp.status(response)).as(path).isEqualTo(400);
            assertThat(response).as(path).contains("application/problem+json");
        }
        try (Stream<Path> left = Files.list(sandbox.uploads(UploadKind.REPORTS))) {
            assertThat(left.map(p -> p.getFileName().toString()))
                    .noneMatch(n -> n.startsWith(".") || n.contains("dir.log") || n.startsWith("x"));
        }
    }

    @Test
    void aBodyOverTheLimitIsRefusedWhetherItsLengthIsKnownOrNot() throws Exception {
        // A declared length over the limit is refused before the body is read: the client sends none (a client
        // sending it at once, as the JDK's does, may meet a closed connection before it reads the 413).
        String declared = raw("PUT /reports/big.log.gz HTTP/1.1\r\nHost: pintle\r\nAuthorization: "
                + basic(Sandbox.WEBDAV_PASSWORD) + "\r\nContent-Length: " + (MAX_BYTES + 1) + "\r\n\r\n");
        // Chunked: refused once the bytes read pass the limit, here with the last byte.
        String chunked;
        try (SSLSocket socket = server.rawTls(null)) {
            socket.setSoTimeout(10_000);
            OutputStream out = socket.getOutputStream();
            out.write(("PUT /reports/big-chunked.log.gz HTTP/1.1\r\nHost: pintle\r\nAuthorization: "
                    + basic(Sandbox.WEBDAV_PASSWORD) + "\r\nTransfer-Encoding: chunked\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            byte[] chunk = random(100_000, 8);
            for (long sent = 0; sent <= MAX_BYTES; sent += chunk.length) {
                int size = (int) Math.min(chunk.length, MAX_BYTES + 1 - sent);
                out.write((Integer.toHexString(size) + "\r\n").getBytes(StandardCharsets.US_ASCII));
                out.write(chunk, 0, size);
                out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
            }
            out.write("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            // The whole body was read: the server may keep the connection for a next request.
            chunked = RawHttp.readResponse(socket);
        }

        assertThat(RawHttp.status(declared)).isEqualTo(413);
        assertThat(declared).contains("upload-too-large");
        assertThat(RawHttp.status(chunked)).isEqualTo(413);
        assertThat(chunked).contains("upload-too-large");
        assertThat(sandbox.uploads(UploadKind.REPORTS).resolve("big.log.gz")).doesNotExist();
        assertThat(sandbox.uploads(UploadKind.REPORTS).resolve("big-chunked.log.gz")).doesNotExist();
        assertThat(temporaries(UploadKind.REPORTS)).isEmpty();
    }

    @Test
    void aMalformedChunkedBodyIsABadRequestAndLeavesNothing() throws Exception {
        String response = raw("PUT /reports/garbled.log.gz HTTP/1.1\r\nHost: pintle\r\nAuthorization: "
                + basic(Sandbox.WEBDAV_PASSWORD) + "\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nabcde\r\nzz\r\n");

        assertThat(RawHttp.status(response)).isEqualTo(400);
        assertThat(response).contains("application/problem+json").contains("body-incomplete");
        assertThat(sandbox.uploads(UploadKind.REPORTS).resolve("garbled.log.gz")).doesNotExist();
        Await.asserted(Duration.ofSeconds(10), () -> assertThat(temporaries(UploadKind.REPORTS)).isEmpty());
    }

    @Test
    void aServerThatTakesNoUploadsHasNoSuchRoutes() throws Exception {
        Sandbox own = Sandbox.create(dir.resolve("no-uploads"));
        own.uploadsConfig("enabled = false");
        try (TestServer off = TestServer.start(own)) {
            for (String method : List.of("PUT", "GET")) {
                try (SSLSocket socket = off.rawTls(null)) {
                    socket.setSoTimeout(10_000);
                    socket.getOutputStream().write((method + " /reports/r.log.gz HTTP/1.1\r\nHost: pintle\r\n"
                            + "Authorization: " + basic(Sandbox.WEBDAV_PASSWORD) + "\r\nContent-Length: 0\r\n"
                            + "Connection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                    String response = RawHttp.readUntilClosed(socket);
                    assertThat(RawHttp.status(response)).as(method).isEqualTo(404);
                    assertThat(response).as(method).contains("uploads-disabled");
                }
            }
        }
    }

    @Test
    void aCutUploadLeavesNothingUnderAnyName() throws Exception {
        try (SSLSocket socket = server.rawTls(null)) {
            OutputStream out = socket.getOutputStream();
            out.write(("PUT /reports/cut.log.gz HTTP/1.1\r\nHost: pintle\r\nAuthorization: "
                    + basic(Sandbox.WEBDAV_PASSWORD) + "\r\nContent-Length: 280000\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            out.write(random(150_000, 9));
            out.flush();
            // The server is writing the temporary file when the connection goes.
            Await.until(Duration.ofSeconds(10), "a temporary file", () -> !temporaries(UploadKind.REPORTS).isEmpty());
        }

        Await.asserted(Duration.ofSeconds(10), () ->
                assertThat(temporaries(UploadKind.REPORTS)).as("the temporary file is removed").isEmpty());
        assertThat(sandbox.uploads(UploadKind.REPORTS).resolve("cut.log.gz")).doesNotExist();
        Await.asserted(Duration.ofSeconds(10), () ->
                assertThat(status("reports", "aborted")).as("aborted reports").isGreaterThanOrEqualTo(1));
        // Its worker and its client address's share are given back too.
        Await.until(Duration.ofSeconds(10), "the upload's worker given back",
                () -> metric("pintle_inflight_requests{class=\"uploads\"}") == 0.0);
    }

    /**
     * An HTTP/2 client that cancels its upload mid-body (RST_STREAM) is a client's failure, as a connection cut
     * mid-body is on HTTP/1.1: counted as a 400, not as a server error an agent could raise at will, and nothing
     * is kept.
     */
    @Test
    void anUploadCancelledMidBodyOverHttp2IsACutBodyNotAServerError() throws Exception {
        double errorsBefore = requests("500");
        double cutBefore = requests("400");
        HTTP2Client client = new HTTP2Client();
        SslContextFactory.Client tls = new SslContextFactory.Client();
        tls.setSslContext(ClientTls.context((KeyManager[]) null, Set.of(sandbox.serverPin())));
        tls.setEndpointIdentificationAlgorithm(null);
        client.getClientConnector().setSslContextFactory(tls);
        client.start();
        try {
            Session session = client.connect(tls, new InetSocketAddress("127.0.0.1", server.port()),
                    new Session.Listener() {}).get(10, TimeUnit.SECONDS);
            HttpFields headers = HttpFields.build()
                    .put(HttpHeader.AUTHORIZATION, basic(Sandbox.WEBDAV_PASSWORD))
                    .put(HttpHeader.CONTENT_LENGTH, "280000");
            MetaData.Request put = new MetaData.Request("PUT", HttpURI.from("https://127.0.0.1:" + server.port()
                    + "/reports/cancelled.log.gz"), HttpVersion.HTTP_2, headers);
            org.eclipse.jetty.http2.api.Stream stream = session.newStream(new HeadersFrame(put, null, false),
                    new org.eclipse.jetty.http2.api.Stream.Listener() {})
                    .get(10, TimeUnit.SECONDS);
            stream.data(new DataFrame(stream.getId(), ByteBuffer.wrap(random(100_000, 11)), false))
                    .get(10, TimeUnit.SECONDS);
            // The server is writing the temporary file when the client gives up.
            Await.until(Duration.ofSeconds(10), "a temporary file", () -> !temporaries(UploadKind.REPORTS).isEmpty());
            stream.reset(new ResetFrame(stream.getId(), ErrorCode.CANCEL_STREAM_ERROR.code), Callback.NOOP);

            Await.asserted(Duration.ofSeconds(10), () ->
                    assertThat(requests("400")).as("counted as a cut body (400)").isGreaterThan(cutBefore));
            assertThat(requests("500")).isEqualTo(errorsBefore);
            Await.asserted(Duration.ofSeconds(10), () ->
                    assertThat(temporaries(UploadKind.REPORTS)).as("the temporary file is removed").isEmpty());
            assertThat(sandbox.uploads(UploadKind.REPORTS).resolve("cancelled.log.gz")).doesNotExist();
            Await.until(Duration.ofSeconds(10), "the upload's worker given back",
                    () -> metric("pintle_inflight_requests{class=\"uploads\"}") == 0.0);
        } finally {
            client.stop();
        }
    }

    private static double requests(String status) {
        Double value;
        try {
            value = server.metric("pintle_requests_total{route=\"reports\",status=\"" + status + "\"}");
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
        return value == null ? 0 : value;
    }

    private static double metric(String series) {
        try {
            Double value = server.metric(series);
            assertThat(value).as(series).isNotNull();
            return value;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void relaydsWatchSeesOnlyCompleteFilesDuring200ConcurrentUploads() throws Exception {
        UploadKind kind = UploadKind.INVENTORY_UPDATES;
        Map<String, byte[]> sent = new ConcurrentHashMap<>();
        Random sizes = new Random(42);
        for (int i = 0; i < 200; i++) {
            sent.put(String.format("%s-%03d_2026-12-03T10:00:00+00:00.ocs.gz", NODE, i),
                    random(1_000 + sizes.nextInt(250_000), 100 + i));
        }
        List<Inotify.Event> seen = Collections.synchronizedList(new ArrayList<>());
        List<String> mismatches = Collections.synchronizedList(new ArrayList<>());
        AtomicBoolean watching = new AtomicBoolean(true);
        // As agents send them: each upload on its own connection (HTTP/1.1 opens one per request in flight).
        List<HttpClient> clients = List.of(client(HttpClient.Version.HTTP_1_1), client(HttpClient.Version.HTTP_1_1));
        try (Inotify watch = new Inotify(sandbox.uploads(kind))) {
            // As relayd: on each event, read the file at once.
            Thread watcher = new Thread(() -> {
                while (watching.get()) {
                    for (Inotify.Event event : watch.poll()) {
                        seen.add(event);
                        byte[] expected = sent.get(event.name());
                        if (expected != null) {
                            try {
                                byte[] found = Files.readAllBytes(sandbox.uploads(kind).resolve(event.name()));
                                if (!Arrays.equals(found, expected)) {
                                    mismatches.add(event.name() + ": " + found.length + " of " + expected.length);
                                }
                            } catch (IOException e) {
                                mismatches.add(event.name() + ": " + e);
                            }
                        }
                    }
                    try {
                        Thread.sleep(1); // relayd's reader polls its inotify queue; this one does as often
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            });
            watcher.start();
            List<CompletableFuture<HttpResponse<String>>> uploads = new ArrayList<>();
            int i = 0;
            for (Map.Entry<String, byte[]> upload : sent.entrySet()) {
                uploads.add(clients.get(i++ % clients.size()).sendAsync(
                        request(kind.prefix() + upload.getKey(), Sandbox.WEBDAV_PASSWORD)
                                .PUT(HttpRequest.BodyPublishers.ofByteArray(upload.getValue())).build(),
                        HttpResponse.BodyHandlers.ofString()));
            }
            for (CompletableFuture<HttpResponse<String>> upload : uploads) {
                assertThat(upload.get(120, TimeUnit.SECONDS).statusCode()).isEqualTo(201);
            }
            // Every rename has happened; the watcher reads the events still queued.
            Await.until(Duration.ofSeconds(30), "an event for every final name", () -> seenFinal(seen) >= sent.size());
            watching.set(false);
            watcher.join();
        }

        assertThat(mismatches).isEmpty();
        List<String> finalNames = seen.stream().filter(e -> !e.name().startsWith(".")).map(Inotify.Event::name)
                .toList();
        assertThat(finalNames).containsExactlyInAnyOrderElementsOf(sent.keySet());
        // Every final name appeared by a rename, never by a write closed under it.
        assertThat(seen.stream().filter(e -> !e.name().startsWith(".")))
                .allMatch(e -> e.mask() == Inotify.IN_MOVED_TO);
        assertThat(seen.stream().filter(e -> e.name().startsWith(".")))
                .allMatch(e -> e.name().startsWith(UploadStore.TEMP_PREFIX) && e.mask() == Inotify.IN_CLOSE_WRITE);
        assertThat(temporaries(kind)).isEmpty();
    }

    @Test
    void aChangedPasswordFileAppliesAtTheNextReloadAndABrokenOneKeepsThePrevious() throws Exception {
        Sandbox own = Sandbox.create(dir.resolve("reloading"));
        own.uploadsConfig("verify_signatures = false");
        try (TestServer reloading = TestServer.start(own, "[reload]\nwatch = false")) {
            Path file = own.dir().resolve("server/htpasswd-webdav");
            // As an administrator rotates it: htpasswd itself when installed (CI installs it), bcrypt.
            if (available("htpasswd")) {
                Process process = new ProcessBuilder("htpasswd", "-bB", file.toString(), Sandbox.UPLOAD_USER,
                        "rotated").start();
                assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
                assertThat(process.exitValue()).isZero();
                assertThat(Files.readString(file)).contains("rudder:$2y$");
            } else {
                Files.writeString(file, Htpasswd.apr1Line(Sandbox.UPLOAD_USER, "rotated") + "\n");
            }
            HttpClient client = HttpClient.newBuilder()
                    .sslContext(ClientTls.context((KeyManager[]) null, Set.of(own.serverPin()))).build();
            URI base = reloading.uri();
            assertThat(reloading.server().reloader().reload("test").get().result())
                    .isEqualTo(ReloadOutcome.Result.APPLIED);

            assertThat(put(client, base, "/reports/a.log.gz", "rotated").statusCode()).isEqualTo(201);
            assertThat(put(client, base, "/reports/b.log.gz", Sandbox.WEBDAV_PASSWORD).statusCode()).isEqualTo(401);

            Files.writeString(file, "rudder:password-in-clear\n");
            ReloadOutcome broken = reloading.server().reloader().reload("test").get();

            assertThat(broken.result()).isEqualTo(ReloadOutcome.Result.FAILED);
            assertThat(broken.error()).contains("htpasswd-webdav: line 1").doesNotContain("password-in-clear");
            assertThat(put(client, base, "/reports/c.log.gz", "rotated").statusCode()).isEqualTo(201);
        }
    }

    @Test
    void anAddressOutsideTheAllowedNetworksIsRefusedEvenWithTheRightPassword() throws Exception {
        Sandbox own = Sandbox.create(dir.resolve("networks"));
        own.networks("Require ip 127.0.0.1\n");
        try (TestServer restricted = TestServer.start(own)) {
            try (SSLSocket socket = restricted.rawTls(null, "127.0.0.2")) {
                socket.setSoTimeout(10_000);
                socket.getOutputStream().write(("PUT /reports/r.log.gz HTTP/1.1\r\nHost: pintle\r\nAuthorization: "
                        + basic(Sandbox.WEBDAV_PASSWORD) + "\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc")
                        .getBytes(StandardCharsets.US_ASCII));
                String response = RawHttp.readUntilClosed(socket);
                assertThat(RawHttp.status(response)).isEqualTo(403);
                assertThat(response).contains("network-not-allowed");
            }
            assertThat(own.uploads(UploadKind.REPORTS).resolve("r.log.gz")).doesNotExist();
        }
    }

    private static long seenFinal(List<Inotify.Event> seen) {
        synchronized (seen) {
            return seen.stream().filter(e -> !e.name().startsWith(".")).count();
        }
    }

    private static CurlIT.Result curl(String password, String route, Path file) throws Exception {
        // rudder-client without -c: its flags, then --user DAVUSER:DAVPASSWORD, the URL, then the caller's args.
        return CurlIT.curl(List.of("--tlsv1.3", "--location", "--fail", "--connect-timeout", "10", "--noproxy", "*",
                "--insecure", "--pinnedpubkey", sandbox.serverPin(), "--insecure", "--silent", "--show-error",
                "--user", Sandbox.UPLOAD_USER + ":" + password), server.uri() + route, "--upload-file",
                file.toString(), "-o", "/dev/null");
    }

    private static HttpClient client(HttpClient.Version version) throws Exception {
        SSLContext tls = ClientTls.context((KeyManager[]) null, Set.of(sandbox.serverPin()));
        return HttpClient.newBuilder().sslContext(tls).version(version).connectTimeout(Duration.ofSeconds(10)).build();
    }

    private static HttpRequest.Builder request(String path, String password) {
        HttpRequest.Builder builder = HttpRequest.newBuilder(URI.create(server.uri() + path))
                .timeout(Duration.ofSeconds(60));
        return password == null ? builder : builder.header("Authorization", basic(password));
    }

    private static HttpResponse<String> put(String path, String password, byte[] body) throws Exception {
        return send(request(path, password).PUT(HttpRequest.BodyPublishers.ofByteArray(body)).build());
    }

    private static HttpResponse<String> put(HttpClient client, URI base, String path, String password)
            throws Exception {
        return client.send(HttpRequest.newBuilder(URI.create(base + path)).header("Authorization", basic(password))
                .PUT(HttpRequest.BodyPublishers.ofString("report")).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static HttpResponse<String> send(HttpRequest request) throws Exception {
        return http.send(request, HttpResponse.BodyHandlers.ofString());
    }

    private static String raw(String request) throws Exception {
        try (SSLSocket socket = server.rawTls(null)) {
            socket.setSoTimeout(10_000);
            socket.getOutputStream().write(request.getBytes(StandardCharsets.ISO_8859_1));
            return RawHttp.readUntilClosed(socket);
        }
    }

    private static String basic(String password) {
        return "Basic " + Base64.getEncoder().encodeToString((Sandbox.UPLOAD_USER + ":" + password)
                .getBytes(StandardCharsets.UTF_8));
    }

    private static List<String> temporaries(UploadKind kind) {
        try (Stream<Path> entries = Files.list(sandbox.uploads(kind))) {
            return entries.map(p -> p.getFileName().toString()).filter(n -> n.startsWith(UploadStore.TEMP_PREFIX))
                    .toList();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static long status(String kind, String result) {
        try {
            return server.admin("GET", "/v1/status").body().path("uploads").path(kind).path("results").path(result)
                    .asLong();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static boolean available(String program) {
        return Stream.of(System.getenv("PATH").split(":")).anyMatch(d -> Files.isExecutable(Path.of(d, program)));
    }

    private static byte[] random(int size, long seed) {
        byte[] bytes = new byte[size];
        new Random(seed).nextBytes(bytes);
        return bytes;
    }
}
