package io.pintle.server.reload;

import io.pintle.server.config.ServerConfig;
import io.pintle.server.nodes.CaTrust;
import io.pintle.server.nodes.Revocations;
import io.pintle.server.threads.Lane;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.UnknownHostException;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.UnresolvedAddressException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Flow;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import javax.net.ssl.SSLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Fetches the CA's CRL from {@code [nodes] crl_url} at start and then every {@code crl_refresh_seconds}, keeps the
 * last good one in {@code crl_fetch_file} (a CRL input of the snapshot once it exists) and asks for a reload when
 * it changed, so that a revocation applies without {@code [reload] watch}.
 *
 * <p>What is kept was verified against the live snapshot's CA bundle ({@link Revocations#parseCrls}), is not older
 * than the list it replaces (a CRL comes over plain HTTP as often as not: a signed but stale copy must not undo a
 * revocation), and is written whole (temporary file, fsync, rename). Any failure keeps the last good file, logs one
 * WARN line and shows in {@link #status()}. Until the first good fetch nothing is revoked by it: fail-open, as a
 * CRL that cannot be had at all.
 *
 * <p>The settings are read from the live configuration at each attempt; a reload that changes them fetches at once.
 */
public final class CrlFetch implements ReloadListener {
    private static final Logger LOG = LoggerFactory.getLogger(CrlFetch.class);

    /** A CA's web server answers a connection at once or is down: no point waiting longer. */
    static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(10);
    /** The whole fetch, redirects included: a CRL of 32 MiB at 1 MB/s takes half of it. */
    static final Duration FETCH_TIMEOUT = Duration.ofSeconds(60);
    /**
     * A CRL of a million revoked certificates is about 30 MB; a larger answer is not a CRL a server should parse on
     * every reload.
     */
    static final long MAX_BYTES = 32L * 1024 * 1024;
    /** Redirects followed, on the same scheme only. */
    static final int MAX_REDIRECTS = 5;

    private final SnapshotHolder snapshots;
    private final Function<String, CompletableFuture<ReloadOutcome>> reload;
    private final Clock clock;
    private final AtomicReference<Status> status = new AtomicReference<>();
    private final AtomicLong failures = new AtomicLong();
    private final Executor workers;
    private final ScheduledExecutorService scheduler;
    /** Attempts, one at a time (made at start; guarded by this). */
    private Lane lane;
    private ScheduledFuture<?> next;
    /** Made and used on the lane only. */
    private HttpClient client;
    /** The settings the last attempt ran with (guarded by this: the reload thread compares them). */
    private Settings last;

    /**
     * @param snapshots the live snapshot: its configuration says what to fetch, its CA bundle verifies it
     * @param reload asks for a reload ({@link Reloader#reload}) once a new CRL is kept
     * @param clock stamps attempts
     * @param workers the server's worker pool (a fetch blocks on the network)
     * @param scheduler the server's scheduler (when the next fetch comes)
     */
    public CrlFetch(SnapshotHolder snapshots, Function<String, CompletableFuture<ReloadOutcome>> reload,
            Clock clock, Executor workers, ScheduledExecutorService scheduler) {
        this.snapshots = Objects.requireNonNull(snapshots);
        this.reload = Objects.requireNonNull(reload);
        this.clock = Objects.requireNonNull(clock);
        this.workers = Objects.requireNonNull(workers);
        this.scheduler = Objects.requireNonNull(scheduler);
    }

    /**
     * How the fetch went, for {@code /v1/status}.
     *
     * @param url what is fetched
     * @param lastSuccess when a fetch last succeeded (a new list kept, or the same one again), or null
     * @param lastAttempt when the last fetch ended, or null before the first one
     * @param lastError why the last attempt failed, or null when it succeeded
     */
    public record Status(URI url, Instant lastSuccess, Instant lastAttempt, String lastError) {
        public Status {
            Objects.requireNonNull(url);
        }
    }

    /** What one attempt fetches, where it keeps it, and when the next one comes. */
    private record Settings(URI url, Path file, Duration refresh) {
        static Settings of(ServerConfig config) {
            ServerConfig.Nodes nodes = config.nodes();
            return new Settings(nodes.crlUrl(), SnapshotLoader.fetchedCrl(config), nodes.crlRefresh());
        }
    }

    /** An expected failure: its message is the whole WARN line's reason. */
    private static final class FetchFailure extends Exception {
        private static final long serialVersionUID = 1L;

        FetchFailure(String message) {
            super(message, null, false, false);
        }
    }

    /** Starts fetching: at once, then every {@code crl_refresh_seconds}. Does nothing while no URL is set. */
    public synchronized void start() {
        if (lane != null) {
            return;
        }
        lane = Lane.serial("crl fetch", workers, scheduler);
        next = lane.schedule(this::runOnce, 0, TimeUnit.MILLISECONDS);
    }

    /** Stops it; a fetch under way is abandoned (the kept file is whole either way). */
    public synchronized void stop() {
        if (lane != null) {
            lane.shutdownNow();
            lane = null;
            next = null;
        }
    }

    /** @return how the fetch went, or null when no URL is set or none was tried yet with this one */
    public Status status() {
        Status now = status.get();
        URI url = snapshots.current().config().nodes().crlUrl();
        return now != null && now.url().equals(url) ? now : url == null ? null : new Status(url, null, null, null);
    }

    /** @return failed attempts since start, whatever the URL (a counter never goes down) */
    public long failures() {
        return failures.get();
    }

    @Override
    public void finished(ReloadOutcome outcome) {
        // A reload that changed crl_url, crl_fetch_file or crl_refresh_seconds fetches with them at once.
        if (outcome.result() == ReloadOutcome.Result.APPLIED
                && !Settings.of(snapshots.current().config()).equals(lastSettings())) {
            reschedule(Duration.ZERO);
        }
    }

    private synchronized Settings lastSettings() {
        return last;
    }

    private synchronized void reschedule(Duration delay) {
        if (lane == null) {
            return;
        }
        if (next != null) {
            next.cancel(false);
        }
        try {
            next = lane.schedule(this::runOnce, delay.toMillis(), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException stopped) {
            next = null;
        }
    }

    /** One attempt, then the next one scheduled with the settings now in force. */
    void runOnce() {
        ServerSnapshot snapshot = snapshots.current();
        Settings settings = Settings.of(snapshot.config());
        synchronized (this) {
            last = settings;
        }
        if (settings.url() == null) {
            return;
        }
        if (client == null) {
            // Made at the first URL, not at start: most servers never fetch, and a client holds a selector thread.
            // Redirects are followed by hand: on the same scheme only, each hop within the one deadline.
            client = HttpClient.newBuilder()
                    .connectTimeout(CONNECT_TIMEOUT)
                    .followRedirects(HttpClient.Redirect.NEVER)
                    .build();
        }
        try {
            attempt(settings, snapshot);
        } catch (RuntimeException e) {
            fail(settings, "unexpected error: " + e);
            LOG.error("CRL fetch from {} failed unexpectedly", settings.url(), e);
        } finally {
            if (!Thread.currentThread().isInterrupted()) {
                // A reload that changed the settings meanwhile asked for a fetch at once: do not push it back.
                boolean same = Settings.of(snapshots.current().config()).equals(settings);
                reschedule(same ? settings.refresh() : Duration.ZERO);
            }
        }
    }

    private void attempt(Settings settings, ServerSnapshot snapshot) {
        String outcome;
        try {
            byte[] content = download(settings.url());
            outcome = keep(settings, snapshot, content);
        } catch (FetchFailure e) {
            fail(settings, e.getMessage());
            LOG.warn("CRL fetch from {} failed, the last good list stays in force ({}): {}", settings.url(),
                    Files.exists(settings.file()) ? settings.file() : "none fetched yet: nothing revoked by it",
                    e.getMessage());
            return;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        }
        Instant now = clock.instant();
        status.set(new Status(settings.url(), now, now, null));
        if (outcome != null) {
            LOG.info("CRL fetch from {}: {}", settings.url(), outcome);
        }
    }

    private void fail(Settings settings, String reason) {
        failures.incrementAndGet();
        Instant now = clock.instant();
        status.updateAndGet(before -> new Status(settings.url(), before != null && before.url().equals(settings.url())
                ? before.lastSuccess() : null, now, reason));
    }

    /**
     * Verifies the list and keeps it when it differs from the kept one, then reloads.
     *
     * @return what was done, for the log, or null when the same list came again
     */
    private String keep(Settings settings, ServerSnapshot snapshot, byte[] content)
            throws FetchFailure, InterruptedException {
        Path file = settings.file();
        CaTrust ca = snapshot.trust().ca();
        if (ca == null) {
            throw new FetchFailure("certificate validation is off ([nodes] authentication): there is no CA bundle "
                    + "to verify the list with");
        }
        List<Revocations.Crl> fetched;
        try {
            fetched = Revocations.parseCrls(content, file, ca);
        } catch (IOException e) {
            // Its messages name the file it reads; this list is not in that file, and will not be.
            String message = e.getMessage();
            String prefix = file + ": ";
            throw new FetchFailure("not kept: " + (message.startsWith(prefix) ? message.substring(prefix.length())
                    : message));
        }
        byte[] kept = readKept(file);
        InputFile live = snapshot.inputs().get(file);
        if (kept != null && Arrays.equals(kept, content) && live != null && live.sameContent(InputFile.of(content))) {
            // Kept and in force. Kept but not in force (the reload that was to apply it failed): reloaded below.
            return null;
        }
        requireNotOlder(fetched, snapshot, file);
        write(file, content);
        ReloadOutcome applied;
        try {
            applied = reload.apply("crl fetch").get(FETCH_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException | TimeoutException e) {
            throw new FetchFailure("kept in " + file + ", but the reload that applies it did not end: " + e);
        }
        if (applied.result() == ReloadOutcome.Result.FAILED) {
            throw new FetchFailure("kept in " + file + ", but the reload that applies it was refused (the previous "
                    + "lists stay in force): " + applied.error());
        }
        return "new list kept in " + file + " (" + describe(fetched) + "), generation " + applied.generation();
    }

    /**
     * A list signed by the CA but issued before the one in force would undo revocations: a stale or replayed copy.
     * So would a list of another issuer in its place (any CA of the bundle publishes a valid, maybe empty, list):
     * the new answer must cover every issuer the lists in force from this file cover, each at least as recent.
     */
    private static void requireNotOlder(List<Revocations.Crl> fetched, ServerSnapshot snapshot, Path file)
            throws FetchFailure {
        Map<String, Instant> inForce = new HashMap<>();
        for (Revocations.Crl crl : snapshot.trust().revocations().crls()) {
            if (crl.file().equals(file)) {
                inForce.merge(crl.issuer(), crl.thisUpdate(), (a, b) -> a.isAfter(b) ? a : b);
            }
        }
        Map<String, Instant> offered = new HashMap<>();
        for (Revocations.Crl crl : fetched) {
            offered.merge(crl.issuer(), crl.thisUpdate(), (a, b) -> a.isAfter(b) ? a : b);
        }
        for (Map.Entry<String, Instant> kept : inForce.entrySet()) {
            Instant issued = offered.get(kept.getKey());
            if (issued == null) {
                throw new FetchFailure("not kept: it holds no CRL of '" + kept.getKey() + "', whose list is in force "
                        + "from this URL (issued " + kept.getValue() + "): another CA's list in its place would undo "
                        + "its revocations. If the URL now serves another CA's list on purpose, remove " + file);
            }
            if (issued.isBefore(kept.getValue())) {
                throw new FetchFailure("not kept: the CRL of '" + kept.getKey() + "' was issued " + issued
                        + ", before the one in force (" + kept.getValue() + "): a stale copy on the server, or a "
                        + "replay");
            }
        }
    }

    private static String describe(List<Revocations.Crl> crls) {
        StringBuilder text = new StringBuilder();
        for (Revocations.Crl crl : crls) {
            if (!text.isEmpty()) {
                text.append("; ");
            }
            text.append('\'').append(crl.issuer()).append("': ").append(crl.entries()).append(" revoked, issued ")
                    .append(crl.thisUpdate());
        }
        return text.toString();
    }

    private static byte[] readKept(Path file) throws FetchFailure {
        try {
            return Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            return null;
        } catch (IOException e) {
            throw new FetchFailure("cannot read " + file + ": " + e);
        }
    }

    /** Temporary file in the same directory, fsync, rename: a reload sees the old list or the new one, whole. */
    private static void write(Path file, byte[] content) throws FetchFailure {
        Path directory = file.getParent();
        Path temporary = directory.resolve("." + file.getFileName() + ".tmp");
        try {
            try (FileChannel channel = FileChannel.open(temporary, StandardOpenOption.CREATE,
                    StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE)) {
                ByteBuffer buffer = ByteBuffer.wrap(content);
                while (buffer.hasRemaining()) {
                    channel.write(buffer);
                }
                channel.force(true);
            }
            Files.move(temporary, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            // The rename itself, durable: a crash now does not bring the old list back.
            try (FileChannel parent = FileChannel.open(directory, StandardOpenOption.READ)) {
                parent.force(true);
            } catch (IOException e) {
                // Some file systems cannot open a directory for reading; the rename is done all the same.
            }
        } catch (IOException e) {
            try {
                Files.deleteIfExists(temporary);
            } catch (IOException ignored) {
                // The next attempt truncates it.
            }
            throw new FetchFailure("cannot write " + file + " ([nodes] crl_fetch_file; its directory must be "
                    + "writable by Pintle, as /var/lib/pintle is): " + e);
        }
    }

    /** GET with redirects on the same scheme, within {@link #FETCH_TIMEOUT} and {@link #MAX_BYTES}. */
    private byte[] download(URI url) throws FetchFailure, InterruptedException {
        long deadline = System.nanoTime() + FETCH_TIMEOUT.toNanos();
        URI current = url;
        for (int hop = 0; ; hop++) {
            HttpRequest request = HttpRequest.newBuilder(current)
                    .timeout(FETCH_TIMEOUT)
                    .header("Accept", "application/pkix-crl, application/x-pem-file, */*")
                    .GET()
                    .build();
            CompletableFuture<HttpResponse<byte[]>> future = client.sendAsync(request, CrlFetch::bodyHandler);
            HttpResponse<byte[]> response;
            try {
                response = future.get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
                future.cancel(true);
                throw new FetchFailure("no complete answer from " + current.getHost() + " within "
                        + FETCH_TIMEOUT.toSeconds() + " s");
            } catch (InterruptedException e) {
                future.cancel(true);
                throw e;
            } catch (ExecutionException e) {
                throw new FetchFailure(reason(current, e.getCause()));
            }
            int code = response.statusCode();
            if (code == 200) {
                return response.body();
            }
            Optional<String> location = response.headers().firstValue("Location");
            if (Set.of(301, 302, 303, 307, 308).contains(code) && location.isPresent()) {
                URI target;
                try {
                    target = current.resolve(location.get());
                } catch (IllegalArgumentException e) {
                    throw new FetchFailure("HTTP " + code + " to an invalid Location: " + location.get());
                }
                String from = current.getScheme().toLowerCase(Locale.ROOT);
                String to = target.getScheme() == null ? "" : target.getScheme().toLowerCase(Locale.ROOT);
                if (!from.equals(to)) {
                    throw new FetchFailure("HTTP " + code + " redirects to another scheme (" + target + "), not "
                            + "followed: set [nodes] crl_url to the address meant");
                }
                if (hop + 1 > MAX_REDIRECTS) {
                    throw new FetchFailure("more than " + MAX_REDIRECTS + " redirects (last to " + target + ")");
                }
                current = target;
                continue;
            }
            throw new FetchFailure("HTTP " + code + " from " + current);
        }
    }

    /** Why a request failed, in words an operator can act on; no stack trace for what networks do. */
    static String reason(URI url, Throwable cause) {
        String host = url.getHost() + (url.getPort() > 0 ? ":" + url.getPort() : "");
        for (Throwable at = cause; at != null; at = at.getCause() == at ? null : at.getCause()) {
            if (at instanceof TooLarge) {
                return "the answer from " + host + " is larger than " + MAX_BYTES / (1024 * 1024) + " MiB: not a CRL";
            }
            if (at instanceof HttpConnectTimeoutException) {
                return "no connection to " + host + " within " + CONNECT_TIMEOUT.toSeconds() + " s";
            }
            if (at instanceof HttpTimeoutException) {
                return "no answer from " + host + " within " + FETCH_TIMEOUT.toSeconds() + " s";
            }
            if (at instanceof ConnectException) {
                return "connection to " + host + " refused (nothing listens there, or a firewall says no)";
            }
            if (at instanceof UnresolvedAddressException || at instanceof UnknownHostException) {
                return "host " + url.getHost() + " not found (DNS)";
            }
            if (at instanceof SSLException) {
                return "TLS with " + host + " failed: " + at.getMessage();
            }
        }
        String message = cause.getMessage();
        return "request to " + host + " failed: " + cause.getClass().getSimpleName()
                + (message != null ? ": " + message : "");
    }

    private static HttpResponse.BodySubscriber<byte[]> bodyHandler(HttpResponse.ResponseInfo info) {
        if (info.statusCode() != 200) {
            return HttpResponse.BodySubscribers.replacing(null);
        }
        long declared = info.headers().firstValueAsLong("Content-Length").orElse(-1);
        return new Bounded(declared > MAX_BYTES);
    }

    /** Past {@link #MAX_BYTES}: the download stops there. */
    private static final class TooLarge extends IOException {
        private static final long serialVersionUID = 1L;

        TooLarge() {
            super("larger than " + MAX_BYTES + " bytes");
        }
    }

    /** Collects a body up to {@link #MAX_BYTES}, and cancels past it. */
    private static final class Bounded implements HttpResponse.BodySubscriber<byte[]> {
        private final CompletableFuture<byte[]> result = new CompletableFuture<>();
        private final ByteArrayOutputStream out = new ByteArrayOutputStream();
        private final boolean declaredTooLarge;
        private Flow.Subscription subscription;

        Bounded(boolean declaredTooLarge) {
            this.declaredTooLarge = declaredTooLarge;
        }

        @Override
        public CompletionStage<byte[]> getBody() {
            return result;
        }

        @Override
        public void onSubscribe(Flow.Subscription subscription) {
            this.subscription = subscription;
            if (declaredTooLarge) {
                subscription.cancel();
                result.completeExceptionally(new TooLarge());
                return;
            }
            subscription.request(Long.MAX_VALUE);
        }

        @Override
        public void onNext(List<ByteBuffer> items) {
            if (result.isDone()) {
                return;
            }
            for (ByteBuffer item : items) {
                if (out.size() + (long) item.remaining() > MAX_BYTES) {
                    subscription.cancel();
                    result.completeExceptionally(new TooLarge());
                    return;
                }
                byte[] bytes = new byte[item.remaining()];
                item.get(bytes);
                out.write(bytes, 0, bytes.length);
            }
        }

        @Override
        public void onError(Throwable throwable) {
            result.completeExceptionally(throwable);
        }

        @Override
        public void onComplete() {
            result.complete(out.toByteArray());
        }
    }
}
