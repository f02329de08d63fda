package io.pintle.server.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.pintle.client.ClientTls;
import io.pintle.server.Bootstrap;
import io.pintle.server.config.ConfigLoader;
import io.pintle.server.http.edge.HttpServerFactory;
import io.pintle.server.reload.SnapshotException;
import io.pintle.server.testing.Await;
import io.pintle.server.testing.LogCapture;
import io.pintle.server.testing.NodeKeys;
import io.pintle.server.testing.RawHttp;
import io.pintle.server.testing.Sandbox;
import io.pintle.server.testing.TestServer;
import io.pintle.server.tls.SelfSigned;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.math.BigInteger;
import java.security.KeyPair;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.SSLSocket;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x500.X500NameBuilder;
import org.bouncycastle.asn1.x500.style.BCStyle;
import org.bouncycastle.cert.X509CertificateHolder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpURI;
import org.eclipse.jetty.http.HttpVersion;
import org.eclipse.jetty.http.MetaData;
import org.eclipse.jetty.http2.ErrorCode;
import org.eclipse.jetty.http2.api.Session;
import org.eclipse.jetty.http2.api.Stream;
import org.eclipse.jetty.http2.client.HTTP2Client;
import org.eclipse.jetty.http2.frames.HeadersFrame;
import org.eclipse.jetty.http2.frames.ResetFrame;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.ssl.SslContextFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Hostile clients against the real server (issue 8): each attack must be refused with a clear status and a log
 * line, the server must stay up and responsive, and no other node's data, no file outside the share and no
 * private key may ever come back. Attacks are sent raw where a well-behaved client would normalise them.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class AttackSuiteIT {
    /** What only the victim node may read. */
    /** How long a log line or a cleanup written after the response may take to show. */
    private static final Duration SETTLES = Duration.ofSeconds(5);
    private static final String VICTIM_SECRET = "victim-only-" + UUID.randomUUID();
    /** A file outside the share. */
    private static final String OUTSIDE_SECRET = "outside-the-share-" + UUID.randomUUID();

    @TempDir
    static Path dir;

    static Sandbox sandbox;
    static TestServer server;
    static NodeKeys attacker;
    static NodeKeys victim;
    static Path outside;
    static ListAppender<ILoggingEvent> logs;
    static ListAppender<ILoggingEvent> accessLog;

    @BeforeAll
    static void start() throws Exception {
        logs = LogCapture.attach(Logger.ROOT_LOGGER_NAME);
        accessLog = LogCapture.attach("io.pintle.access");
        sandbox = Sandbox.create(dir);
        attacker = sandbox.addNode("node-a", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        victim = sandbox.addNode("node-v", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        sandbox.shareFile("node-a/rules/rudder.tar.bz2", "attacker's own".getBytes(StandardCharsets.US_ASCII));
        sandbox.shareFile("node-v/rules/secret.txt", VICTIM_SECRET.getBytes(StandardCharsets.US_ASCII));
        sandbox.shareFile("common/library.txt", "common".getBytes(StandardCharsets.US_ASCII));
        outside = Files.writeString(dir.resolve("outside.txt"), OUTSIDE_SECRET);
        server = TestServer.start(sandbox);
    }

    @AfterAll
    static void stop() {
        server.close();
        LogCapture.detach(Logger.ROOT_LOGGER_NAME, logs);
        LogCapture.detach("io.pintle.access", accessLog);
    }

    /**
     * Sends bytes as they are over TLS with the attacker's certificate and reads until the server closes. The answer
     * is read while the request is written: a server that answers an oversized request and closes with part of it
     * unread resets the connection, and the reset discards whatever the client had not read yet (seen under load:
     * a 431 lost, an empty answer).
     */
    private static String raw(NodeKeys identity, String request) throws Exception {
        try (SSLSocket socket = server.rawTls(identity)) {
            socket.setSoTimeout(5_000);
            java.util.concurrent.FutureTask<String> answer = new java.util.concurrent.FutureTask<>(
                    () -> RawHttp.readUntilClosed(socket));
            Thread reader = new Thread(answer, "attack-suite-reader");
            reader.setDaemon(true);
            reader.start();
            OutputStream out = socket.getOutputStream();
            try {
                out.write(request.getBytes(StandardCharsets.ISO_8859_1));
                out.flush();
            } catch (java.net.SocketException closedEarly) {
                // The server answered and closed before reading all of an oversized request: its answer is read.
            }
            return answer.get(30, java.util.concurrent.TimeUnit.SECONDS);
        }
    }

    private static String get(String target) throws Exception {
        return raw(attacker, "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    }

    private static int status(String response) {
        return RawHttp.status(response);
    }

    private static void assertNoSecret(String response) {
        assertThat(response).doesNotContain(VICTIM_SECRET).doesNotContain(OUTSIDE_SECRET)
                .doesNotContain("PRIVATE KEY");
    }

    /** @return the access log lines logged so far that mention the text */
    private static List<String> accessLines(String text) {
        List<String> lines = new ArrayList<>();
        for (ILoggingEvent event : List.copyOf(accessLog.list)) {
            if (event.getFormattedMessage().contains(text)) {
                lines.add(event.getFormattedMessage());
            }
        }
        return lines;
    }

    /** The server still serves a node and its admin listener after an attack. */
    private static void assertStillServing() throws Exception {
        String response = get("/policies/node-a/rules/rudder.tar.bz2");
        assertThat(status(response)).isEqualTo(200);
        assertThat(response).endsWith("attacker's own");
        assertThat(server.adminText("/health").statusCode()).isEqualTo(200);
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "/policies/node-a/rules/../../node-v/rules/secret.txt",
        "/policies/node-a/rules/%2e%2e/%2e%2e/node-v/rules/secret.txt",
        "/policies/node-a/rules/%2E%2E/%2E%2E/node-v/rules/secret.txt",
        "/policies/node-a/rules/.%2e/.%2e/node-v/rules/secret.txt",
        "/policies/node-a/rules/%252e%252e/%252e%252e/node-v/rules/secret.txt",
        "/policies/node-a/rules%2f..%2f..%2fnode-v%2frules%2fsecret.txt",
        "/policies/node-a/rules/%2e%2e%2f%2e%2e%2fnode-v/rules/secret.txt",
        "/policies/node-a/rules/..%5c..%5cnode-v%5crules%5csecret.txt",
        "/policies/node-a/rules/..\\..\\node-v\\rules\\secret.txt",
        "/policies/node-a/rules/%c0%ae%c0%ae/%c0%ae%c0%ae/node-v/rules/secret.txt",
        "/policies/node-a/rules/%e0%80%ae%e0%80%ae/node-v/rules/secret.txt",
        "/policies/node-a/rules/%00/../../node-v/rules/secret.txt",
        "/policies/node-a/rules/rudder.tar.bz2%00.txt",
        "/policies/node-a/rules/..;/..;/node-v/rules/secret.txt",
        "/policies/node-a/rules;/../../node-v/rules/secret.txt",
        "/policies/node-a//../node-v/rules/secret.txt",
        "//policies/node-v/rules/secret.txt",
        "/policies/node-v/rules/secret.txt",
        "/policies/NODE-V/rules/secret.txt",
        "/common/../policies/node-v/rules/secret.txt",
        "/common/%2e%2e/policies/node-v/rules/secret.txt",
        "/policies/node-a/rules/../../../outside.txt",
        "/policies/node-a/rules/%2e%2e/%2e%2e/%2e%2e/outside.txt",
        "/policies/node-a/rules/../../../keys/server.key",
    })
    void traversalInEveryEncodingIsRefusedWithAReasonAndALogLine(String target) throws Exception {
        String response = get(target);

        int status = status(response);
        assertThat(status).as("%s -> %s", target, response).isIn(400, 403, 404);
        assertThat(response).contains("Content-Type: application/problem+json");
        assertNoSecret(response);
        // One access-log line per refusal, with its status (and the refusal's reason when Pintle decided it).
        Await.asserted(SETTLES, () -> assertThat(accessLines(" " + status + " ")).isNotEmpty());
    }

    @Test
    void aSymlinkSwappedInDuringRequestsNeverServesWhatIsOutside() throws Exception {
        Path file = sandbox.shareFile("node-a/rules/race.txt", "inside".getBytes(StandardCharsets.US_ASCII));
        Path inside = Files.writeString(dir.resolve("race-inside.txt"), "inside");
        AtomicBoolean running = new AtomicBoolean(true);
        AtomicInteger swaps = new AtomicInteger();
        Thread swapper = new Thread(() -> {
            try {
                while (running.get()) {
                    Path link = file.resolveSibling("race.link");
                    Files.deleteIfExists(link);
                    Files.createSymbolicLink(link, outside);
                    Files.move(link, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                    Thread.sleep(0, 200_000); // the race under test: each state held a moment for requests to hit
                    Path copy = file.resolveSibling("race.copy");
                    Files.copy(inside, copy, StandardCopyOption.REPLACE_EXISTING);
                    Files.move(copy, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                    Thread.sleep(0, 200_000); // the inside state held as long
                    swaps.incrementAndGet();
                }
            } catch (IOException e) {
                throw new IllegalStateException(e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "symlink-swapper");
        swapper.start();
        int served = 0;
        int missing = 0;
        int retry = 0;
        HttpClient client = server.client(attacker).httpClient();
        try {
            // At least 2 s and 100 requests, until both sides of the swap were seen (at most 15 s).
            long start = System.nanoTime();
            int requests = 0;
            while (System.nanoTime() - start < TimeUnit.SECONDS.toNanos(15)
                    && (System.nanoTime() - start < TimeUnit.SECONDS.toNanos(2) || requests < 100 || served == 0
                            || missing == 0)) {
                requests++;
                HttpResponse<String> response = client.send(HttpRequest.newBuilder(
                        server.uri().resolve("/policies/node-a/rules/race.txt")).build(),
                        HttpResponse.BodyHandlers.ofString());
                assertThat(response.body()).doesNotContain(OUTSIDE_SECRET);
                if (response.statusCode() == 200) {
                    assertThat(response.body()).isEqualTo("inside");
                    served++;
                } else if (response.statusCode() == 503) {
                    // Replaced between the server's stat and its open: "retry", never the other file.
                    assertThat(response.headers().firstValue("Retry-After")).hasValue("1");
                    assertThat(response.body()).contains("file-changed");
                    retry++;
                } else {
                    assertThat(response.statusCode()).isEqualTo(404);
                    missing++;
                }
            }
        } finally {
            running.set(false);
            swapper.join();
        }
        assertThat(swaps.get()).as("the swap really raced the requests").isGreaterThan(10);
        assertThat(served).as("the regular file was served between swaps").isPositive();
        assertThat(missing).as("the link out was refused as missing").isPositive();
        assertThat(retry).as("at most a few requests hit the swap between stat and open").isLessThan(served + missing);
    }

    /** Writes an identity whose subject is given as is, for example with two UIDs. */
    private static NodeKeys identity(String name, KeyPair pair, X500Name subject) throws IOException {
        Instant now = Instant.now();
        X509Certificate certificate = SelfSigned.certificate(pair, subject, now.minus(Duration.ofHours(1)),
                now.plus(Duration.ofDays(1)));
        Path home = Files.createDirectories(dir.resolve("spoof/" + name));
        Path cert = home.resolve("agent.cert");
        Path key = home.resolve("localhost.priv");
        SelfSigned.writeCertificates(cert, certificate);
        SelfSigned.writePrivateKey(key, pair.getPrivate(), false);
        return new NodeKeys(name, cert, key, certificate, pair);
    }

    private static X500Name subject(String... uids) {
        X500NameBuilder builder = new X500NameBuilder(BCStyle.INSTANCE);
        for (String uid : uids) {
            builder.addRDN(BCStyle.UID, uid);
        }
        return builder.build();
    }

    @Test
    void uidSpoofingNeverReachesAnotherNodesPolicies() throws Exception {
        String victimFile = "GET /policies/node-v/rules/secret.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
        // Two UIDs, the victim's and the attacker's own (pinned) key's, in either order: no single node, no node.
        NodeKeys victimFirst = identity("victim-first", attacker.keyPair(), subject("node-v", "node-a"));
        String first = raw(victimFirst, victimFile);
        assertThat(status(first)).isEqualTo(403);
        assertThat(first).contains("invalid-uid").contains("names no single node");
        NodeKeys attackerFirst = identity("attacker-first", attacker.keyPair(), subject("node-a", "node-v"));
        String second = raw(attackerFirst, victimFile);
        assertThat(status(second)).isEqualTo(403);
        assertThat(second).contains("invalid-uid").contains("names no single node");
        // The victim's UID in the common name only, not as UID.
        X500Name commonName = new X500NameBuilder(BCStyle.INSTANCE).addRDN(BCStyle.CN, "node-v").build();
        String third = raw(identity("cn-only", attacker.keyPair(), commonName), victimFile);
        assertThat(status(third)).isEqualTo(403);
        assertThat(third).contains("certificate-without-uid");
        // The victim's UID with a fresh key of the attacker's.
        NodeKeys freshKey = sandbox.unregisteredIdentity("fresh-key", "node-v");
        String fourth = raw(freshKey, victimFile);
        assertThat(status(fourth)).isEqualTo(403);
        assertThat(fourth).contains("unknown-key");
        for (String response : List.of(first, second, third, fourth)) {
            assertNoSecret(response);
        }
        assertStillServing();
    }

    @Test
    void certificatesNotYetValidOrWithAnOverlongChainAreRefused() throws Exception {
        Instant now = Instant.now();
        NodeKeys future = sandbox.identity("future", attacker.keyPair(), "node-a", now.plus(Duration.ofDays(1)),
                now.plus(Duration.ofDays(2)));
        String response = raw(future, "GET /policies/node-a/rules/rudder.tar.bz2 HTTP/1.1\r\nHost: x\r\n"
                + "Connection: close\r\n\r\n");
        assertThat(status(response)).isEqualTo(403);
        assertThat(response).contains("certificate-not-yet-valid");

        // A chain of 12 linked certificates (at most 10 are accepted from a client): refused in the handshake.
        List<X509Certificate> chain = linkedChain(attacker.keyPair(), "node-a", 12);
        Path home = Files.createDirectories(dir.resolve("long-chain"));
        SelfSigned.writeCertificates(home.resolve("agent.cert"), chain.toArray(X509Certificate[]::new));
        SelfSigned.writePrivateKey(home.resolve("localhost.priv"), attacker.keyPair().getPrivate(), false);
        NodeKeys longChain = new NodeKeys("long-chain", home.resolve("agent.cert"), home.resolve("localhost.priv"),
                chain.get(0), attacker.keyPair());
        String refused;
        try {
            refused = raw(longChain, "GET /policies/node-a/rules/rudder.tar.bz2 HTTP/1.1\r\nHost: x\r\n"
                    + "Connection: close\r\n\r\n");
        } catch (IOException handshakeRefused) {
            refused = handshakeRefused.toString();
        }
        // Measured: the server closes the connection without a response (Pintle's limit on client chains, the
        // JDK's own: 10; Conscrypt has none of its own).
        assertThat(refused).satisfiesAnyOf(
                answer -> assertThat(answer).isEmpty(),
                answer -> assertThat(answer).contains("Exception"),
                answer -> assertThat(answer).startsWith("HTTP/1.1 4"));
        assertThat(refused).doesNotContain("attacker's own");
        assertStillServing();
    }

    /** @return a leaf {@code UID=<uid>} with the given key, then {@code length - 1} CAs up to a self-signed root */
    private static List<X509Certificate> linkedChain(KeyPair leaf, String uid, int length) throws Exception {
        Instant now = Instant.now();
        Date notBefore = Date.from(now.minus(Duration.ofHours(1)));
        Date notAfter = Date.from(now.plus(Duration.ofDays(1)));
        KeyPair issuerKeys = SelfSigned.keyPair(SelfSigned.KeyType.EC_P256);
        X500Name issuer = new X500Name("CN=ca-0");
        List<X509Certificate> fromRoot = new ArrayList<>();
        fromRoot.add(SelfSigned.certificate(issuerKeys, issuer, now.minus(Duration.ofHours(1)), now.plus(Duration.ofDays(1))));
        for (int i = 1; i < length; i++) {
            boolean last = i == length - 1;
            KeyPair subjectKeys = last ? leaf : SelfSigned.keyPair(SelfSigned.KeyType.EC_P256);
            X500Name subject = last ? SelfSigned.subject(uid) : new X500Name("CN=ca-" + i);
            X509CertificateHolder holder = new JcaX509v3CertificateBuilder(issuer, BigInteger.valueOf(i), notBefore,
                    notAfter, subject, subjectKeys.getPublic())
                    .build(new JcaContentSignerBuilder("SHA256withECDSA").build(issuerKeys.getPrivate()));
            fromRoot.add(new JcaX509CertificateConverter().getCertificate(holder));
            issuer = subject;
            issuerKeys = subjectKeys;
        }
        java.util.Collections.reverse(fromRoot);
        return fromRoot;
    }

    @Test
    void oversizedHeadersAndUrisGetTheirStatusNotAHang() throws Exception {
        // Each request is over the 8 KiB header limit and fits in one TLS record (16 KiB): the server reads all of
        // it before it answers and closes. A request that left bytes unread in the server's socket would be reset
        // on close, and a reset can discard the answer before the client reads it (JDK TLS, under load).
        int over = HttpServerFactory.MAX_REQUEST_HEADER_BYTES + 4 * 1024;
        String hugeHeader = "GET /uuid HTTP/1.1\r\nHost: x\r\nX-Big: " + "a".repeat(over)
                + "\r\nConnection: close\r\n\r\n";
        assertThat(status(raw(attacker, hugeHeader))).isEqualTo(431);
        String hugeUri = "GET /policies/node-a/" + "a".repeat(over) + " HTTP/1.1\r\nHost: x\r\n"
                + "Connection: close\r\n\r\n";
        assertThat(status(raw(attacker, hugeUri))).isIn(414, 431);
        StringBuilder manyHeaders = new StringBuilder("GET /uuid HTTP/1.1\r\nHost: x\r\n");
        for (int i = 0; i < 1_000; i++) {
            manyHeaders.append("X-H").append(i).append(": v\r\n");
        }
        assertThat(status(raw(attacker, manyHeaders.append("Connection: close\r\n\r\n").toString()))).isEqualTo(431);
        assertStillServing();
    }

    @ParameterizedTest
    @ValueSource(strings = {
        // Content-Length and Transfer-Encoding together (CL.TE / TE.CL).
        "POST /uuid HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
                + "GET /policies/node-v/rules/secret.txt HTTP/1.1\r\nHost: x\r\n\r\n",
        // Two different lengths.
        "POST /uuid HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nContent-Length: 70\r\n\r\n"
                + "GET /policies/node-v/rules/secret.txt HTTP/1.1\r\nHost: x\r\n\r\n",
        // An obfuscated Transfer-Encoding.
        "POST /uuid HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: xchunked\r\n\r\n0\r\n\r\n"
                + "GET /policies/node-v/rules/secret.txt HTTP/1.1\r\nHost: x\r\n\r\n",
        // A header folded over two lines (obs-fold).
        "GET /uuid HTTP/1.1\r\nHost: x\r\nX-Folded: a\r\n b\r\n\r\n"
                + "GET /policies/node-v/rules/secret.txt HTTP/1.1\r\nHost: x\r\n\r\n",
        // A space before the colon.
        "GET /uuid HTTP/1.1\r\nHost: x\r\nTransfer-Encoding : chunked\r\n\r\n0\r\n\r\n"
                + "GET /policies/node-v/rules/secret.txt HTTP/1.1\r\nHost: x\r\n\r\n",
    })
    void smugglingProbesAreRejectedAndNothingBehindThemIsServed(String probe) throws Exception {
        String response = raw(attacker, probe);

        assertThat(status(response)).isIn(400, 501);
        // Only one response: the request hidden behind the probe is never processed.
        assertThat(response.split("HTTP/1\\.1 ", -1)).hasSize(2);
        assertNoSecret(response);
        assertStillServing();
    }

    @Test
    void aRequestSmuggledInABodyIsReadAsTheBody() throws Exception {
        String hidden = "GET /policies/node-v/rules/secret.txt HTTP/1.1\r\nHost: x\r\n\r\n";
        String response = raw(attacker, "GET /uuid HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: "
                + hidden.length() + "\r\n\r\n" + hidden);

        assertThat(status(response)).isEqualTo(200);
        assertThat(response.split("HTTP/1\\.1 ", -1)).hasSize(2);
        assertNoSecret(response);
    }

    /** An HTTP/2 session with the attacker's certificate, frames sent by hand. */
    private static Session http2Session(HTTP2Client client) throws Exception {
        SslContextFactory.Client tls = new SslContextFactory.Client();
        tls.setSslContext(ClientTls.context(attacker.certificatePath(), attacker.keyPath(),
                Set.of(sandbox.serverPin())));
        tls.setEndpointIdentificationAlgorithm(null);
        client.getClientConnector().setSslContextFactory(tls);
        client.start();
        return client.connect(tls, new InetSocketAddress("127.0.0.1", server.port()), new Session.Listener() {})
                .get(10, TimeUnit.SECONDS);
    }

    private static HeadersFrame get(int port, String path, boolean endStream) {
        MetaData.Request request = new MetaData.Request("GET", HttpURI.from("https://127.0.0.1:" + port + path),
                HttpVersion.HTTP_2, HttpFields.EMPTY);
        return new HeadersFrame(request, null, endStream);
    }

    @Test
    void http2RapidResetAndStreamFloodsLeaveTheServerServingOthers() throws Exception {
        HTTP2Client client = new HTTP2Client();
        try {
            Session session = http2Session(client);
            // Rapid reset (CVE-2023-44487): open a stream and cancel it at once, thousands of times.
            List<CompletableFuture<?>> resets = new ArrayList<>();
            for (int i = 0; i < 3_000 && !session.isClosed(); i++) {
                resets.add(session.newStream(get(server.port(), "/policies/node-a/rules/rudder.tar.bz2", true),
                        new Stream.Listener() {})
                        .thenAccept(stream -> stream.reset(
                                new ResetFrame(stream.getId(), ErrorCode.CANCEL_STREAM_ERROR.code), Callback.NOOP)));
            }
            for (CompletableFuture<?> reset : resets) {
                try {
                    reset.get(10, TimeUnit.SECONDS);
                } catch (java.util.concurrent.ExecutionException refusedOnceTheServerHadEnough) {
                    // The server may refuse streams or close the session (GOAWAY): both are fine.
                }
            }
            assertStillServing();

            // Many streams left open (no end of stream): beyond the server's limit they are refused.
            Session flood = client.connect(client.getClientConnector().getSslContextFactory(),
                    new InetSocketAddress("127.0.0.1", server.port()), new Session.Listener() {})
                    .get(10, TimeUnit.SECONDS);
            AtomicInteger refused = new AtomicInteger();
            for (int i = 0; i < 1_000 && !flood.isClosed(); i++) {
                flood.newStream(get(server.port(), "/uuid", false), new Stream.Listener() {
                    @Override
                    public void onReset(Stream stream, ResetFrame frame, Callback callback) {
                        refused.incrementAndGet();
                        callback.succeeded();
                    }
                });
            }
            assertStillServing();
            flood.close(ErrorCode.NO_ERROR.code, "done", Callback.NOOP);
        } finally {
            client.stop();
        }
        assertStillServing();
    }

    @Test
    void aWorldReadableServerKeyIsRefusedAtStartAndAtReload() throws Exception {
        Path key = sandbox.server().keyPath();
        var before = Files.getPosixFilePermissions(key);
        Path config = sandbox.config("");
        try {
            Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("rw-r--r--"));

            assertThatThrownBy(() -> Bootstrap.build(ConfigLoader.load(config)))
                    .isInstanceOf(SnapshotException.class)
                    .hasMessageContaining(key.toString())
                    .hasMessageContaining("readable by every user")
                    .hasMessageContaining("allow_world_readable_key");
            // The running server refuses the reload and keeps serving with what it has.
            TestServer.AdminResponse reload = server.admin("POST", "/rudder/relay-api/1/system/reload");
            assertThat(reload.status()).isEqualTo(500);
            assertThat(reload.body().toString()).contains("readable by every user");
            assertStillServing();
            // Allowed explicitly, it starts.
            try (TestServer allowed = TestServer.start(sandbox, "allow_world_readable_key = true")) {
                assertThat(allowed.server().uri()).isNotNull();
            }
        } finally {
            Files.setPosixFilePermissions(key, before);
        }
    }

    @Test
    @Order(Integer.MAX_VALUE)
    void noPrivateKeyMaterialWasEverLogged() throws Exception {
        List<String> keyLines = new ArrayList<>();
        for (Path key : List.of(sandbox.server().keyPath(), attacker.keyPath(), victim.keyPath())) {
            for (String line : Files.readAllLines(key)) {
                if (!line.startsWith("-----") && line.length() >= 40) {
                    keyLines.add(line);
                }
            }
        }
        assertThat(keyLines).isNotEmpty();
        assertThat(logs.list).as("the attacks above were logged").isNotEmpty();
        for (ILoggingEvent event : List.copyOf(logs.list)) {
            String text = event.getFormattedMessage()
                    + (event.getThrowableProxy() != null ? event.getThrowableProxy().getMessage() : "");
            assertThat(text).doesNotContain("PRIVATE KEY");
            for (String keyLine : keyLines) {
                assertThat(text).doesNotContain(keyLine);
            }
        }
    }

    // --- issue 18: shared files ---

    private static final String SHARED_FILES = "/rudder/relay-api/shared-files/node-b/node-s/";

    /** A server whose node-s (RSA agent key, as shared files need) sends files to node-b. */
    private record SharedFilesSetup(Sandbox sandbox, NodeKeys sender, NodeKeys target, Path stored) {
        static SharedFilesSetup create(Path dir) throws Exception {
            Sandbox sandbox = Sandbox.create(dir);
            NodeKeys sender = sandbox.addNode("node-s", SelfSigned.KeyType.RSA_2048, Sandbox.Pinning.BOTH);
            NodeKeys target = sandbox.addNode("node-b", SelfSigned.KeyType.RSA_2048, Sandbox.Pinning.BOTH);
            return new SharedFilesSetup(sandbox, sender, target, dir.resolve("shared-files/node-b/files/node-s"));
        }

        HttpRequest put(TestServer on, String fileId, byte[] content) throws Exception {
            return PolicyServingIT.request(on.client(sender), SHARED_FILES + fileId + "?ttl=1d")
                    .PUT(HttpRequest.BodyPublishers.ofByteArray(SharedFilesIT.upload(sender.keyPair(), content,
                            "sha256"))).build();
        }

        String announcedHash(String fileId) throws IOException {
            Matcher hash = Pattern.compile("(?m)^hash_value=(\\p{XDigit}+)$")
                    .matcher(Files.readString(stored.resolve(fileId + ".metadata")));
            assertThat(hash.find()).isTrue();
            return hash.group(1);
        }

        /** @return the names beside the stored files and their metadata: temporaries, whatever their naming */
        List<String> temporaries() throws IOException {
            if (!Files.isDirectory(stored)) {
                return List.of();
            }
            List<String> names;
            try (var entries = Files.list(stored)) {
                names = entries.map(path -> path.getFileName().toString()).toList();
            }
            return names.stream().filter(name -> !names.contains(name + ".metadata")
                    && !(name.endsWith(".metadata") && names.contains(name.substring(0, name.length() - 9))))
                    .toList();
        }
    }

    private static String sha256Hex(byte[] content) throws Exception {
        return java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-256").digest(content));
    }

    private static void assertSharedFilesProblem(HttpResponse<String> response, int status, String reason,
            String detail) {
        assertThat(response.statusCode()).as(response.body()).isEqualTo(status);
        assertThat(response.headers().firstValue("content-type")).hasValue("application/problem+json");
        assertThat(response.body()).contains("\"reason\":\"" + reason + "\"").contains(detail);
    }

    private static List<String> sharedFilesTemporaries(SharedFilesSetup setup) {
        try {
            return setup.temporaries();
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void concurrentUploadsOfOneSharedFileLeaveTheBytesAndMetadataOfOneUpload(@TempDir Path own) throws Exception {
        SharedFilesSetup setup = SharedFilesSetup.create(own);
        // Of one size, so that uploads started together are checked together and publish at the same moment.
        byte[] first = "first upload\n".repeat(5_000).getBytes(StandardCharsets.US_ASCII);
        byte[] second = "other upload\n".repeat(5_000).getBytes(StandardCharsets.US_ASCII);
        try (TestServer shares = TestServer.start(setup.sandbox())) {
            // Two connections, each with an upload of either content under way: four uploads of one id at once.
            List<HttpClient> clients = new ArrayList<>();
            for (int connection = 0; connection < 2; connection++) {
                clients.add(shares.client(setup.sender()).httpClient());
            }
            HttpClient client = clients.get(0);
            HttpClient target = shares.client(setup.target()).httpClient();
            int mismatched = 0;
            for (int round = 0; round < 25; round++) {
                List<CompletableFuture<HttpResponse<String>>> uploads = new ArrayList<>();
                for (HttpClient connection : clients) {
                    for (byte[] content : List.of(first, second)) {
                        uploads.add(connection.sendAsync(setup.put(shares, "contested", content),
                                HttpResponse.BodyHandlers.ofString()));
                    }
                }
                for (CompletableFuture<HttpResponse<String>> upload : uploads) {
                    assertThat(upload.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
                }
                byte[] stored = Files.readAllBytes(setup.stored().resolve("contested"));
                mismatched += sha256Hex(stored).equals(setup.announcedHash("contested")) ? 0 : 1;
            }
            assertThat(mismatched).as("of 25 rounds, stored files that are not what their metadata describes")
                    .isZero();
            // What the target downloads is what HEAD announces.
            HttpResponse<byte[]> fetched = target.send(PolicyServingIT.request(shares.client(setup.target()),
                    SHARED_FILES + "contested").build(), HttpResponse.BodyHandlers.ofByteArray());
            assertThat(fetched.statusCode()).isEqualTo(200);
            HttpResponse<Void> head = client.send(PolicyServingIT.request(shares.client(setup.sender()),
                    SHARED_FILES + "contested?hash=" + sha256Hex(fetched.body()))
                    .method("HEAD", HttpRequest.BodyPublishers.noBody()).build(),
                    HttpResponse.BodyHandlers.discarding());
            assertThat(head.statusCode()).isEqualTo(200);
            assertThat(sharedFilesTemporaries(setup)).isEmpty();
        }
    }

    @Test
    void sharedFileIdsTooLongForTheirMetadataNameAre400NotA500(@TempDir Path own) throws Exception {
        SharedFilesSetup setup = SharedFilesSetup.create(own);
        byte[] content = "long names".getBytes(StandardCharsets.US_ASCII);
        try (TestServer shares = TestServer.start(setup.sandbox())) {
            HttpClient client = shares.client(setup.sender()).httpClient();
            for (int length : new int[] {203, 204, 230, 246}) {
                String fileId = "l".repeat(length);
                HttpResponse<String> stored = client.send(setup.put(shares, fileId, content),
                        HttpResponse.BodyHandlers.ofString());
                assertThat(stored.statusCode()).as("%d characters: %s", length, stored.body()).isEqualTo(200);
                assertThat(setup.stored().resolve(fileId)).hasBinaryContent(content);
            }
            for (int length : new int[] {247, 255}) {
                HttpResponse<String> refused = client.send(setup.put(shares, "l".repeat(length), content),
                        HttpResponse.BodyHandlers.ofString());
                assertSharedFilesProblem(refused, 400, "bad-id", "at most 246");
            }
            assertThat(sharedFilesTemporaries(setup)).isEmpty();
        }
    }

    @Test
    void aSharedFileIdEndingInMetadataCannotReplaceAnotherFilesMetadata(@TempDir Path own) throws Exception {
        SharedFilesSetup setup = SharedFilesSetup.create(own);
        byte[] content = "the real file".getBytes(StandardCharsets.US_ASCII);
        try (TestServer shares = TestServer.start(setup.sandbox())) {
            HttpClient client = shares.client(setup.sender()).httpClient();
            assertThat(client.send(setup.put(shares, "victim", content), HttpResponse.BodyHandlers.ofString())
                    .statusCode()).isEqualTo(200);
            String metadata = Files.readString(setup.stored().resolve("victim.metadata"));
            byte[] forged = metadata.replace(sha256Hex(content), "0".repeat(64)).getBytes(StandardCharsets.US_ASCII);

            HttpResponse<String> refused = client.send(setup.put(shares, "victim.metadata", forged),
                    HttpResponse.BodyHandlers.ofString());

            assertSharedFilesProblem(refused, 400, "bad-id", ".metadata");
            assertThat(setup.stored().resolve("victim.metadata")).hasContent(metadata);
            assertThat(setup.stored().resolve("victim.metadata.metadata")).doesNotExist();
            HttpResponse<Void> head = client.send(PolicyServingIT.request(shares.client(setup.sender()),
                    SHARED_FILES + "victim?hash=" + sha256Hex(content))
                    .method("HEAD", HttpRequest.BodyPublishers.noBody()).build(),
                    HttpResponse.BodyHandlers.discarding());
            assertThat(head.statusCode()).isEqualTo(200);
        }
    }

    @Test
    void aStoredSharedFileNamedLikeATemporaryOutlivesTheCleanup(@TempDir Path own) throws Exception {
        SharedFilesSetup setup = SharedFilesSetup.create(own);
        byte[] content = "named like a temporary".getBytes(StandardCharsets.US_ASCII);
        try (TestServer shares = TestServer.start(setup.sandbox())) {
            HttpClient client = shares.client(setup.sender()).httpClient();
            for (String fileId : List.of("X.part", ".X.1234.part", "expired")) {
                assertThat(client.send(setup.put(shares, fileId, content), HttpResponse.BodyHandlers.ofString())
                        .statusCode()).isEqualTo(200);
            }
        }
        // Stored two hours ago (older than any upload still under way); "expired" has expired since.
        for (String fileId : List.of("X.part", ".X.1234.part")) {
            Files.setLastModifiedTime(setup.stored().resolve(fileId),
                    java.nio.file.attribute.FileTime.from(Instant.now().minus(Duration.ofHours(2))));
        }
        Path expired = setup.stored().resolve("expired.metadata");
        Files.writeString(expired, Files.readString(expired).replaceAll("(?m)^expires=\\d+$",
                "expires=" + Instant.now().minusSeconds(60).getEpochSecond()));

        // The cleanup runs when the server starts.
        try (TestServer restarted = TestServer.start(setup.sandbox())) {
            Await.asserted(SETTLES, () -> assertThat(setup.stored().resolve("expired")).doesNotExist());
            for (String fileId : List.of("X.part", ".X.1234.part")) {
                assertThat(setup.stored().resolve(fileId)).hasBinaryContent(content);
                assertThat(setup.stored().resolve(fileId + ".metadata")).exists();
                HttpResponse<byte[]> fetched = restarted.client(setup.target()).httpClient().send(
                        PolicyServingIT.request(restarted.client(setup.target()), SHARED_FILES + fileId).build(),
                        HttpResponse.BodyHandlers.ofByteArray());
                assertThat(fetched.statusCode()).isEqualTo(200);
                assertThat(fetched.body()).isEqualTo(content);
            }
        }
    }

    @Test
    void aSharedFileWhoseBytesAreNotWhatItsMetadataDescribesIsNeitherServedNorAnnounced(@TempDir Path own)
            throws Exception {
        SharedFilesSetup setup = SharedFilesSetup.create(own);
        byte[] signed = "what node-s signed".getBytes(StandardCharsets.US_ASCII);
        byte[] other = "the bytes of another upload".getBytes(StandardCharsets.US_ASCII);
        try (TestServer shares = TestServer.start(setup.sandbox())) {
            HttpClient client = shares.client(setup.sender()).httpClient();
            HttpClient target = shares.client(setup.target()).httpClient();
            assertThat(client.send(setup.put(shares, "paired", signed), HttpResponse.BodyHandlers.ofString())
                    .statusCode()).isEqualTo(200);
            // What a racing writer, or a crash between the two renames of a publish, leaves: another upload's file
            // in place, this upload's metadata beside it.
            Path replacement = Files.write(own.resolve("replacement"), other);
            Files.move(replacement, setup.stored().resolve("paired"), StandardCopyOption.ATOMIC_MOVE,
                    StandardCopyOption.REPLACE_EXISTING);

            HttpResponse<String> fetched = target.send(PolicyServingIT.request(shares.client(setup.target()),
                    SHARED_FILES + "paired").build(), HttpResponse.BodyHandlers.ofString());
            assertSharedFilesProblem(fetched, 404, "no-such-file", "no such shared file");
            for (byte[] content : List.of(signed, other)) {
                HttpResponse<Void> head = client.send(PolicyServingIT.request(shares.client(setup.sender()),
                        SHARED_FILES + "paired?hash=" + sha256Hex(content))
                        .method("HEAD", HttpRequest.BodyPublishers.noBody()).build(),
                        HttpResponse.BodyHandlers.discarding());
                assertThat(head.statusCode()).isEqualTo(404);
            }
            // The sender's next upload (HEAD said it is not there) makes it whole again.
            assertThat(client.send(setup.put(shares, "paired", signed), HttpResponse.BodyHandlers.ofString())
                    .statusCode()).isEqualTo(200);
            HttpResponse<byte[]> again = target.send(PolicyServingIT.request(shares.client(setup.target()),
                    SHARED_FILES + "paired").build(), HttpResponse.BodyHandlers.ofByteArray());
            assertThat(again.statusCode()).isEqualTo(200);
            assertThat(again.body()).isEqualTo(signed);
        }
    }

    @Test
    void aSharedFileUploadCutMidBodyLeavesNoTemporaryAndIsNotAServerError(@TempDir Path own) throws Exception {
        SharedFilesSetup setup = SharedFilesSetup.create(own);
        byte[] body = SharedFilesIT.upload(setup.sender().keyPair(), new byte[200_000], "sha256");
        try (TestServer shares = TestServer.start(setup.sandbox())) {
            int logged = logs.list.size();
            try (SSLSocket socket = shares.rawTls(setup.sender())) {
                OutputStream out = socket.getOutputStream();
                out.write(("PUT " + SHARED_FILES + "cut?ttl=1d HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: "
                        + body.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                out.write(body, 0, body.length / 2);
                out.flush();
                Await.asserted(SETTLES,
                        () -> assertThat(sharedFilesTemporaries(setup)).as("the upload under way").isNotEmpty());
            }
            Await.asserted(SETTLES,
                    () -> assertThat(sharedFilesTemporaries(setup)).as("left by the cut upload").isEmpty());
            assertThat(setup.stored().resolve("cut")).doesNotExist();
            // The client went away: the upload is incomplete (400 in the access log), not a server error (500).
            Await.asserted(SETTLES, () -> assertThat(accessLines("/node-s/cut?ttl=1d")).singleElement().asString()
                    .contains("\" 400 "));
            List<ILoggingEvent> events = List.copyOf(logs.list);
            assertThat(events.subList(logged, events.size()))
                    .noneMatch(event -> event.getLevel().isGreaterOrEqual(ch.qos.logback.classic.Level.ERROR));
        }
    }

    // --- issue 18: identity ---

    /** Reads one HTTP/1.1 response (headers and a Content-Length body) from a connection kept open. */
    private static String readOneResponse(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int matched = 0;
        while (matched < 4) {
            int b = in.read();
            if (b < 0) {
                throw new IOException("connection closed after " + head.size() + " bytes: " + head);
            }
            head.write(b);
            matched = (b == (matched % 2 == 0 ? '\r' : '\n')) ? matched + 1 : (b == '\r' ? 1 : 0);
        }
        String headers = head.toString(StandardCharsets.ISO_8859_1);
        Matcher length = Pattern.compile("(?im)^content-length:\\s*(\\d+)").matcher(headers);
        byte[] body = length.find() ? in.readNBytes(Integer.parseInt(length.group(1))) : new byte[0];
        return headers + new String(body, StandardCharsets.ISO_8859_1);
    }

    /** {@code nodeslist.json} naming the suite's two nodes only (the bundle is left as it is). */
    private static String nodesListOfTheSuite() {
        return "{\n  \"node-a\": {\"hostname\": \"node-a.example.org\", \"key-hash\": \"" + attacker.pin()
                + "\", \"policy-server\": \"root\"},\n  \"node-v\": {\"hostname\": \"node-v.example.org\", "
                + "\"key-hash\": \"" + victim.pin() + "\", \"policy-server\": \"root\"}\n}\n";
    }

    @Test
    void aNodeRemovedFromTheNodesListIsRefusedOnFreshAndKeptAliveConnectionsThoughItsCertificateStays()
            throws Exception {
        NodeKeys leaving = sandbox.addNode("node-leaving", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        sandbox.shareFile("node-leaving/rules/rudder.tar.bz2", "leaving".getBytes(StandardCharsets.US_ASCII));
        assertThat(server.server().reloader().reload("test: node-leaving added").get().result())
                .isNotEqualTo(io.pintle.server.reload.ReloadOutcome.Result.FAILED);
        String request = "GET /policies/node-leaving/rules/rudder.tar.bz2 HTTP/1.1\r\nHost: x\r\n\r\n";
        // One client context for a connection before the removal and one after: the JDK offers to resume the
        // first one's TLS session, as an agent's curl does between runs.
        javax.net.ssl.SSLContext context = ClientTls.context(leaving.certificatePath(), leaving.keyPath(),
                Set.of(sandbox.serverPin()));
        try (SSLSocket first = (SSLSocket) context.getSocketFactory().createSocket("127.0.0.1", server.port())) {
            first.setSoTimeout(10_000);
            first.getOutputStream().write(request.getBytes(StandardCharsets.ISO_8859_1));
            assertThat(status(readOneResponse(first.getInputStream()))).isEqualTo(200);
        }
        try (SSLSocket kept = server.rawTls(leaving)) {
            kept.setSoTimeout(10_000);
            OutputStream out = kept.getOutputStream();
            InputStream in = kept.getInputStream();
            out.write(request.getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
            String before = readOneResponse(in);
            assertThat(status(before)).isEqualTo(200);
            assertThat(before).endsWith("leaving");

            // Rudder renamed the new nodeslist.json into place; nodescerts.pem still holds the node's certificate.
            sandbox.nodesListContent(nodesListOfTheSuite());
            assertThat(server.server().reloader().reload("test: node-leaving removed from the list").get().result())
                    .isNotEqualTo(io.pintle.server.reload.ReloadOutcome.Result.FAILED);
            assertThat(io.pintle.server.nodes.CertificatesLoader.load(dir.resolve("lib/nodescerts.pem"), w -> { }))
                    .as("the certificate is still in the bundle")
                    .contains(io.pintle.server.nodes.CertificateBinding.of(
                            new io.pintle.server.nodes.NodeId("node-leaving"),
                            leaving.certificate().getPublicKey()));

            out.write(request.getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
            String keptAlive = readOneResponse(in);
            assertThat(status(keptAlive)).as("the connection opened before the removal").isEqualTo(403);
            assertThat(keptAlive).doesNotEndWith("leaving");

            String fresh = raw(leaving, request.replace("\r\n\r\n", "\r\nConnection: close\r\n\r\n"));
            assertThat(status(fresh)).as("a fresh connection after the removal").isEqualTo(403);
            assertThat(fresh).doesNotEndWith("leaving");
            try (SSLSocket second = (SSLSocket) context.getSocketFactory().createSocket("127.0.0.1", server.port())) {
                second.setSoTimeout(10_000);
                second.getOutputStream().write(request.getBytes(StandardCharsets.ISO_8859_1));
                assertThat(status(readOneResponse(second.getInputStream())))
                        .as("a connection of the client context used before the removal").isEqualTo(403);
            }
        } finally {
            sandbox.remove("node-leaving");
            server.server().reloader().reload("test: node-leaving removed from both").get();
        }
        assertStillServing();
    }

    @Test
    void aUidInAMultiValuedRdnIsReadAsTheUidNotAsTheCommonNameBesideIt() throws Exception {
        X500Name subject = new X500NameBuilder(BCStyle.INSTANCE)
                .addMultiValuedRDN(new org.bouncycastle.asn1.ASN1ObjectIdentifier[] {BCStyle.CN, BCStyle.UID},
                        new String[] {"node-v", "node-a"})
                .build();
        NodeKeys multiValued = identity("multi-valued", attacker.keyPair(), subject);

        String own = raw(multiValued, "GET /policies/node-a/rules/rudder.tar.bz2 HTTP/1.1\r\nHost: x\r\n"
                + "Connection: close\r\n\r\n");
        String victims = raw(multiValued, "GET /policies/node-v/rules/secret.txt HTTP/1.1\r\nHost: x\r\n"
                + "Connection: close\r\n\r\n");

        assertThat(status(own)).as("the UID is node-a, whose key this is").isEqualTo(200);
        assertThat(status(victims)).isEqualTo(403);
        assertNoSecret(victims);
    }

    // --- issue 18: manifests ---

    /**
     * A tree deeper than 64 directories is what openapi.yaml says: 400 {@code tree-too-large}, for both views,
     * on {@code /common/}, which every allowed client may read, with no stack trace answered or logged.
     */
    @ParameterizedTest
    @ValueSource(strings = {"manifest", "archive"})
    void aTreeDeeperThan64LevelsIsRefusedWith400TreeTooLarge(String view) throws Exception {
        Path top = sandbox.share().resolve("common/deep");
        Path deep = top;
        for (int level = 0; level < 70; level++) {
            deep = deep.resolve("d");
        }
        Files.createDirectories(deep);
        int errorsBefore = errors();

        String response;
        try {
            response = get("/common/deep/?view=" + view);
        } finally {
            // Leaves /common/ describable for the tests that follow.
            try (var walk = Files.walk(top)) {
                for (Path path : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
                    Files.delete(path);
                }
            }
        }

        assertThat(status(response)).as(response).isEqualTo(400);
        assertThat(response).contains("Content-Type: application/problem+json").contains("tree-too-large")
                .contains("directories deep").doesNotContain("Exception").doesNotContain(dir.toString());
        assertThat(errors()).as("nothing logged at ERROR").isEqualTo(errorsBefore);
        assertStillServing();
    }

    private static int errors() {
        return (int) List.copyOf(logs.list).stream()
                .filter(event -> event.getLevel() == ch.qos.logback.classic.Level.ERROR).count();
    }
}
