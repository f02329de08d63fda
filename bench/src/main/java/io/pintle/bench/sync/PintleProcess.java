package io.pintle.bench.sync;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The Pintle server as it is deployed, {@code java -jar pintle.jar serve --config …}, in its own JVM like nginx
 * and cf-serverd run in their own processes; the access log is turned off (nginx's is off too).
 */
public final class PintleProcess implements AutoCloseable {
    private static final Duration START_LIMIT = Duration.ofSeconds(60);
    /** The server's heap: fixed, as in deploy/systemd. */
    private static final String HEAP = "512m";

    private final Process process;
    private final List<String> command;

    private PintleProcess(Process process, List<String> command) {
        this.process = process;
        this.command = List.copyOf(command);
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
        return start(List.of(), jar, config, port, log);
    }

    /**
     * As {@link #start(Path, Path, int, Path)}, under a launcher (e.g. {@code taskset -c 0}).
     *
     * @param launcher the command words put before {@code java}, or none
     * @param jar {@code server/target/pintle.jar}
     * @param config the configuration, listening on 127.0.0.1:{@code port}, without a {@code [log]} table
     * @param port the port
     * @param log where its output goes
     * @return the running server
     * @throws IOException if it does not start
     */
    public static PintleProcess start(List<String> launcher, Path jar, Path config, int port, Path log)
            throws IOException, InterruptedException {
        return start(launcher, List.of("-Xms" + HEAP, "-Xmx" + HEAP), jar, config, port, log);
    }

    /**
     * As {@link #start(List, Path, Path, int, Path)}, with other JVM options than the fixed 512 MB heap (e.g. the
     * systemd unit's).
     *
     * @param launcher the command words put before {@code java}, or none
     * @param jvmOptions the JVM's options
     * @param jar {@code server/target/pintle.jar}
     * @param config the configuration, listening on 127.0.0.1:{@code port}, without a {@code [log]} table
     * @param port the port
     * @param log where its output goes
     * @return the running server
     * @throws IOException if it does not start
     */
    public static PintleProcess start(List<String> launcher, List<String> jvmOptions, Path jar, Path config, int port,
            Path log) throws IOException, InterruptedException {
        Files.writeString(config, "\n[log]\naccess = false\n", StandardOpenOption.APPEND);
        String java = ProcessHandle.current().info().command().orElse("java");
        List<String> command = new ArrayList<>(launcher);
        command.add(java);
        command.addAll(jvmOptions);
        command.addAll(List.of("-jar", jar.toString(), "serve", "--config", config.toString()));
        Process process = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        try {
            Ports.awaitListening(port, START_LIMIT, process);
        } catch (IOException e) {
            process.destroy();
            throw new IOException(e.getMessage() + "; Pintle said: " + Files.readString(log), e);
        }
        return new PintleProcess(process, command);
    }

    /** @return the server's process id */
    public long pid() {
        return process.pid();
    }

    /** @return the command line it was started with */
    public List<String> command() {
        return command;
    }

    /** @return the server's process */
    public ProcessHandle handle() {
        return process.toHandle();
    }

    /** @return whether the server is still running */
    public boolean isAlive() {
        return process.isAlive();
    }

    @Override
    public void close() {
        Ports.stop(process, Duration.ofSeconds(15));
    }
}
