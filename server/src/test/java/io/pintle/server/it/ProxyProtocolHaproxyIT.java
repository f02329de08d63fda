package io.pintle.server.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.pintle.client.ClientTls;
import io.pintle.server.testing.Await;
import io.pintle.server.testing.NodeKeys;
import io.pintle.server.testing.RawHttp;
import io.pintle.server.testing.Sandbox;
import io.pintle.server.testing.TestServer;
import io.pintle.server.tls.SelfSigned;
import java.io.File;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A real HAProxy in TCP mode ({@code send-proxy-v2} or {@code send-proxy}, TLS end to end) in front of the server: the agent connects to
 * HAProxy from 127.0.0.5, HAProxy connects to the server from 127.0.0.2 (the listed proxy), and the server sees
 * 127.0.0.5. Skipped when {@code haproxy} is not installed ({@code apt-get install haproxy}; {@code .ci/run}
 * installs it).
 */
class ProxyProtocolHaproxyIT {
    private static final String PROXY_SOURCE = "127.0.0.2";
    private static final String FRONTEND = "127.0.0.3";
    private static final String AGENT = "127.0.0.5";

    /** Both versions HAProxy writes: v2, and the v1 text line that Pintle reads itself (see ProxyV1Line). */
    @ParameterizedTest
    @ValueSource(strings = {"send-proxy-v2", "send-proxy"})
    void anAgentBehindHaproxyIsSeenWithItsOwnAddress(String sendProxy, @TempDir Path dir) throws Exception {
        String haproxy = onPath("haproxy");
        assumeTrue(haproxy != null, "haproxy is not installed: apt-get install haproxy");

        Sandbox sandbox = Sandbox.create(dir);
        NodeKeys node = sandbox.addNode("node-1", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        sandbox.shareFile("node-1/rules/promises.cf", "bundle agent main {}".getBytes(StandardCharsets.US_ASCII));
        // Only the agent's address may download: the proxy's own (127.0.0.2) may not.
        sandbox.networks("Require ip " + AGENT + "/32\n");
        sandbox.generalConfig("proxy_protocol_from = [\"" + PROXY_SOURCE + "\"]");
        try (TestServer server = TestServer.start(sandbox)) {
            int port = freePort();
            Path config = Files.writeString(dir.resolve("haproxy.cfg"), String.join("\n",
                    "defaults",
                    "  mode tcp",
                    "  timeout connect 5s",
                    "  timeout client 30s",
                    "  timeout server 30s",
                    "frontend agents",
                    "  bind " + FRONTEND + ":" + port,
                    "  default_backend pintle",
                    "backend pintle",
                    "  server replica1 127.0.0.1:" + server.port() + " " + sendProxy + " source " + PROXY_SOURCE,
                    ""));
            Process process = new ProcessBuilder(haproxy, "-db", "-f", config.toString())
                    .redirectErrorStream(true)
                    .redirectOutput(dir.resolve("haproxy.log").toFile())
                    .start();
            try {
                awaitListening(FRONTEND, port, process, dir.resolve("haproxy.log"));

                String policy = get(sandbox, node, port, "/policies/node-1/rules/promises.cf");
                assertThat(RawHttp.status(policy)).as(policy).isEqualTo(200);
                assertThat(policy).endsWith("bundle agent main {}");
                assertThat(get(sandbox, node, port, "/v1/whoami")).contains("\"address\":\"" + AGENT + "\"");

                // The same agent straight to the server is refused: its address there is not the allowed one.
                assertThat(RawHttp.status(direct(server, node))).isEqualTo(403);
            } finally {
                process.destroy();
                if (!process.waitFor(10, java.util.concurrent.TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                }
            }
        }
    }

    private static String direct(TestServer server, NodeKeys node) throws Exception {
        try (SSLSocket socket = server.rawTls(node)) {
            return request(socket, "/policies/node-1/rules/promises.cf");
        }
    }

    private static String get(Sandbox sandbox, NodeKeys node, int port, String path) throws Exception {
        SSLContext context = ClientTls.context(node.certificatePath(), node.keyPath(), Set.of(sandbox.serverPin()));
        try (SSLSocket socket = (SSLSocket) context.getSocketFactory().createSocket(FRONTEND, port,
                InetAddress.getByName(AGENT), 0)) {
            socket.setSoTimeout(30_000);
            socket.startHandshake();
            return request(socket, path);
        }
    }

    private static String request(SSLSocket socket, String path) throws IOException {
        socket.getOutputStream().write(("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                .getBytes(StandardCharsets.US_ASCII));
        socket.getOutputStream().flush();
        return RawHttp.readUntilClosed(socket);
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName(FRONTEND))) {
            return socket.getLocalPort();
        }
    }

    private static void awaitListening(String host, int port, Process process, Path log) throws Exception {
        Await.until(Duration.ofSeconds(20), "haproxy listens on " + host + ":" + port, () -> {
            try (Socket probe = new Socket()) {
                probe.connect(new InetSocketAddress(host, port), 1000);
                return true;
            } catch (IOException notYet) {
                assertThat(process.isAlive()).as("haproxy runs: %s", Files.exists(log) ? Files.readString(log) : "")
                        .isTrue();
                return false;
            }
        });
    }

    private static String onPath(String program) {
        for (String directory : List.of(System.getenv().getOrDefault("PATH", "").split(File.pathSeparator))) {
            File candidate = new File(directory, program);
            if (candidate.canExecute()) {
                return candidate.getPath();
            }
        }
        for (String directory : List.of("/usr/sbin", "/usr/local/sbin")) {
            File candidate = new File(directory, program);
            if (candidate.canExecute()) {
                return candidate.getPath();
            }
        }
        return null;
    }
}
