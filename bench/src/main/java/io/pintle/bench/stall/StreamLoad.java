package io.pintle.bench.stall;

import java.io.PrintStream;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BooleanSupplier;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.Result;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpVersion;

/**
 * A fixed number of one request, {@code streams} of them in flight at a time on a client limited to one HTTP/2
 * connection: each answer sends the next request on the same connection. Every exchange ends in exactly one of
 * three ways: answered (with its status), stuck (no answer within the timeout, or none at all when the run ends),
 * or failed (reset, connection closed).
 */
final class StreamLoad {
    private static final Duration PROGRESS_EVERY = Duration.ofSeconds(10);
    /** After the timeout, how much longer the run waits without any exchange ending before it gives up. */
    private static final Duration GIVE_UP_MARGIN = Duration.ofSeconds(15);
    private static final int FAILURE_SAMPLES = 5;

    private final HttpClient http;
    private final URI uri;
    private final String method;
    private final String ifNoneMatch;
    private final int expected;
    private final long requests;
    private final Duration timeout;

    private final AtomicLong claimed = new AtomicLong();
    private final LongAdder sent = new LongAdder();
    private final LongAdder answered = new LongAdder();
    private final LongAdder timedOut = new LongAdder();
    private final LongAdder failed = new LongAdder();
    private final LongAdder unexpected = new LongAdder();
    private final Map<String, LongAdder> statuses = new ConcurrentHashMap<>();
    private final Map<String, LongAdder> failures = new ConcurrentHashMap<>();
    private volatile boolean stopping;

    /**
     * What one family's run gave.
     *
     * @param sent requests sent
     * @param completed answers received, whatever their status
     * @param stuck requests without an answer within the timeout, or with none when the run ended
     * @param errors answers with another status or HTTP version than expected, and failed exchanges
     * @param statuses how many of each status, and of each way of failing
     * @param seconds from the first request to the last end
     * @param failureSamples the first distinct failure messages
     */
    record Outcome(long sent, long completed, long stuck, long errors, Map<String, Long> statuses, double seconds,
            List<String> failureSamples) {
        double perSecond() {
            return seconds > 0 ? completed / seconds : 0;
        }

        boolean clean() {
            return stuck == 0 && errors == 0;
        }
    }

    private StreamLoad(HttpClient http, URI uri, String method, String ifNoneMatch, int expected, long requests,
            Duration timeout) {
        this.http = http;
        this.uri = uri;
        this.method = method;
        this.ifNoneMatch = ifNoneMatch;
        this.expected = expected;
        this.requests = requests;
        this.timeout = timeout;
    }

    /**
     * @param http a started client, limited to one connection per destination, over HTTP/2
     * @param uri what to ask for
     * @param method GET or HEAD
     * @param ifNoneMatch the ETag to send as {@code If-None-Match}, or null
     * @param expected the status every answer must have
     * @param requests how many requests
     * @param streams how many in flight at a time
     * @param timeout how long one request may take
     * @param serverAlive whether the server still runs (the run stops early when it does not)
     * @param progress where a line goes every 10 s
     * @param label the family's name, for the progress lines
     * @return what happened
     */
    static Outcome run(HttpClient http, URI uri, String method, String ifNoneMatch, int expected, long requests,
            int streams, Duration timeout, BooleanSupplier serverAlive, PrintStream progress, String label)
            throws InterruptedException {
        return new StreamLoad(http, uri, method, ifNoneMatch, expected, requests, timeout)
                .run(streams, serverAlive, progress, label);
    }

    private Outcome run(int streams, BooleanSupplier serverAlive, PrintStream progress, String label)
            throws InterruptedException {
        CountDownLatch done = new CountDownLatch(streams);
        long start = System.nanoTime();
        for (int i = 0; i < streams; i++) {
            next(done);
        }
        long lastEnded = 0;
        long lastChange = System.nanoTime();
        long nextProgress = start + PROGRESS_EVERY.toNanos();
        long giveUpAfter = timeout.plus(GIVE_UP_MARGIN).toNanos();
        while (!done.await(200, TimeUnit.MILLISECONDS)) {
            long now = System.nanoTime();
            long ended = ended();
            if (ended != lastEnded) {
                lastEnded = ended;
                lastChange = now;
            }
            if (!serverAlive.getAsBoolean()) {
                progress.println(label + ": the server is gone; stopping");
                stopping = true;
            }
            if (now - lastChange > giveUpAfter) {
                // Not even the client's timeouts fire: count what is still out as stuck, and stop.
                progress.println(label + ": nothing ended for " + Duration.ofNanos(now - lastChange).toSeconds()
                        + " s; stopping");
                break;
            }
            if (now >= nextProgress) {
                nextProgress += PROGRESS_EVERY.toNanos();
                progress.printf(Locale.ROOT, "%s: %,d of %,d ended, %,.0f req/s, %,d stuck, %,d errors%n", label,
                        ended, requests, answered.sum() / ((now - start) / 1e9), timedOut.sum(),
                        failed.sum() + unexpected.sum());
            }
        }
        stopping = true;
        double seconds = (System.nanoTime() - start) / 1e9;
        long unfinished = sent.sum() - ended();
        if (unfinished > 0) {
            statuses.computeIfAbsent("unfinished", k -> new LongAdder()).add(unfinished);
        }
        Map<String, Long> seen = new TreeMap<>();
        statuses.forEach((status, count) -> seen.put(status, count.sum()));
        List<String> samples = failures.keySet().stream().sorted().limit(FAILURE_SAMPLES).toList();
        return new Outcome(sent.sum(), answered.sum(), timedOut.sum() + unfinished, failed.sum() + unexpected.sum(),
                Map.copyOf(seen), seconds, samples);
    }

    private long ended() {
        return answered.sum() + timedOut.sum() + failed.sum();
    }

    /** Sends one more request if any are left, or ends this stream. */
    private void next(CountDownLatch done) {
        if (stopping || claimed.getAndIncrement() >= requests) {
            done.countDown();
            return;
        }
        Request request = http.newRequest(uri).method(method).version(HttpVersion.HTTP_2)
                .timeout(timeout.toMillis(), TimeUnit.MILLISECONDS);
        if (ifNoneMatch != null) {
            request.headers(headers -> headers.put(HttpHeader.IF_NONE_MATCH, ifNoneMatch));
        }
        sent.increment();
        request.send(result -> {
            record(result);
            if (result.isFailed()) {
                // A failure can be reported inside send() (a closed connection, a full queue): going on from
                // here would recurse once per remaining request.
                http.getExecutor().execute(() -> next(done));
            } else {
                next(done);
            }
        });
    }

    private void record(Result result) {
        if (result.isFailed()) {
            Throwable failure = result.getFailure();
            if (failure instanceof TimeoutException || failure.getCause() instanceof TimeoutException) {
                timedOut.increment();
                count("timeout");
            } else {
                failed.increment();
                count("failed: " + failure.getClass().getSimpleName());
            }
            sample(failure.getClass().getSimpleName() + ": " + failure.getMessage());
            return;
        }
        answered.increment();
        int status = result.getResponse().getStatus();
        HttpVersion version = result.getResponse().getVersion();
        count(Integer.toString(status));
        if (status != expected || version != HttpVersion.HTTP_2) {
            unexpected.increment();
            sample("status " + status + " over " + version);
        }
    }

    private void count(String status) {
        statuses.computeIfAbsent(status, k -> new LongAdder()).increment();
    }

    private void sample(String message) {
        if (failures.size() < 50) {
            failures.putIfAbsent(message == null ? "null" : message, new LongAdder());
        }
    }
}
