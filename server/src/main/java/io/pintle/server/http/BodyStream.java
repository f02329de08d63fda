package io.pintle.server.http;

import io.pintle.server.problem.PintleException;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.eclipse.jetty.http.HttpException;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.io.EofException;

/**
 * A request body read as a blocking stream, with a floor on its rate: over each period, the client must send at
 * least {@code minBytesPerSecond × period} bytes (or end the body), or the read fails with {@link
 * PintleException.TooSlow} (408). A client trickling a body a byte now and then, which the idle timeout never
 * catches, holds its worker for one period at most. The wait for data is bounded by the period itself, so the
 * floor holds even when no byte comes at all.
 *
 * <p>Closing it does not close the request's content: Jetty deals with what is left unread when the response
 * ends (closing it early fails the request content, which on HTTP/2 resets the stream after the answer).
 */
public final class BodyStream extends InputStream {
    /** The problem reason of a body that ended early: a cut connection or framing the parser refused. */
    public static final String BODY_INCOMPLETE = "body-incomplete";

    private final Content.Source source;
    private final long minBytesPerPeriod;
    private final long periodNanos;
    private final long minBytesPerSecond;
    private Content.Chunk chunk;
    /** The source's pending demand, until it is met. */
    private CompletableFuture<Void> demanded;
    private boolean ended;
    private long periodStart = System.nanoTime();
    private long periodBytes;
    private long total;

    /**
     * @param source the request's content
     * @param minBytesPerSecond the floor; 0 for none
     * @param period over how long the rate is measured
     */
    public BodyStream(Content.Source source, long minBytesPerSecond, Duration period) {
        this.source = source;
        this.minBytesPerSecond = minBytesPerSecond;
        this.periodNanos = period.toNanos();
        this.minBytesPerPeriod = minBytesPerSecond * period.toMillis() / 1000;
    }

    @Override
    public int read() throws IOException {
        byte[] one = new byte[1];
        int read = read(one, 0, 1);
        return read < 0 ? -1 : one[0] & 0xFF;
    }

    @Override
    public int read(byte[] bytes, int offset, int length) throws IOException {
        if (length == 0) {
            return 0;
        }
        while (true) {
            if (ended) {
                return -1;
            }
            if (chunk != null) {
                ByteBuffer buffer = chunk.getByteBuffer();
                if (buffer.hasRemaining()) {
                    int count = Math.min(length, buffer.remaining());
                    buffer.get(bytes, offset, count);
                    periodBytes += count;
                    total += count;
                    checkRate(System.nanoTime());
                    return count;
                }
                boolean last = chunk.isLast();
                chunk.release();
                chunk = null;
                if (last) {
                    ended = true;
                    return -1;
                }
            }
            Content.Chunk next = source.read();
            if (next == null) {
                awaitData();
                continue;
            }
            if (Content.Chunk.isFailure(next)) {
                Throwable failure = next.getFailure();
                if (cutByTheClient(failure)) {
                    throw bodyIncomplete();
                }
                throw failure instanceof IOException io ? io : new IOException(failure);
            }
            chunk = next;
        }
    }

    /**
     * @return whether a failed read is the client's doing: a connection closed mid-body or framing Jetty's parser
     *     refused (it reports both as an early end, a 4xx), or, on HTTP/2, a stream the client reset. That is a 400,
     *     as HTTP/1.1 has it, never a server error that any client could raise at will.
     */
    public static boolean cutByTheClient(Throwable failure) {
        return failure instanceof HttpException http && http.getCode() >= 400 && http.getCode() < 500
                || failure instanceof EofException;
    }

    /** @return the refusal of a body {@link #cutByTheClient}: said in words, not Jetty's, for whoever is still there */
    public static PintleException.InvalidRequest bodyIncomplete() {
        return new PintleException.InvalidRequest(BODY_INCOMPLETE, "the request body ended early (the client "
                + "cancelled it or the connection was cut, or its chunked encoding or length is not valid HTTP); "
                + "nothing of it was kept");
    }

    /** Waits for the source to have something, at most until the current period ends, and checks the rate. */
    private void awaitData() throws IOException {
        long now = System.nanoTime();
        checkRate(now);
        // A demand outlives a wait that ended with the period: the source takes one demand at a time, so the next
        // wait is on the same one.
        if (demanded == null) {
            CompletableFuture<Void> ready = new CompletableFuture<>();
            demanded = ready;
            source.demand(() -> ready.complete(null));
        }
        long left = periodStart + periodNanos - now;
        try {
            demanded.get(Math.max(left, 1), TimeUnit.NANOSECONDS);
            demanded = null;
        } catch (TimeoutException periodOver) {
            checkRate(System.nanoTime());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while reading a request body");
        } catch (ExecutionException impossible) {
            throw new IOException(impossible.getCause());
        }
    }

    /** At the end of each period: fails when the period brought less than the floor, else starts the next one. */
    private void checkRate(long now) {
        if (minBytesPerPeriod <= 0 || now - periodStart < periodNanos) {
            return;
        }
        if (periodBytes < minBytesPerPeriod) {
            long seconds = TimeUnit.NANOSECONDS.toSeconds(periodNanos);
            throw new PintleException.TooSlow("upload-too-slow", "the request body came at " + periodBytes
                    + " bytes in " + seconds + " s (" + total + " bytes so far); at least " + minBytesPerSecond
                    + " bytes per second are needed (limits.min_request_bytes_per_second)");
        }
        periodStart = now;
        periodBytes = 0;
    }

    @Override
    public int available() {
        return chunk == null ? 0 : chunk.getByteBuffer().remaining();
    }

    @Override
    public void close() {
        // Not the request's content: see the class comment. A chunk held is given back.
        if (chunk != null) {
            chunk.release();
            chunk = null;
        }
        ended = true;
    }
}
