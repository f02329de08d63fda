package io.pintle.bench.hostile;

import io.pintle.bench.perf.Load;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpVersion;

/**
 * The node under attack: from 127.0.0.1, with its certificate, it downloads its small policy file again and
 * again, one at a time, each over a new TLS connection (a full handshake and {@code Connection: close}), as
 * Rudder's agent runs curl. Every download is kept: when it started, how long it took, and what came of it.
 */
final class Victim implements AutoCloseable {
    /**
     * Beyond the server's 30 s queue timeout: a download that waits for a worker gets its 503 rather than a
     * client-side timeout.
     */
    private static final Duration TIMEOUT = Duration.ofSeconds(40);
    /** Issue 18's "done when": a node's download gets its 200 within 2 s. */
    static final long SLOW_NANOS = TimeUnit.SECONDS.toNanos(2);

    /**
     * One download.
     *
     * @param startNanos when it started ({@link System#nanoTime})
     * @param nanos how long it took, to the last byte or the failure
     * @param failure null for a 200 with the whole file; otherwise the status or the failure
     */
    record Download(long startNanos, long nanos, String failure) {}

    /**
     * Downloads over a window.
     *
     * @param count downloads started in the window
     * @param errors of which did not get the whole file with a 200
     * @param slow of which took more than 2 s (errors included)
     * @param sorted latencies of the successful ones, ascending, in nanoseconds
     * @param failures the failures, first distinct ones
     */
    record Window(int count, int errors, int slow, long[] sorted, List<String> failures) {
        /** Nearest rank, NaN without samples. */
        double percentileMillis(double percentile) {
            if (sorted.length == 0) {
                return Double.NaN;
            }
            return sorted[Math.max(0, (int) Math.ceil(percentile / 100.0 * sorted.length) - 1)] / 1e6;
        }

        double maxMillis() {
            return sorted.length == 0 ? Double.NaN : sorted[sorted.length - 1] / 1e6;
        }
    }

    private final HttpClient http;
    private final URI uri;
    private final long length;
    private final Duration pause;
    private final List<Download> downloads = new ArrayList<>();
    private final Thread thread;
    private volatile boolean running = true;

    Victim(SSLContext tls, URI uri, long length, Duration pause) throws Exception {
        // HTTP/1.1, no session resumption, one connection at a time: each download is curl's fresh connection.
        this.http = Load.client(tls, false, false, 1);
        this.uri = uri;
        this.length = length;
        this.pause = pause;
        this.thread = new Thread(this::loop, "victim");
        thread.setDaemon(true);
    }

    /** @return the first download's failure, or null: the victim can download before anything is measured */
    String check() {
        return once().failure();
    }

    void start() {
        thread.start();
    }

    private void loop() {
        while (running) {
            Download download = once();
            synchronized (downloads) {
                downloads.add(download);
            }
            try {
                Thread.sleep(pause.toMillis());
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private Download once() {
        long start = System.nanoTime();
        String failure;
        try {
            ContentResponse response = http.newRequest(uri).version(HttpVersion.HTTP_1_1)
                    .headers(h -> h.put(HttpHeader.CONNECTION, "close"))
                    .timeout(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS).send();
            if (response.getStatus() != 200) {
                failure = "status " + response.getStatus();
            } else if (response.getContent().length != length) {
                failure = "body of " + response.getContent().length + " bytes, not " + length;
            } else {
                failure = null;
            }
        } catch (Exception e) {
            Throwable cause = e.getCause() != null && e instanceof java.util.concurrent.ExecutionException
                    ? e.getCause() : e;
            failure = cause.getClass().getSimpleName();
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
        }
        return new Download(start, System.nanoTime() - start, failure);
    }

    /** @return the downloads started from {@code from} to {@code to} (nanoTime) */
    Window between(long from, long to) {
        List<Download> in;
        synchronized (downloads) {
            in = downloads.stream().filter(d -> d.startNanos() >= from && d.startNanos() <= to).toList();
        }
        long[] ok = in.stream().filter(d -> d.failure() == null).mapToLong(Download::nanos).toArray();
        Arrays.sort(ok);
        int errors = (int) in.stream().filter(d -> d.failure() != null).count();
        int slow = (int) in.stream().filter(d -> d.failure() != null || d.nanos() > SLOW_NANOS).count();
        List<String> failures = in.stream().map(Download::failure).filter(f -> f != null).distinct().limit(5)
                .toList();
        return new Window(in.size(), errors, slow, ok, failures);
    }

    /** @return every download so far */
    List<Download> all() {
        synchronized (downloads) {
            return List.copyOf(downloads);
        }
    }

    @Override
    public void close() {
        running = false;
        thread.interrupt();
        try {
            thread.join(TIMEOUT.toMillis() + 5_000);
            http.stop();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            throw new IllegalStateException("the victim's client did not stop", e);
        }
    }
}
