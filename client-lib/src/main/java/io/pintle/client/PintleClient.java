package io.pintle.client;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.pintle.api.Routes;
import io.pintle.api.dto.Problem;
import io.pintle.api.dto.WhoAmI;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import javax.net.ssl.SSLContext;

/**
 * A client of one Pintle server. Thread-safe; build once and share.
 *
 * <pre>{@code
 * PintleClient client = PintleClient.builder(URI.create("https://relay.example.org"))
 *         .identity(Path.of("/opt/rudder/etc/ssl/agent.cert"),
 *                   Path.of("/var/rudder/cfengine-community/ppkeys/localhost.priv"))
 *         .pin("sha256//...")
 *         .build();
 * FetchResult r = client.fetch("/policies/" + uuid + "/rules/rudder.tar.bz2", dest, previousEtag);
 * SyncResult s = client.sync("/policies/" + uuid + "/rules", Path.of("/var/rudder/cfengine-community/inputs"));
 * }</pre>
 */
public final class PintleClient {
    private static final ObjectMapper JSON =
            new ObjectMapper().configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);

    private final URI base;
    private final HttpClient http;
    private final Duration requestTimeout;

    private PintleClient(URI base, HttpClient http, Duration requestTimeout) {
        this.base = base;
        this.http = http;
        this.requestTimeout = requestTimeout;
    }

    /**
     * @param base the server, for example {@code https://relay.example.org:443}
     * @return a builder
     */
    public static Builder builder(URI base) {
        return new Builder(base);
    }

    /** @return the underlying JDK client, for requests this class does not model */
    public HttpClient httpClient() {
        return http;
    }

    /**
     * A body handler for {@link #httpClient()}'s requests whose body may be large: a stream that an interrupt
     * stops, that fails with {@link java.net.http.HttpTimeoutException} when the next bytes take longer than
     * {@code readTimeout} (the JDK's request timeout ends at the headers), and that requests a few buffers ahead of
     * its reader, so memory stays bounded. Closing it before its end cancels the HTTP stream.
     *
     * @param readTimeout the longest a read waits for the next bytes
     * @return the handler
     */
    public static HttpResponse.BodyHandler<java.io.InputStream> interruptibleBody(java.time.Duration readTimeout) {
        return InterruptibleBody.handler(readTimeout);
    }

    /**
     * @param path an absolute path on the server, for example {@code /common/policies-library-linux.tar.bz2}
     * @return the full URI
     */
    public URI uri(String path) {
        return base.resolve(path);
    }

    /**
     * Downloads {@code path} into {@code destination} unless the server's version still has {@code etag}.
     * The file is written next to {@code destination} and renamed into place, so a failed download leaves
     * the previous file untouched.
     *
     * @param path the server path
     * @param destination the local file
     * @param etag the ETag of the local copy (as received), or null to download unconditionally
     * @return what happened
     * @throws ProblemException if the server answers with an error
     * @throws IOException on network or file errors
     * @throws InterruptedException if interrupted
     */
    public FetchResult fetch(String path, Path destination, String etag)
            throws ProblemException, IOException, InterruptedException {
        HttpRequest.Builder request =
                HttpRequest.newBuilder(uri(path)).timeout(requestTimeout).GET();
        if (etag != null) {
            request.header("If-None-Match", etag);
        }
        HttpResponse<InputStream> response = http.send(request.build(), HttpResponse.BodyHandlers.ofInputStream());
        String newEtag = response.headers().firstValue("ETag").orElse(null);
        try (InputStream body = response.body()) {
            if (response.statusCode() == 304) {
                return new FetchResult(304, newEtag == null ? etag : newEtag, 0);
            }
            if (response.statusCode() != 200) {
                throw problem(response.statusCode(), body.readAllBytes());
            }
            Path directory = destination.toAbsolutePath().getParent();
            Files.createDirectories(directory);
            Path temporary = Files.createTempFile(directory, "." + destination.getFileName(), ".part");
            try {
                long bytes = Files.copy(body, temporary, StandardCopyOption.REPLACE_EXISTING);
                Files.move(temporary, destination, StandardCopyOption.ATOMIC_MOVE,
                        StandardCopyOption.REPLACE_EXISTING);
                return new FetchResult(200, newEtag, bytes);
            } finally {
                Files.deleteIfExists(temporary);
            }
        }
    }

    /**
     * Makes {@code localDir} an exact copy of the server directory {@code remoteDirPath}, downloading only what
     * differs and swapping the new tree in atomically; see {@link DirectorySync} for how. Checking an unchanged
     * tree costs one request.
     *
     * @param remoteDirPath the directory on the server, for example {@code /policies/<uuid>/rules}
     * @param localDir the local copy; created when missing
     * @return what was done
     * @throws ProblemException when the server refuses the request; the local tree is unchanged
     * @throws SyncException when the manifest is refused or every attempt failed; the local tree is unchanged
     * @throws IOException on a local file system error; the local tree is unchanged
     * @throws InterruptedException when interrupted; the local tree is unchanged
     */
    public SyncResult sync(String remoteDirPath, Path localDir)
            throws ProblemException, IOException, InterruptedException {
        return directorySync().sync(remoteDirPath, localDir);
    }

    /**
     * Like {@link #sync}, but the server holds the request until its tree differs from the local copy or
     * {@code wait} has passed (then nothing changes); see {@link DirectorySync#syncWhenChanged}.
     *
     * @param remoteDirPath the directory on the server
     * @param localDir the local copy
     * @param wait from one second to {@value io.pintle.api.Routes#MAX_WAIT_SECONDS} seconds
     * @return what was done
     * @throws ProblemException when the server refuses the request; the local tree is unchanged
     * @throws SyncException when the manifest is refused or every attempt failed; the local tree is unchanged
     * @throws IOException on a local file system error; the local tree is unchanged
     * @throws InterruptedException when interrupted; the local tree is unchanged
     */
    public SyncResult syncWhenChanged(String remoteDirPath, Path localDir, Duration wait)
            throws ProblemException, IOException, InterruptedException {
        return directorySync().syncWhenChanged(remoteDirPath, localDir, wait);
    }

    /** @return a directory sync over this client, {@value DirectorySync#DEFAULT_PARALLELISM} downloads at once */
    public DirectorySync directorySync() {
        return directorySync(DirectorySync.DEFAULT_PARALLELISM);
    }

    /**
     * @param parallelism how many files to download at once when syncing file by file (at least 1)
     * @return a directory sync over this client
     */
    public DirectorySync directorySync(int parallelism) {
        return new DirectorySync(http, base, requestTimeout, parallelism, TreeSwap.atomic());
    }

    /**
     * Asks the server how it sees this client.
     *
     * @return the server's view
     * @throws ProblemException if the server answers with an error
     * @throws IOException on network errors
     * @throws InterruptedException if interrupted
     */
    public WhoAmI whoami() throws ProblemException, IOException, InterruptedException {
        HttpResponse<byte[]> response = http.send(
                HttpRequest.newBuilder(uri(Routes.WHOAMI)).timeout(requestTimeout).GET().build(),
                HttpResponse.BodyHandlers.ofByteArray());
        if (response.statusCode() != 200) {
            throw problem(response.statusCode(), response.body());
        }
        return JSON.readValue(response.body(), WhoAmI.class);
    }

    /**
     * @param segment one path segment (a file name)
     * @return it percent-encoded for a URL path: every UTF-8 byte but RFC 3986's unreserved characters
     */
    public static String encodeSegment(String segment) {
        StringBuilder out = new StringBuilder(segment.length() + 16);
        for (byte b : segment.getBytes(StandardCharsets.UTF_8)) {
            int c = b & 0xff;
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.'
                    || c == '_' || c == '~') {
                out.append((char) c);
            } else {
                out.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
                        .append(Character.toUpperCase(Character.forDigit(c & 0xf, 16)));
            }
        }
        return out.toString();
    }

    /**
     * @param response an answer
     * @return its {@code Retry-After} when it is a number of seconds (what Pintle and relayd send); empty when it
     *     has none, or an HTTP date
     */
    public static Optional<Duration> retryAfter(HttpResponse<?> response) {
        try {
            return response.headers().firstValue("Retry-After").map(text -> Long.parseLong(text.strip()))
                    .filter(seconds -> seconds >= 0).map(Duration::ofSeconds);
        } catch (NumberFormatException httpDate) {
            return Optional.empty();
        }
    }

    /**
     * Turns an error answer into an exception, keeping the server's problem details when it sent some.
     *
     * @param status the HTTP status
     * @param body the response body
     * @return the exception to throw
     */
    public static ProblemException problem(int status, byte[] body) {
        try {
            Problem problem = JSON.readValue(body, Problem.class);
            if (problem.status() == status) {
                return new ProblemException(problem);
            }
        } catch (IOException notProblemJson) {
            // Fall through: the body was not problem details (for example a proxy's HTML page).
        }
        return new ProblemException(new Problem("about:blank", "HTTP " + status, status, null, null, null, null));
    }

    /** Builder of {@link PintleClient}. */
    public static final class Builder {
        private final URI base;
        private Path certificate;
        private Path key;
        private final Set<String> pins = new LinkedHashSet<>();
        private SSLContext sslContext;
        private Duration connectTimeout = Duration.ofSeconds(10);
        private Duration requestTimeout = Duration.ofMinutes(5);
        private HttpClient.Version version = HttpClient.Version.HTTP_2;

        private Builder(URI base) {
            this.base = Objects.requireNonNull(base, "base");
        }

        /**
         * Presents this certificate and key as client identity.
         *
         * @param certificatePem PEM certificate ({@code agent.cert})
         * @param keyPem PEM private key ({@code localhost.priv})
         * @return this
         */
        public Builder identity(Path certificatePem, Path keyPem) {
            this.certificate = Objects.requireNonNull(certificatePem);
            this.key = Objects.requireNonNull(keyPem);
            return this;
        }

        /**
         * Accepts a server key with this pin; may be called several times (key rotation).
         *
         * @param pin {@code sha256//<base64>}
         * @return this
         */
        public Builder pin(String pin) {
            pins.add(Objects.requireNonNull(pin));
            return this;
        }

        /**
         * Uses a ready TLS context instead of {@link #identity} and {@link #pin}.
         *
         * @param context the context
         * @return this
         */
        public Builder sslContext(SSLContext context) {
            this.sslContext = context;
            return this;
        }

        /**
         * @param timeout TCP + TLS connect timeout (default 10 s, as Rudder's curl)
         * @return this
         */
        public Builder connectTimeout(Duration timeout) {
            this.connectTimeout = timeout;
            return this;
        }

        /**
         * @param timeout time allowed until response headers, and in a sync's downloads between two parts of a
         *     body (default 5 min); a manifest request the server holds ({@code ?wait}) gets its wait on top
         * @return this
         */
        public Builder requestTimeout(Duration timeout) {
            this.requestTimeout = timeout;
            return this;
        }

        /**
         * @param version the preferred HTTP version (default HTTP/2, negotiated by ALPN)
         * @return this
         */
        public Builder version(HttpClient.Version version) {
            this.version = version;
            return this;
        }

        /**
         * @return the client
         * @throws IOException if the identity files cannot be read
         * @throws GeneralSecurityException if the TLS material is unusable
         */
        public PintleClient build() throws IOException, GeneralSecurityException {
            SSLContext context = sslContext != null ? sslContext : ClientTls.context(certificate, key, pins);
            HttpClient http = HttpClient.newBuilder()
                    .sslContext(context)
                    .connectTimeout(connectTimeout)
                    .version(version)
                    .followRedirects(HttpClient.Redirect.NEVER)
                    .build();
            return new PintleClient(base, http, requestTimeout);
        }
    }
}
