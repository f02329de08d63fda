package io.pintle.server.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.pintle.server.testing.RawHttp;
import io.pintle.server.testing.FakeAgent;
import io.pintle.server.testing.Sandbox;
import io.pintle.server.testing.TestServer;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A relayd root calling a Pintle relay: relayd forwards a remote run to its sub-relays by posting relayd's form with
 * no client certificate, and Apache on the sub-relay admits it by {@code rudder-networks-policy-server-24.conf}. Here
 * a real relay reads that file ({@code Require ip} of the one loopback address standing for the root, no {@code
 * Require local}, so that another loopback address stands for anybody else) and its agent is {@code
 * fake-agent.sh}; the callers connect from their own loopback address and present no certificate.
 */
class RemoteRunPolicyServerNetworksIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** Where the relayd root calls from: the only address of the relay's policy-server networks file. */
    private static final String ROOT_ADDRESS = "127.0.0.30";
    /** Anybody else. */
    private static final String OTHER_ADDRESS = "127.0.0.31";

    @TempDir
    static Path dir;

    static FakeAgent agent;
    static Sandbox relayBox;
    static TestServer relay;

    @BeforeAll
    static void start() throws Exception {
        agent = FakeAgent.install(dir.resolve("agent"), "/fake-agent.sh");
        Sandbox rootBox = Sandbox.create(dir.resolve("root"));
        relayBox = Sandbox.create(dir.resolve("relay"), "relay-1", "relay");
        relayBox.policyServerNetworks("# as rudder-techniques writes it, without Require local\nRequire ip "
                + ROOT_ADDRESS + "\n");
        String program = agent.toml();
        relay = TestServer.start(relayBox, "[upstream]\nurl = \"https://127.0.0.2:1\"\nkey_hash = \""
                + rootBox.serverPin() + "\"\nsync = false\n[remote_run]\ntimeout = 60\nrun = [" + program
                + ", \"agent\", \"run\", \"-uR\"]\n");
    }

    @AfterAll
    static void stop() {
        if (relay != null) {
            relay.close();
        }
    }

    @BeforeEach
    void reset() throws IOException {
        agent.reset();
    }

    @Test
    void relaydsCallWithoutCertificateFromTheListedAddressRunsTheRelaysAgent() throws Exception {
        String answer = post(ROOT_ADDRESS, "asynchronous=false&keep_output=true&classes=class2,class3");

        assertThat(RawHttp.status(answer)).as(answer).isEqualTo(200);
        assertThat(answer).contains("> fake agent: started agent run -uR -D class2,class3", "> fake agent: done");
        assertThat(runs()).containsExactly(List.of("agent", "run", "-uR", "-D", "class2,class3"));
    }

    @Test
    void aCallWithoutCertificateFromAnUnlistedAddressIsRefusedNamingTheFile() throws Exception {
        String answer = post(OTHER_ADDRESS, "asynchronous=false&keep_output=true");

        assertThat(RawHttp.status(answer)).as(answer).isEqualTo(403);
        JsonNode problem = JSON.readTree(answer.substring(answer.indexOf("\r\n\r\n") + 4));
        assertThat(problem.path("reason").asText()).isEqualTo("no-certificate");
        assertThat(problem.path("detail").asText()).contains(relayBox.policyServerNetworksFile().toString());
        assertThat(runs()).isEmpty();
    }

    /** relayd's forward: its form on Apache's unversioned path, HTTP/1.1, no client certificate, from {@code from}. */
    private static String post(String from, String form) throws Exception {
        byte[] body = form.getBytes(StandardCharsets.US_ASCII);
        try (SSLSocket socket = relay.rawTls(null, from)) {
            socket.setSoTimeout(60_000);
            OutputStream out = socket.getOutputStream();
            out.write(("POST /rudder/relay-api/remote-run/nodes/relay-1 HTTP/1.1\r\nHost: relay\r\n"
                    + "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: " + body.length
                    + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.write(body);
            out.flush();
            return RawHttp.readUntilClosed(socket);
        }
    }

    /** The argv of every run of the relay's fake agent. */
    private static List<List<String>> runs() throws IOException {
        return agent.runs();
    }
}
