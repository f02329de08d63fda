package io.pintle.client;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.pintle.api.dto.Manifest;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import javax.net.ssl.SSLContext;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveOutputStream;
import org.apache.commons.compress.compressors.gzip.GzipCompressorOutputStream;

/**
 * A stand-in for the server side of the sync contract, over plain HTTP (the JDK's own server), for the client's
 * unit tests: {@code /tree/?view=manifest}, {@code /tree/?view=archive} and {@code /tree/<path>}, all computed
 * from a directory on disk at each request. The real server is tested with the real client in server's SyncIT.
 * Faults are injected by the fields below.
 */
final class FakeTreeServer implements AutoCloseable {
    static final String REMOTE = "/tree";
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Path source;
    private final HttpServer server;
    /** Every request's path and query, in order. */
    final List<String> requests = new CopyOnWriteArrayList<>();
    /** Content served instead of a file's (per file and in the archive), by relative path. */
    final Map<String, byte[]> tampered = new ConcurrentHashMap<>();
    /** A status answered instead of a file, with a problem, by relative path. */
    final Map<String, Integer> refused = new ConcurrentHashMap<>();
    /** Changes the manifest before it is sent. */
    volatile UnaryOperator<Manifest> manifestEdit = UnaryOperator.identity();
    /** Runs when a manifest has been computed (for example to change the tree before the download). */
    volatile Runnable afterManifest = () -> {};

    FakeTreeServer(Path source) throws IOException {
        this.source = source;
        this.server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/", this::handle);
        server.setExecutor(java.util.concurrent.Executors.newCachedThreadPool());
        server.start();
    }

    PintleClient client() throws Exception {
        return PintleClient.builder(URI.create("http://127.0.0.1:" + server.getAddress().getPort()))
                .sslContext(SSLContext.getDefault())
                .version(java.net.http.HttpClient.Version.HTTP_1_1)
                .build();
    }

    DirectorySync sync(TreeSwap swap) throws Exception {
        PintleClient client = client();
        return new DirectorySync(client.httpClient(), client.uri("/"), java.time.Duration.ofSeconds(30), 4, swap);
    }

    private void handle(HttpExchange exchange) throws IOException {
        try (exchange) {
            URI uri = exchange.getRequestURI();
            requests.add(uri.getRawPath() + (uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery()));
            String path = uri.getRawPath();
            if (!path.startsWith(REMOTE + "/")) {
                send(exchange, 404, "no such thing".getBytes(StandardCharsets.UTF_8));
                return;
            }
            String relative = URLDecoder.decode(path.substring(REMOTE.length() + 1), StandardCharsets.UTF_8);
            String query = uri.getRawQuery();
            if (relative.isEmpty() && query != null && query.startsWith("view=manifest")) {
                Manifest manifest = manifestEdit.apply(manifest());
                afterManifest.run();
                exchange.getResponseHeaders().set("ETag", manifest.etag());
                if (manifest.etag().equals(exchange.getRequestHeaders().getFirst("If-None-Match"))) {
                    exchange.sendResponseHeaders(304, -1);
                    return;
                }
                exchange.getResponseHeaders().set("Content-Type", "application/json");
                send(exchange, 200, JSON.writeValueAsBytes(manifest));
            } else if (relative.isEmpty() && "view=archive".equals(query)) {
                exchange.getResponseHeaders().set("ETag", manifest().etag());
                exchange.getResponseHeaders().set("Content-Type", "application/gzip");
                send(exchange, 200, archive());
            } else {
                Path file = source.resolve(relative);
                Integer refusal = refused.get(relative);
                if (refusal != null) {
                    exchange.getResponseHeaders().set("Content-Type", "application/problem+json");
                    send(exchange, refusal, ("{\"type\":\"about:blank\",\"title\":\"Refused\",\"status\":"
                            + refusal + ",\"detail\":\"refused by the test\"}").getBytes(StandardCharsets.UTF_8));
                    return;
                }
                if (!Files.isRegularFile(file)) {
                    exchange.getResponseHeaders().set("Content-Type", "application/problem+json");
                    send(exchange, 404, ("{\"type\":\"about:blank\",\"title\":\"Not Found\",\"status\":404,"
                            + "\"detail\":\"no such file\"}").getBytes(StandardCharsets.UTF_8));
                    return;
                }
                send(exchange, 200, content(relative, file));
            }
        } catch (Exception e) {
            e.printStackTrace();
            throw e;
        }
    }

