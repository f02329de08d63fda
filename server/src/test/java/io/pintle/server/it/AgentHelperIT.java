package io.pintle.server.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.pintle.api.Routes;
import io.pintle.server.testing.AgentHelper;
import io.pintle.server.testing.FakeAgent;
import io.pintle.server.testing.RunEvents;
import io.pintle.server.testing.Sandbox;
import io.pintle.server.testing.TestServer;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Remote run of the server's own agent through the agent helper ({@code [remote_run] agent_socket}): the real
 * {@code deploy/lib/pintle-agent-run} behind systemd's socket activation ({@link AgentHelper}), a real server, and
 * the fake agent ({@code fake-agent.sh}) recording its exact argv. What the helper refuses never runs anything.
 */
class AgentHelperIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int TIMEOUT_SECONDS = 2;

    @TempDir
    static Path dir;

    static FakeAgent agent;
    static Path agentDir;
    static AgentHelper helper;
    static TestServer server;

    @BeforeAll
    static void start() throws Exception {
        agent = FakeAgent.install(dir.resolve("agent"), "/fake-agent.sh");
        agentDir = agent.dir();
        helper = AgentHelper.start(dir.resolve("agent.sock"), agent.program(), dir.resolve("helper.log"));
        // run/update/inventory name a program that does not exist: with a socket, they must not be used.
        server = TestServer.start(Sandbox.create(dir.resolve("root")), "[remote_run]\ntimeout = " + TIMEOUT_SECONDS
                + "\nagent_socket = \"" + helper.socket() + "\"\nrun = [\"/nonexistent/rudder\"]\n");
    }

    @AfterAll
    static void stop() throws IOException {
        if (server != null) {
            server.close();
        }
        if (helper != null) {
            helper.close();
        }
    }

    @BeforeEach
    void reset() throws IOException {
        agent.reset("sleep", "exit-code");
    }

    @Test
    void relaydsFormRunsTheAgentThroughTheHelperWithItsConditions() throws Exception {
        HttpResponse<String> response = post("application/x-www-form-urlencoded",
                "asynchronous=false&keep_output=true&conditions=class2,class3");

        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        // relayd's text form, every line of the agent and nothing of the helper's framing.
        assertThat(response.body()).isEqualTo("root> fake agent: started agent run -uR -D class2,class3\n"
                + "root> fake agent: done\n");
        assertThat(runs()).containsExactly(List.of("agent", "run", "-uR", "-D", "class2,class3"));
    }

    @Test
    void eachCommandIsTheHelpersFixedArgvAndTheStatusComesFromItsExitLine() throws Exception {
        List<JsonNode> update = events("{\"command\": \"update\"}");
        assertThat(status(update).path("status").asText()).isEqualTo("success");
        assertThat(runs()).containsExactly(List.of("agent", "update"));

        agent.reset();
        Files.writeString(agentDir.resolve("exit-code"), "3");
        List<JsonNode> inventory = events(
                "{\"command\": \"inventory\", \"conditions\": [\"a\"], \"verbosity\": \"debug\"}");
        JsonNode failed = status(inventory);
        assertThat(failed.path("status").asText()).isEqualTo("failed");
        assertThat(failed.path("exitCode").asInt()).isEqualTo(3);
        assertThat(runs()).containsExactly(List.of("agent", "inventory", "-D", "a,debug"));
        // Every line of the agent, and nothing of the helper's framing (its empty line, its status line).
        assertThat(outputs(inventory)).containsExactly("fake agent: started agent inventory -D a,debug",
                "fake agent: done");
    }

    @Test
    void theHelperStopsTheAgentAtTheServersTimeout() throws Exception {
        Files.writeString(agentDir.resolve("sleep"), "60");
        long start = System.nanoTime();
        List<JsonNode> events = events("{\"command\": \"run\"}");

        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(30));
        JsonNode status = status(events);
        assertThat(status.path("status").asText()).isEqualTo("timeout");
        assertThat(status.path("timedOut").asBoolean()).isTrue();
        assertThat(outputs(events)).containsExactly("fake agent: started agent run -uR");
        // The agent itself is gone (timeout sent it TERM), not merely abandoned.
        long pid = Long.parseLong(Files.readString(onlyRun(".pid")).trim());
        assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)).isFalse();
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "pintle-agent/1 0123456789abcdef0123456789abcdef 10 run a,$(touch${IFS}/tmp/pwned)",
        "pintle-agent/1 0123456789abcdef0123456789abcdef 10 run a;id",
        "pintle-agent/1 0123456789abcdef0123456789abcdef 10 run a b",
        "pintle-agent/1 0123456789abcdef0123456789abcdef 10 run _a",
        "pintle-agent/1 0123456789abcdef0123456789abcdef 10 run a,,b",
        "pintle-agent/1 0123456789abcdef0123456789abcdef 10 shell a",
        "pintle-agent/1 0123456789abcdef0123456789abcdef 0 run",
        "pintle-agent/1 0123456789abcdef0123456789abcdef 21601 run",
        "pintle-agent/1 0123456789ABCDEF0123456789abcdef 10 run",
        "pintle-agent/2 0123456789abcdef0123456789abcdef 10 run",
        "pintle-agent/1 0123456789abcdef0123456789abcdef 10 run\ttab",
        "pintle-agent/1 0123456789abcdef0123456789abcdef 10 run * ",
        ""})
    void whatTheHelperRefusesRunsNothing(String line) throws Exception {
        String answer = raw(line + "\n");

        assertThat(answer).startsWith("pintle-agent: refused: ").doesNotContain(" exit ");
        assertThat(runs()).isEmpty();
        assertThat(Path.of("/tmp/pwned")).doesNotExist();
    }

    @Test
    void aLineLongerThan2KiBIsRefusedUnread() throws Exception {
        String answer = raw("pintle-agent/1 0123456789abcdef0123456789abcdef 10 run " + "a".repeat(3000) + "\n");

        assertThat(answer).isEqualTo("pintle-agent: refused: the request line is longer than 2048 bytes\n");
        assertThat(runs()).isEmpty();
    }

    @Test
    void theHelpersOwnAnswerEndsWithTheNonceAndTheExitCode() throws Exception {
        Files.writeString(agentDir.resolve("exit-code"), "7");
        String answer = raw("pintle-agent/1 0123456789abcdef0123456789abcdef 10 run a,b_2\n");

        assertThat(answer).isEqualTo("fake agent: started agent run -uR -D a,b_2\nfake agent: done\n\n"
                + "0123456789abcdef0123456789abcdef exit 7\n");
    }

    @Test
    void remoteRunsRudderRemoteRunForTheHostsWithTheConditionsAfterDashDash() throws Exception {
        Files.writeString(agentDir.resolve("exit-code"), "1");
        String answer = raw("pintle-agent/1 0123456789abcdef0123456789abcdef 10 remote "
                + "node1.example.com,192.0.2.7,fd00::7,n_2 class2,class3\n");

        assertThat(answer).isEqualTo("fake agent: started remote run -D class2,class3 -- "
                + "node1.example.com,192.0.2.7,fd00::7,n_2\nfake agent: done\n\n"
                + "0123456789abcdef0123456789abcdef exit 1\n");
        assertThat(runs()).containsExactly(
                List.of("remote", "run", "-D", "class2,class3", "--", "node1.example.com,192.0.2.7,fd00::7,n_2"));

        agent.reset();
        raw("pintle-agent/1 0123456789abcdef0123456789abcdef 10 remote h1\n");
        assertThat(runs()).containsExactly(List.of("remote", "run", "--", "h1"));
    }

    @Test
    void aRemoteLineMayHoldAThousandHostsOf64KiBAndNoMore() throws Exception {
        String prefix = "pintle-agent/1 0123456789abcdef0123456789abcdef 10 remote ";
        // 1000 hosts of 64 characters with their commas: 64,999 characters.
        List<String> thousand = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            thousand.add(String.format("h%063d", i));
        }
        String hosts = String.join(",", thousand);
        String conditions = "c".repeat(1024);
        raw(prefix + hosts + " " + conditions + "\n");
        assertThat(runs()).containsExactly(List.of("remote", "run", "-D", conditions, "--", hosts));

        agent.reset();
        assertThat(raw(prefix + hosts + ",h1000 a\n"))
                .isEqualTo("pintle-agent: refused: at most 1000 hosts in one request\n");
        assertThat(raw(prefix + "h".repeat(65537) + "\n"))
                .isEqualTo("pintle-agent: refused: the hosts are longer than 65536 characters\n");
        assertThat(raw(prefix + "h".repeat(70_000) + "\n"))
                .isEqualTo("pintle-agent: refused: the request line is longer than 66622 bytes\n");
        assertThat(runs()).isEmpty();
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "pintle-agent/1 0123456789abcdef0123456789abcdef 10 remote",
        "pintle-agent/1 0123456789abcdef0123456789abcdef 10 remote -rf",
        "pintle-agent/1 0123456789abcdef0123456789abcdef 10 remote a,-D",
        "pintle-agent/1 0123456789abcdef0123456789abcdef 10 remote .a",
        "pintle-agent/1 0123456789abcdef0123456789abcdef 10 remote ::1",
        "pintle-agent/1 0123456789abcdef0123456789abcdef 10 remote a,,b",
        "pintle-agent/1 0123456789abcdef0123456789abcdef 10 remote a,",
        "pintle-agent/1 0123456789abcdef0123456789abcdef 10 remote ,a",
        "pintle-agent/1 0123456789abcdef0123456789abcdef 10 remote a;id",
        "pintle-agent/1 0123456789abcdef0123456789abcdef 10 remote a$(id)",
        "pintle-agent/1 0123456789abcdef0123456789abcdef 10 remote a/b",
        "pintle-agent/1 0123456789abcdef0123456789abcdef 10 remote a _c",
        "pintle-agent/1 0123456789abcdef0123456789abcdef 10 remote a c.d",
        "pintle-agent/1 0123456789abcdef0123456789abcdef 10 remote a c d",
        "pintle-agent/1 0123456789abcdef0123456789abcdef  10 remote a",
        "pintle-agent/1 0123456789abcdef0123456789abcdef 0 remote a",
        "pintle-agent/1 0123456789ABCDEF0123456789abcdef 10 remote a"})
    void whatTheHelperRefusesOfARemoteRequestRunsNothing(String line) throws Exception {
        String answer = raw(line + "\n");

        assertThat(answer).startsWith("pintle-agent: refused: ").doesNotContain(" exit ");
        assertThat(runs()).isEmpty();
    }

    @Test
    void theOtherCommandsKeepTheirCharactersAndTheir2KiB() throws Exception {
        // '.' and ':' are for a remote request's hosts only; the other commands refuse them as they always did.
        assertThat(raw("pintle-agent/1 0123456789abcdef0123456789abcdef 10 run a.b\n")).isEqualTo(
                "pintle-agent: refused: the request line holds a character outside [A-Za-z0-9_,/ -]\n");
        assertThat(raw("pintle-agent/1 0123456789abcdef0123456789abcdef 10 run a " + "b".repeat(2100) + "\n"))
                .isEqualTo("pintle-agent: refused: the request line is longer than 2048 bytes\n");
        assertThat(runs()).isEmpty();
    }

    /** Talks to the helper as the server does: one line, then end of input; returns everything it answers. */
    private static String raw(String request) throws IOException {
        try (SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            channel.connect(UnixDomainSocketAddress.of(helper.socket()));
            channel.write(ByteBuffer.wrap(request.getBytes(StandardCharsets.UTF_8)));
            channel.shutdownOutput();
            return new String(Channels.newInputStream(channel).readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    private static HttpResponse<String> post(String type, String body) throws Exception {
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                        server.server().adminUri().resolve(Routes.RELAY_API + "/remote-run/nodes/root"))
                        .header("Content-Type", type)
                        .POST(HttpRequest.BodyPublishers.ofString(body))
                        .timeout(Duration.ofSeconds(60))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static List<JsonNode> events(String json) throws Exception {
        return RunEvents.of(post("application/json", json));
    }

    private static JsonNode status(List<JsonNode> events) {
        return RunEvents.status(events, "root");
    }

    private static List<String> outputs(List<JsonNode> events) {
        return RunEvents.outputs(events, null);
    }

    private static List<List<String>> runs() throws IOException {
        return agent.runs();
    }

    private static Path onlyRun(String suffix) throws IOException {
        try (Stream<Path> files = Files.list(agentDir.resolve("runs"))) {
            List<Path> matching = files.filter(f -> f.toString().endsWith(suffix)).toList();
            assertThat(matching).hasSize(1);
            return matching.get(0);
        }
    }
}
