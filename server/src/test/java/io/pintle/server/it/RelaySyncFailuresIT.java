package io.pintle.server.it;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.pintle.client.PintleClient;
import io.pintle.server.reload.ServerSnapshot;
import io.pintle.server.testing.Await;
import io.pintle.server.testing.LogCapture;
import io.pintle.server.testing.NodeKeys;
import io.pintle.server.testing.Sandbox;
import io.pintle.server.testing.TcpForwarder;
import io.pintle.server.testing.TestServer;
import io.pintle.server.tls.SelfSigned;
import io.pintle.server.upstream.RelaySync;
import io.pintle.server.upstream.UpstreamClient;
import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a relay's sync does when a request gets no answer, and when its thread meets an {@link Error}: a root and a
 * relay over loopback, real TLS, the relay's {@link RelaySync} built by the test (its own is off) with a short
 * answer timeout. And the JDK client's failure that makes a request get no answer, reproduced step by step.
 */
class RelaySyncFailuresIT {
    /** Loose enough for a loaded two-core machine: the syncs below take well under a second when idle. */
    private static final Duration PROMPT = Duration.ofSeconds(60);
    private static final Duration ANSWER_TIMEOUT = Duration.ofSeconds(2);
    private static final String SYNC_LOGGER = RelaySync.class.getName();

    @TempDir
    Path dir;

    private final ListAppender<ILoggingEvent> log = LogCapture.attach(SYNC_LOGGER);

    @AfterEach
    void detach() {
        LogCapture.detach(SYNC_LOGGER, log);
    }

    @Test
    void aRequestThatGetsNoAnswerIsCutAtItsTimeoutRetriedWithAWarningAndTheSyncGoesOnOverNewConnections()
            throws Exception {
        Sandbox root = root();
        Sandbox relay = relay(root);
        // The root keeps a silent connection as long as the test runs: only the relay's timeouts may end it.
        try (TestServer rootServer = TestServer.start(root, "[limits]\nidle_timeout_seconds = 600\n");
                TcpForwarder forwarder = TcpForwarder.to(rootServer.port());
                TestServer relayServer = TestServer.start(relay, upstream(root, forwarder.port()))) {
            UpstreamClient upstream = new UpstreamClient(ANSWER_TIMEOUT);
            // The relay's one connection to the root is open, then stops answering, as one the JDK client lost a
            // request on: every request the sync sends on it gets no answer.
            assertThat(upstream.client(relayServer.server().snapshots().current()).whoami().nodeId())
                    .isEqualTo("relay-1");
            forwarder.silenceOpenConnections();
            RelaySync sync = new RelaySync(relayServer.server().snapshots()::current, upstream,
                    Duration.ofSeconds(30), Duration.ofMillis(100), Duration.ofSeconds(1));
            sync.start();
            try {
                Await.until(PROMPT, () -> Files.exists(dir.resolve("relay/share/node-a/rules/rudder.tar.bz2"))
                        && Files.exists(dir.resolve("relay/share/common/policies-library-linux.tar.bz2")));
            } finally {
                sync.stop();
            }
            assertThat(dir.resolve("relay/share/node-a/rules/rudder.tar.bz2")).hasContent("node-a 1");
            // Client-lib's own retry of the library's manifest, and the loops' retries on new connections.
            assertThat(warnings()).anySatisfy(line -> assertThat(line)
                    .startsWith("relay sync: retrying the sync of /common/ (attempt 2 of 3, in ")
                    .contains("GET the manifest of /common/ got no answer within 2 s (its request timeout)"));
            assertThat(warnings()).anySatisfy(line -> assertThat(line)
                    .isEqualTo("relay sync of share failed (next attempt in 100 ms, on new connections): "
                            + "java.net.http.HttpTimeoutException: GET /policies/relay-1/share/ got no answer "
                            + "within 2 s (its request timeout)"));
        }
    }

    @Test
    void theSyncLoopOutlivesAnErrorLogsItAndStillEndsAtStop() throws Exception {
        Sandbox root = root();
        Sandbox relay = relay(root);
        try (TestServer rootServer = TestServer.start(root);
                TestServer relayServer = TestServer.start(relay, upstream(root, rootServer.port()))) {
            AtomicBoolean thrown = new AtomicBoolean();
            Supplier<ServerSnapshot> snapshots = () -> {
                if (Thread.currentThread().getName().equals("pintle-relay-sync-share") && thrown.compareAndSet(false,
                        true)) {
                    throw new OutOfMemoryError("thrown by the test");
                }
                return relayServer.server().snapshots().current();
            };
            RelaySync sync = new RelaySync(snapshots, new UpstreamClient(ANSWER_TIMEOUT), Duration.ofSeconds(30),
                    Duration.ofMillis(100), Duration.ofSeconds(1));
            sync.start();
            try {
                Await.until(PROMPT, () -> Files.exists(dir.resolve("relay/share/node-a/rules/rudder.tar.bz2")));
            } finally {
                sync.stop();
            }
            assertThat(thrown).isTrue();
            assertThat(log.list).filteredOn(event -> event.getLevel() == Level.ERROR).singleElement()
                    .satisfies(event -> {
                        assertThat(event.getFormattedMessage())
                                .isEqualTo("relay sync of share failed (next attempt in 100 ms)");
                        assertThat(event.getThrowableProxy().getMessage()).isEqualTo("thrown by the test");
                    });
            assertThat(Thread.getAllStackTraces().keySet()).as("loops still running after stop()")
                    .noneMatch(thread -> thread.getName().startsWith("pintle-relay-sync-"));
        }
    }

