package io.pintle.server.upstream;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.pintle.api.dto.Problem;
import io.pintle.client.PintleClient;
import io.pintle.server.config.ServerConfig;
import io.pintle.server.reload.ServerSnapshot;
import io.pintle.server.uploads.UploadKind;
import io.pintle.server.uploads.UploadNames;
import java.io.IOException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * On a relay, sends every upload it took to its policy server on the same route ({@code PUT /reports/<name>},
 * {@code /inventories/<name>}, {@code /inventory-updates/<name>}, an inventory's {@code .sign} right after it),
 * oldest first, and removes it only once the policy server answered 2xx: what relayd's {@code output = "upstream"}
 * does, without its one-day retention. The upload directories are the queue, so a restart, a policy server down for
 * days or a full one lose nothing; they wait, with retries after a doubling, jittered delay.
 *
 * <p>A file the policy server refuses for good (400, 403 for a reason of the file's own such as a bad signature,
 * 413...) is moved to Rudder's {@code failed/} directory beside the upload directories (relayd's), with a
 * {@code <name>.reason} file saying why, and never retried; a refusal that says the relay itself is not let in
 * (401, 403 for its address or credentials), no answer, or a 5xx is the policy server's or the configuration's
 * problem: everything waits and is tried again. Authentication: the relay's certificate (a Pintle policy server
 * accepts a relay's uploads for the nodes below it) and, when the agent's {@code rudder.json} is readable, its
 * WebDAV credentials as HTTP Basic (an Apache/relayd policy server); a first inventory goes with Rudder's
 * initial password, as relayd sends it.
 *
 * <p>One thread of its own, woken by each upload ({@link #wake}) or every {@link #IDLE_SCAN}; at most
 * {@code [upstream] forward_in_flight} uploads under way at once.
 */
public final class UploadForwarder {
    private static final Logger LOG = LoggerFactory.getLogger(UploadForwarder.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    /** How often the directories are looked at when nothing wakes the forwarder. */
    static final Duration IDLE_SCAN = Duration.ofSeconds(2);
    /** How long an inventory waits for its signature before it goes alone. */
    static final Duration PAIR_WAIT = Duration.ofMinutes(2);
    /** Files taken per round: a queue of days is sent in rounds, each a fresh look at the directories. */
    private static final int ROUND_FILES = 2_000;
    /** Rudder's initial WebDAV password, sent with a new node's first inventory (relayd's default_password). */
    private static final String INITIAL_PASSWORD = "rudder";
    /** Refusals naming the file itself (a Pintle policy server's reasons): moved aside, not retried. */
    private static final Set<String> FILE_REASONS = Set.of("report-signature", "inventory-signature",
            "node-mismatch", "node-unknown", "not-below-relay", "invalid-name", "name-too-long", "name-missing",
            "upload-too-large");

    /** A Pintle policy server's 503 reasons for "too many at once from you": fewer at once, and soon. */
    private static final Set<String> TOO_MANY_AT_ONCE = Set.of("client-limit", "node-busy");

    private final Supplier<ServerSnapshot> snapshots;
    private final UpstreamClient upstream;
    private final Clock clock;
    private final Duration firstRetry;
    private final Duration lastRetry;
    private final BlockingQueue<Boolean> wakeups = new ArrayBlockingQueue<>(1);
    private final Map<UploadKind, Tally> tallies = new EnumMap<>(UploadKind.class);
    private volatile Instant lastSuccess;
    private volatile Failure lastFailure;
    private volatile boolean running;
    private Thread thread;

    /**
     * @param snapshots the current snapshot (configuration read at each round)
     * @param upstream the policy server's client
     * @param clock for ages and times
     * @param firstRetry the delay after a first failure (doubled up to {@code lastRetry}, with ±25 % jitter)
     * @param lastRetry the longest delay between attempts
     */
    public UploadForwarder(Supplier<ServerSnapshot> snapshots, UpstreamClient upstream, Clock clock,
            Duration firstRetry, Duration lastRetry) {
        this.snapshots = snapshots;
        this.upstream = upstream;
        this.clock = clock;
        this.firstRetry = firstRetry;
        this.lastRetry = lastRetry;
        for (UploadKind kind : UploadKind.values()) {
            tallies.put(kind, new Tally());
        }
    }

    /**
     * @param config a configuration
     * @return whether it forwards uploads: a policy server to send them to, uploads taken, {@code forward} on
     */
    public static boolean wanted(ServerConfig config) {
        return config.upstream().configured() && config.upstream().forward() && config.uploads().enabled();
    }

    /** Starts the forwarding thread. */
    public synchronized void start() {
        if (running) {
            return;
        }
        running = true;
        thread = new Thread(this::loop, "pintle-upload-forward");
        thread.setDaemon(true);
        thread.start();
        ServerConfig config = snapshots.get().config();
        if (wanted(config)) {
            LOG.info("forwarding uploads to {} ({} at once)", config.upstream().url(),
                    config.upstream().forwardInFlight());
        }
    }

    /** Stops it; uploads under way are abandoned and stay in their directory for the next start. */
    public synchronized void stop() throws InterruptedException {
        running = false;
        if (thread != null) {
            thread.interrupt();
            thread.join(10_000);
            thread = null;
        }
    }

    /** An upload landed: look at the directories now rather than at the next idle scan. */
    public void wake() {
        wakeups.offer(Boolean.TRUE);
    }

    private void loop() {
        Duration delay = firstRetry;
        // How many uploads go at once: halved when the policy server says it is busy (its per-address share of
        // uploads is smaller than forward_in_flight, or two relays share an address), grown back by one per round
        // that went through, up to forward_in_flight.
        int window = Integer.MAX_VALUE;
        while (running) {
            try {
                ServerSnapshot snapshot = snapshots.get();
                Duration pause = IDLE_SCAN;
                boolean idle = true;
                if (wanted(snapshot.config())) {
                    List<Unit> units = scan(snapshot.config().uploads()::directory);
                    if (!units.isEmpty()) {
                        idle = false;
                        int inFlight = snapshot.config().upstream().forwardInFlight();
                        window = Math.min(window, inFlight);
                        Round round = send(snapshot, units, window);
                        if (round.retryAfter() != null) {
                            window = Math.max(1, window / 2);
                            // The policy server is busy: this relay sent more at once than its share (client-limit,
                            // node-busy: again in a second, with half as many), or it is overloaded (503/429 with
                            // Retry-After: when it says). Neither is a failure to back off from.
                            pause = jitter(clamp(round.retryAfter()));
                        } else if (round.failed()) {
                            pause = jitter(delay);
                            delay = delay.multipliedBy(2).compareTo(lastRetry) > 0 ? lastRetry : delay.multipliedBy(2);
                        } else {
                            delay = firstRetry;
                            window = Math.min(inFlight, window + 1);
                            pause = Duration.ZERO;
                        }
                    }
                }
                if (idle) {
                    // Idle: the next upload wakes it.
                    wakeups.poll(pause.toMillis(), TimeUnit.MILLISECONDS);
                } else if (!pause.isZero()) {
                    // Waiting after a failure or a busy answer: uploads landing meanwhile must not cut it short (a
                    // relay's nodes upload many times a second while its policy server is down).
                    Thread.sleep(pause.toMillis());
                    wakeups.clear();
                }
            } catch (InterruptedException e) {
                return;
            } catch (RuntimeException | Error failure) {
                // The thread is the only one forwarding: dying would leave the queue growing without a word.
                if (!running) {
                    return;
                }
                LOG.error("upload forwarding round failed; next in {} ms", delay.toMillis(), failure);
                try {
                    Thread.sleep(delay.toMillis());
                } catch (InterruptedException stopped) {
                    return;
                }
            }
        }
    }

    private Duration clamp(Duration retryAfter) {
        Duration floor = Duration.ofMillis(200);
        return retryAfter.compareTo(floor) < 0 ? floor : retryAfter.compareTo(lastRetry) > 0 ? lastRetry : retryAfter;
    }

    /**
     * How a round ended.
     *
     * @param failed whether something failed that was not the file's own (the next round waits)
     * @param retryAfter the policy server's {@code Retry-After} when it said it was busy, else null
     */
    private record Round(boolean failed, Duration retryAfter) {}

    private static Duration jitter(Duration delay) {
        long millis = delay.toMillis();
        return Duration.ofMillis(millis * 3 / 4 + ThreadLocalRandom.current().nextLong(millis / 2 + 1));
    }

    /** One thing to send: a file, or an inventory and then its signature. */
    record Unit(UploadKind kind, List<Path> files, Instant oldest) {}

    /**
     * Reads the three directories: what is queued, oldest first; updates the queue views.
     *
     * @param directories each route's directory
     * @return at most {@value #ROUND_FILES} units, oldest first
     */
    List<Unit> scan(java.util.function.Function<UploadKind, Path> directories) {
        Instant now = clock.instant();
        List<Unit> units = new ArrayList<>();
        for (UploadKind kind : UploadKind.values()) {
            Path directory = directories.apply(kind);
            Map<String, List<Entry>> byKey = new LinkedHashMap<>();
            long bytes = 0;
            int files = 0;
            Instant oldest = null;
            try (DirectoryStream<Path> entries = Files.newDirectoryStream(directory)) {
                for (Path path : entries) {
                    String name = path.getFileName().toString();
                    if (name.startsWith(".")) {
                        continue; // uploads under way (UploadStore's temporary names), anything hidden
                    }
                    BasicFileAttributes attributes;
                    try {
                        attributes = Files.readAttributes(path, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
                    } catch (NoSuchFileException gone) {
                        continue;
                    }
                    if (!attributes.isRegularFile()) {
                        continue;
                    }
                    Instant modified = attributes.lastModifiedTime().toInstant();
                    files++;
                    bytes += attributes.size();
                    oldest = oldest == null || modified.isBefore(oldest) ? modified : oldest;
                    String key = kind == UploadKind.REPORTS ? name : UploadNames.pairKey(name);
                    byKey.computeIfAbsent(key, k -> new ArrayList<>(2)).add(new Entry(path, name, modified));
                }
            } catch (NoSuchFileException missing) {
                // No directory, nothing queued.
            } catch (IOException e) {
                LOG.warn("cannot read the upload directory {} to forward it: {}", directory, e.getMessage());
            }
            tallies.get(kind).view = new QueueView(files, bytes, oldest);
            for (List<Entry> group : byKey.values()) {
                Unit unit = unit(kind, group, now);
                if (unit != null) {
                    units.add(unit);
                }
            }
        }
        units.sort(Comparator.comparing(Unit::oldest));
        return units.size() > ROUND_FILES ? units.subList(0, ROUND_FILES) : units;
    }

    private record Entry(Path path, String name, Instant modified) {}

    private static Unit unit(UploadKind kind, List<Entry> group, Instant now) {
        if (kind == UploadKind.REPORTS) {
            Entry only = group.get(0);
            return new Unit(kind, List.of(only.path()), only.modified());
        }
        // The inventory first, then its signature, as the agent sends them and the policy server waits for them.
        group.sort(Comparator.comparing((Entry entry) -> UploadNames.isSignature(entry.name())));
        Instant oldest = group.stream().map(Entry::modified).min(Comparator.naturalOrder()).orElseThrow();
        boolean signed = group.stream().anyMatch(entry -> UploadNames.isSignature(entry.name()));
        boolean inventory = group.stream().anyMatch(entry -> !UploadNames.isSignature(entry.name()));
        if (inventory && !signed && oldest.plus(PAIR_WAIT).isAfter(now)) {
            return null; // its signature is on its way: both go together
        }
        return new Unit(kind, group.stream().map(Entry::path).toList(), oldest);
    }

    /**
     * Sends units, at most {@code inFlight} at once; stops starting new ones at the first failure that is not the
     * file's own.
     *
     * @param inFlight how many at once
     * @return whether such a failure happened (the caller waits before the next round), and whether the policy
     *     server asked to come back later
     */
    private Round send(ServerSnapshot snapshot, List<Unit> units, int inFlight) throws InterruptedException {
        PintleClient client;
        try {
            client = upstream.client(snapshot);
        } catch (IOException | java.security.GeneralSecurityException e) {
            failed("cannot build the client of the policy server: " + e.getMessage());
            return new Round(true, null);
        }
        Credentials credentials = credentials(snapshot.config().upstream().forwardCredentials());
        Semaphore slots = new Semaphore(inFlight);
        AtomicBoolean failure = new AtomicBoolean();
        AtomicReference<Duration> busy = new AtomicReference<>();
        List<CompletableFuture<Void>> started = new ArrayList<>();
        for (Unit unit : units) {
            if (failure.get() || !running) {
                break;
            }
            slots.acquire();
            if (failure.get()) {
                slots.release();
                break;
            }
            started.add(sendUnit(client, credentials, unit, 0, busy).handle((ok, error) -> {
                if (error != null) {
                    // One line per round: the sends under way at once fail alike (a policy server down).
                    if (failure.compareAndSet(false, true)) {
                        failed(describe(error));
                    }
                } else if (!ok) {
                    failure.set(true);
                }
                slots.release();
                return null;
            }));
        }
        slots.acquire(inFlight); // every send ended
        slots.release(inFlight);
        return new Round(failure.get(), busy.get());
    }

    /** @return true when every file of the unit is done with (sent, moved aside, or gone), false to wait */
    private CompletableFuture<Boolean> sendUnit(PintleClient client, Credentials credentials, Unit unit, int index,
            AtomicReference<Duration> busy) {
        if (index >= unit.files().size()) {
            return CompletableFuture.completedFuture(true);
        }
        Path file = unit.files().get(index);
        BasicFileAttributes sent;
        HttpRequest request;
        try {
            sent = Files.readAttributes(file, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            request = request(client, credentials, unit.kind(), file);
        } catch (NoSuchFileException gone) {
            return sendUnit(client, credentials, unit, index + 1, busy);
        } catch (IOException e) {
            failed("cannot read " + file + ": " + e.getMessage());
            return CompletableFuture.completedFuture(false);
        }
        return client.httpClient().sendAsync(request, HttpResponse.BodyHandlers.ofByteArray())
                .thenCompose(response -> {
                    int status = response.statusCode();
                    if (status / 100 == 2) {
                        if (!removeSent(unit.kind(), file, sent)) {
                            return CompletableFuture.completedFuture(false);
                        }
                        return sendUnit(client, credentials, unit, index + 1, busy);
                    }
                    Problem problem = PintleClient.problem(status, response.body()).problem();
                    String reason = problem.reason();
                    String said = "HTTP " + status + (reason != null ? " (" + reason + ")" : "") + " from "
                            + request.uri().getHost();
                    if (permanent(status, reason)) {
                        // The file (and what follows it in the unit: a signature without its inventory is of no
                        // use) is refused for good.
                        boolean moved = true;
                        for (Path refused : unit.files().subList(index, unit.files().size())) {
                            moved &= moveAside(unit.kind(), refused, said + ": "
                                    + (problem.detail() != null ? problem.detail() : "(no detail)"));
                        }
                        // Not moved (failed/ not writable): it stays, and is tried again after the delay.
                        return CompletableFuture.completedFuture(moved);
                    }
                    // Busy: too many at once from this relay (its address's or a node's share: fewer at once will
                    // do, soon), or the policy server overloaded (come back when it says).
                    Duration retryAfter = status != 503 && status != 429 ? null
                            : TOO_MANY_AT_ONCE.contains(reason) ? firstRetry : PintleClient.retryAfter(response).orElse(null);
                    if (retryAfter != null) {
                        busy.accumulateAndGet(retryAfter, (a, b) -> a == null || b.compareTo(a) > 0 ? b : a);
                        LOG.debug("forwarding {}: {}, again in {} s", file.getFileName(), said,
                                retryAfter.toSeconds());
                    } else {
                        failed("forwarding " + file.getFileName() + ": " + said);
                    }
                    return CompletableFuture.completedFuture(false);
                });
    }

    private HttpRequest request(PintleClient client, Credentials credentials, UploadKind kind, Path file)
            throws IOException {
        HttpRequest.Builder builder = HttpRequest.newBuilder(client.uri(kind.prefix()
                        + PintleClient.encodeSegment(file.getFileName().toString())))
                .timeout(upstream.answerTimeout())
                .header("Content-Type", "application/octet-stream")
                .PUT(HttpRequest.BodyPublishers.ofFile(file));
        if (credentials != null) {
            String password = kind == UploadKind.INVENTORIES ? INITIAL_PASSWORD : credentials.password();
            builder.header("Authorization", "Basic " + Base64.getEncoder().encodeToString(
                    (credentials.user() + ":" + password).getBytes(StandardCharsets.UTF_8)));
        }
        return builder.build();
    }

    /**
     * @return whether a refusal is the file's own (never retried) rather than the relay's or the policy server's
     */
    static boolean permanent(int status, String reason) {
        return switch (status) {
            case 400, 409, 410, 411, 413, 414, 415, 422 -> true;
            case 403 -> reason != null && FILE_REASONS.contains(reason);
            default -> false; // 401, 403 for the relay, 404 (no such route: configuration), 408, 429, 5xx
        };
    }

    /** @return false when the sent file could not be removed (it would be sent again: the round counts as failed) */
    private boolean removeSent(UploadKind kind, Path file, BasicFileAttributes sent) {
        Tally tally = tallies.get(kind);
        tally.forwarded.incrementAndGet();
        lastSuccess = clock.instant();
        try {
            BasicFileAttributes now = Files.readAttributes(file, BasicFileAttributes.class,
                    LinkOption.NOFOLLOW_LINKS);
            if (!Objects.equals(now.fileKey(), sent.fileKey()) || now.size() != sent.size()
                    || !now.lastModifiedTime().equals(sent.lastModifiedTime())) {
                // The node sent it again meanwhile (a new file under the same name): that one goes next round.
                return true;
            }
            Files.deleteIfExists(file);
            LOG.debug("forwarded {}{}", kind.prefix(), file.getFileName());
            return true;
        } catch (NoSuchFileException gone) {
            return true; // removed meanwhile
        } catch (IOException e) {
            failed("forwarded " + file + " but cannot remove it (" + e.getMessage() + "): it would be sent again; "
                    + "make its directory writable by Pintle");
            return false;
        }
    }

    /** @return false when it could not be moved (it stays in the queue) */
    private boolean moveAside(UploadKind kind, Path file, String reason) {
        Path failed = failedDirectory(file.getParent());
        try {
            Files.createDirectories(failed);
            Path target = failed.resolve(file.getFileName());
            Files.writeString(failed.resolve(file.getFileName() + ".reason"), clock.instant() + " " + reason + "\n");
            Files.move(file, target, StandardCopyOption.REPLACE_EXISTING);
            tallies.get(kind).refused.incrementAndGet();
            LOG.warn("the policy server refused {}{} for good; moved to {}: {}", kind.prefix(), file.getFileName(),
                    target, reason);
            return true;
        } catch (NoSuchFileException gone) {
            return true; // removed meanwhile
        } catch (IOException e) {
            failed("cannot move the refused " + file + " to " + failed + " (" + e.getMessage() + "): it stays "
                    + "queued; make that directory writable by Pintle");
            return false;
        }
    }

    /**
     * @param directory an upload directory
     * @return where refused uploads go: {@code failed/} beside it, as relayd keeps them
     *     ({@code /var/rudder/reports/failed}, {@code /var/rudder/inventories/failed})
     */
    public static Path failedDirectory(Path directory) {
        Path parent = directory.toAbsolutePath().getParent();
        return (parent != null ? parent : directory).resolve("failed");
    }

    private void failed(String message) {
        lastFailure = new Failure(clock.instant(), message);
        LOG.warn("upload forwarding: {}", message);
    }

    private String describe(Throwable error) {
        Throwable cause = error instanceof java.util.concurrent.CompletionException && error.getCause() != null
                ? error.getCause() : error;
        if (cause instanceof HttpTimeoutException) {
            upstream.renew();
            return "no answer from the policy server within " + upstream.answerTimeout().toSeconds() + " s";
        }
        if (cause instanceof java.net.ConnectException) {
            return "cannot connect to the policy server: " + cause.getMessage();
        }
        return "the policy server could not be reached: " + cause;
    }

    /** The WebDAV user and password from the agent's rudder.json, or null when there is none to read. */
    record Credentials(String user, String password) {
        @Override
        public String toString() {
            return "Credentials[user=" + user + "]";
        }
    }

    /** rudder.json as last read, for the forwarding thread only: read again when it changes, not at every round. */
    private record CredentialsRead(Path file, FileTime modified, long size, Credentials credentials) {}

    private CredentialsRead credentialsRead;

    /** @return the credentials of rudder.json, read again (and what is wrong with it logged) only when it changed */
    private Credentials credentials(Path rudderJson) {
        if (rudderJson == null || !Files.isReadable(rudderJson)) {
            return null;
        }
        BasicFileAttributes attributes;
        try {
            attributes = Files.readAttributes(rudderJson, BasicFileAttributes.class);
        } catch (IOException gone) {
            return null;
        }
        CredentialsRead last = credentialsRead;
        if (last != null && last.file().equals(rudderJson) && last.modified().equals(attributes.lastModifiedTime())
                && last.size() == attributes.size()) {
            return last.credentials();
        }
        Credentials read = readCredentials(rudderJson);
        credentialsRead = new CredentialsRead(rudderJson, attributes.lastModifiedTime(), attributes.size(), read);
        return read;
    }

    private static Credentials readCredentials(Path rudderJson) {
        try {
            JsonNode json = JSON.readTree(rudderJson.toFile());
            JsonNode user = json.get("DAVUSER");
            JsonNode password = json.get("DAVPASSWORD");
            if (user == null || password == null || !user.isTextual() || !password.isTextual()) {
                LOG.warn("{} has no DAVUSER/DAVPASSWORD: uploads are forwarded with the relay's certificate only",
                        rudderJson);
                return null;
            }
            return new Credentials(user.asText(), password.asText());
        } catch (IOException e) {
            LOG.warn("cannot read {}: {}; uploads are forwarded with the relay's certificate only", rudderJson,
                    e.getMessage());
            return null;
        }
    }

    /** Per route: what is queued as of the last look, what was forwarded and refused since start. */
    private static final class Tally {
        volatile QueueView view = new QueueView(0, 0, null);
        final AtomicLong forwarded = new AtomicLong();
        final AtomicLong refused = new AtomicLong();
    }

    /**
     * @param files files waiting in the route's directory
     * @param bytes their size
     * @param oldest the oldest one's time, or null when none waits
     */
    public record QueueView(int files, long bytes, Instant oldest) {}

    /**
     * @param at when
     * @param message what went wrong
     */
    public record Failure(Instant at, String message) {}

    /**
     * @param queue per route, as of the last look at the directories
     * @param forwarded per route, files the policy server took since start
     * @param refused per route, files it refused for good since start (moved to {@code failed/})
     * @param lastSuccess when a file was last taken, or null
     * @param lastFailure the last failure, or null
     */
    public record Status(Map<UploadKind, QueueView> queue, Map<UploadKind, Long> forwarded,
            Map<UploadKind, Long> refused, Instant lastSuccess, Failure lastFailure) {}

    /** @return what the forwarder knows now */
    public Status status() {
        Map<UploadKind, QueueView> queue = new EnumMap<>(UploadKind.class);
        Map<UploadKind, Long> forwarded = new EnumMap<>(UploadKind.class);
        Map<UploadKind, Long> refused = new EnumMap<>(UploadKind.class);
        for (Map.Entry<UploadKind, Tally> entry : tallies.entrySet()) {
            queue.put(entry.getKey(), entry.getValue().view);
            forwarded.put(entry.getKey(), entry.getValue().forwarded.get());
            refused.put(entry.getKey(), entry.getValue().refused.get());
        }
        return new Status(queue, forwarded, refused, lastSuccess, lastFailure);
    }
}
