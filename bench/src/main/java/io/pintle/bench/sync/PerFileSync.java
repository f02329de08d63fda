package io.pintle.bench.sync;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;

/**
 * "A web server serving the same files one by one": a GET per file over one HTTP/2 connection (JDK
 * {@code HttpClient}) with up to {@link #IN_FLIGHT} requests in flight, each with {@code If-None-Match} and the
 * ETag of the previous sync when the file is there, so unchanged files cost a 304. The list of files is given to
 * the client for free: a plain web server has no listing, so a real client would need one more request (an index)
 * and could not see deletions otherwise. Each file is written to a temporary file and renamed into place.
 */
final class PerFileSync implements Contestant {
    /** Requests in flight: generous (nginx allows 128 streams), it is the per-file approach's best case. */
    static final int IN_FLIGHT = 32;
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(60);

    private final String name;
    private final String server;
    private final String directoryPath;
    private final List<String> files;
    private final TlsFactory tls;
    private final Map<String, String> etags = new ConcurrentHashMap<>();

    /**
     * @param name column title
     * @param server which server
     * @param directoryPath URL path of the tree's directory, without trailing slash
     * @param files the tree's files, relative
     * @param tls client TLS contexts
     */
    PerFileSync(String name, String server, String directoryPath, List<String> files, TlsFactory tls) {
        this.name = name;
        this.server = server;
        this.directoryPath = directoryPath;
        this.files = List.copyOf(files);
        this.tls = tls;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public String server() {
        return server;
    }

    @Override
    public void forget() {
        etags.clear();
    }

    @Override
    public long sync(Path destination, int port) throws Exception {
        HttpClient http = HttpClient.newBuilder()
                .sslContext(tls.create())
                .version(HttpClient.Version.HTTP_2)
                .connectTimeout(Duration.ofSeconds(10))
                .build();
        URI base = URI.create("https://127.0.0.1:" + port + directoryPath + "/");
        // The first request alone, so that the others find the HTTP/2 connection open and share it.
        get(http, base, files.get(0), destination).join();
        Semaphore permits = new Semaphore(IN_FLIGHT);
        List<CompletableFuture<Void>> pending = new ArrayList<>();
        for (String file : files.subList(1, files.size())) {
            permits.acquire();
            pending.add(get(http, base, file, destination).whenComplete((done, failure) -> permits.release()));
        }
        CompletableFuture.allOf(pending.toArray(new CompletableFuture<?>[0])).join();
        return files.size();
    }

    private CompletableFuture<Void> get(HttpClient http, URI base, String file, Path destination) {
        Path local = destination.resolve(file);
        HttpRequest.Builder request = HttpRequest.newBuilder(base.resolve(file)).timeout(REQUEST_TIMEOUT).GET();
        String etag = etags.get(file);
        if (etag != null && Files.exists(local)) {
            request.header("If-None-Match", etag);
        }
        return http.sendAsync(request.build(), HttpResponse.BodyHandlers.ofByteArray()).thenAccept(response -> {
            try {
                if (response.statusCode() == 200) {
                    write(local, response.body());
                    response.headers().firstValue("ETag").ifPresent(value -> etags.put(file, value));
                } else if (response.statusCode() != 304) {
                    throw new IOException(file + ": HTTP " + response.statusCode());
                }
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
    }

    private static void write(Path file, byte[] content) throws IOException {
        Files.createDirectories(file.getParent());
        Path temporary = file.resolveSibling("." + file.getFileName() + ".part");
        Files.write(temporary, content);
        Files.move(temporary, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }
}
