package io.pintle.bench.perf;

import io.pintle.bench.sync.Nginx;
import io.pintle.bench.sync.Ports;
import io.pintle.server.demo.DemoLayout;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Starts the servers under test on 127.0.0.1, each in its own processes: Pintle, one JVM per server key type (as
 * deployed: {@code java -jar pintle.jar serve --config …}), and nginx, one master and its workers with one listener
 * per key type.
 */
final class Contenders {
    private static final Duration PINTLE_START_LIMIT = Duration.ofSeconds(90);
    private static final Pattern GENERAL_LISTEN = Pattern.compile("(?m)^listen = \"127\\.0\\.0\\.1:0\"$");

    private Contenders() {}

    /** A Pintle JVM serving with one server key. */
    record PintleServer(ServerKey key, int port, Process process, Path config, Path log) implements AutoCloseable {
        List<ProcessHandle> processes() {
            return List.of(process.toHandle());
        }

        @Override
        public void close() {
            Ports.stop(process, Duration.ofSeconds(15));
        }
    }

    /**
     * Starts one Pintle per key type, one after the other (so that their start-ups do not compete).
     *
     * @param layout the files and keys
     * @param options JVM, JVM options and configuration block
     * @param work where configurations and logs go
     * @return the running servers
     */
    static Map<ServerKey, PintleServer> startPintle(PerfLayout layout, PerfOptions options, Path work)
            throws IOException, InterruptedException {
        Map<ServerKey, PintleServer> servers = new EnumMap<>(ServerKey.class);
        try {
            for (ServerKey key : ServerKey.values()) {
                servers.put(key, startPintle(layout, options, work, key));
            }
        } catch (IOException | InterruptedException | RuntimeException e) {
            servers.values().forEach(PintleServer::close);
            throw e;
        }
        return servers;
    }

