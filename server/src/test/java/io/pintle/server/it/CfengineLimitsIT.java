package io.pintle.server.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pintle.server.testing.Await;
import io.pintle.server.testing.CfProtocol;
import io.pintle.server.testing.Sandbox;
import io.pintle.server.testing.TestServer;
import io.pintle.server.tls.SelfSigned;
import java.security.KeyPair;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The CFEngine listener's bounds, with a protocol client of the test's own (no cfengine3 needed): connections from
 * outside the allowed networks are closed before TLS (allowconnects), one address holds at most
 * {@code max_connections_per_address}, and a slot is given back when its connection closes.
 */
class CfengineLimitsIT {
    @TempDir
    Path dir;

    @Test
    void allowedNetworksAndThePerAddressCap() throws Exception {
        Sandbox box = Sandbox.create(dir.resolve("root"));
        box.networks("Require ip 127.0.0.1/32\n");
        KeyPair agent = SelfSigned.keyPair(SelfSigned.KeyType.RSA_2048);
        try (TestServer server = TestServer.start(box, String.join("\n", "[cfengine]", "listen = \"127.0.0.1:0\"",
                "max_connections_per_address = 2", "[limits]", "header_timeout_seconds = 2"))) {
            int port = server.server().cfenginePort();
            assertThatThrownBy(() -> {
                try (CfProtocol outside = CfProtocol.connect(port, agent, "127.0.0.2")) {
                    outside.identify(2);
                }
            }).as("127.0.0.2 is not in the allowed networks").isInstanceOf(java.io.IOException.class);

            CfProtocol first = CfProtocol.connect(port, agent);
            try (CfProtocol second = CfProtocol.connect(port, agent)) {
                assertThat(first.identify(3)).startsWith("OK WELCOME");
                assertThat(second.identify(3)).startsWith("OK WELCOME");
                assertThatThrownBy(() -> {
                    try (CfProtocol third = CfProtocol.connect(port, agent)) {
                        third.identify(2);
                    }
                }).as("a third connection from 127.0.0.1").isInstanceOf(java.io.IOException.class);
                first.close();
                // The closed connection's slot comes back once the server has seen it close.
                Await.until(Duration.ofSeconds(10), "a new connection after one closed", () -> {
                    try (CfProtocol again = CfProtocol.connect(port, agent)) {
                        return again.identify(2) != null;
                    } catch (java.io.IOException refused) {
                        return false;
                    }
                });
            }
            assertThat(server.metric("pintle_cfengine_connections_refused_total{reason=\"too-many-from-address\"}"))
                    .isGreaterThanOrEqualTo(1.0);
            assertThat(server.metric("pintle_cfengine_connections_refused_total{reason=\"network-not-allowed\"}"))
                    .isEqualTo(1.0);
            assertThat(server.metric("pintle_connections{listener=\"cfengine\"}")).isNotNull();

            // A peer that connects and sends nothing, and one that completes TLS but never identifies: both are
            // closed after the header timeout, holding nothing meanwhile.
            try (java.net.Socket silent = new java.net.Socket("127.0.0.1", port);
                    CfProtocol mute = CfProtocol.connect(port, agent)) {
                silent.setSoTimeout(20_000);
                long start = System.nanoTime();
                assertThat(silent.getInputStream().read()).isEqualTo(-1);
                assertThat(mute.closedByServer()).isTrue();
                assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(15));
            }
            assertThat(server.metric("pintle_cfengine_connections_refused_total{reason=\"identification\"}"))
                    .isEqualTo(2.0);
        }
    }
}
