package io.pintle.bench.sync;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * nginx from the Debian package, as Rudder's Apache vhost serves policies (rudder-domain.md §0): TLS 1.3 only,
 * client certificate required and verified against the nodes' certificates, and the certificate's {@code UID}
 * must be the node id in {@code /policies/<id>/…}. Its own prefix directory, configuration and logs under the
 * benchmark's temporary directory; it runs in the foreground as a child of the harness and is stopped by its pid.
 */
public final class Nginx implements AutoCloseable {
    private static final Duration START_LIMIT = Duration.ofSeconds(20);

    private final Process process;
    private final String version;

    private Nginx(Process process, String version) {
        this.process = process;
        this.version = version;
    }

    /**
     * @param prefix a fresh directory for configuration, logs and temporary files
     * @param share the directory served as {@code /policies/}
     * @param certificate the server's certificate (PEM)
     * @param key its key (PEM)
     * @param clientCertificates the nodes' certificates (PEM bundle)
     * @param port the port on 127.0.0.1
     * @return the running server
     * @throws IOException if it does not start
     */
    static Nginx start(Path prefix, Path share, Path certificate, Path key, Path clientCertificates, int port)
            throws IOException, InterruptedException {
        Path root = Files.createDirectories(prefix.resolve("root"));
        Files.createSymbolicLink(root.resolve("policies"), share);
        Files.createDirectories(prefix.resolve("temp"));
        Path config = prefix.resolve("nginx.conf");
        Files.writeString(config, String.join("\n",
                // The master reads the keys; the workers read the tree, which is in the harness's private
                // temporary directory: they run as the harness's user ("user" only matters when that is root).
                userDirective(),
                "worker_processes 2;",
                pidAndErrorLog(prefix),
                "events { worker_connections 1024; }",
                "http {",
                "  access_log off;",
                "  default_type application/octet-stream;",
                "  sendfile on;",
                "  tcp_nopush on;",
                // One connection per sync whatever the tree size (the default closes it after 1,000 requests).
                "  keepalive_requests 100000;",
                tempPaths(prefix.resolve("temp")),
                clientUidMap(),
                "  server {",
                "    listen 127.0.0.1:" + port + " ssl http2;",
                "    ssl_certificate " + certificate + ";",
                "    ssl_certificate_key " + key + ";",
                "    ssl_protocols TLSv1.3;",
                "    ssl_client_certificate " + clientCertificates + ";",
                "    ssl_verify_client on;",
                "    ssl_verify_depth 1;",
                "    root " + root + ";",
                "    location ~ ^/policies/(?<node>[^/]+)/ {",
                "      if ($client_uid != $node) { return 403; }",
                "    }",
                "    location / { return 404; }",
                "  }",
                "}",
                ""));
        return run(prefix, config, port);
    }

    /**
     * Starts nginx in the foreground on a configuration written by the caller (its {@code pid} and logs under
     * {@code prefix}, as {@link #start} writes them) and waits until it listens.
     *
     * @param prefix the prefix directory: {@code stdout.log} and {@code error.log} are read from it on failure
     * @param config the configuration file
     * @param port a port it listens on, 127.0.0.1
     * @return the running server
     * @throws IOException if it does not start
     */
    public static Nginx run(Path prefix, Path config, int port) throws IOException, InterruptedException {
        return run(List.of(), prefix, config, port);
    }

    /**
     * {@link #run(Path, Path, int)} under a launcher: {@code taskset -c 0} pins the master, and so its workers.
     *
     * @param launcher the command prefix, or nothing
     */
    public static Nginx run(List<String> launcher, Path prefix, Path config, int port)
            throws IOException, InterruptedException {
        List<String> command = new java.util.ArrayList<>(launcher);
        command.addAll(List.of("nginx", "-p", prefix + "/", "-c", config.toString(), "-g", "daemon off;"));
        Process process = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(prefix.resolve("stdout.log").toFile())
                .start();
        try {
            Ports.awaitListening(port, START_LIMIT, process);
        } catch (IOException e) {
            process.destroy();
            throw new IOException(e.getMessage() + "; nginx said: " + Files.readString(prefix.resolve("stdout.log"))
                    + Files.readString(prefix.resolve("error.log")), e);
        }
        Process versionCommand = new ProcessBuilder("nginx", "-v").redirectErrorStream(true).start();
        String version = new String(versionCommand.getInputStream().readAllBytes()).strip();
        versionCommand.waitFor(10, TimeUnit.SECONDS);
        return new Nginx(process, version);
    }

    /**
     * @return the {@code user} directive a bench's nginx.conf needs: "user root;" when the harness runs as root
     *     (nginx would otherwise switch its workers to nobody, who cannot read the harness's private files), else
     *     an empty line
     */
    public static String userDirective() {
        return "root".equals(System.getProperty("user.name")) ? "user root;" : "";
    }

    /**
     * @param prefix the prefix directory
     * @return the {@code pid} and {@code error_log} lines (main context), both under {@code prefix}
     */
    public static String pidAndErrorLog(Path prefix) {
        return String.join("\n",
                "pid " + prefix.resolve("nginx.pid") + ";",
                "error_log " + prefix.resolve("error.log") + " warn;");
    }

    /**
     * @param temp a directory of the harness's
     * @return the five {@code *_temp_path} lines ({@code http} context) under {@code temp}, so that nginx writes
     *     nothing outside the harness's directories
     */
    public static String tempPaths(Path temp) {
        return String.join("\n",
                "  client_body_temp_path " + temp.resolve("body") + ";",
                "  proxy_temp_path " + temp.resolve("proxy") + ";",
                "  fastcgi_temp_path " + temp.resolve("fastcgi") + ";",
                "  uwsgi_temp_path " + temp.resolve("uwsgi") + ";",
                "  scgi_temp_path " + temp.resolve("scgi") + ";");
    }

    /**
     * @return the {@code map} ({@code http} context) that sets {@code $client_uid} to the client certificate's
     *     {@code UID}, empty when it has none: what a {@code location} compares with the node id of the path
     */
    public static String clientUidMap() {
        return String.join("\n",
                "  map $ssl_client_s_dn $client_uid {",
                "    default \"\";",
                "    \"~(^|,)UID=(?<uid>[^,]+)\" $uid;",
                "  }");
    }

    /** @return what {@code nginx -v} prints */
    public String version() {
        return version;
    }

    /** @return the master process id (its workers are its children) */
    public long pid() {
        return process.pid();
    }

    /** @return the master and the workers */
    public List<ProcessHandle> processes() {
        return java.util.stream.Stream.concat(java.util.stream.Stream.of(process.toHandle()),
                process.toHandle().descendants()).toList();
    }

    @Override
    public void close() {
        Ports.stop(process, Duration.ofSeconds(10));
    }
}
