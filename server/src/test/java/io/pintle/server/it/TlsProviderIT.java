package io.pintle.server.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.pintle.client.PintleClient;
import io.pintle.server.config.ServerConfig;
import io.pintle.server.testing.NodeKeys;
import io.pintle.server.testing.Sandbox;
import io.pintle.server.testing.TestServer;
import io.pintle.server.tls.SelfSigned;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Each {@code [tls] provider} set explicitly (whatever the suite-wide one): ALPN picks HTTP/2 or HTTP/1.1 for the
 * JDK's client and curl, the client certificate reaches the authorisation, and a reconnecting client resumes its
 * TLS 1.3 session (openssl s_client says "Reused"), which Conscrypt only does with session tickets turned on.
 */
class TlsProviderIT {
    @ParameterizedTest
    @EnumSource(ServerConfig.TlsProvider.class)
    void servesH2AndHttp11ByAlpnAndResumesSessions(ServerConfig.TlsProvider provider, @TempDir Path dir)
            throws Exception {
        Sandbox sandbox = Sandbox.create(dir);
        NodeKeys node = sandbox.addNode("node-1", SelfSigned.KeyType.RSA_2048, Sandbox.Pinning.BOTH);
        NodeKeys stranger = sandbox.addNode("node-2", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        sandbox.shareFile("node-1/rules/rudder.tar.bz2", "rules of node-1".getBytes(StandardCharsets.UTF_8));
        String path = "/policies/node-1/rules/rudder.tar.bz2";
        try (TestServer server = TestServer.start(sandbox, "provider = \"" + provider.text() + "\"")) {
            for (HttpClient.Version version : List.of(HttpClient.Version.HTTP_2, HttpClient.Version.HTTP_1_1)) {
                PintleClient client = server.client(node, version);
                HttpResponse<String> response = PolicyServingIT.get(client, path,
                        HttpResponse.BodyHandlers.ofString());
                assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
                assertThat(response.body()).isEqualTo("rules of node-1");
                assertThat(response.version()).isEqualTo(version);
                // The peer's certificate is what authorises: another node's key gets 403 on the same file.
                assertThat(PolicyServingIT.get(server.client(stranger, version), path,
                        HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(403);
            }

            if (CurlIT.available("curl")) {
                CurlIT.Result curl = CurlIT.curl(List.of("-sS", "--tlsv1.3", "--pinnedpubkey", sandbox.serverPin(),
                        "--insecure", "--cert", node.certificatePath().toString(), "--key",
                        node.keyPath().toString()), "-w", "\n%{http_version} %{http_code}", server.uri() + path);
                assertThat(curl.stdout()).as(curl.stderr()).isEqualTo("rules of node-1\n2 200");
            }

            assumeTrue(CurlIT.available("openssl"), "openssl is not installed");
            Path session = dir.resolve("session.pem");
            String first = sClient(server, node, "-sess_out", session.toString());
            assertThat(first).contains("New, TLSv1.3").contains("HTTP/1.1 200").contains("rules of node-1");
            String second = sClient(server, node, "-sess_in", session.toString());
            assertThat(second).contains("Reused, TLSv1.3").contains("HTTP/1.1 200").contains("rules of node-1");
        }
    }

    /**
     * A client that leaves Nagle's algorithm on (the JDK's {@code SSLSocket} does, as Python's {@code ssl} and
     * {@code ab}) writes its request right after its last handshake flight; the kernel holds it until that flight
     * is acknowledged. Without {@link io.pintle.server.tls.TlsConnectionFactory} the server acknowledged it only when its
     * delayed-ACK timer fired (40 ms minimum on Linux), before every first request: the median of 9 connections
     * was 41–45 ms with {@code -Dpintle.bench.quickAckHandshake=false} on both providers, 1–3 ms with it.
     * The bound, half the kernel's minimum delay, leaves room for a loaded machine.
     */
    @ParameterizedTest
    @EnumSource(ServerConfig.TlsProvider.class)
    @EnabledOnOs(OS.LINUX) // TCP_QUICKACK is Linux's; elsewhere the server keeps the stall
    void aClientWithNagleOnGetsItsFirstAnswerWithoutWaitingForADelayedAck(ServerConfig.TlsProvider provider,
            @TempDir Path dir) throws Exception {
        Sandbox sandbox = Sandbox.create(dir);
        NodeKeys node = sandbox.addNode("node-1", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        sandbox.shareFile("node-1/rules/rudder.tar.bz2", "rules of node-1".getBytes(StandardCharsets.UTF_8));
        byte[] request = ("GET /policies/node-1/rules/rudder.tar.bz2 HTTP/1.1\r\nHost: node\r\n"
                + "Connection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
        try (TestServer server = TestServer.start(sandbox, "provider = \"" + provider.text() + "\"")) {
            long[] firstByteNanos = new long[9];
            for (int i = 0; i < firstByteNanos.length; i++) {
                try (SSLSocket socket = server.rawTls(node)) {
                    assertThat(socket.getTcpNoDelay()).isFalse();
                    long sent = System.nanoTime();
                    socket.getOutputStream().write(request);
                    socket.getOutputStream().flush();
                    int first = socket.getInputStream().read();
                    firstByteNanos[i] = System.nanoTime() - sent;
                    assertThat(first).isEqualTo('H');
                    assertThat(new String(socket.getInputStream().readAllBytes(), StandardCharsets.US_ASCII))
                            .startsWith("TTP/1.1 200").endsWith("rules of node-1");
                }
            }
            Arrays.sort(firstByteNanos);
            assertThat(Duration.ofNanos(firstByteNanos[firstByteNanos.length / 2]))
                    .as("median request-to-first-byte of %s ns", Arrays.toString(firstByteNanos))
                    .isLessThan(Duration.ofMillis(20));
        }
    }

    /** One request with openssl s_client and node's certificate; returns everything it printed. */
    private static String sClient(TestServer server, NodeKeys node, String... session) throws Exception {
        List<String> command = new java.util.ArrayList<>(List.of("openssl", "s_client", "-connect",
                "127.0.0.1:" + server.port(), "-tls1_3", "-ign_eof", "-cert", node.certificatePath().toString(),
                "-key", node.keyPath().toString()));
        command.addAll(List.of(session));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        process.getOutputStream().write(("GET /policies/node-1/rules/rudder.tar.bz2 HTTP/1.1\r\nHost: node\r\n"
                + "Connection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        process.getOutputStream().close();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(30, TimeUnit.SECONDS)).as(output).isTrue();
        return output;
    }
}
