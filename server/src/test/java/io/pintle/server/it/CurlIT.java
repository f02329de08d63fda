package io.pintle.server.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.pintle.server.testing.NodeKeys;
import io.pintle.server.testing.Sandbox;
import io.pintle.server.testing.TestServer;
import io.pintle.server.tls.SelfSigned;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The real {@code curl}, with the flags Rudder's {@code rudder-client} passes (rudder-agent {@code bin/rudder-client}:
 * {@code --tlsv1.3 --location --fail --connect-timeout 10 --pinnedpubkey ... --insecure --cert --key
 * --etag-save --etag-compare}). Skipped where curl is not installed; CI installs it.
 */
class CurlIT {
    @TempDir
    static Path dir;

    static Sandbox sandbox;
    static TestServer server;
    static NodeKeys node;
    static byte[] archive;

    @BeforeAll
    static void start() throws Exception {
        assumeTrue(available("curl"), "curl is not installed");
        sandbox = Sandbox.create(dir);
        node = sandbox.addNode("0e2d8f4c-5b7a-4f5e-9a59-3c4d5e6f7a8b", SelfSigned.KeyType.RSA_2048,
                Sandbox.Pinning.BOTH);
        archive = new byte[100_000];
        new java.util.Random(1).nextBytes(archive);
        sandbox.shareFile(node.name() + "/rules/rudder.tar.bz2", archive);
        server = TestServer.start(sandbox);
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void agentUpdateGets200ThenEtagCompareGives304() throws Exception {
        Path etag = dir.resolve("rudder.tar.bz2.etag");
        Path output = dir.resolve("rudder.tar.bz2");
        String url = server.uri() + "/policies/" + node.name() + "/rules/rudder.tar.bz2";

        Result first = curl(agentFlags(node), "--etag-save", etag.toString(), "--etag-compare", etag.toString(),
                "-o", output.toString(), "-w", "%{http_code}", url);
        assertThat(first.exit()).as(first.stderr()).isZero();
        assertThat(first.stdout()).isEqualTo("200");
        assertThat(Files.readAllBytes(output)).isEqualTo(archive);
        assertThat(Files.readString(etag).strip()).matches("\"[0-9a-f]{32}\"");

        Files.delete(output);
        Result second = curl(agentFlags(node), "--etag-save", etag.toString(), "--etag-compare", etag.toString(),
                "-o", output.toString(), "-w", "%{http_code}", url);
        assertThat(second.exit()).as(second.stderr()).isZero();
        assertThat(second.stdout()).isEqualTo("304");
        assertThat(output).doesNotExist();
    }

    @Test
    void http2IsNegotiated() throws Exception {
        Result result = curl(agentFlags(node), "-o", "/dev/null", "-w", "%{http_version}",
                server.uri() + "/policies/" + node.name() + "/rules/rudder.tar.bz2");
        assertThat(result.stdout()).isEqualTo("2");
    }

    @Test
    void withoutCertificateTheReasonIsInTheBody() throws Exception {
        Result result = curl(List.of("-sS", "--tlsv1.3", "--pinnedpubkey", sandbox.serverPin(), "--insecure"),
                "-w", "\n%{http_code}", server.uri() + "/policies/" + node.name() + "/rules/rudder.tar.bz2");
        assertThat(result.stdout()).endsWith("\n403").contains("\"reason\":\"no-certificate\"");
    }

    @Test
    void wrongServerPinIsRefusedByCurl() throws Exception {
        Result result = curl(List.of("-sS", "--tlsv1.3", "--pinnedpubkey",
                        "sha256//AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", "--insecure"),
                server.uri() + "/uuid");
        assertThat(result.exit()).isEqualTo(90); // CURLE_SSL_PINNEDPUBKEYNOTMATCH
    }

    @Test
    void tls12ClientIsRefused() throws Exception {
        Result result = curl(List.of("-sS", "--tls-max", "1.2", "--insecure"), server.uri() + "/uuid");
        assertThat(result.exit()).isEqualTo(35); // CURLE_SSL_CONNECT_ERROR: alert protocol version
    }

    @ParameterizedTest
    @ValueSource(strings = {"rules/../../other/rules/x", "rules/%2e%2e/%2e%2e/x", "rules%2f..%2fx", "rules/..%5cx"})
    void traversalWithPathAsIsIsRefused(String path) throws Exception {
        Result result = curl(agentFlags(node), "--path-as-is", "-o", "/dev/null", "-w", "%{http_code}",
                server.uri() + "/policies/" + node.name() + "/" + path);
        assertThat(result.stdout()).isEqualTo("403");
    }

    @Test
    void certificateRequestCarriesNoCaNames() throws Exception {
        assumeTrue(available("openssl"), "openssl is not installed");
        Process process = new ProcessBuilder("openssl", "s_client", "-connect", "127.0.0.1:" + server.port(),
                "-tls1_3", "-cert", node.certificatePath().toString(), "-key", node.keyPath().toString())
                .redirectErrorStream(true)
                .start();
        process.getOutputStream().close();
        assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(output).contains("No client certificate CA names sent").contains("TLSv1.3");
    }

    /**
     * rudder-agent's {@code rudder relay reload} ({@code share/commands/relay-reload}, {@code share/lib/api_call.sh}
     * {@code checked_api_call}) succeeds only when curl exits 0 and the body equals this string.
     */
    static final String RELAYD_RELOAD_SUCCESS = "{\"result\":\"success\",\"action\":\"reloadConfiguration\"}";

    @Test
    void relayReloadGetsRelaydsExactBodyAndPintlesDetailsInHeaders() throws Exception {
        String url = "http://127.0.0.1:" + server.server().adminUri().getPort() + "/rudder/relay-api/1/system/reload";
        // The exact command line relay-reload runs.
        Result result = curl(RELAY_RELOAD, url);
        assertThat(result.exit()).as(result.stderr()).isZero();
        assertThat(result.stdout().getBytes(StandardCharsets.UTF_8))
                .isEqualTo(RELAYD_RELOAD_SUCCESS.getBytes(StandardCharsets.UTF_8));

        Path headers = dir.resolve("reload.headers");
        Result again = curl(RELAY_RELOAD, "--dump-header", headers.toString(), url);
        assertThat(again.stdout()).isEqualTo(RELAYD_RELOAD_SUCCESS);
        String head = Files.readString(headers).toLowerCase(java.util.Locale.ROOT);
        assertThat(head).startsWith("http/1.1 200").contains("content-type: application/json")
                .containsPattern("pintle-generation: \\d+\r\n").containsPattern("pintle-reload-outcome: (applied|unchanged)\r\n");
    }

    @Test
    void refusedReloadAnswersRelaydsErrorEnvelope(@TempDir Path own) throws Exception {
        Sandbox broken = Sandbox.create(own);
        try (TestServer refusing = TestServer.start(broken, "[reload]\nwatch = false")) {
            broken.nodesListContent("{ \"node-a\": { \"hostname\": ");
            Result result = curl(RELAY_RELOAD, "http://127.0.0.1:"
                    + refusing.server().adminUri().getPort() + "/rudder/relay-api/1/system/reload");
            assertThat(result.exit()).isZero();
            // relayd's ApiResponse field order: result, action, errorDetails (data absent).
            assertThat(result.stdout()).startsWith("{\"result\":\"error\",\"action\":\"reloadConfiguration\","
                    + "\"errorDetails\":\"").endsWith("\"}").contains("nodeslist.json");
            assertThat(new ObjectMapper().readTree(result.stdout()).properties()).extracting(Map.Entry::getKey)
                    .containsExactly("result", "action", "errorDetails");
        }
    }

    /**
     * rudder-agent's {@code api_call.sh} {@code DOWNLOAD_COMMAND} for plain HTTP (an empty {@code CERTIFICATE_OPTION}),
     * then relay-reload's {@code --request POST}: {@code curl --silent --show-error --location --proxy '' --globoff
     * --request POST <url>}.
     */
    static final List<String> RELAY_RELOAD =
            List.of("--silent", "--show-error", "--location", "--proxy", "", "--globoff", "--request", "POST");

    private List<String> agentFlags(NodeKeys keys) {
        return List.of("-sS", "--tlsv1.3", "--location", "--fail", "--connect-timeout", "10", "--noproxy", "*",
                "--pinnedpubkey", sandbox.serverPin(), "--insecure",
                "--cert", keys.certificatePath().toString(), "--key", keys.keyPath().toString());
    }

    record Result(int exit, String stdout, String stderr) {}

    static Result curl(List<String> flags, String... more) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add("curl");
        command.addAll(flags);
        command.addAll(List.of(more));
        Process process = new ProcessBuilder(command).start();
        process.getOutputStream().close();
        String stdout = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String stderr = new String(process.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        return new Result(process.exitValue(), stdout, stderr);
    }

    static boolean available(String program) {
        try {
            Process process = new ProcessBuilder(program, "--version").redirectErrorStream(true).start();
            process.getInputStream().readAllBytes();
            return process.waitFor(10, TimeUnit.SECONDS) && (process.exitValue() == 0 || program.equals("openssl"));
        } catch (IOException | InterruptedException e) {
            return false;
        }
    }
}
