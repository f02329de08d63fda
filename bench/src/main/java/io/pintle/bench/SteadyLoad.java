package io.pintle.bench;

import io.pintle.api.Routes;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import javax.net.ssl.SSLContext;
import org.eclipse.jetty.client.Connection;
import org.eclipse.jetty.client.Destination;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.Result;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.ssl.SslConnection;

/**
 * The background load of {@link ReloadUnderLoad}: a fixed set of keep-alive HTTP/1.1 TLS connections, opened once
 * and held open, with a light open-loop request rate spread over them round-robin. Each connection is a Jetty
 * {@link Connection} obtained from the destination directly (not from the pool), so that every request goes on a
 * known connection and every connection gets its share; a connection carries one request at a time. Each
 * connection comes from its own loopback address ({@link LoopbackHosts}), as a fleet's nodes each come from their
 * own host: the server's per-address share of a work class ({@code [limits.<class>] per_address}) then applies per
 * connection, as in production, rather than to the whole load.
 *
 * <p>Every request is checked: a conditional GET of the node's policy archive must answer 304, a
 * {@code /v1/whoami} must answer 200 and say the node is known. Anything else (other status, exception, timeout,
 * request still in flight at the end) is a failure, counted by kind. TLS connections opened and closed are counted
 * through Jetty's connection events.
 */
final class SteadyLoad {
    /** A request that takes longer than this fails; a reload must never make a request wait anywhere near it. */
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(5);
    /**
     * Connections opened (and their first request sent) at a time: each is a full TLS handshake with an RSA-2048
     * server key, so opening a thousand at once would only queue them and risk the connect timeout.
     */
    private static final int OPEN_BATCH = 25;
    /** Bound on opening one batch and getting its first responses. */
    private static final Duration OPEN_BATCH_TIMEOUT = Duration.ofSeconds(30);
    /** The scheduler sends what is due every this many milliseconds. */
    private static final long TICK_MILLIS = 5;
    /** One request in this many is a {@code /v1/whoami}; the others are conditional GETs. */
    private static final int WHOAMI_EVERY = 10;
    /** What a whoami body says when the certificate authenticates a known node. */
    private static final String KNOWN = "\"known\":true";
    /** How long {@link #stop()} waits for requests still in flight, beyond their own timeout. */
    private static final Duration DRAIN_MARGIN = Duration.ofSeconds(2);
    /** Failure descriptions are cut to this length: exception messages can be long. */
    private static final int MAX_KIND_LENGTH = 160;

    private final LoadClient client;
    private final URI conditional;
    private final URI whoami;
    private final String etag;
    private final ConnectionEvents events;
    private final List<Slot> slots = new ArrayList<>();
    private final LongAdder sent = new LongAdder();
    private final LongAdder succeeded = new LongAdder();
    private final LongAdder failed = new LongAdder();
    private final LongAdder sentDuringReload = new LongAdder();
    private final LongAdder skippedBusy = new LongAdder();
    private final Map<String, LongAdder> failureKinds = new ConcurrentHashMap<>();
    private final LatencySamples quietLatencies = new LatencySamples();
    private final LatencySamples reloadLatencies = new LatencySamples();
    private final LongAdder sentMeasured = new LongAdder();
    private volatile boolean reloading;
    private volatile boolean measuring;
    private ScheduledExecutorService ticker;
    private long startNanos;
    private long scheduled;
    private int nextSlot;
    private long runNanos;

    private SteadyLoad(LoadClient client, URI base, String conditionalPath, String etag, ConnectionEvents events) {
        this.client = client;
        this.conditional = base.resolve(conditionalPath);
        this.whoami = base.resolve(Routes.WHOAMI);
        this.etag = etag;
        this.events = events;
    }

    /**
     * Opens the connections, in batches, and sends one {@code /v1/whoami} on each; any failure there aborts.
     *
     * @param tls the node's mutual-TLS context
     * @param base the server's {@code https://} URI
     * @param conditionalPath URL path of the file polled with {@code If-None-Match}
     * @param etag its current ETag
     * @param connections how many connections to open
     * @param progress where to report progress
     * @return the load, its connections open, not yet sending
     * @throws Exception if the client cannot start or a connection cannot be opened or used
     */
    static SteadyLoad open(SSLContext tls, URI base, String conditionalPath, String etag, int connections,
            PrintStream progress) throws Exception {
        LoadClient client = LoadClient.start(Protocol.HTTP_1_1, tls, connections,
                LoadClient.Hosts.ONE_PER_CONNECTION);
        ConnectionEvents events = new ConnectionEvents();
        client.http().addBean(events);
        SteadyLoad load = new SteadyLoad(client, base, conditionalPath, etag, events);
        try {
            load.openConnections(connections, progress);
        } catch (Exception | Error e) {
            client.stop();
            throw e;
        }
        return load;
    }

