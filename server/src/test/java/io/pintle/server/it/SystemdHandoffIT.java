package io.pintle.server.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.pintle.client.PintleClient;
import io.pintle.server.Bootstrap;
import io.pintle.server.PintleServer;
import io.pintle.server.config.ConfigLoader;
import io.pintle.server.systemd.SystemdHandoff;
import io.pintle.server.systemd.SystemdNotifier;
import io.pintle.server.testing.NodeKeys;
import io.pintle.server.testing.NotifySocket;
import io.pintle.server.testing.Sandbox;
import io.pintle.server.tls.SelfSigned;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The in-process server with what systemd would hand it: a notification socket (read back here through libc) and
 * an already bound listening socket.
 */
class SystemdHandoffIT {
    private static final Duration WAIT = Duration.ofSeconds(10);

    @Test
    void readyAfterStartReloadingAndReadyAroundAReloadStoppingAtStop(@TempDir Path dir) throws Exception {
        Sandbox sandbox = Sandbox.create(dir);
        sandbox.addNode("node-a", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        try (NotifySocket manager = NotifySocket.bind(dir.resolve("notify"))) {
            PintleServer server = Bootstrap.build(ConfigLoader.load(sandbox.config("[reload]\nwatch = false")),
                    new SystemdHandoff(new SystemdNotifier(manager.path()), Optional.empty()));
            assertThat(manager.receive(Duration.ofMillis(100))).as("nothing before start").isNull();
            server.start();
            try {
                assertThat(manager.receive(WAIT))
                        .isEqualTo("READY=1\nSTATUS=serving 1 nodes on port " + server.port() + ", generation 1");

                sandbox.addNode("node-b", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
                assertThat(server.reloader().reload("test").get(30, TimeUnit.SECONDS).succeeded()).isTrue();
                assertThat(manager.receive(WAIT)).startsWith("RELOADING=1\nMONOTONIC_USEC=")
                        .endsWith("\nSTATUS=reloading (test)");
                assertThat(manager.receive(WAIT)).isEqualTo("READY=1\nSTATUS=serving 2 nodes on port "
                        + server.port() + ", generation 2; last reload applied");

                sandbox.nodesListContent("[]");
                assertThat(server.reloader().reload("test").get(30, TimeUnit.SECONDS).succeeded()).isFalse();
                assertThat(manager.receive(WAIT)).startsWith("RELOADING=1\n");
                assertThat(manager.receive(WAIT)).startsWith("READY=1\nSTATUS=serving 2 nodes on port "
                        + server.port() + ", generation 2; last reload FAILED, previous generation serving: ");
            } finally {
                server.close();
            }
            assertThat(manager.receive(WAIT)).startsWith("STOPPING=1\n");
        }
    }

    @Test
    void anInheritedListeningSocketServesTheTlsListenerAndTheAdminListenerBindsItsOwn(@TempDir Path dir)
            throws Exception {
        Sandbox sandbox = Sandbox.create(dir);
        NodeKeys a = sandbox.addNode("node-a", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        try (ServerSocketChannel inherited = ServerSocketChannel.open()) {
            inherited.bind(new InetSocketAddress("127.0.0.1", 0));
            int port = ((InetSocketAddress) inherited.getLocalAddress()).getPort();
            PintleServer server = Bootstrap.build(ConfigLoader.load(sandbox.config("")),
                    new SystemdHandoff(SystemdNotifier.disabled(), Optional.of(inherited)));
            server.start();
            try {
                assertThat(server.port()).isEqualTo(port);
                assertThat(server.adminPort()).isNotEqualTo(port).isPositive();
                PintleClient client = PintleClient.builder(URI.create("https://127.0.0.1:" + port))
                        .pin(sandbox.serverPin()).identity(a.certificatePath(), a.keyPath()).build();
                assertThat(client.whoami().known()).isTrue();
            } finally {
                server.close();
            }
        }
    }
}