    private static PintleServer startPintle(PerfLayout layout, PerfOptions options, Path work, ServerKey key)
            throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(options.pintleJava());
        command.addAll(options.pintleJvmOptions());
        return startPintle(layout, command, options.pintleJar(), options.pintleConfig(), options.pintleTlsProvider(),
                key, "pintle-" + key.label(), work);
    }

    /**
     * Starts one Pintle JVM and waits for it to listen.
     *
     * @param launcher the command up to the JVM's options included ({@code [taskset -c 0] java -Xmx…})
     * @param jar the server's runnable jar
     * @param block TOML appended to the demo's configuration
     * @param tlsProvider its {@code [tls] provider}, or null for Pintle's default
     * @param key the server key it serves with
     * @param name names its configuration and log files (unique per JVM)
     * @param work where its log goes
     * @return the running server
     */
    static PintleServer startPintle(PerfLayout layout, List<String> launcher, Path jar, String block,
            String tlsProvider, ServerKey key, String name, Path work) throws IOException, InterruptedException {
        int port = Ports.free();
        // The demo sizes its own [limits] for one person with curl; the benchmark's configuration sets its own.
        String demoLimits = "[limits]\nmax_connections = " + DemoLayout.MAX_CONNECTIONS + "\n";
        String demo = Files.readString(layout.demo().config());
        if (!demo.contains(demoLimits)) {
            throw new IOException("no demo [limits] table in " + layout.demo().config());
        }
        demo = demo.replace(demoLimits, "");
        Matcher listen = GENERAL_LISTEN.matcher(demo);
        if (!listen.find()) {
            throw new IOException("no [general] listen line in " + layout.demo().config());
        }
        ServerKey.Files files = layout.serverKeys().get(key);
        String config = listen.replaceFirst("listen = \"127.0.0.1:" + port + "\"")
                .replace("certificate = \"server/agent.cert\"", "certificate = \"" + files.certificate() + "\"")
                .replace("key = \"server/localhost.priv\"", "key = \"" + files.key() + "\""
                        + (tlsProvider != null ? "\nprovider = \"" + tlsProvider + "\"" : ""))
                + "\n" + block + "\n";
        // Relative paths in the configuration are relative to its file: keep it beside the demo's.
        Path configFile = layout.directory().resolve(name + ".toml");
        Files.writeString(configFile, config);
        List<String> command = new ArrayList<>(launcher);
        command.addAll(List.of("-jar", jar.toString(), "serve", "--config", configFile.toString()));
        Path log = work.resolve(name + ".log");
        Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            Ports.awaitListening(port, PINTLE_START_LIMIT, process);
        } catch (IOException e) {
            process.destroy();
            throw new IOException(e.getMessage() + "; Pintle said: " + Files.readString(log), e);
        }
        return new PintleServer(key, port, process, configFile, log);
    }

    /** nginx with one listener per key type. */
    record NginxServer(Nginx nginx, Map<ServerKey, Integer> ports, Path config) implements AutoCloseable {
        @Override
        public void close() {
            nginx.close();
        }
    }

    /**
     * How the two methods run nginx; the rest of its configuration is the same.
     *
     * @param processes the directives on worker processes
     * @param keepaliveRequests requests per kept-alive connection (also HTTP/2's per connection)
     * @param verifyClient {@code ssl_verify_client}: {@code on} (Rudder's vhost requires a certificate),
     *     {@code optional} (Pintle's {@code want}: {@code /common/} answers without one) or {@code optional_no_ca}
     *     (asked for, its handshake signature checked, its chain not verified)
     */
    record NginxSetup(List<String> processes, long keepaliveRequests, String verifyClient) {
        /** Issue 9's method: as many workers as cores, as Debian's default configuration ("auto"). */
        static final NginxSetup ALL_CORES = new NginxSetup(
                List.of("worker_processes auto;", "worker_rlimit_nofile 20000;"), 1_000_000, "on");
        /**
         * The per-core method: one worker (on one core, as Pintle is), h2load never reconnects, and the HTTP/2
         * row's h2load cannot present a certificate.
         */
        static final NginxSetup ONE_CORE = new NginxSetup(List.of("worker_processes 1;"), 100_000_000, "optional");
        /**
         * {@link #ONE_CORE} with {@code ssl_verify_client optional_no_ca}, as the independent measurement of issue
         * 39 ran nginx: no chain verification against the nodes' certificates per handshake.
         */
        static final NginxSetup ONE_CORE_NO_CA = new NginxSetup(List.of("worker_processes 1;"), 100_000_000,
                "optional_no_ca");
    }

    /**
     * nginx as Rudder's Apache vhost serves (rudder-domain.md, "Apache routes used"), with what bench/sync's
     * {@link Nginx} does: TLS 1.3 only; a client certificate verified against the nodes' certificates
     * ({@code nodescerts.pem}: the node certificates are self-signed, so each is its own trust anchor, i.e.
     * pinned); the certificate's {@code UID} must be the node id in {@code /policies/<id>/…}; {@code /common/}
     * for any node the TLS layer admits. Sized for the idle-connection row: 16,384 connections per worker,
     * 5-minute keep-alive. One listener per server key.
     *
     * @param name its directory under {@code work} (one per nginx started)
     * @param launcher the command prefix (taskset), or nothing
     */
    static NginxServer startNginx(PerfLayout layout, Path work, String name, NginxSetup setup, List<String> launcher)
            throws IOException, InterruptedException {
        Path prefix = Files.createDirectories(work.resolve(name));
        Path root = Files.createDirectories(prefix.resolve("root"));
        Files.createSymbolicLink(root.resolve("policies"), layout.share());
        Files.createSymbolicLink(root.resolve("common"), layout.share().resolve("common"));
        Files.createDirectories(prefix.resolve("temp"));
        List<String> lines = new ArrayList<>();
        lines.add(Nginx.userDirective());
        lines.addAll(setup.processes());
        lines.addAll(List.of(
                Nginx.pidAndErrorLog(prefix),
                "events { worker_connections 16384; }",
                "http {",
                "  access_log off;",
                "  default_type application/octet-stream;",
                "  sendfile on;",
                "  tcp_nopush on;",
                "  keepalive_timeout 300s;",
                "  keepalive_requests " + setup.keepaliveRequests() + ";",
                Nginx.tempPaths(prefix.resolve("temp")),
                Nginx.clientUidMap()));
        Map<ServerKey, Integer> ports = new EnumMap<>(ServerKey.class);
        for (ServerKey key : ServerKey.values()) {
            int port = Ports.free();
            ports.put(key, port);
            lines.addAll(nginxServer(key, port, layout.serverKeys().get(key),
                    layout.directory().resolve("lib/nodescerts.pem"), root, setup.verifyClient()));
        }
        lines.add("}");
        lines.add("");
        Path config = prefix.resolve("nginx.conf");
        Files.writeString(config, String.join("\n", lines));
        // The master binds every listener before it forks the workers: one listening means all do.
        Nginx nginx = Nginx.run(launcher, prefix, config, ports.get(ServerKey.RSA_2048));
        return new NginxServer(nginx, Map.copyOf(ports), config);
    }

    /**
     * One nginx {@code server} block of the benchmarks: TLS 1.3 with the key's files, the nodes' certificates as
     * trust anchors, {@code /policies/<id>/} only to the certificate whose UID is {@code <id>} (the {@code
     * $client_uid} map), {@code /common/} to anyone the TLS layer admits.
     *
     * @param verifyClient nginx's {@code ssl_verify_client}: {@code on}, {@code optional} or {@code optional_no_ca}
     * @return its lines
     */
    static List<String> nginxServer(ServerKey key, int port, ServerKey.Files files, Path nodesCertificates, Path root,
            String verifyClient) {
        return List.of(
                "  server {",
                "    listen 127.0.0.1:" + port + " ssl http2;",
                "    ssl_certificate " + files.certificate() + ";",
                "    ssl_certificate_key " + files.key() + ";",
                "    ssl_protocols TLSv1.3;",
                "    ssl_session_cache shared:perf-" + key.label() + ":20m;",
                "    ssl_session_tickets on;",
                "    ssl_client_certificate " + nodesCertificates + ";",
                "    ssl_verify_client " + verifyClient + ";",
                "    ssl_verify_depth 1;",
                "    root " + root + ";",
                "    location ~ ^/policies/(?<node>[^/]+)/ {",
                "      if ($client_uid != $node) { return 403; }",
                "    }",
                "    location /common/ { }",
                "    location / { return 404; }",
                "  }");
    }
}
