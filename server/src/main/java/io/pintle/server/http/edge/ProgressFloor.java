package io.pintle.server.http.edge;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.Scheduler;

/**
 * The progress floor of one response: a write the client does not take (an HTTP/2 stream whose flow-control
 * window stays closed or opens a byte at a time, a TCP reader that stopped) may stay pending for at most the
 * longer of one check period and the time its bytes take at the minimum rate; past that the response is aborted
 * (an HTTP/2 stream reset, an HTTP/1.1 connection closed) and the worker it holds is free. The connection-wide
 * slow-reader check ({@link ConnectionGuard}) does not see an HTTP/2 stream stalled by flow control: nothing is
 * pending on the socket.
 *
 * <p>Nothing is scheduled for a write that completes at once (a download to a reading client); a check is
 * scheduled only when a write is still pending when it returns.
 */
final class ProgressFloor extends Response.Wrapper {
    private final Scheduler scheduler;
    private final long minBytesPerSecond;
    private final long periodNanos;
    private final Once callback;
    private final Runnable onAbort;
    /** When the pending write started; 0 when none is pending. */
    private volatile long pendingSince;
    private volatile long pendingBytes;
    private final AtomicBoolean checking = new AtomicBoolean();

    /**
     * @param request the request
     * @param response the response it wraps
     * @param callback the request's callback, completed once (an abort and the late end of the aborted write
     *     both try)
     * @param minBytesPerSecond the floor (more than 0)
     * @param period how often a pending write is looked at
     * @param onAbort told when a response is aborted
     */
    ProgressFloor(Request request, Response response, Once callback, long minBytesPerSecond,
            Duration period, Runnable onAbort) {
        super(request, response);
        this.scheduler = request.getComponents().getScheduler();
        this.callback = callback;
        this.minBytesPerSecond = minBytesPerSecond;
        this.periodNanos = period.toNanos();
        this.onAbort = onAbort;
    }

    @Override
    public void write(boolean last, ByteBuffer content, Callback done) {
        long start = System.nanoTime() | 1;
        pendingBytes = content == null ? 0 : content.remaining();
        pendingSince = start;
        super.write(last, content, new Callback.Nested(done) {
            @Override
            public void succeeded() {
                pendingSince = 0;
                super.succeeded();
            }

            @Override
            public void failed(Throwable failure) {
                pendingSince = 0;
                super.failed(failure);
            }
        });
        if (pendingSince == start && checking.compareAndSet(false, true)) {
            scheduler.schedule(this::check, periodNanos, TimeUnit.NANOSECONDS);
        }
    }

    private void check() {
        long since = pendingSince;
        if (since == 0) {
            checking.set(false);
            // A write started between the read above and now schedules its own check.
            if (pendingSince != 0 && checking.compareAndSet(false, true)) {
                scheduler.schedule(this::check, periodNanos, TimeUnit.NANOSECONDS);
            }
            return;
        }
        long allowed = Math.max(periodNanos, TimeUnit.SECONDS.toNanos(pendingBytes) / minBytesPerSecond);
        long waited = System.nanoTime() - since;
        if (waited > allowed) {
            onAbort.run();
            callback.failed(new TimeoutException("the client took no byte of a " + pendingBytes + "-byte write in "
                    + TimeUnit.NANOSECONDS.toMillis(waited) + " ms (limits.min_response_bytes_per_second = "
                    + minBytesPerSecond + ")"));
            return;
        }
        scheduler.schedule(this::check, Math.min(periodNanos, allowed - waited + 1), TimeUnit.NANOSECONDS);
    }

    /** A callback completed once: the first of success and failure wins, later calls do nothing. */
    static final class Once extends Callback.Nested {
        private final AtomicBoolean done = new AtomicBoolean();

        Once(Callback callback) {
            super(callback);
        }

        @Override
        public void succeeded() {
            if (done.compareAndSet(false, true)) {
                super.succeeded();
            }
        }

        @Override
        public void failed(Throwable failure) {
            if (done.compareAndSet(false, true)) {
                super.failed(failure);
            }
        }
    }
}
