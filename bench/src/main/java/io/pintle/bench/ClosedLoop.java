package io.pintle.bench;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import javax.net.ssl.SSLContext;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.Response;
import org.eclipse.jetty.client.Result;
import org.eclipse.jetty.http.HttpHeader;

/**
 * One row against one server: {@code concurrency} virtual users, each sending its next request as soon as the
 * previous one completes (a closed loop, so at most {@code concurrency} requests are ever in flight), for a
 * warm-up and then a measured window. Only requests that complete within the measured window count towards
 * throughput and latency; errors count over the whole run. No request starts after the window ends; those in flight
 * then get {@link #DRAIN_TIMEOUT} to finish, after which the client is stopped and they are aborted.
 */
final class ClosedLoop {
    /**
     * A request that takes longer than this fails. Ten times the worst p99 seen on a loaded two-core machine (under
     * 0.5 s, 10 MiB downloads and full handshakes included), so only a stuck request hits it; short, because every
     * stuck request delays the end of its cell by up to this much.
     */
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(5);
    /** How long in-flight requests may take to finish after the measured window: beyond the request timeout. */
    private static final Duration DRAIN_TIMEOUT = Duration.ofSeconds(10);
    /** Hard cap on requests per run, whatever the duration: bounds the run and the latency samples' memory. */
    static final long MAX_REQUESTS = 2_000_000;

    private final LoadClient client;
    private final Scenario scenario;
    private final URI uri;
    private final String etag;
    private final AtomicLong started = new AtomicLong();
    private final LongAdder sent = new LongAdder();
    private final LongAdder completed = new LongAdder();
    private final LongAdder bytes = new LongAdder();
    private final LongAdder errors = new LongAdder();
    private final Map<String, LongAdder> errorKinds = new ConcurrentHashMap<>();
    private final List<LatencySamples> samples = new ArrayList<>();
    private final CountDownLatch finished;
    private final long warmupEnd;
    private final long measureEnd;

    private ClosedLoop(LoadClient client, Scenario scenario, Target target, Timing timing) {
        this.client = client;
        this.scenario = scenario;
        this.uri = target.uri(scenario.path());
        this.etag = scenario.kind().conditional() ? target.etag(scenario.path()) : null;
        this.finished = new CountDownLatch(scenario.concurrency());
        this.warmupEnd = System.nanoTime() + timing.warmup().toNanos();
        this.measureEnd = warmupEnd + timing.measure().toNanos();
    }

    /**
     * Runs a row against a server with a fresh client, and stops the client.
     *
     * @param scenario the row
     * @param target the server
     * @param tls the node's mutual-TLS context
     * @param timing warm-up and measured durations
     * @param cpu the CPU sampler
     * @return the measurement
     * @throws Exception if the client cannot start or stop
     */
    static Measurement run(Scenario scenario, Target target, SSLContext tls, Timing timing, CpuSampler cpu)
            throws Exception {
        LoadClient client = LoadClient.start(scenario.protocol(), tls, scenario.concurrency());
        try {
            return new ClosedLoop(client, scenario, target, timing).measure(target.name(), timing, cpu);
        } finally {
            client.stop();
        }
    }

    /**
     * @param warmup runs before the measured window, not counted
     * @param measure the measured window
     */
    record Timing(Duration warmup, Duration measure) {}

    private Measurement measure(String target, Timing timing, CpuSampler cpu) throws InterruptedException {
        for (int i = 0; i < scenario.concurrency(); i++) {
            LatencySamples user = new LatencySamples();
            samples.add(user);
            new User(user).next();
        }
        sleepUntil(warmupEnd);
        CpuSampler.Sample before = cpu.sample();
        sleepUntil(measureEnd);
        CpuSampler.Sample after = cpu.sample();
        drain();
        return result(target, timing, CpuSampler.between(before, after));
    }

    /** Waits for the requests still in flight; those that do not finish in time are errors (then aborted). */
    private void drain() throws InterruptedException {
        if (!finished.await(DRAIN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
            error("still in flight " + DRAIN_TIMEOUT.toSeconds() + " s after the window", finished.getCount());
        }
    }

    private Measurement result(String target, Timing timing, CpuShare cpu) {
        long[] sorted = LatencySamples.sorted(samples);
        Map<String, Long> kinds = new TreeMap<>();
        errorKinds.forEach((kind, count) -> kinds.put(kind, count.sum()));
        return new Measurement(target, sent.sum(), completed.sum(), bytes.sum(), timing.measure().toNanos() / 1e9,
                LatencySamples.percentileMillis(sorted, 50), LatencySamples.percentileMillis(sorted, 99),
                errors.sum(), kinds, client.handshakes(), cpu);
    }

    private void error(String kind, long count) {
        errors.add(count);
        errorKinds.computeIfAbsent(kind, k -> new LongAdder()).add(count);
    }

    private static void sleepUntil(long nanoTime) throws InterruptedException {
        long remaining = nanoTime - System.nanoTime();
        if (remaining > 0) {
            TimeUnit.NANOSECONDS.sleep(remaining);
        }
    }

    /** The body length and start time of one request, filled in by Jetty's callbacks for that request. */
    private static final class Exchange {
        private final long startNanos;
        private long bodyBytes;

        Exchange(long startNanos) {
            this.startNanos = startNanos;
        }
    }

    /** One virtual user: one request in flight at a time, the next sent from the previous one's completion. */
    private final class User {
        private final LatencySamples latencies;

        User(LatencySamples latencies) {
            this.latencies = latencies;
        }

        void next() {
            long now = System.nanoTime();
            if (now - measureEnd >= 0 || started.incrementAndGet() > MAX_REQUESTS) {
                finished.countDown();
                return;
            }
            Exchange exchange = new Exchange(now);
            sent.increment();
            request().onResponseContent((response, content) -> exchange.bodyBytes += content.remaining())
                    .send(result -> complete(exchange, result));
        }

        private Request request() {
            Request request = client.http().newRequest(uri)
                    .version(scenario.protocol().version())
                    .timeout(REQUEST_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            if (etag != null) {
                request.headers(headers -> headers.put(HttpHeader.IF_NONE_MATCH, etag));
            }
            if (scenario.kind().closeConnection()) {
                request.headers(headers -> headers.put(HttpHeader.CONNECTION, "close"));
            }
            return request;
        }

        private void complete(Exchange exchange, Result result) {
            long end = System.nanoTime();
            String failure = check(result, exchange.bodyBytes);
            if (failure != null) {
                error(failure, 1);
            } else if (end - warmupEnd >= 0 && end - measureEnd < 0) {
                completed.increment();
                bytes.add(exchange.bodyBytes);
                latencies.add(end - exchange.startNanos);
            }
            if (failure != null && end - measureEnd < 0) {
                // A failure can complete synchronously inside send(): go through the executor, not recursion.
                client.http().getExecutor().execute(this::next);
            } else {
                next();
            }
        }

        /** @return why the exchange failed, or null if it succeeded */
        private String check(Result result, long bodyBytes) {
            if (result.isFailed()) {
                Throwable failure = result.getFailure();
                return failure.getClass().getSimpleName() + ": " + failure.getMessage();
            }
            Response response = result.getResponse();
            if (response.getStatus() != scenario.kind().expectedStatus()) {
                return "status " + response.getStatus();
            }
            if (response.getVersion() != scenario.protocol().version()) {
                return "negotiated " + response.getVersion() + " instead of " + scenario.protocol().version();
            }
            if (bodyBytes != scenario.expectedBytes()) {
                return "body of " + bodyBytes + " bytes instead of " + scenario.expectedBytes();
            }
            return null;
        }
    }
}