    private byte[] content(String relative, Path file) throws IOException {
        byte[] override = tampered.get(relative);
        return override != null ? override : Files.readAllBytes(file);
    }

    private static void send(HttpExchange exchange, int status, byte[] body) throws IOException {
        exchange.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(body);
        }
    }

    /** The manifest of the source directory as it is now. */
    Manifest manifest() throws IOException {
        List<Manifest.Entry> entries = new ArrayList<>();
        long bytes = 0;
        int files = 0;
        try (Stream<Path> walk = Files.walk(source)) {
            for (Path path : walk.sorted().toList()) {
                if (path.equals(source)) {
                    continue;
                }
                String relative = relative(path);
                String mode = mode(path);
                String mtime = Files.getLastModifiedTime(path, LinkOption.NOFOLLOW_LINKS).toInstant().toString();
                if (Files.isSymbolicLink(path)) {
                    entries.add(new Manifest.Entry(relative, Manifest.Types.SYMLINK, null, null, mtime, null,
                            Files.readSymbolicLink(path).toString()));
                } else if (Files.isDirectory(path)) {
                    entries.add(new Manifest.Entry(relative, Manifest.Types.DIRECTORY, null, mode, mtime, null, null));
                } else {
                    long size = Files.size(path);
                    entries.add(new Manifest.Entry(relative, Manifest.Types.FILE, size, mode, mtime,
                            sha256(Files.readAllBytes(path)), null));
                    bytes += size;
                    files++;
                }
            }
        }
        entries.sort((a, b) -> a.path().compareTo(b.path()));
        String etag = "\"" + sha256(JSON.writeValueAsBytes(entries)).substring(0, 32) + "\"";
        return new Manifest(Manifest.FORMAT, etag, files, bytes, entries);
    }

    private byte[] archive() throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (TarArchiveOutputStream tar = new TarArchiveOutputStream(new GzipCompressorOutputStream(bytes))) {
            tar.setLongFileMode(TarArchiveOutputStream.LONGFILE_POSIX);
            for (Manifest.Entry entry : manifest().entries()) {
                Path path = source.resolve(entry.path());
                if (entry.isDirectory()) {
                    tar.putArchiveEntry(new TarArchiveEntry(entry.path() + "/"));
                    tar.closeArchiveEntry();
                } else if (entry.isSymlink()) {
                    TarArchiveEntry link = new TarArchiveEntry(entry.path(), TarArchiveEntry.LF_SYMLINK);
                    link.setLinkName(entry.target());
                    tar.putArchiveEntry(link);
                    tar.closeArchiveEntry();
                } else {
                    byte[] content = content(entry.path(), path);
                    TarArchiveEntry file = new TarArchiveEntry(entry.path());
                    file.setSize(content.length);
                    tar.putArchiveEntry(file);
                    tar.write(content);
                    tar.closeArchiveEntry();
                }
            }
        }
        return bytes.toByteArray();
    }

    private String relative(Path path) {
        return source.relativize(path).toString().replace('\\', '/');
    }

    private static String mode(Path path) throws IOException {
        Set<PosixFilePermission> permissions = Files.getPosixFilePermissions(path, LinkOption.NOFOLLOW_LINKS);
        int bits = 0;
        for (PosixFilePermission permission : permissions) {
            bits |= 1 << (8 - permission.ordinal());
        }
        return String.format("0%03o", bits);
    }

    static String sha256(byte[] content) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(content));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
