package io.pintle.bench.fleet;

import io.pintle.bench.sync.Ports;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * One Pintle server of the fleet in its own JVM, started as the package runs it: {@code deploy/bin/pintle serve}
 * with the unit's JVM options. With socket activation (the package's pintle.socket) {@code systemd-socket-activate}
 * holds the port and a loop starts the server again whenever it exits (pintle.service's restart): a restart is a
 * SIGTERM to the JVM. Without it (replicas, whose death must be seen by HAProxy) the JVM binds its port itself.
 */
final class FleetServer implements AutoCloseable {
    private static final Path ACTIVATE = Path.of("/usr/bin/systemd-socket-activate");
    private static final Duration READY_LIMIT = Duration.ofSeconds(180);
    private static final HttpClient ADMIN = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    final String name;
    final String host;
    final int port;
    final int adminPort;
    private final Path dir;
    private final boolean activated;
    private final List<String> command;
    private Process process;

    private FleetServer(String name, String host, int port, int adminPort, Path dir, boolean activated,
            List<String> command) {
        this.name = name;
        this.host = host;
        this.port = port;
        this.adminPort = adminPort;
        this.dir = dir;
        this.activated = activated;
        this.command = command;
    }

    /**
     * Writes the configuration and starts the server; returns once it is ready ({@code /ready} 200).
     *
     * @param name root, relay-N or replica-N
     * @param dir its directory (server/, lib/, share/ ... as {@link FleetLayout} writes them)
     * @param inputs the directory its inputs come from (a replica's are the root's)
     * @param host its loopback address
     * @param port its port
     * @param extraToml tables appended to the configuration ([upstream] on a relay, [general] extras)
     * @param activated whether it runs under socket activation
     * @param options the fleet's options (jar, wrapper, JVM options, CPUs)
     */
    static FleetServer start(String name, Path dir, Path inputs, String host, int port, String role,
            String generalExtra, String extraToml, boolean activated, FleetOptions options)
            throws IOException, InterruptedException {
        Files.createDirectories(dir);
        int adminPort = Ports.free();
        Path config = dir.resolve("pintle.toml");
        String in = inputs.toAbsolutePath().toString();
        String own = dir.toAbsolutePath().toString();
        Files.writeString(config, String.join("\n",
                "[general]",
                "node_id_file = \"" + in + "/server/uuid.hive\"",
                "role = \"" + role + "\"",
                "listen = \"" + host + ":" + port + "\"",
                generalExtra,
                "[tls]",
                "certificate = \"" + in + "/server/agent.cert\"",
                "key = \"" + in + "/server/localhost.priv\"",
                "[nodes]",
                "list = \"" + in + "/lib/nodeslist.json\"",
                "certificates = [\"" + in + "/lib/nodescerts.pem\"]",
                "[networks]",
                "allowed_file = \"" + in + "/lib/networks.conf\"",
                "policy_server_file = \"\"",
                "[paths]",
                "share = \"" + in + "/share\"",
                "shared_folder = \"" + in + "/shared-folder\"",
                "shared_files = \"" + in + "/shared-files\"",
                "[uploads]",
                "inventories = \"" + own + "/uploads/inventories\"",
                "inventory_updates = \"" + own + "/uploads/inventory-updates\"",
                "reports = \"" + own + "/uploads/reports\"",
                "htpasswd_initial = \"" + in + "/server/htpasswd-webdav-initial\"",
                "htpasswd = \"" + in + "/server/htpasswd-webdav\"",
                // The simulated agents send unsigned reports: the edge check would refuse them.
                "verify_signatures = false",
                "[admin]",
                "listen = \"127.0.0.1:" + adminPort + "\"",
                extraToml,
                ""), StandardCharsets.UTF_8);
        for (String sub : List.of("uploads/inventories", "uploads/inventory-updates", "uploads/reports")) {
            Files.createDirectories(dir.resolve(sub));
        }
        // A server closed before (bench/relaysync starts its relays again in their directories): its restart
        // loop would stop at once.
        Files.deleteIfExists(dir.resolve("stop"));
        List<String> command = new ArrayList<>(io.pintle.bench.harness.CommandLine.taskset(options.serverCpus()));
        String java = ProcessHandle.current().info().command().orElse("java");
        String javaHome = Path.of(java).getParent().getParent().toString();
        if (activated) {
            if (!Files.isExecutable(ACTIVATE)) {
                throw new IOException(ACTIVATE + " is missing (Debian package systemd): the fleet runs its servers "
                        + "under socket activation, as the package does");
            }
            Path loop = Files.writeString(dir.resolve("restart-loop.sh"), """
                    dir=$1; shift
                    while [ ! -e "$dir/stop" ]; do
                        sh -c 'LISTEN_PID=$$; export LISTEN_PID; exec "$@"' server "$@"
                        echo "restart-loop: server exited with $?"
                    done
                    """);
            command.addAll(List.of(ACTIVATE.toString(), "-l", host + ":" + port,
                    "-E", "PATH=" + System.getenv("PATH"), "-E", "PINTLE_JAR=" + options.pintleJar().toAbsolutePath(),
                    "-E", "JAVA_HOME=" + javaHome,
                    "-E", "PINTLE_JAVA_OPTS=" + String.join(" ", options.pintleJvmOptions()),
                    "sh", loop.toString(), dir.toString(), options.wrapper().toAbsolutePath().toString(), "serve",
                    "--config", config.toString()));
        } else {
            command.addAll(List.of(options.wrapper().toAbsolutePath().toString(), "serve", "--config",
                    config.toString()));
        }
        FleetServer server = new FleetServer(name, host, port, adminPort, dir, activated, command);
        server.launch(javaHome, options);
        try {
            server.awaitReady();
        } catch (IOException | InterruptedException | RuntimeException e) {
            server.close();
            throw e;
        }
        return server;
    }

    private void launch(String javaHome, FleetOptions options) throws IOException {
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("server.log").toFile()));
        builder.environment().put("JAVA_HOME", javaHome);
        builder.environment().put("PINTLE_JAR", options.pintleJar().toAbsolutePath().toString());
        builder.environment().put("PINTLE_JAVA_OPTS", String.join(" ", options.pintleJvmOptions()));
        process = builder.start();
    }

    /** Waits for {@code /ready}; under socket activation a first connection starts the JVM. */
    void awaitReady() throws IOException, InterruptedException {
        long deadline = System.nanoTime() + READY_LIMIT.toNanos();
        boolean poked = false;
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IOException(name + " exited with " + process.exitValue() + ": " + tail());
            }
            if (activated && !poked) {
                try (Socket socket = new Socket()) {
                    socket.connect(new InetSocketAddress(host, port), 500);
                    poked = true;
                } catch (IOException notYet) {
                    Thread.sleep(50);
                    continue;
                }
            }
            if (ready()) {
                return;
            }
            Thread.sleep(100);
        }
        throw new IOException(name + " not ready after " + READY_LIMIT + ": " + tail());
    }

    boolean ready() throws InterruptedException {
        try {
            HttpResponse<Void> response = ADMIN.send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + adminPort + "/ready")).timeout(Duration.ofSeconds(2)).build(),
                    HttpResponse.BodyHandlers.discarding());
            return response.statusCode() == 200;
        } catch (IOException notYet) {
            return false;
        }
    }

    /** @return the server's JVM, when one runs */
    Optional<ProcessHandle> jvm() {
        if (!activated) {
            return process.isAlive() ? Optional.of(process.toHandle()) : Optional.empty();
        }
        // taskset and systemd-socket-activate exec; the loop's child is the JVM (the wrapper execs java).
        return process.toHandle().descendants().filter(p -> p.info().command().map(c -> c.endsWith("java"))
                .orElse(false)).findFirst();
    }

    /**
     * Restarts the server as {@code systemctl restart pintle.service} does under pintle.socket: SIGTERM to the JVM
     * (a graceful stop), the loop starts a new one, and connections wait in the socket's queue meanwhile.
     *
     * @return milliseconds from the signal until the new JVM was ready
     */
    long restart() throws IOException, InterruptedException {
        if (!activated) {
            throw new IllegalStateException(name + " does not run under socket activation");
        }
        long started = System.nanoTime();
        ProcessHandle old = jvm().orElseThrow(() -> new IOException(name + " has no JVM running"));
        old.destroy();
        try {
            old.onExit().get(60, java.util.concurrent.TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            old.destroyForcibly();
        }
        long deadline = System.nanoTime() + READY_LIMIT.toNanos();
        while (System.nanoTime() < deadline) {
            Optional<ProcessHandle> next = jvm();
            if (next.isPresent() && next.get().pid() != old.pid() && ready()) {
                return (System.nanoTime() - started) / 1_000_000;
            }
            Thread.sleep(50);
        }
        throw new IOException(name + " not back after " + READY_LIMIT + ": " + tail());
    }

    /** Kills the JVM (SIGKILL), as a machine that dies. Only for servers without socket activation. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor();
    }

    /** Starts a killed server again (same configuration and port) and waits until it is ready. */
    void startAgain(FleetOptions options) throws IOException, InterruptedException {
        String java = ProcessHandle.current().info().command().orElse("java");
        launch(Path.of(java).getParent().getParent().toString(), options);
        try {
            awaitReady();
        } catch (IOException | InterruptedException | RuntimeException e) {
            close();
            throw e;
        }
    }

    String tail() {
        try {
            List<String> lines = Files.readAllLines(dir.resolve("server.log"));
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
        } catch (IOException e) {
            return "(no log: " + e.getMessage() + ")";
        }
    }

    Path log() {
        return dir.resolve("server.log");
    }

    Path dir() {
        return dir;
    }

    @Override
    public void close() {
        // Taken first: once the loop is gone its JVM is no longer its descendant.
        List<ProcessHandle> below = process.toHandle().descendants().toList();
        try {
            if (activated) {
                Files.writeString(dir.resolve("stop"), "");
                jvm().ifPresent(ProcessHandle::destroy);
            }
        } catch (IOException e) {
            // The loop's stop file could not be written: the forcible stop below ends it anyway.
        }
        Ports.stop(process, Duration.ofSeconds(20));
        for (ProcessHandle child : below) {
            try {
                child.onExit().get(20, java.util.concurrent.TimeUnit.SECONDS);
            } catch (Exception e) {
                child.destroyForcibly();
            }
        }
        process.toHandle().descendants().forEach(ProcessHandle::destroyForcibly);
    }
}
