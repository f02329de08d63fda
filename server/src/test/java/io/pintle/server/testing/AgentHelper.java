package io.pintle.server.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The agent helper as pintle-agent.socket and pintle-agent@.service run it, without systemd as PID 1: systemd's own
 * {@code systemd-socket-activate --accept --inetd} listens on a Unix socket and starts the real {@code
 * deploy/lib/pintle-agent-run} for each connection, the connection as its standard input and output, with the
 * unit's {@code PINTLE_AGENT_RUDDER} pointing at a fake agent. Tests that need it are skipped where the tool is
 * missing (it comes with systemd; .ci/run has it).
 */
public final class AgentHelper implements AutoCloseable {
    /** The script the package installs as /usr/lib/pintle/pintle-agent-run. */
    public static final Path SCRIPT = Path.of("../deploy/lib/pintle-agent-run").toAbsolutePath().normalize();
    private static final Path TOOL = Path.of("/usr/bin/systemd-socket-activate");

    private final Process process;
    private final Path socket;

    private AgentHelper(Process process, Path socket) {
        this.process = process;
        this.socket = socket;
    }

    /**
     * Starts listening, and returns once the socket exists.
     *
     * @param socket where to listen
     * @param rudder the program the helper runs as {@code rudder}
     * @param log where the tool's own lines go
     * @return the running helper
     * @throws Exception when it does not listen within 30 s
     */
    public static AgentHelper start(Path socket, Path rudder, Path log) throws Exception {
        assumeThat(Files.isExecutable(TOOL)).as("systemd-socket-activate (systemd) is installed").isTrue();
        assertThat(SCRIPT).isExecutable();
        Process process = new ProcessBuilder(List.of(TOOL.toString(), "--listen=" + socket, "--accept", "--inetd",
                "--setenv=PINTLE_AGENT_RUDDER=" + rudder, SCRIPT.toString()))
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        // The file appears at bind(), before listen(): a connection in between is refused (a test saw its remote
        // run end in 20 ms with "cannot reach the agent helper" under load). Wait for the kernel to list it as
        // listening; a probe connection instead would start the helper script for nothing.
        Await.until(Duration.ofSeconds(30), socket + " listening", () -> {
            assertThat(process.isAlive()).as("systemd-socket-activate exited: %s", Files.readString(log)).isTrue();
            return listening(socket);
        });
        return new AgentHelper(process, socket);
    }

    /**
     * Whether a Unix socket at this path is listening: a line of {@code /proc/net/unix} with its path and the
     * accepting flag (__SO_ACCEPTCON, 0x10000) in its Flags column.
     */
    private static boolean listening(Path socket) throws IOException {
        if (!Files.exists(socket)) {
            return false;
        }
        String path = socket.toAbsolutePath().toString();
        // "Num RefCount Protocol Flags Type St Inode Path"; readAllLines, not readString: procfs reports size 0.
        for (String line : Files.readAllLines(Path.of("/proc/net/unix"))) {
            String[] columns = line.trim().split("\\s+");
            if (columns.length >= 8 && columns[7].equals(path)
                    && (Long.parseLong(columns[3], 16) & 0x10000L) != 0) {
                return true;
            }
        }
        return false;
    }

    /** @return its socket */
    public Path socket() {
        return socket;
    }

    @Override
    public void close() throws IOException {
        process.destroy();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        Files.deleteIfExists(socket);
    }
}
