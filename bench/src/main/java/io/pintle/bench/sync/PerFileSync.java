package io.pintle.bench.sync;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import org.eclipse.jetty.client.BufferingResponseListener;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.Response;
import org.eclipse.jetty.client.Result;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http2.client.HTTP2Client;
import org.eclipse.jetty.http2.client.transport.HttpClientTransportOverHTTP2;
import org.eclipse.jetty.io.ClientConnector;
import org.eclipse.jetty.util.ssl.SslContextFactory;

/**
 * "A web server serving the same files one by one": a GET per file over one HTTP/2 connection (Jetty
 * {@code HttpClient}) with up to {@link #IN_FLIGHT} requests in flight, each with {@code If-None-Match} and the
 * ETag of the previous sync when the file is there, so unchanged files cost a 304. The list of files is given to
 * the client for free: a plain web server has no listing, so a real client would need one more request (an index)
 * and could not see deletions otherwise. Each file is written to a temporary file and renamed into place.
 */
final class PerFileSync implements Contestant {
    /** Requests in flight: generous (nginx allows 128 streams), it is the per-file approach's best case. */
    static final int IN_FLIGHT = 32;
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(120);
    /** Largest file accepted: the generator's largest is 256 KiB. */
    private static final int MAX_FILE_BYTES = 16 * 1024 * 1024;

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
    public Outcome sync(Path destination, int port) throws Exception {
        HttpClient http = client(tls.create());
        try {
            URI base = URI.create("https://127.0.0.1:" + port + directoryPath + "/");
            // The first request alone, so that the others find the HTTP/2 connection open and share it.
            get(http, base, files.get(0), destination).get(REQUEST_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            Semaphore permits = new Semaphore(IN_FLIGHT);
            List<CompletableFuture<Void>> pending = new ArrayList<>();
            for (String file : files.subList(1, files.size())) {
                permits.acquire();
                pending.add(get(http, base, file, destination).whenComplete((done, failure) -> permits.release()));
            }
            CompletableFuture.allOf(pending.toArray(new CompletableFuture<?>[0]))
                    .get(REQUEST_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            return new Outcome(files.size(), null);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof Exception cause ? cause : e;
        } finally {
            http.stop();
        }
    }

    /** A Jetty client over HTTP/2: the JDK's HttpClient took more CPU per request than nginx needed to answer. */
    private static HttpClient client(SSLContext context) throws Exception {
        SslContextFactory.Client ssl = new SslContextFactory.Client();
        ssl.setSslContext(context);
        // The server is authenticated by its key pin (the context's trust manager), not by host name.
        ssl.setEndpointIdentificationAlgorithm(null);
        ClientConnector connector = new ClientConnector();
        connector.setSslContextFactory(ssl);
        HttpClient http = new HttpClient(new HttpClientTransportOverHTTP2(new HTTP2Client(connector)));
        http.setMaxConnectionsPerDestination(1);
        http.setFollowRedirects(false);
        // No Accept-Encoding, as Rudder agents' curl.
        http.getContentDecoderFactories().clear();
        http.start();
        return http;
    }

    private CompletableFuture<Void> get(HttpClient http, URI base, String file, Path destination) {
        Path local = destination.resolve(file);
        Request request = http.newRequest(base.resolve(file)).timeout(REQUEST_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        String etag = etags.get(file);
        if (etag != null && Files.exists(local)) {
            request.headers(headers -> headers.put(HttpHeader.IF_NONE_MATCH, etag));
        }
        CompletableFuture<Void> done = new CompletableFuture<>();
        request.send(new BufferingResponseListener(MAX_FILE_BYTES) {
            @Override
            public void onComplete(Result result) {
                try {
                    if (result.isFailed()) {
                        throw new IOException(file + ": " + result.getFailure(), result.getFailure());
                    }
                    Response response = result.getResponse();
                    if (response.getStatus() == 200) {
                        write(local, getContent());
                        String newEtag = response.getHeaders().get(HttpHeader.ETAG);
                        if (newEtag != null) {
                            etags.put(file, newEtag);
                        }
                    } else if (response.getStatus() != 304) {
                        throw new IOException(file + ": HTTP " + response.getStatus());
                    }
                    done.complete(null);
                } catch (IOException | RuntimeException e) {
                    done.completeExceptionally(e);
                }
            }
        });
        return done;
    }

    private static void write(Path file, byte[] content) throws IOException {
        Files.createDirectories(file.getParent());
        Path temporary = file.resolveSibling("." + file.getFileName() + ".part");
        Files.write(temporary, content);
        Files.move(temporary, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }
}
