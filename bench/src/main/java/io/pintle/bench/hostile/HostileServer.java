package io.pintle.bench.hostile;

import io.pintle.bench.sync.Ports;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Pintle as the systemd unit runs it ({@code java OPTIONS -jar pintle.jar serve --config …}), in a JVM of its own,
 * optionally pinned with {@code taskset}. {@code sync.PintleProcess} fixes a 512 MB heap; the point here is the
 * unit's heap (384 MB), under which the memory cases were seen.
 */
final class HostileServer implements AutoCloseable {
    private static final Duration START_LIMIT = Duration.ofSeconds(60);

    private final Process process;
    private final List<String> command;

    private HostileServer(Process process, List<String> command) {
        this.process = process;
        this.command = List.copyOf(command);
    }

    static HostileServer start(HostileOptions options, HostileLayout layout, Path log)
            throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(options.serverLauncher());
        command.add(ProcessHandle.current().info().command().orElse("java"));
        command.addAll(options.pintleJvmOptions());
        command.addAll(List.of("-jar", options.pintleJar().toString(), "serve", "--config",
                layout.demo().config().toString()));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            Ports.awaitListening(layout.port(), START_LIMIT, process);
            Ports.awaitListening(layout.adminPort(), START_LIMIT, process);
        } catch (IOException e) {
            Ports.stop(process, Duration.ofSeconds(5));
            throw new IOException(e.getMessage() + "; Pintle said: " + Files.readString(log), e);
        }
        return new HostileServer(process, command);
    }

    long pid() {
        return process.pid();
    }

    ProcessHandle handle() {
        return process.toHandle();
    }

    List<String> command() {
        return command;
    }

    boolean isAlive() {
        return process.isAlive();
    }

    @Override
    public void close() {
        Ports.stop(process, Duration.ofSeconds(15));
    }
}
