package io.pintle.bench.uploads;

import io.pintle.bench.harness.CommandLine;
import io.pintle.bench.sync.Nginx;
import io.pintle.bench.sync.PintleProcess;
import io.pintle.bench.sync.Ports;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A server under test, running as a child of this JVM on 127.0.0.1, and where its uploads land.
 *
 * @param name {@code Pintle} or {@code nginx}
 * @param port its TLS port
 * @param processes its processes now (nginx: the master and its worker)
 * @param reports where {@code PUT /reports/<name>} puts {@code <name>}
 * @param bodyTemp nginx's {@code client_body_temp_path}, where a body waits before its rename, or null (Pintle's
 *     temporary files are hidden files in {@code reports})
 * @param command how it was started, for the report
 * @param stop stops it
 */
record UploadTarget(String name, int port, Supplier<List<ProcessHandle>> processes, Path reports, Path bodyTemp,
        String command, Runnable stop) implements AutoCloseable {
    private static final Pattern GENERAL_LISTEN = Pattern.compile("(?m)^listen = \"127\\.0\\.0\\.1:0\"$");

    /** @return the URL the agents' curl appends a report's name to */
    String url() {
        return "https://127.0.0.1:" + port + "/reports/";
    }

    @Override
    public void close() {
        stop.run();
    }

    /**
     * Pintle as deployed, {@code java OPTIONS -jar pintle.jar serve --config …}, on the demo's configuration with
     * its own port and the options' block appended, pinned with {@code taskset} when asked.
     */
    static UploadTarget pintle(UploadLayout layout, UploadOptions options, Path work)
            throws IOException, InterruptedException {
        int port = Ports.free();
        String demo = Files.readString(layout.demo().config());
        Matcher listen = GENERAL_LISTEN.matcher(demo);
        if (!listen.find()) {
            throw new IOException("no [general] listen line in " + layout.demo().config());
        }
        String config = listen.replaceFirst("listen = \"127.0.0.1:" + port + "\"") + "\n" + options.pintleConfig();
        // Relative paths in the configuration are relative to its file: keep it beside the demo's.
        Path file = layout.demo().directory().resolve("pintle-uploads.toml");
        Files.writeString(file, config);
        List<String> launcher = CommandLine.taskset(options.serverCpu() < 0 ? null
                : Integer.toString(options.serverCpu()));
        PintleProcess process = PintleProcess.start(launcher, options.pintleJvmOptions(), options.pintleJar(), file,
                port, work.resolve("pintle.log"));
        String command = String.join(" ", process.command()).replace(file.toString(), "<work>/pintle-uploads.toml");
        return new UploadTarget("Pintle", port, () -> List.of(process.handle()),
                layout.pintleReports().orElseThrow(), null, command, process::close);
    }

    /**
     * nginx's WebDAV {@code PUT} as a Rudder vhost would be with it: {@code dav_methods PUT}, no directory creation,
     * the body's temporary file on the same file system as the destination (so the final step is a rename), Basic
     * auth from the same htpasswd file, any other method refused (Apache's {@code LimitExcept PUT}); one worker,
     * pinned with nginx's own {@code worker_cpu_affinity}; TLS 1.3 only with the demo's server key, no client
     * certificate asked for; HTTP/2 offered by ALPN as Pintle does; no access log.
     */
    static UploadTarget nginx(UploadLayout layout, UploadOptions options, Path work)
            throws IOException, InterruptedException {
        Path prefix = Files.createDirectories(work.resolve("nginx"));
        Path temp = Files.createDirectories(prefix.resolve("temp"));
        Path reports = Files.createDirectories(work.resolve("nginx-reports"));
        int port = Ports.free();
        String affinity = options.serverCpu() < 0 ? ""
                : "worker_cpu_affinity " + Integer.toBinaryString(1 << options.serverCpu()) + ";";
        Path config = prefix.resolve("nginx.conf");
        Files.writeString(config, String.join("\n",
                Nginx.userDirective(),
                "worker_processes 1;",
                affinity,
                Nginx.pidAndErrorLog(prefix),
                "events { worker_connections 4096; }",
                "http {",
                "  access_log off;",
                Nginx.tempPaths(temp),
                "  server {",
                "    listen 127.0.0.1:" + port + " ssl http2;",
                "    ssl_certificate " + layout.certificate() + ";",
                "    ssl_certificate_key " + layout.key() + ";",
                "    ssl_protocols TLSv1.3;",
                "    location /reports/ {",
                "      alias " + reports + "/;",
                "      auth_basic \"Rudder WebDAV\";",
                "      auth_basic_user_file " + layout.htpasswd() + ";",
                "      dav_methods PUT;",
                "      create_full_put_path off;",
                "      limit_except PUT { deny all; }",
                "    }",
                "    location / { return 404; }",
                "  }",
                "}",
                ""));
        Nginx nginx = Nginx.run(prefix, config, port);
        return new UploadTarget("nginx", port, nginx::processes, reports, temp.resolve("body"),
                nginx.version() + ", " + config.getFileName() + " in the report's directory", nginx::close);
    }
}
