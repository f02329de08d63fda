package io.pintle.server.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.pintle.client.PintleClient;
import io.pintle.server.testing.Await;
import io.pintle.server.testing.NodeKeys;
import io.pintle.server.testing.Sandbox;
import io.pintle.server.testing.ServerProcess;
import io.pintle.server.tls.SelfSigned;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * SIGHUP and {@code pintle reload} against a real server process started from the shaded jar, with the file
 * watch off so that only the signal or the command can be what applied a change.
 */
class ProcessReloadIT {

    @Test
    void sighupAndTheReloadCommandApplyChangesToARunningProcess(@TempDir Path dir) throws Exception {
        Sandbox sandbox = Sandbox.create(dir);
        NodeKeys a = sandbox.addNode("node-a", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        sandbox.shareFile("node-b/rules/rudder.tar.bz2", new byte[] {9});
        int adminPort;
        try (ServerSocket probe = new ServerSocket(0)) {
            adminPort = probe.getLocalPort();
        }
        Path config = sandbox.config("[reload]\nwatch = false");
        Files.writeString(config, Files.readString(config).replace("[admin]\nlisten = \"127.0.0.1:0\"",
                "[admin]\nlisten = \"127.0.0.1:" + adminPort + "\""));
        Path log = dir.resolve("server.log");
        Process server = new ProcessBuilder(ServerProcess.java(), "-jar", ServerProcess.jar(), "serve", "--config",
                config.toString())
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        try {
            URI uri = URI.create(ServerProcess.awaitServing(log, server));
            PintleClient viaA = PintleClient.builder(uri).pin(sandbox.serverPin())
                    .identity(a.certificatePath(), a.keyPath()).build();
            assertThat(viaA.whoami().known()).isTrue();

            NodeKeys b = sandbox.addNode("node-b", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
            PintleClient viaB = PintleClient.builder(uri).pin(sandbox.serverPin())
                    .identity(b.certificatePath(), b.keyPath()).build();
            assertThat(ReloadIT.status(viaB, "/policies/node-b/rules/rudder.tar.bz2", dir)).isEqualTo(403);

            Process hup = new ProcessBuilder("kill", "-HUP", String.valueOf(server.pid())).start();
            assertThat(hup.waitFor(10, TimeUnit.SECONDS)).isTrue();
            Await.until(Duration.ofSeconds(10), "node-b served after SIGHUP",
                    () -> ReloadIT.status(viaB, "/policies/node-b/rules/rudder.tar.bz2", dir) == 200);
            // The log line follows the publication: wait for it rather than race it.
            Await.asserted(Duration.ofSeconds(5),
                    () -> assertThat(read(log)).contains("reload (SIGHUP) applied: generation 2"));

            sandbox.remove("node-b");
            Result applied = cli(config);
            assertThat(applied.exit()).as(applied.output()).isZero();
            assertThat(applied.output()).contains("reloaded: generation 3 (applied)");
            assertThat(ReloadIT.status(viaB, "/policies/node-b/rules/rudder.tar.bz2", dir)).isEqualTo(403);

            Result unchanged = cli(config);
            assertThat(unchanged.exit()).isZero();
            assertThat(unchanged.output()).contains("reloaded: generation 3 (unchanged)");

            sandbox.nodesListContent("[]");
            Result refused = cli(config);
            assertThat(refused.exit()).isEqualTo(1);
            assertThat(refused.output()).contains("refused").contains("nodeslist.json");
            assertThat(viaA.whoami().known()).isTrue();
        } finally {
            server.destroy();
            assertThat(server.waitFor(30, TimeUnit.SECONDS)).isTrue();
        }
        assertThat(Files.readString(log)).contains("pintle stopped");
    }

    @Test
    void reloadCommandWithoutAServerSaysSoAndExits3(@TempDir Path dir) throws Exception {
        int port;
        try (ServerSocket probe = new ServerSocket(0)) {
            port = probe.getLocalPort();
        }
        Path config = Files.writeString(dir.resolve("pintle.toml"),
                "[general]\nnode_id = \"root\"\n[admin]\nlisten = \"127.0.0.1:" + port + "\"\n");
        Result result = cli(config);
        assertThat(result.exit()).isEqualTo(3);
        assertThat(result.output()).contains("cannot reach the server").contains("is it running?");
    }

    record Result(int exit, String output) {}

    private static Result cli(Path config) throws Exception {
        Process process = new ProcessBuilder(ServerProcess.java(), "-jar", ServerProcess.jar(), "reload", "--config",
                config.toString())
                .redirectErrorStream(true)
                .start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(120, TimeUnit.SECONDS)).isTrue();
        return new Result(process.exitValue(), output);
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
