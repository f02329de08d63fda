package io.pintle.bench.hostile;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLSocket;

/**
 * Issue 18's third case: anonymous shared-file uploads ({@code PUT shared-files/<target>/<source>/<id>}, which an
 * allowed network needs no certificate for) announcing 2,000 bytes and sending one every 10 s. Each upload has a
 * thread that waits for the server's answer; the bytes go on until it comes (or the harness lets go).
 */
final class SlowUploads implements Attack {
    private static final int DECLARED_BYTES = 2000;

    private final Attacker attacker;
    private final HostileLayout layout;
    private final int count;
    private final Duration every;
    private final List<Upload> uploads = new CopyOnWriteArrayList<>();
    private final AtomicInteger answered = new AtomicInteger();
    private ScheduledExecutorService trickle;
    private long openNanos;

    /** One upload: its connection and whether the server has answered. */
    private record Upload(SSLSocket socket, AtomicBoolean done) {}

    SlowUploads(Attacker attacker, HostileLayout layout, int count, Duration every) {
        this.attacker = attacker;
        this.layout = layout;
        this.count = count;
        this.every = every;
    }

    @Override
    public String description() {
        return String.format(Locale.ROOT, "%,d anonymous shared-file uploads (`PUT shared-files/…`, `Content-Length:"
                + " %,d`), one byte every %d s", count, DECLARED_BYTES, every.toSeconds());
    }

    @Override
    public void launch() throws Exception {
        long start = System.nanoTime();
        for (int i = 0; i < count; i++) {
            SSLSocket socket;
            try {
                socket = attacker.connect(0);
                Attacker.write(socket, "PUT " + layout.uploadPath(i) + " HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                        + "Content-Type: application/octet-stream\r\nContent-Length: " + DECLARED_BYTES + "\r\n\r\nh");
            } catch (IOException e) {
                attacker.saw("failed: " + e.getClass().getSimpleName());
                continue;
            }
            Upload upload = new Upload(socket, new AtomicBoolean());
            uploads.add(upload);
            Thread reader = new Thread(() -> awaitAnswer(upload), "slow-upload-" + i);
            reader.setDaemon(true);
            reader.start();
        }
        openNanos = System.nanoTime() - start;
        trickle = Executors.newSingleThreadScheduledExecutor();
        trickle.scheduleAtFixedRate(this::oneByteEach, every.toMillis(), every.toMillis(), TimeUnit.MILLISECONDS);
    }

    private void awaitAnswer(Upload upload) {
        String outcome;
        try {
            // The server answers 408 once the upload is below its rate floor, or 503 at once past its share.
            upload.socket().setSoTimeout(0);
            int status = Attacker.readStatus(upload.socket(), 512);
            outcome = status < 0 ? "closed without an answer" : Integer.toString(status);
        } catch (IOException e) {
            outcome = "failed: " + e.getClass().getSimpleName();
        }
        // Counted once: here, or by close when the harness let go first.
        if (upload.done().compareAndSet(false, true)) {
            attacker.saw(outcome);
            answered.incrementAndGet();
        }
    }

    private void oneByteEach() {
        for (Upload upload : uploads) {
            if (!upload.done().get()) {
                try {
                    Attacker.write(upload.socket(), "x");
                } catch (IOException closed) {
                    // The server answered and closed; the reader counts it.
                }
            }
        }
    }

    @Override
    public String delivered() {
        return String.format(Locale.ROOT, "%,d uploads started in %.1f s; %,d answered while watched",
                uploads.size(), openNanos / 1e9, answered.get());
    }

    @Override
    public void close() {
        if (trickle != null) {
            trickle.shutdownNow();
        }
        for (Upload upload : uploads) {
            if (upload.done().compareAndSet(false, true)) {
                attacker.saw("still uploading when let go");
            }
            try {
                upload.socket().close();
            } catch (IOException e) {
                // Gone already.
            }
        }
    }
}
