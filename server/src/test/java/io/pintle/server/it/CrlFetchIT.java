package io.pintle.server.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import io.pintle.client.ClientTls;
import io.pintle.client.PintleClient;
import io.pintle.client.ProblemException;
import io.pintle.server.Bootstrap;
import io.pintle.server.PintleServer;
import io.pintle.server.config.ConfigLoader;
import io.pintle.server.config.ServerConfig;
import io.pintle.server.testing.Await;
import io.pintle.server.testing.Sandbox;
import io.pintle.server.tls.CertificateAuthority;
import io.pintle.server.tls.SelfSigned;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.math.BigInteger;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.cert.X509CRL;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code [nodes] crl_url}: a CA-mode server fetches its CA's CRL from a loopback HTTP server, and a revocation
 * published there refuses the node's next request, on the connection it already holds; a CA server that fails or
 * lies changes nothing.
 */
class CrlFetchIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String NODE = "node-ca";
    private static final String FILE = "/policies/" + NODE + "/rules/rudder.tar.bz2";
    /**
     * The configuration file takes 60 s at least ({@code crl_refresh_seconds}); the record takes any period, so the
     * test shortens it on the configuration read, at start and at every reload.
     */
    private static final Duration REFRESH = Duration.ofMillis(200);
    private static final Duration DEADLINE = Duration.ofSeconds(20);

    /** A CA's web server: whatever CRL bytes and status the test sets. */
    private static final class CrlServer implements AutoCloseable {
        final AtomicReference<byte[]> body = new AtomicReference<>();
        final AtomicInteger status = new AtomicInteger(200);
        final AtomicInteger requests = new AtomicInteger();
        final HttpServer server;
        private boolean stopped;

        CrlServer() throws IOException {
            server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
            server.createContext("/ca.crl", exchange -> {
                requests.incrementAndGet();
                byte[] content = status.get() == 200 ? body.get() : "CA down for maintenance".getBytes(
                        StandardCharsets.US_ASCII);
                exchange.sendResponseHeaders(status.get(), content.length);
                try (OutputStream out = exchange.getResponseBody()) {
                    out.write(content);
                }
            });
            // Elsewhere on another scheme: never followed.
            server.createContext("/elsewhere", exchange -> {
                exchange.getResponseHeaders().add("Location", "https://127.0.0.1:" + server.getAddress().getPort()
                        + "/ca.crl");
                exchange.sendResponseHeaders(302, -1);
                exchange.close();
            });
            // Larger than any CRL, and sent without a length: the download stops at the bound.
            server.createContext("/huge", exchange -> {
                exchange.sendResponseHeaders(200, 0);
                byte[] chunk = new byte[1024 * 1024];
                try (OutputStream out = exchange.getResponseBody()) {
                    for (int i = 0; i < 40; i++) {
                        out.write(chunk);
                    }
                } catch (IOException e) {
                    // The client stopped reading, as it should.
                }
            });
            server.start();
        }

        String url() {
            return "http://127.0.0.1:" + server.getAddress().getPort() + "/ca.crl";
        }

        @Override
        public synchronized void close() {
            if (!stopped) {
                stopped = true;
                server.stop(0);
            }
        }
    }

    @Test
    void aRevocationFetchedFromTheCaRefusesTheNextRequestOnTheOpenConnectionAndFailuresKeepIt(@TempDir Path dir)
            throws Exception {
        Sandbox sandbox = Sandbox.create(dir);
        CertificateAuthority ca = CertificateAuthority.root(SelfSigned.KeyType.EC_P256, "Fleet CA", Duration.ofDays(2));
        // A second CA of the bundle, whose own (valid, empty) list must not replace the fleet CA's.
        CertificateAuthority other = CertificateAuthority.root(SelfSigned.KeyType.EC_P256, "Other CA", Duration.ofDays(2));
        SelfSigned.writeCertificates(dir.resolve("lib/ca.pem"), ca.certificate(), other.certificate());
        KeyPair pair = SelfSigned.keyPair(SelfSigned.KeyType.EC_P256);
        X509Certificate certificate = ca.issue(pair.getPublic(), CertificateAuthority.subject(NODE, null), List.of());
        Path home = Files.createDirectories(dir.resolve("nodes/" + NODE));
        SelfSigned.writeCertificates(home.resolve("agent-http.cert"), certificate);
        SelfSigned.writePrivateKey(home.resolve("agent-http.key"), pair.getPrivate(), false);
        sandbox.register(NODE, certificate, Sandbox.Pinning.BOTH);
        sandbox.shareFile(NODE + "/rules/rudder.tar.bz2", new byte[] {4, 2});
        Files.createDirectories(dir.resolve("state"));
        Path fetched = dir.resolve("state/fetched.crl");

        Instant now = Instant.now();
        X509CRL empty = ca.crl(List.of(), now.minus(Duration.ofMinutes(10)), now.plus(Duration.ofDays(1)));
        X509CRL revoking = ca.crl(List.of(certificate.getSerialNumber()), now.minus(Duration.ofMinutes(5)),
                now.plus(Duration.ofDays(1)));

        try (CrlServer crls = new CrlServer()) {
            crls.body.set(empty.getEncoded());
            // No file watch: the fetch itself asks for the reload that applies what it kept.
            Path config = caModeConfig(sandbox, "crl_url = \"" + crls.url() + "\"\n"
                    + "crl_fetch_file = \"state/fetched.crl\"\n", "[reload]\nwatch = false\n");
            assertThat(fetched).doesNotExist();
            try (PintleServer server = Bootstrap.build(fast(ConfigLoader.load(config)),
                    () -> fast(ConfigLoader.load(config)))) {
                server.start();
                // Nothing fetched yet is not an error: the server serves, and fetches at once (DER here).
                JsonNode status = awaitStatus(server, s -> !fetch(s).path("last_success").isNull());
                assertThat(fetch(status).path("url").asText()).isEqualTo(crls.url());
                assertThat(fetch(status).path("last_error").isNull()).isTrue();
                assertThat(status.path("trust").path("modes").toString()).isEqualTo("[\"cert_validation\"]");
                assertThat(status.path("trust").path("ca_file").asText()).isEqualTo(dir.resolve("lib/ca.pem").toString());
                JsonNode crl = status.path("trust").path("crls").path(0);
                assertThat(crl.path("file").asText()).isEqualTo(fetched.toString());
                assertThat(crl.path("issuer").asText()).isEqualTo("CN=Fleet CA");
                assertThat(crl.path("entries").asInt()).isZero();
                assertThat(crl.path("this_update").asText()).isEqualTo(empty.getThisUpdate().toInstant().toString());
                assertThat(crl.path("age_seconds").asLong()).isBetween(590L, 700L);
                assertThat(crl.path("stale").asBoolean()).isFalse();
                assertThat(Files.readAllBytes(fetched)).isEqualTo(empty.getEncoded());

                try (SSLSocket connection = connect(server, sandbox, home)) {
                    assertThat(get(connection).status()).isEqualTo(200);

                    // The CA publishes the revocation (PEM this time): the next fetch keeps it and reloads.
                    crls.body.set(pem(revoking));
                    status = awaitStatus(server, s -> s.path("trust").path("crls").path(0).path("entries").asInt() == 1);
                    assertThat(fetch(status).path("last_error").isNull()).isTrue();

                    // Same connection, next request: refused by the live snapshot.
                    Answer refused = get(connection);
                    assertThat(refused.status()).isEqualTo(403);
                    assertThat(JSON.readTree(refused.body()).path("reason").asText()).isEqualTo("revoked");
                }
                assertThat(reason(server, sandbox, home, dir)).isEqualTo("revoked");
                byte[] kept = Files.readAllBytes(fetched);

                // The CA's server fails: the last good list stays, and status says why.
                crls.status.set(500);
                status = awaitStatus(server, s -> fetch(s).path("last_error").asText().contains("HTTP 500"));
                assertThat(status.path("trust").path("crls").path(0).path("entries").asInt()).isEqualTo(1);
                assertThat(reason(server, sandbox, home, dir)).isEqualTo("revoked");
                assertThat(Files.readAllBytes(fetched)).isEqualTo(kept);

                // A list signed by another CA of the same name is not kept.
                CertificateAuthority impostor =
                        CertificateAuthority.root(SelfSigned.KeyType.EC_P256, "Fleet CA", Duration.ofDays(2));
                crls.body.set(impostor.crl(List.of()).getEncoded());
                crls.status.set(200);
                status = awaitStatus(server, s -> fetch(s).path("last_error").asText().contains("not signed"));
                assertThat(fetch(status).path("last_error").asText()).startsWith("not kept: ");
                assertThat(Files.readAllBytes(fetched)).isEqualTo(kept);

                // The CA's own earlier list, replayed, would undo the revocation: not kept either.
                crls.body.set(empty.getEncoded());
                status = awaitStatus(server, s -> fetch(s).path("last_error").asText().contains("before the one"));
                assertThat(Files.readAllBytes(fetched)).isEqualTo(kept);
                assertThat(reason(server, sandbox, home, dir)).isEqualTo("revoked");

                // Another CA's valid list in its place would drop the fleet CA's revocations: not kept.
                crls.body.set(other.crl(List.of()).getEncoded());
                status = awaitStatus(server, s -> fetch(s).path("last_error").asText().contains("holds no CRL of"));
                assertThat(Files.readAllBytes(fetched)).isEqualTo(kept);
                assertThat(reason(server, sandbox, home, dir)).isEqualTo("revoked");

                // Nobody listens any more.
                crls.close();
                status = awaitStatus(server, s -> fetch(s).path("last_error").asText().contains("refused"));
                assertThat(status.path("trust").path("crls").path(0).path("entries").asInt()).isEqualTo(1);
                assertThat(reason(server, sandbox, home, dir)).isEqualTo("revoked");
                String metrics = admin(server, "/metrics");
                assertThat(metrics).containsPattern("(?m)^pintle_crl_age_seconds \\d");
                assertThat(metrics).containsPattern("(?m)^pintle_crl_fetch_failures_total [1-9]");
            }
        }
    }

    @Test
    void aRedirectToAnotherSchemeOrAnOversizedAnswerIsRefusedAndAReloadedUrlIsFetchedAtOnce(@TempDir Path dir)
            throws Exception {
        Sandbox sandbox = Sandbox.create(dir);
        CertificateAuthority ca = CertificateAuthority.root(SelfSigned.KeyType.EC_P256, "Fleet CA", Duration.ofDays(2));
        SelfSigned.writeCertificates(dir.resolve("lib/ca.pem"), ca.certificate());
        Files.createDirectories(dir.resolve("state"));
        try (CrlServer crls = new CrlServer()) {
            crls.body.set(ca.crl(List.of(BigInteger.TWO)).getEncoded());
            String base = crls.url().replace("/ca.crl", "");
            String keep = "crl_fetch_file = \"state/fetched.crl\"\n";
            Path config = caModeConfig(sandbox, "crl_url = \"" + base + "/elsewhere\"\n" + keep, "");
            // The refresh stays an hour here: every fetch after the first comes from a reload changing the URL.
            try (PintleServer server = Bootstrap.build(ConfigLoader.load(config))) {
                server.start();
                JsonNode status = awaitStatus(server, s -> !fetch(s).path("last_error").isNull());
                assertThat(fetch(status).path("last_error").asText()).contains("another scheme", "not followed");
                assertThat(fetch(status).path("last_success").isNull()).isTrue();
                assertThat(status.path("trust").path("crls").size()).isZero();

                caModeConfig(sandbox, "crl_url = \"" + base + "/huge\"\n" + keep, "");
                server.reloader().reload("test").get();
                status = awaitStatus(server, s -> fetch(s).path("url").asText().endsWith("/huge")
                        && !fetch(s).path("last_error").isNull());
                assertThat(fetch(status).path("last_error").asText()).contains("larger than 32 MiB");
                assertThat(dir.resolve("state/fetched.crl")).doesNotExist();

                caModeConfig(sandbox, "crl_url = \"" + crls.url() + "\"\n" + keep, "");
                server.reloader().reload("test").get();
                status = awaitStatus(server, s -> s.path("trust").path("crls").size() == 1);
                assertThat(fetch(status).path("last_error").isNull()).isTrue();
                assertThat(status.path("trust").path("crls").path(0).path("entries").asInt()).isEqualTo(1);
            }
        }
    }

    @Test
    void withoutAUrlStatusShowsTheTrustInForceAndNoFetch(@TempDir Path dir) throws Exception {
        Sandbox sandbox = Sandbox.create(dir);
        CertificateAuthority ca = CertificateAuthority.root(SelfSigned.KeyType.EC_P256, "Fleet CA", Duration.ofDays(2));
        SelfSigned.writeCertificates(dir.resolve("lib/ca.pem"), ca.certificate());
        Instant now = Instant.now();
        CertificateAuthority.writeCrls(dir.resolve("lib/ca.crl"), ca.crl(List.of(BigInteger.TEN),
                now.minus(Duration.ofDays(2)), now.minus(Duration.ofDays(1))));
        Path config = caModeConfig(sandbox, "crl_files = [\"lib/ca.crl\"]\n", "");
        try (PintleServer server = Bootstrap.build(ConfigLoader.load(config))) {
            server.start();
            JsonNode trust = JSON.readTree(admin(server, "/v1/status")).path("trust");
            assertThat(trust.has("crl_fetch")).isFalse();
            assertThat(trust.path("denied_keys").asInt()).isZero();
            assertThat(trust.has("denied_keys_file")).isTrue();
            JsonNode crl = trust.path("crls").path(0);
            assertThat(crl.path("file").asText()).isEqualTo(dir.resolve("lib/ca.crl").toString());
            assertThat(crl.path("entries").asInt()).isEqualTo(1);
            assertThat(crl.path("stale").asBoolean()).as("next update a day ago").isTrue();
            assertThat(crl.path("age_seconds").asLong()).isGreaterThanOrEqualTo(Duration.ofDays(2).toSeconds());
        }
    }

    /** The sandbox's configuration in certificate-validation mode, with more {@code [nodes]} keys and tables. */
    private static Path caModeConfig(Sandbox sandbox, String nodesKeys, String tables) throws IOException {
        Path config = sandbox.config("");
        String text = Files.readString(config).replace("[nodes]\n", "[nodes]\nauthentication = [\"cert_validation\"]\n"
                + "ca_file = \"lib/ca.pem\"\n" + nodesKeys);
        Files.writeString(config, text + tables);
        return config;
    }

    private static ServerConfig fast(ServerConfig c) {
        ServerConfig.Nodes n = c.nodes();
        return new ServerConfig(c.source(), c.general(), c.tls(), new ServerConfig.Nodes(n.list(), n.certificates(),
                n.authentication(), n.caFile(), n.caMaxDepth(), n.idRules(), n.crlFiles(), n.deniedKeysFile(),
                n.deniedKeysFileRequired(), n.crlUrl(), n.crlFetchFile(), REFRESH), c.networks(), c.paths(), c.admin(),
                c.reload(), c.log(), c.limits(), c.upstream(), c.remoteRun(), c.uploads(), c.webapp(), c.cfengine(), c.delivery());
    }

    private static JsonNode fetch(JsonNode status) {
        return status.path("trust").path("crl_fetch");
    }

    private static JsonNode awaitStatus(PintleServer server, Predicate<JsonNode> condition) throws Exception {
        JsonNode[] status = {null};
        Await.until(DEADLINE, () -> "the expected state; the status is " + status[0].path("trust"),
                () -> condition.test(status[0] = JSON.readTree(admin(server, "/v1/status"))));
        return status[0];
    }

    private static String admin(PintleServer server, String path) throws Exception {
        HttpClient client = HttpClient.newHttpClient();
        HttpResponse<String> response = client.send(HttpRequest.newBuilder(URI.create(server.adminUri() + path))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(200);
        return response.body();
    }

    /** A new connection, through the Java client: the refusal's reason. */
    private static String reason(PintleServer server, Sandbox sandbox, Path home, Path dir) throws Exception {
        PintleClient client = PintleClient.builder(server.uri()).pin(sandbox.serverPin())
                .identity(home.resolve("agent-http.cert"), home.resolve("agent-http.key")).build();
        ProblemException problem = PolicyServingIT.problem(client, FILE, dir);
        assertThat(problem.problem().status()).isEqualTo(403);
        return problem.problem().reason();
    }

    private static SSLSocket connect(PintleServer server, Sandbox sandbox, Path home) throws Exception {
        SSLSocket socket = (SSLSocket) ClientTls.context(home.resolve("agent-http.cert"),
                home.resolve("agent-http.key"), Set.of(sandbox.serverPin())).getSocketFactory()
                .createSocket("127.0.0.1", server.port());
        socket.setSoTimeout(10_000);
        socket.startHandshake();
        return socket;
    }

    private record Answer(int status, byte[] body) {}

    /** One HTTP/1.1 request on a kept-alive connection; the answer read whole (Content-Length or chunked). */
    private static Answer get(SSLSocket socket) throws IOException {
        OutputStream out = socket.getOutputStream();
        out.write(("GET " + FILE + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        out.flush();
        InputStream in = socket.getInputStream();
        String head = line(in);
        int status = Integer.parseInt(head.split(" ")[1]);
        long length = -1;
        boolean chunked = false;
        for (String header = line(in); !header.isEmpty(); header = line(in)) {
            String lower = header.toLowerCase(java.util.Locale.ROOT);
            if (lower.startsWith("content-length:")) {
                length = Long.parseLong(lower.substring(15).strip());
            } else if (lower.startsWith("transfer-encoding:") && lower.contains("chunked")) {
                chunked = true;
            }
        }
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        if (chunked) {
            for (int size = Integer.parseInt(line(in).strip(), 16); size > 0;
                    size = Integer.parseInt(line(in).strip(), 16)) {
                body.write(in.readNBytes(size));
                line(in);
            }
            line(in);
        } else if (length > 0) {
            body.write(in.readNBytes((int) length));
        }
        return new Answer(status, body.toByteArray());
    }

    private static String line(InputStream in) throws IOException {
        StringBuilder text = new StringBuilder();
        for (int c = in.read(); c != '\n'; c = in.read()) {
            if (c < 0) {
                throw new IOException("connection closed mid-answer");
            }
            if (c != '\r') {
                text.append((char) c);
            }
        }
        return text.toString();
    }

    private static byte[] pem(X509CRL crl) throws Exception {
        return ("-----BEGIN X509 CRL-----\n" + java.util.Base64.getMimeEncoder(64, new byte[] {'\n'})
                .encodeToString(crl.getEncoded()) + "\n-----END X509 CRL-----\n").getBytes(StandardCharsets.US_ASCII);
    }
}
