package io.pintle.bench.sync;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Comparator;
import java.util.stream.Stream;
import java.util.zip.GZIPInputStream;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;

/**
 * Pintle's {@code ?view=archive}: one GET with {@code If-None-Match} (the archive's ETag from the previous sync);
 * on 200 the {@code tar.gz} stream is unpacked as it arrives into a staging directory next to the destination,
 * which then replaces it (rename the old one away, rename the new one in, delete the old one), as an agent
 * would to never leave a half-updated tree.
 */
final class ArchiveSync implements Contestant {
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(60);
    private static final int GZIP_BUFFER_BYTES = 64 * 1024;

    private final String directoryPath;
    private final TlsFactory tls;
    private String etag;

    /**
     * @param directoryPath URL path of the tree's directory, without trailing slash
     * @param tls client TLS contexts
     */
    ArchiveSync(String directoryPath, TlsFactory tls) {
        this.directoryPath = directoryPath;
        this.tls = tls;
    }

    @Override
    public String name() {
        return "Pintle archive";
    }

    @Override
    public String server() {
        return Servers.PINTLE;
    }

    @Override
    public void forget() {
        etag = null;
    }

    @Override
    public Outcome sync(Path destination, int port) throws Exception {
        HttpClient http = HttpClient.newBuilder()
                .sslContext(tls.create())
                .version(HttpClient.Version.HTTP_2)
                .connectTimeout(Duration.ofSeconds(10))
                .build();
        HttpRequest.Builder request = HttpRequest.newBuilder(
                        URI.create("https://127.0.0.1:" + port + directoryPath + "/?view=archive"))
                .timeout(REQUEST_TIMEOUT)
                .GET();
        if (etag != null) {
            request.header("If-None-Match", etag);
        }
        HttpResponse<InputStream> response = http.send(request.build(), HttpResponse.BodyHandlers.ofInputStream());
        try (InputStream body = response.body()) {
            if (response.statusCode() == 304) {
                return new Outcome(1, "304");
            }
            if (response.statusCode() != 200) {
                throw new IOException("archive: HTTP " + response.statusCode() + ": "
                        + new String(body.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8));
            }
            Path staging = destination.resolveSibling(destination.getFileName() + ".staging");
            deleteTree(staging);
            Files.createDirectories(staging);
            unpack(body, staging);
            Path old = destination.resolveSibling(destination.getFileName() + ".old");
            deleteTree(old);
            Files.move(destination, old, StandardCopyOption.ATOMIC_MOVE);
            Files.move(staging, destination, StandardCopyOption.ATOMIC_MOVE);
            deleteTree(old);
            etag = response.headers().firstValue("ETag").orElse(null);
        }
        return new Outcome(1, "200");
    }

    private static void unpack(InputStream body, Path into) throws IOException {
        try (TarArchiveInputStream tar = new TarArchiveInputStream(new GZIPInputStream(body, GZIP_BUFFER_BYTES))) {
            TarArchiveEntry entry;
            while ((entry = tar.getNextEntry()) != null) {
                Path path = into.resolve(entry.getName()).normalize();
                if (!path.startsWith(into) || path.equals(into)) {
                    if (path.equals(into)) {
                        continue;
                    }
                    throw new IOException("archive entry outside the tree: " + entry.getName());
                }
                if (entry.isDirectory()) {
                    Files.createDirectories(path);
                } else if (entry.isSymbolicLink()) {
                    Files.createDirectories(path.getParent());
                    Files.createSymbolicLink(path, Path.of(entry.getLinkName()));
                } else if (entry.isFile()) {
                    Files.createDirectories(path.getParent());
                    Files.copy(tar, path);
                } else {
                    throw new IOException("unexpected archive entry " + entry.getName());
                }
            }
        }
    }

    static void deleteTree(Path root) throws IOException {
        if (!Files.exists(root, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(root)) {
            for (Path path : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(path);
            }
        }
    }
}
