package io.pintle.server.it;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.pintle.server.Main;
import io.pintle.server.cli.ExitCodes;
import io.pintle.server.testing.NodeKeys;
import io.pintle.server.testing.Sandbox;
import io.pintle.server.testing.TestServer;
import io.pintle.server.tls.SelfSigned;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/** Start, serve, stop: clean logs; and the exit codes of {@code pintle serve} when it cannot start. */
class LifecycleIT {

    @Test
    void cleanStartServeAndStopLogsNothingAtError(@TempDir Path dir) throws Exception {
        Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        ListAppender<ILoggingEvent> events = new ListAppender<>();
        events.start();
        root.addAppender(events);
        try {
            Sandbox sandbox = Sandbox.create(dir);
            NodeKeys node = sandbox.addNode("node-1", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
            sandbox.shareFile("node-1/rules/rudder.tar.bz2", new byte[] {1, 2, 3});
            try (TestServer server = TestServer.start(sandbox)) {
                assertThat(server.client(node).fetch("/policies/node-1/rules/rudder.tar.bz2", dir.resolve("x"), null)
                        .status()).isEqualTo(200);
            }
        } finally {
            root.detachAppender(events);
        }
        assertThat(events.list).isNotEmpty().noneMatch(event -> event.getLevel().isGreaterOrEqual(Level.ERROR));
    }

    @Test
    void serveExitsWith2OnInvalidConfiguration(@TempDir Path dir) throws Exception {
        Path config = Files.writeString(dir.resolve("bad.toml"), "[general]\nnode_id = \"root\"\ncolour = \"blue\"\n");
        assertThat(Main.run("serve", "--config", config.toString())).isEqualTo(ExitCodes.CONFIG_ERROR);
    }

    @Test
    void serveExitsWith2WhenAnInputFileIsInvalid(@TempDir Path dir) throws Exception {
        Sandbox sandbox = Sandbox.create(dir);
        Path config = sandbox.config("");
        Files.writeString(dir.resolve("lib/nodeslist.json"), "{ not json");
        assertThat(Main.run("serve", "--config", config.toString())).isEqualTo(ExitCodes.CONFIG_ERROR);
    }

    @Test
    void serveExitsWith3WhenThePortIsTaken(@TempDir Path dir) throws Exception {
        Sandbox sandbox = Sandbox.create(dir);
        try (TestServer running = TestServer.start(sandbox)) {
            Path config = sandbox.config("");
            Files.writeString(config, Files.readString(config)
                    .replace("listen = \"127.0.0.1:0\"", "listen = \"127.0.0.1:" + running.port() + "\""));
            assertThat(Main.run("serve", "--config", config.toString())).isEqualTo(ExitCodes.STARTUP_FAILURE);
        }
    }
}
