package io.pintle.server.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.pintle.client.ClientTls;
import io.pintle.client.PintleClient;
import io.pintle.server.config.ServerConfig;
import io.pintle.server.testing.AbandonedConnections;
import io.pintle.server.testing.Await;
import io.pintle.server.testing.NodeKeys;
import io.pintle.server.testing.Sandbox;
import io.pintle.server.testing.ServerProcess;
import io.pintle.server.tls.SelfSigned;
import io.pintle.server.tls.TlsContextFactory;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What abandoned TLS connections leave behind (issue 18), counted in {@code /proc/<pid>/fd} of the shaded jar run
 * as a child process under a 4,096 open-files limit. The child runs with Epsilon, a collector that never
 * collects: descriptors can only come back because the server released them when the connection closed, never
 * because a collection happened to run a finalizer (Conscrypt's engines free their pipe in one).
 */
class DescriptorsIT {
    /** The limit of the report. */
    private static final int OPEN_FILES = 4_096;
    /** Rounds of abandoned connections: before the fix, the third ran the server out of descriptors. */
    private static final int ROUNDS = 3;
    /** Descriptors the server may hold after a round beyond what it held before (log rotation, a cached file). */
    private static final int SLACK = 20;

    @Test
    void abandonedTlsConnectionsGiveBackTheirDescriptorsUnderA4096Limit(@TempDir Path dir) throws Exception {
        assumeTrue(Files.isDirectory(Path.of("/proc/self/fd")), "counts descriptors in /proc");
        assumeTrue(TlsContextFactory.resolve(ServerConfig.TlsProvider.AUTO) == ServerConfig.TlsProvider.CONSCRYPT,
                "Conscrypt's native library does not load on this machine");
        Sandbox sandbox = Sandbox.create(dir.resolve("sandbox"));
        NodeKeys node = sandbox.addNode("node-d", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        sandbox.shareFile("node-d/rules/rudder.tar.bz2", new byte[] {1, 2, 3});
        // max_connections fits the limit (3 descriptors each with Conscrypt, and the reserve), so the server
        // starts without the limit warning; short timeouts close the stalled connections within the test.
        Path config = sandbox.config("provider = \"conscrypt\"\n"
                + "[limits]\nmax_connections = 1000\nidle_timeout_seconds = 2\nheader_timeout_seconds = 2\n");
        Path log = dir.resolve("server.log");
        Process server = new ProcessBuilder("bash", "-c", "ulimit -n " + OPEN_FILES + " && exec \"$@\"", "bash",
                ServerProcess.java(), "-XX:+UnlockExperimentalVMOptions", "-XX:+UseEpsilonGC", "-Xmx1g",
                "-jar", ServerProcess.jar(), "serve", "--config", config.toString())
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        try {
            URI uri = URI.create(ServerProcess.awaitServing(log, server));
            SSLContext tls = ClientTls.context(node.certificatePath(), node.keyPath(), Set.of(sandbox.serverPin()));
            assertThat(download(uri, sandbox, node)).isEqualTo(200);
            AbandonedConnections.Descriptors before = AbandonedConnections.descriptors(server.pid());
            for (int round = 1; round <= ROUNDS; round++) {
                AbandonedConnections.Descriptors during;
                try (AbandonedConnections abandoned = AbandonedConnections.open(uri.getPort(), tls, 400, 200, 200)) {
                    during = AbandonedConnections.descriptors(server.pid());
                    assertThat(abandoned.awaitClosedByServer(Duration.ofSeconds(60)))
                            .as("round %d: stalled connections the server never closed", round).isZero();
                }
                // Both ends of every connection are closed: what the server still holds for them is a leak.
                int r = round;
                Await.asserted(Duration.ofSeconds(15), () -> {
                    AbandonedConnections.Descriptors after = descriptors(server.pid());
                    assertThat(after.total()).as("round %d: %s before, %s with 800 abandoned connections, %s after",
                            r, before, during, after).isLessThanOrEqualTo(before.total() + SLACK);
                });
                assertThat(download(uri, sandbox, node)).as("a download after round %d", round).isEqualTo(200);
            }
            assertThat(Files.readString(log)).doesNotContain("Too many open files").doesNotContain(" WARN ")
                    .doesNotContain("ERROR");
        } finally {
            server.destroy();
            assertThat(server.waitFor(30, TimeUnit.SECONDS)).isTrue();
        }
    }

    /** @return the status of a download on a new connection */
    private static int download(URI uri, Sandbox sandbox, NodeKeys node) throws Exception {
        PintleClient client = PintleClient.builder(uri).pin(sandbox.serverPin())
                .identity(node.certificatePath(), node.keyPath()).build();
        return client.httpClient().send(HttpRequest.newBuilder(client.uri("/policies/node-d/rules/rudder.tar.bz2"))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.discarding()).statusCode();
    }

    private static AbandonedConnections.Descriptors descriptors(long pid) {
        try {
            return AbandonedConnections.descriptors(pid);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
