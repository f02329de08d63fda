package io.pintle.bench.sync;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;

/**
 * The Pintle server as it is deployed, {@code java -jar pintle.jar serve --config …}, in its own JVM like nginx
 * and cf-serverd run in their own processes; the access log is turned off (nginx's is off too).
 */
final class PintleProcess implements AutoCloseable {
    private static final Duration START_LIMIT = Duration.ofSeconds(60);
    /** The server's heap: fixed, as in deploy/systemd. */
    private static final String HEAP = "512m";

    private final Process process;

    private PintleProcess(Process process) {
        this.process = process;
    }

    /**
     * @param jar {@code server/target/pintle.jar}
     * @param config the demo layout's configuration, listening on 127.0.0.1:{@code port}
     * @param port the port
     * @param log where its output goes
     * @return the running server
     * @throws IOException if it does not start
     */
    static PintleProcess start(Path jar, Path config, int port, Path log) throws IOException, InterruptedException {
        Files.writeString(config, "\n[log]\naccess = false\n", StandardOpenOption.APPEND);
        String java = ProcessHandle.current().info().command().orElse("java");
        Process process = new ProcessBuilder(List.of(java, "-Xms" + HEAP, "-Xmx" + HEAP, "-jar", jar.toString(),
                "serve", "--config", config.toString()))
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        try {
            Ports.awaitListening(port, START_LIMIT, process);
        } catch (IOException e) {
            process.destroy();
            throw new IOException(e.getMessage() + "; Pintle said: " + Files.readString(log), e);
        }
        return new PintleProcess(process);
    }

    /** @return the server's process id */
    long pid() {
        return process.pid();
    }

    @Override
    public void close() {
        Ports.stop(process, Duration.ofSeconds(15));
    }
}
