package io.pintle.client;

import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Flow;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A response body as a blocking {@link InputStream} that an interrupt actually stops. The JDK's own
 * {@code BodySubscribers.ofInputStream()} swallows an interrupt that arrives while a read waits for data, and goes
 * on waiting, so a sync could not be stopped mid-download. Here such a read cancels the stream, keeps the
 * thread's interrupt status, and throws {@link InterruptedIOException}. A read that waits longer than the read
 * timeout for the next bytes cancels the stream and throws {@link HttpTimeoutException}: the JDK's request timeout
 * ends at the response's headers, and a body that stops coming would otherwise hold its reader for good. At most
 * {@value #PREFETCH} lists of buffers are requested ahead of the reader, so memory stays bounded whatever the
 * body's size.
 *
 * <p>Closing the stream before its end cancels the HTTP stream (an HTTP/2 {@code RST_STREAM}) unless the end has
 * already arrived: servers count resets against the HTTP/2 "rapid reset" attack, and Jetty closes a connection
 * that sends more than 128 a second (GOAWAY {@code ENHANCE_YOUR_CALM}), a rate a relay syncing about 100
 * directories a second reaches if each costs one.
 */
final class InterruptibleBody implements HttpResponse.BodySubscriber<InputStream> {
    /** Marks the end of the body in {@link #queue}. */
    private static final Object END = new Object();

    /** Lists of buffers delivered ahead of the reader: enough to keep the transfer going, few to bound memory. */
    private static final int PREFETCH = 4;

    /** Lists of buffers, then {@link #END} or the {@link Throwable} that ended the body. */
    private final BlockingQueue<Object> queue = new LinkedBlockingQueue<>();
    private final CompletableFuture<InputStream> body = CompletableFuture.completedFuture(new Stream());
    private final Duration readTimeout;
    private volatile Flow.Subscription subscription;

    /** @param readTimeout the longest a read waits for the next bytes of the body */
    InterruptibleBody(Duration readTimeout) {
        this.readTimeout = readTimeout;
    }

    /**
     * @param readTimeout the longest a read waits for the next bytes of the body
     * @return a handler giving bodies as interruptible streams
     */
    static HttpResponse.BodyHandler<InputStream> handler(Duration readTimeout) {
        return info -> new InterruptibleBody(readTimeout);
    }

    @Override
    public CompletionStage<InputStream> getBody() {
        return body;
    }

    @Override
    public void onSubscribe(Flow.Subscription subscription) {
        this.subscription = subscription;
        subscription.request(PREFETCH);
    }

    @Override
    public void onNext(List<ByteBuffer> item) {
        queue.add(item);
    }

    @Override
    public void onError(Throwable error) {
        queue.add(error);
    }

    @Override
    public void onComplete() {
        queue.add(END);
    }

    /** The consuming side: one reader thread. */
    private final class Stream extends InputStream {
        private final Deque<ByteBuffer> pending = new ArrayDeque<>();
        private boolean ended;
        private boolean closed;

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            int n = read(one, 0, 1);
            return n < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] buffer, int offset, int length) throws IOException {
            if (closed) {
                throw new IOException("stream closed");
            }
            if (length == 0) {
                return 0;
            }
            ByteBuffer current = pending.peek();
            while (current == null || !current.hasRemaining()) {
                if (current != null) {
                    pending.poll();
                }
                if (pending.isEmpty() && !fill()) {
                    return -1;
                }
                current = pending.peek();
            }
            int n = Math.min(length, current.remaining());
            current.get(buffer, offset, n);
            return n;
        }

        /** @return false at the end of the body */
        @SuppressWarnings("unchecked")
        private boolean fill() throws IOException {
            if (ended) {
                return false;
            }
            Object next;
            try {
                next = queue.poll(readTimeout.toNanos(), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                close();
                throw new InterruptedIOException("interrupted while reading the response");
            }
            if (next == null) {
                close();
                long millis = readTimeout.toMillis();
                throw new HttpTimeoutException("no byte of the response body within "
                        + (millis % 1000 == 0 ? millis / 1000 + " s" : millis + " ms"));
            }
            if (next == END) {
                ended = true;
                return false;
            }
            if (next instanceof Throwable error) {
                ended = true;
                throw error instanceof IOException io ? io : new IOException(error);
            }
            pending.addAll((List<ByteBuffer>) next);
            subscription.request(1);
            return true;
        }

        @Override
        public int available() {
            ByteBuffer current = pending.peek();
            return current == null ? 0 : current.remaining();
        }

        @Override
        public void close() {
            if (!closed) {
                closed = true;
                if (!ended && !endArrived() && subscription != null) {
                    subscription.cancel(); // the rest of the body is not wanted
                }
            }
        }

        /** @return whether the body's end (or its error) is already queued: then there is nothing to cancel */
        private boolean endArrived() {
            for (Object next : queue) {
                if (next == END || next instanceof Throwable) {
                    return true;
                }
            }
            return false;
        }
    }
}
