package io.pintle.server.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.pintle.api.dto.WhoAmI;
import io.pintle.client.FetchResult;
import io.pintle.client.PintleClient;
import io.pintle.client.ProblemException;
import io.pintle.server.testing.NodeKeys;
import io.pintle.server.testing.Sandbox;
import io.pintle.server.testing.TestServer;
import io.pintle.server.tls.SelfSigned;
import java.io.ByteArrayInputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Rudder's node-facing routes over real mutual TLS, with the JDK HttpClient (HTTP/2 by ALPN). */
class PolicyServingIT {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    static Path dir;

    static Sandbox sandbox;
    static TestServer server;
    static NodeKeys linux;
    static NodeKeys ec;
    static NodeKeys certOnly;
    static NodeKeys windows;
    static byte[] archive;
    static byte[] promises;

    @BeforeAll
    static void start() throws Exception {
        sandbox = Sandbox.create(dir);
        linux = sandbox.addNode("linux-a", SelfSigned.KeyType.RSA_2048, Sandbox.Pinning.BOTH);
        ec = sandbox.addNode("linux-ec", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        certOnly = sandbox.addNode("cert-only", SelfSigned.KeyType.RSA_2048, Sandbox.Pinning.CERTIFICATES);
        windows = sandbox.addNode("win-1", SelfSigned.KeyType.RSA_2048, Sandbox.Pinning.BOTH);
        archive = new byte[300_000];
        new Random(42).nextBytes(archive);
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < 400; i++) {
            text.append("bundle agent demo_").append(i).append(" { }\n");
        }
        promises = text.toString().getBytes(StandardCharsets.UTF_8);
        for (NodeKeys node : List.of(linux, ec, certOnly)) {
            sandbox.shareFile(node.name() + "/rules/rudder.tar.bz2", archive);
        }
        sandbox.shareFile("linux-a/rules/cfengine-community/promises.cf", promises);
        Path root = sandbox.shareFile("linux-a/rules/cfengine-community/certs/root.pem",
                Files.readAllBytes(sandbox.server().certificatePath()));
        Files.createSymbolicLink(root.resolveSibling("policy-server.pem"), Path.of("root.pem"));
        Path secret = Files.writeString(dir.resolve("secret.txt"), "outside the share");
        Files.createSymbolicLink(sandbox.share().resolve("linux-a/rules/leak.txt"), secret);
        Files.createSymbolicLink(sandbox.share().resolve("linux-a/rules/neighbour"),
                sandbox.share().resolve("linux-ec"));
        sandbox.shareFile("win-1/rules/dsc/rudder.zip", "PK-demo-zip".getBytes(StandardCharsets.US_ASCII));
        sandbox.shareFile("common/policies-library-linux.tar.bz2", "library".getBytes(StandardCharsets.US_ASCII));
        server = TestServer.start(sandbox);
    }

    @AfterAll
    static void stop() throws Exception {
        server.close();
    }

    @Test
    void knownNodeDownloadsItsPoliciesByteIdenticalThenGets304(@TempDir Path local) throws Exception {
        PintleClient client = server.client(linux);
        Path destination = local.resolve("rudder.tar.bz2");

        FetchResult first = client.fetch("/policies/linux-a/rules/rudder.tar.bz2", destination, null);
        assertThat(first.status()).isEqualTo(200);
        assertThat(first.etag()).matches("\"[0-9a-f]{32}\"");
        assertThat(Files.readAllBytes(destination)).isEqualTo(archive);

        FetchResult second = client.fetch("/policies/linux-a/rules/rudder.tar.bz2", destination, first.etag());
        assertThat(second.status()).isEqualTo(304);
        assertThat(second.etag()).isEqualTo(first.etag());
        assertThat(Files.readAllBytes(destination)).isEqualTo(archive);
    }

    @Test
    void plainDownloadsAreAnsweredOnTheThreadThatReadThem() {
        // Every handler in front of the Jersey applications is non-blocking, the pool keeps no reserved threads
        // and the TLS listener has a selector per core, so Jetty does not hand each request to another thread
        // (bench/perf: a third of a small download's CPU, then half the rate at 64 in flight). A blocking handler
        // added without WorkerDispatch, or Jetty's thread defaults back, would turn this off silently.
        assertThat(server.server().answersOnSelectorThreads()).isTrue();
    }