    /**
     * Starts sending, open loop: whatever the responses, {@code rate} requests per second are due, each on the next
     * free connection in turn.
     *
     * @param rate requests per second
     */
    synchronized void start(int rate) {
        ticker = Executors.newSingleThreadScheduledExecutor(task -> {
            Thread thread = new Thread(task, LoadClient.THREAD_NAME + "-ticker");
            thread.setDaemon(true);
            return thread;
        });
        startNanos = System.nanoTime();
        ticker.scheduleAtFixedRate(() -> tick(rate), 0, TICK_MILLIS, TimeUnit.MILLISECONDS);
    }

    /** From now on, requests count towards the latencies and the "during reloads" figures (after the warm-up). */
    void startMeasuring() {
        measuring = true;
    }

    /**
     * Marks the window between a reload's trigger and the moment it is effective: requests sent in it are counted
     * and their latencies kept apart.
     *
     * @param inProgress whether a reload is in progress
     */
    void reloading(boolean inProgress) {
        reloading = inProgress;
    }

    /**
     * Stops sending, waits for the requests in flight (those that do not finish count as failures) and closes the
     * client.
     *
     * @return what the load saw
     * @throws Exception if the client fails to stop
     */
    Figures stop() throws Exception {
        synchronized (this) {
            if (ticker != null) {
                ticker.shutdown();
                ticker.awaitTermination(REQUEST_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
                runNanos = System.nanoTime() - startNanos;
            }
        }
        long deadline = System.nanoTime() + REQUEST_TIMEOUT.plus(DRAIN_MARGIN).toNanos();
        while (slots.stream().anyMatch(slot -> slot.busy.get()) && System.nanoTime() < deadline) {
            TimeUnit.MILLISECONDS.sleep(10);
        }
        long inFlight = slots.stream().filter(slot -> slot.busy.get()).count();
        if (inFlight > 0) {
            fail("still in flight " + DRAIN_MARGIN.toSeconds() + " s after its timeout", inFlight);
        }
        long closedAtEnd = slots.stream().filter(slot -> slot.connection.isClosed()).count();
        long unused = slots.stream().filter(slot -> slot.requests.sum() <= 1).count();
        Map<String, Long> kinds = new TreeMap<>();
        failureKinds.forEach((kind, count) -> kinds.put(kind, count.sum()));
        Figures figures = new Figures(slots.size(), events.opened.sum(), events.closed.sum(), closedAtEnd, unused,
                runNanos / 1e9, sent.sum(), succeeded.sum(), failed.sum(), kinds, sentMeasured.sum(),
                sentDuringReload.sum(),
                skippedBusy.sum(), Summary.of(quietLatencies.toArray()), Summary.of(reloadLatencies.toArray()),
                client.handshakes());
        client.stop();
        return figures;
    }

    /**
     * What the load saw, from the first request after the connections were opened to the end.
     *
     * @param connections connections opened and used
     * @param tlsOpened TLS connections opened by the client (Jetty connection events), setup included
     * @param tlsClosed TLS connections closed before the end, by either side
     * @param closedAtEnd connections found closed at the end
     * @param unused connections that carried no request besides their first one
     * @param seconds how long the load ran
     * @param sent requests sent
     * @param succeeded requests answered as expected
     * @param failed requests that failed
     * @param failureKinds failures by description
     * @param sentMeasured requests sent after the warm-up, during the measured reloads
     * @param sentDuringReload of those, requests sent between a reload's trigger and the moment it was effective
     * @param skippedBusy times the next connection still had a request in flight and the one after was used
     * @param quietLatency latency of measured requests sent outside reloads
     * @param reloadLatency latency of measured requests sent during reloads
     * @param handshakes TLS handshakes completed by the client, setup included
     */
    record Figures(int connections, long tlsOpened, long tlsClosed, long closedAtEnd, long unused, double seconds,
            long sent, long succeeded, long failed, Map<String, Long> failureKinds, long sentMeasured,
            long sentDuringReload,
            long skippedBusy, Summary quietLatency, Summary reloadLatency, long handshakes) {}

    private void openConnections(int count, PrintStream progress) throws Exception {
        Destination destination = client.http().resolveDestination(client.http().newRequest(whoami));
        long started = System.nanoTime();
        for (int from = 0; from < count; from += OPEN_BATCH) {
            int size = Math.min(OPEN_BATCH, count - from);
            List<CompletableFuture<Connection>> opening = new ArrayList<>();
            for (int i = 0; i < size; i++) {
                opening.add(destination.newConnection());
            }
            List<Slot> batch = new ArrayList<>();
            for (CompletableFuture<Connection> connection : opening) {
                batch.add(new Slot(connection.get(OPEN_BATCH_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)));
            }
            CountDownLatch answered = new CountDownLatch(batch.size());
            for (Slot slot : batch) {
                slot.busy.set(true);
                send(slot, true, answered);
            }
            if (!answered.await(OPEN_BATCH_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS) || failed.sum() > 0) {
                throw new IllegalStateException("opening connections failed: " + failureKinds);
            }
            slots.addAll(batch);
            if (slots.size() % 250 == 0) {
                progress.printf("  %,d connections open%n", slots.size());
            }
        }
        progress.printf("  %,d connections open and answered in %.1f s%n", slots.size(),
                (System.nanoTime() - started) / 1e9);
        // The opening requests are setup, not load.
        sent.reset();
        succeeded.reset();
    }

    /** Runs on the ticker thread only. */
    private void tick(int rate) {
        try {
            long due = (System.nanoTime() - startNanos) * rate / 1_000_000_000L;
            while (scheduled < due) {
                scheduled++;
                Slot slot = nextFreeSlot();
                if (slot == null) {
                    fail("no free connection", 1);
                } else {
                    send(slot, scheduled % WHOAMI_EVERY == 0, null);
                }
            }
        } catch (RuntimeException e) {
            // An exception would cancel the schedule silently: count it, and keep the load going.
            fail("harness: " + e, 1);
        }
    }

    /** @return the next connection in turn without a request in flight, now marked busy, or null if none is free */
    private Slot nextFreeSlot() {
        for (int tried = 0; tried < slots.size(); tried++) {
            Slot slot = slots.get(nextSlot);
            nextSlot = (nextSlot + 1) % slots.size();
            if (slot.busy.compareAndSet(false, true)) {
                return slot;
            }
            skippedBusy.increment();
        }
        return null;
    }

    private void send(Slot slot, boolean isWhoami, CountDownLatch answered) {
        boolean measured = measuring;
        boolean duringReload = reloading;
        long start = System.nanoTime();
        sent.increment();
        if (measured) {
            sentMeasured.increment();
            if (duringReload) {
                sentDuringReload.increment();
            }
        }
        slot.requests.increment();
        Request request = client.http().newRequest(isWhoami ? whoami : conditional)
                .timeout(REQUEST_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        if (isWhoami) {
            request.onResponseContent((response, content) -> append(body, content));
        } else {
            request.headers(headers -> headers.put(HttpHeader.IF_NONE_MATCH, etag));
        }
        slot.connection.send(request, result -> {
            long latency = System.nanoTime() - start;
            String failure = check(result, isWhoami, body);
            if (failure == null) {
                succeeded.increment();
                if (measured) {
                    (duringReload ? reloadLatencies : quietLatencies).add(latency);
                }
            } else {
                fail(failure, 1);
            }
            slot.busy.set(false);
            if (answered != null) {
                answered.countDown();
            }
        });
    }

    private static void append(ByteArrayOutputStream body, ByteBuffer content) {
        byte[] bytes = new byte[content.remaining()];
        content.get(bytes);
        body.writeBytes(bytes);
    }

    /** @return why the exchange failed, or null if it succeeded */
    private static String check(Result result, boolean isWhoami, ByteArrayOutputStream body) {
        if (result.isFailed()) {
            Throwable failure = result.getFailure();
            return failure.getClass().getSimpleName() + ": " + failure.getMessage();
        }
        int status = result.getResponse().getStatus();
        int expected = isWhoami ? 200 : 304;
        if (status != expected) {
            return (isWhoami ? "whoami" : "conditional GET") + ": status " + status + " instead of " + expected;
        }
        if (isWhoami && !body.toString(StandardCharsets.UTF_8).contains(KNOWN)) {
            return "whoami: the node is not known: " + body.toString(StandardCharsets.UTF_8);
        }
        return null;
    }

    private void fail(String kind, long count) {
        failed.add(count);
        String key = kind.length() > MAX_KIND_LENGTH ? kind.substring(0, MAX_KIND_LENGTH) + "…" : kind;
        failureKinds.computeIfAbsent(key, k -> new LongAdder()).add(count);
    }

    /** One held connection: at most one request in flight on it. */
    private static final class Slot {
        private final Connection connection;
        private final AtomicBoolean busy = new AtomicBoolean();
        private final LongAdder requests = new LongAdder();

        Slot(Connection connection) {
            this.connection = connection;
        }
    }

    /**
     * Counts TLS connections opened and closed. Jetty adds the {@link org.eclipse.jetty.client.HttpClient}'s beans of this type as listeners
     * of every connection it creates; each TLS connection is one {@link SslConnection} (under its HTTP connection).
     */
    private static final class ConnectionEvents implements org.eclipse.jetty.io.Connection.Listener {
        private final LongAdder opened = new LongAdder();
        private final LongAdder closed = new LongAdder();

        @Override
        public void onOpened(org.eclipse.jetty.io.Connection connection) {
            if (connection instanceof SslConnection) {
                opened.increment();
            }
        }

        @Override
        public void onClosed(org.eclipse.jetty.io.Connection connection) {
            if (connection instanceof SslConnection) {
                closed.increment();
            }
        }
    }
}
