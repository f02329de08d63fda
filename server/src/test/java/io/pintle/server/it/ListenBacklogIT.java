package io.pintle.server.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.pintle.server.config.ServerConfig;
import io.pintle.server.testing.Sandbox;
import io.pintle.server.testing.TestServer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

/**
 * The node-facing listener the server binds itself has the accept queue of {@code [limits] accept_queue} (by default
 * the socket unit's {@code Backlog=4096}), capped by the kernel's {@code net.core.somaxconn}, not the JDK's 50: with
 * 50, a herd of agents connecting faster than handshakes complete gets SYNs dropped and waits one to three seconds
 * for TCP's retransmission (docs/BENCHMARKS.md, the herd row). Read from the kernel with {@code ss}, whose Send-Q
 * column is a listening socket's backlog.
 */
class ListenBacklogIT {
    @Test
    @EnabledOnOs(OS.LINUX)
    void theTlsListenerHasTheSocketUnitsBacklog(@TempDir Path dir) throws Exception {
        assertThat(backlog(dir, "")).isEqualTo(Math.min(ServerConfig.Limits.DEFAULTS.acceptQueue(), somaxconn()));
    }

    @Test
    @EnabledOnOs(OS.LINUX)
    void theTlsListenersBacklogIsTheConfiguredAcceptQueue(@TempDir Path dir) throws Exception {
        assertThat(backlog(dir, "[limits]\naccept_queue = 100\n")).isEqualTo(Math.min(100, somaxconn()));
    }

    private static int somaxconn() throws IOException {
        // Files.readString trusts the size procfs reports and read "4" of "4096" here: read it as a stream.
        return Integer.parseInt(Files.readAllLines(Path.of("/proc/sys/net/core/somaxconn")).get(0).trim());
    }

    /** The TLS listener's backlog as the kernel reports it, for a server started with {@code extraToml}. */
    private static int backlog(Path dir, String extraToml) throws Exception {
        assumeTrue(CurlIT.available("ss"), "ss is not installed (Debian package iproute2)");
        Sandbox sandbox = Sandbox.create(dir);
        try (TestServer server = TestServer.start(sandbox, extraToml)) {
            Process ss = new ProcessBuilder(List.of("ss", "-ltnH", "sport = :" + server.port()))
                    .redirectErrorStream(true).start();
            String out = new String(ss.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(ss.waitFor(10, TimeUnit.SECONDS)).isTrue();
            // "LISTEN 0 4096 127.0.0.1:PORT 0.0.0.0:*": state, Recv-Q (waiting now), Send-Q (the backlog).
            String[] columns = out.strip().split("\\s+");
            assertThat(columns).as(out).hasSizeGreaterThanOrEqualTo(4);
            assertThat(columns[0]).as(out).isEqualTo("LISTEN");
            return Integer.parseInt(columns[2]);
        }
    }
}