    @ParameterizedTest
    @ValueSource(strings = {"linux-a", "linux-ec", "cert-only"})
    void rsaAndEcKeysPinnedInNodesListOrCertificatesAuthenticate(String node, @TempDir Path local) throws Exception {
        NodeKeys keys = switch (node) {
            case "linux-a" -> linux;
            case "linux-ec" -> ec;
            default -> certOnly;
        };
        FetchResult result = server.client(keys)
                .fetch("/policies/" + node + "/rules/rudder.tar.bz2", local.resolve("a"), null);
        assertThat(result.status()).isEqualTo(200);
        assertThat(Files.readAllBytes(local.resolve("a"))).isEqualTo(archive);
    }

    @Test
    void anotherNodesPathIsDeniedWithoutRevealingWhetherItExists(@TempDir Path local) throws Exception {
        PintleClient client = server.client(linux);
        ProblemException existing = problem(client, "/policies/linux-ec/rules/rudder.tar.bz2", local);
        ProblemException missing = problem(client, "/policies/linux-ec/rules/no-such-file", local);

        assertThat(existing.problem().status()).isEqualTo(403);
        assertThat(existing.problem().reason()).isEqualTo("uid-mismatch");
        assertThat(existing.problem().detail())
                .isEqualTo("certificate UID linux-a does not match the node linux-ec in the path");
        assertThat(missing.problem().status()).isEqualTo(403);
        assertThat(missing.problem().detail()).isEqualTo(existing.problem().detail());
    }

    @Test
    void sameUidWithAnUnknownKeyIsDenied(@TempDir Path local) throws Exception {
        NodeKeys impostor = sandbox.unregisteredIdentity("impostor", "linux-a");
        ProblemException denied = problem(server.client(impostor), "/policies/linux-a/rules/rudder.tar.bz2", local);
        assertThat(denied.problem().status()).isEqualTo(403);
        assertThat(denied.problem().reason()).isEqualTo("unknown-key");
        assertThat(denied.problem().detail()).contains("key " + impostor.pin() + " ").contains("is not known");
    }

    @Test
    void knownKeyPresentedUnderAnotherUidIsDenied(@TempDir Path local) throws Exception {
        Instant now = Instant.now();
        NodeKeys borrowed = sandbox.identity("borrowed", ec.keyPair(), "linux-a", now.minusSeconds(60),
                now.plus(Duration.ofDays(1)));
        ProblemException denied = problem(server.client(borrowed), "/policies/linux-a/rules/rudder.tar.bz2", local);
        assertThat(denied.problem().status()).isEqualTo(403);
        assertThat(denied.problem().reason()).isEqualTo("key-not-for-uid");
        assertThat(denied.problem().detail()).contains("pinned for node linux-ec").contains("UID linux-a");
    }

    @Test
    void withoutClientCertificatePoliciesAreDeniedButCommonAndUuidAreServed(@TempDir Path local) throws Exception {
        PintleClient anonymous = server.client(null);

        ProblemException denied = problem(anonymous, "/policies/linux-a/rules/rudder.tar.bz2", local);
        assertThat(denied.problem().status()).isEqualTo(403);
        assertThat(denied.problem().reason()).isEqualTo("no-certificate");

        FetchResult common = anonymous.fetch("/common/policies-library-linux.tar.bz2", local.resolve("lib"), null);
        assertThat(common.status()).isEqualTo(200);
        assertThat(Files.readString(local.resolve("lib"))).isEqualTo("library");

        HttpResponse<String> uuid = get(anonymous, "/uuid", HttpResponse.BodyHandlers.ofString());
        assertThat(uuid.statusCode()).isEqualTo(200);
        assertThat(uuid.body()).isEqualTo("root");

        WhoAmI whoami = anonymous.whoami();
        assertThat(whoami.known()).isFalse();
        assertThat(whoami.certificate()).isNull();
        assertThat(whoami.reason()).startsWith("no-certificate");
    }