    /**
     * The JDK client's part, step by step: a request takes the pooled HTTP/2 connection, the server closes that
     * connection (here for idleness: GOAWAY, then the socket), the client shuts it down, and only then does the
     * request open its stream. On JDK 17.0.15 that stream is registered on the closed connection, never sent and
     * never failed: the request ends at its timeout, not before (the server never saw it). The next request goes out
     * on a fresh connection. Step two is held on purpose by the request body's {@code contentLength()}, which the
     * client asks for after it took the connection and before it opens the stream.
     */
    @Test
    void aRequestOpenedAsTheServerClosesTheConnectionWaitsForItsTimeoutAndTheNextGoesOutOnAFreshConnection()
            throws Exception {
        Sandbox sandbox = Sandbox.create(dir);
        NodeKeys node = sandbox.addNode("node-1", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        sandbox.shareFile("common/file.txt", "content".getBytes(StandardCharsets.UTF_8));
        try (TestServer server = TestServer.start(sandbox, "[limits]\nidle_timeout_seconds = 1\n")) {
            PintleClient client = server.client(node);
            HttpClient http = client.httpClient();
            HttpRequest plain = HttpRequest.newBuilder(client.uri("/common/file.txt")).timeout(PROMPT).build();
            assertThat(http.send(plain, HttpResponse.BodyHandlers.ofString()).body()).isEqualTo("content");

            CountDownLatch tookConnection = new CountDownLatch(1);
            CountDownLatch openStream = new CountDownLatch(1);
            Duration timeout = Duration.ofSeconds(5);
            HttpRequest held = HttpRequest.newBuilder(client.uri("/common/file.txt"))
                    .method("GET", new HeldBody(tookConnection, openStream)).timeout(timeout).build();
            CompletableFuture<HttpResponse<String>> stuck = http.sendAsync(held, HttpResponse.BodyHandlers.ofString());
            assertThat(tookConnection.await(PROMPT.toSeconds(), TimeUnit.SECONDS)).isTrue();

            Await.until(PROMPT, () -> server.metric("pintle_connections{listener=\"tls\"}") == 0);
            // Answered once the client has shut the old connection down and left it: then on a new one.
            String answer = null;
            while (answer == null) {
                try {
                    answer = http.send(plain, HttpResponse.BodyHandlers.ofString()).body();
                } catch (IOException onTheClosedConnection) {
                    // Sent before the client saw the close: failed with it. The next goes on a new connection.
                }
            }
            assertThat(answer).isEqualTo("content");
            Await.until(PROMPT, () -> server.metric("pintle_requests_total{route=\"common\",status=\"200\"}") == 2.0);

            long released = System.nanoTime();
            openStream.countDown();
            Object outcome;
            try {
                outcome = stuck.get(PROMPT.toSeconds(), TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                outcome = e.getCause();
            }
            Duration took = Duration.ofNanos(System.nanoTime() - released);
            Runtime.Version jdk = Runtime.version();
            if (jdk.feature() == 17 && jdk.update() < 17) {
                assertThat(outcome).as("the JDK's GOAWAY handling before JDK-8335181")
                        .isInstanceOf(HttpTimeoutException.class);
                assertThat(took).isGreaterThan(timeout.minusSeconds(2));
                assertThat(server.metric("pintle_requests_total{route=\"common\",status=\"200\"}"))
                        .as("the server never saw it").isEqualTo(2.0);
            }
            assertThat(took).as("ended by its timeout at the latest").isLessThan(timeout.plus(PROMPT));
            assertThat(http.send(plain, HttpResponse.BodyHandlers.ofString()).body()).isEqualTo("content");
        }
    }

    /** An empty request body whose length the client asks for when it is about to open the request's stream. */
    private record HeldBody(CountDownLatch tookConnection, CountDownLatch openStream)
            implements HttpRequest.BodyPublisher {
        @Override
        public long contentLength() {
            tookConnection.countDown();
            try {
                openStream.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return 0;
        }

        @Override
        public void subscribe(Flow.Subscriber<? super ByteBuffer> subscriber) {
            HttpRequest.BodyPublishers.noBody().subscribe(subscriber);
        }
    }

    private Sandbox root() throws IOException {
        Sandbox root = Sandbox.create(dir.resolve("root"));
        Path rules = dir.resolve("root/share/relay-1/share/node-a/rules");
        Files.createDirectories(rules.resolve("cfengine-community"));
        Files.writeString(rules.resolve("rudder.tar.bz2"), "node-a 1");
        Files.writeString(rules.resolve("cfengine-community/promises.cf"), "bundle agent main { }\n");
        root.shareFile("common/policies-library-linux.tar.bz2", "library 1".getBytes(StandardCharsets.UTF_8));
        return root;
    }

    private Sandbox relay(Sandbox root) throws IOException {
        Sandbox relay = Sandbox.create(dir.resolve("relay"), "relay-1", "relay");
        root.register("relay-1", relay.server().certificate(), Sandbox.Pinning.BOTH);
        return relay;
    }

    /** The relay's [upstream] section: the root (or what is in front of it) on a port, the relay's own sync off. */
    private static String upstream(Sandbox root, int port) {
        return "[upstream]\nurl = \"https://127.0.0.1:" + port + "\"\nkey_hash = \"" + root.serverPin()
                + "\"\nsync = false\n";
    }

    private List<String> warnings() {
        return log.list.stream().filter(event -> event.getLevel() == Level.WARN)
                .map(ILoggingEvent::getFormattedMessage).toList();
    }
}