    @Test
    void expiredCertificateIsDenied(@TempDir Path local) throws Exception {
        Instant now = Instant.now();
        NodeKeys expired = sandbox.identity("expired", "expired-node", now.minus(Duration.ofDays(30)),
                now.minus(Duration.ofDays(1)));
        sandbox.register("expired-node", expired.certificate(), Sandbox.Pinning.BOTH);
        // The registry is read at start; a fresh server sees the new registration.
        try (TestServer fresh = TestServer.start(sandbox)) {
            ProblemException denied =
                    problem(fresh.client(expired), "/policies/expired-node/rules/rudder.tar.bz2", local);
            assertThat(denied.problem().status()).isEqualTo(403);
            assertThat(denied.problem().reason()).isEqualTo("certificate-expired");
            assertThat(denied.problem().detail()).contains("expired on");
        }
    }

    @Test
    void certificateWithoutUidIsDenied(@TempDir Path local) throws Exception {
        Instant now = Instant.now();
        NodeKeys noUid = sandbox.identity("no-uid", null, now.minusSeconds(60), now.plus(Duration.ofDays(1)));
        ProblemException denied = problem(server.client(noUid), "/policies/linux-a/rules/rudder.tar.bz2", local);
        assertThat(denied.problem().status()).isEqualTo(403);
        assertThat(denied.problem().reason()).isEqualTo("certificate-without-uid");
        assertThat(denied.problem().detail()).contains("CN=pintle");
    }

    @Test
    void symlinkInsideTheNodeTreeIsFollowed(@TempDir Path local) throws Exception {
        FetchResult result = server.client(linux)
                .fetch("/policies/linux-a/rules/cfengine-community/certs/policy-server.pem", local.resolve("p"), null);
        assertThat(result.status()).isEqualTo(200);
        assertThat(Files.readAllBytes(local.resolve("p")))
                .isEqualTo(Files.readAllBytes(sandbox.server().certificatePath()));
    }

    @ParameterizedTest
    @ValueSource(strings = {"/policies/linux-a/rules/leak.txt", "/policies/linux-a/rules/neighbour/rules/rudder.tar.bz2"})
    void symlinksLeavingTheNodeTreeLookMissing(String path, @TempDir Path local) throws Exception {
        ProblemException refused = problem(server.client(linux), path, local);
        assertThat(refused.problem().status()).isEqualTo(404);
        assertThat(refused.problem().reason()).isEqualTo("no-such-file");
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "/policies/linux-a/rules/../../linux-ec/rules/rudder.tar.bz2",
        "/policies/linux-a/rules/%2e%2e/%2e%2e/linux-ec/rules/rudder.tar.bz2",
        "/policies/linux-a/rules%2f..%2f..%2flinux-ec%2frules%2frudder.tar.bz2",
        "/policies/linux-a/rules/..%5c..%5clinux-ec/rudder.tar.bz2",
        "/policies/linux-a/rules//rudder.tar.bz2",
        "/common/./policies-library-linux.tar.bz2"
    })
    void traversalAttemptsAreRefusedWithAReason(String path) throws Exception {
        HttpResponse<String> response = get(server.client(linux), path, HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(403);
        assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        assertThat(JSON.readTree(response.body()).path("reason").asText()).isEqualTo("path-rejected");
    }

    @Test
    void headSendsTheSameHeadersAsGetWithoutBody() throws Exception {
        PintleClient client = server.client(linux);
        HttpResponse<byte[]> get = get(client, "/policies/linux-a/rules/rudder.tar.bz2",
                HttpResponse.BodyHandlers.ofByteArray());
        HttpResponse<byte[]> head = client.httpClient().send(
                request(client, "/policies/linux-a/rules/rudder.tar.bz2")
                        .method("HEAD", HttpRequest.BodyPublishers.noBody()).build(),
                HttpResponse.BodyHandlers.ofByteArray());
        assertThat(head.statusCode()).isEqualTo(200);
        assertThat(head.body()).isEmpty();
        for (String header : List.of("etag", "content-length", "last-modified", "content-type", "accept-ranges")) {
            assertThat(head.headers().firstValue(header)).as(header).isPresent()
                    .isEqualTo(get.headers().firstValue(header));
        }
        assertThat(head.headers().firstValue("content-length")).hasValue(String.valueOf(archive.length));
        assertThat(get.headers().firstValue("content-type")).hasValue("application/x-bzip2");
    }

    /**
     * A condition that changes nothing (an {@code If-Modified-Since} long ago, or one that {@code If-None-Match}
     * overrides) gives the same answer as none, header for header, plain or not modified.
     */
    @ParameterizedTest
    @ValueSource(strings = {"/policies/linux-a/rules/rudder.tar.bz2",
            "/policies/linux-a/rules/cfengine-community/promises.cf", "/common/policies-library-linux.tar.bz2"})
    void conditionsThatChangeNothingGiveTheSameAnswer(String path) throws Exception {
        for (HttpClient.Version version : List.of(HttpClient.Version.HTTP_1_1, HttpClient.Version.HTTP_2)) {
            PintleClient client = server.client(linux, version);
            String longAgo = "Thu, 01 Jan 1970 00:00:00 GMT";
            String later = "Fri, 01 Jan 2100 00:00:00 GMT";
            for (String method : List.of("GET", "HEAD")) {
                HttpResponse<byte[]> direct = send(client, path, method, List.of());
                HttpResponse<byte[]> jersey = send(client, path, method, List.of("If-Modified-Since", longAgo));
                assertThat(direct.statusCode()).isEqualTo(200);
                assertSameAnswer(direct, jersey);
                String etag = direct.headers().firstValue("etag").orElseThrow();
                HttpResponse<byte[]> notModified = send(client, path, method, List.of("If-None-Match", etag));
                HttpResponse<byte[]> jerseyNotModified = send(client, path, method,
                        List.of("If-None-Match", etag, "If-Modified-Since", later));
                assertThat(notModified.statusCode()).isEqualTo(304);
                assertSameAnswer(notModified, jerseyNotModified);
                HttpResponse<byte[]> other = send(client, path, method, List.of("If-None-Match", "\"0\", W/" + etag));
                assertThat(other.statusCode()).isEqualTo(304);
                HttpResponse<byte[]> stale = send(client, path, method, List.of("If-None-Match", "\"0\""));
                assertSameAnswer(stale, direct);
            }
        }
    }

    private static HttpResponse<byte[]> send(PintleClient client, String path, String method, List<String> headers)
            throws Exception {
        HttpRequest.Builder builder = request(client, path).method(method, HttpRequest.BodyPublishers.noBody());
        for (int i = 0; i < headers.size(); i += 2) {
            builder.header(headers.get(i), headers.get(i + 1));
        }
        return client.httpClient().send(builder.build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    private static void assertSameAnswer(HttpResponse<byte[]> actual, HttpResponse<byte[]> expected) {
        assertThat(actual.statusCode()).isEqualTo(expected.statusCode());
        assertThat(actual.body()).isEqualTo(expected.body());
        Map<String, List<String>> actualHeaders = new TreeMap<>(actual.headers().map());
        Map<String, List<String>> expectedHeaders = new TreeMap<>(expected.headers().map());
        actualHeaders.remove("date");
        expectedHeaders.remove("date");
        assertThat(actualHeaders).isEqualTo(expectedHeaders);
    }

    @Test
    void singleRangesGive206AndUnsatisfiableOnes416() throws Exception {
        PintleClient client = server.client(linux);
        String path = "/policies/linux-a/rules/rudder.tar.bz2";
        int size = archive.length;

        HttpResponse<byte[]> first = range(client, path, "bytes=0-99", null);
        assertThat(first.statusCode()).isEqualTo(206);
        assertThat(first.headers().firstValue("content-range")).hasValue("bytes 0-99/" + size);
        assertThat(first.body()).isEqualTo(Arrays.copyOfRange(archive, 0, 100));

        HttpResponse<byte[]> suffix = range(client, path, "bytes=-10", null);
        assertThat(suffix.statusCode()).isEqualTo(206);
        assertThat(suffix.body()).isEqualTo(Arrays.copyOfRange(archive, size - 10, size));

        HttpResponse<byte[]> open = range(client, path, "bytes=" + (size - 5) + "-", null);
        assertThat(open.statusCode()).isEqualTo(206);
        assertThat(open.headers().firstValue("content-range"))
                .hasValue("bytes " + (size - 5) + "-" + (size - 1) + "/" + size);
        assertThat(open.body()).isEqualTo(Arrays.copyOfRange(archive, size - 5, size));

        HttpResponse<byte[]> beyond = range(client, path, "bytes=" + size + "-", null);
        assertThat(beyond.statusCode()).isEqualTo(416);
        assertThat(beyond.headers().firstValue("content-range")).hasValue("bytes */" + size);

        HttpResponse<byte[]> staleIfRange = range(client, path, "bytes=0-99", "\"0000\"");
        assertThat(staleIfRange.statusCode()).isEqualTo(200);
        assertThat(staleIfRange.body()).isEqualTo(archive);

        HttpResponse<byte[]> multiple = range(client, path, "bytes=0-1,5-6", null);
        assertThat(multiple.statusCode()).isEqualTo(200);
        assertThat(multiple.body()).isEqualTo(archive);
    }

    @Test
    void textIsGzippedOnRequestButArchivesNever() throws Exception {
        PintleClient client = server.client(linux);
        HttpResponse<byte[]> text = client.httpClient().send(
                request(client, "/policies/linux-a/rules/cfengine-community/promises.cf")
                        .header("Accept-Encoding", "gzip").build(),
                HttpResponse.BodyHandlers.ofByteArray());
        assertThat(text.statusCode()).isEqualTo(200);
        assertThat(text.headers().firstValue("content-encoding")).hasValue("gzip");
        assertThat(text.headers().firstValue("etag")).hasValueSatisfying(tag -> assertThat(tag).endsWith("--gzip\""));
        try (GZIPInputStream gunzip = new GZIPInputStream(new ByteArrayInputStream(text.body()))) {
            assertThat(gunzip.readAllBytes()).isEqualTo(promises);
        }

        // Without Accept-Encoding (Rudder agents' curl): the same text as is, with the file's own ETag, and the
        // Vary that tells caches the representation depends on Accept-Encoding.
        HttpResponse<byte[]> plain = client.httpClient().send(
                request(client, "/policies/linux-a/rules/cfengine-community/promises.cf").build(),
                HttpResponse.BodyHandlers.ofByteArray());
        assertThat(plain.statusCode()).isEqualTo(200);
        assertThat(plain.headers().firstValue("content-encoding")).isEmpty();
        assertThat(plain.headers().firstValue("vary")).hasValue("Accept-Encoding");
        assertThat(plain.headers().firstValue("content-length")).hasValue(String.valueOf(promises.length));
        assertThat(plain.headers().firstValue("etag")).hasValueSatisfying(tag -> assertThat(tag)
                .doesNotContain("--gzip").isEqualTo(text.headers().firstValue("etag").orElseThrow()
                        .replace("--gzip\"", "\"")));
        assertThat(plain.body()).isEqualTo(promises);

        HttpResponse<byte[]> binary = client.httpClient().send(
                request(client, "/policies/linux-a/rules/rudder.tar.bz2").header("Accept-Encoding", "gzip").build(),
                HttpResponse.BodyHandlers.ofByteArray());
        assertThat(binary.headers().firstValue("content-encoding")).isEmpty();
        assertThat(binary.headers().firstValue("content-length")).hasValue(String.valueOf(archive.length));
        assertThat(binary.body()).isEqualTo(archive);
    }

    @Test
    void http2IsNegotiatedAndHttp11StillWorks(@TempDir Path local) throws Exception {
        HttpResponse<byte[]> h2 = get(server.client(linux), "/policies/linux-a/rules/rudder.tar.bz2",
                HttpResponse.BodyHandlers.ofByteArray());
        assertThat(h2.version()).isEqualTo(HttpClient.Version.HTTP_2);
        PintleClient h1 = server.client(linux, HttpClient.Version.HTTP_1_1);
        HttpResponse<byte[]> response = get(h1, "/policies/linux-a/rules/rudder.tar.bz2",
                HttpResponse.BodyHandlers.ofByteArray());
        assertThat(response.version()).isEqualTo(HttpClient.Version.HTTP_1_1);
        assertThat(response.body()).isEqualTo(archive);
    }

    @Test
    void whoamiNamesTheAuthenticatedNode() throws Exception {
        WhoAmI whoami = server.client(ec).whoami();
        assertThat(whoami.serverNodeId()).isEqualTo("root");
        assertThat(whoami.address()).isEqualTo("127.0.0.1");
        assertThat(whoami.allowedNetwork()).isTrue();
        assertThat(whoami.tlsProtocol()).isEqualTo("TLSv1.3");
        assertThat(whoami.known()).isTrue();
        assertThat(whoami.nodeId()).isEqualTo("linux-ec");
        assertThat(whoami.reason()).isNull();
        assertThat(whoami.certificate().uid()).isEqualTo("linux-ec");
        assertThat(whoami.certificate().keyHash()).isEqualTo(ec.pin());
        assertThat(whoami.snapshotGeneration()).isEqualTo(1);
    }

    @Test
    void unknownRoutesAndMethodsAnswerProblemJson() throws Exception {
        PintleClient client = server.client(linux);
        HttpResponse<String> unknown = get(client, "/no/such/route", HttpResponse.BodyHandlers.ofString());
        assertThat(unknown.statusCode()).isEqualTo(404);
        assertThat(unknown.headers().firstValue("content-type")).hasValue("application/problem+json");
        JsonNode problem = JSON.readTree(unknown.body());
        assertThat(problem.path("status").asInt()).isEqualTo(404);
        assertThat(problem.path("instance").asText()).isEqualTo("/no/such/route");

        HttpResponse<String> post = client.httpClient().send(
                request(client, "/uuid").POST(HttpRequest.BodyPublishers.ofString("x")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(post.statusCode()).isEqualTo(405);
        assertThat(post.headers().firstValue("content-type")).hasValue("application/problem+json");
        assertThat(post.headers().firstValue("allow")).hasValueSatisfying(allow -> assertThat(allow).contains("GET"));
    }

    @Test
    void directoriesAndMissingFilesAre404(@TempDir Path local) throws Exception {
        PintleClient client = server.client(linux);
        assertThat(problem(client, "/policies/linux-a/rules/", local).problem().reason()).isEqualTo("directory");
        assertThat(problem(client, "/policies/linux-a/rules/absent", local).problem().reason())
                .isEqualTo("no-such-file");
    }

    @Test
    void tls12IsRefusedByDefault() throws Exception {
        HttpClient tls12 = HttpClient.newBuilder()
                .sslContext(io.pintle.client.ClientTls.context(linux.certificatePath(), linux.keyPath(),
                        java.util.Set.of(sandbox.serverPin())))
                .sslParameters(new javax.net.ssl.SSLParameters(null, new String[] {"TLSv1.2"}))
                .build();
        assertThatThrownBy(() -> tls12.send(HttpRequest.newBuilder(server.uri().resolve("/uuid")).build(),
                        HttpResponse.BodyHandlers.ofString()))
                .isInstanceOf(javax.net.ssl.SSLHandshakeException.class);
    }

    static ProblemException problem(PintleClient client, String path, Path local) {
        Throwable thrown = org.assertj.core.api.Assertions.catchThrowable(
                () -> client.fetch(path, local.resolve("denied"), null));
        assertThat(thrown).isInstanceOf(ProblemException.class);
        assertThat(local.resolve("denied")).doesNotExist();
        return (ProblemException) thrown;
    }

    static HttpRequest.Builder request(PintleClient client, String path) {
        return HttpRequest.newBuilder(URI.create(client.uri("/") + path.substring(1))).timeout(Duration.ofSeconds(30));
    }

    static <T> HttpResponse<T> get(PintleClient client, String path, HttpResponse.BodyHandler<T> handler)
            throws Exception {
        return client.httpClient().send(request(client, path).GET().build(), handler);
    }

    static HttpResponse<byte[]> range(PintleClient client, String path, String range, String ifRange)
            throws Exception {
        HttpRequest.Builder request = request(client, path).header("Range", range);
        if (ifRange != null) {
            request.header("If-Range", ifRange);
        }
        return client.httpClient().send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
    }
}
