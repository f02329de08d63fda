package io.pintle.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.net.http.HttpTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Flow;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class InterruptibleBodyTest {
    /** What the HTTP client would see of its subscriber's demand. */
    private static final class Demand implements Flow.Subscription {
        final AtomicLong requested = new AtomicLong();
        final AtomicBoolean cancelled = new AtomicBoolean();

        @Override
        public void request(long n) {
            requested.addAndGet(n);
        }

        @Override
        public void cancel() {
            cancelled.set(true);
        }
    }

    private static List<ByteBuffer> bytes(String text) {
        return List.of(ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8)));
    }

    @Test
    void readsEveryListThenTheEndAndAsksForMoreAsItConsumes() throws Exception {
        InterruptibleBody body = new InterruptibleBody(Duration.ofSeconds(30));
        Demand demand = new Demand();
        body.onSubscribe(demand);
        body.onNext(bytes("hello "));
        body.onNext(List.of());
        body.onNext(bytes("world"));
        body.onComplete();

        try (InputStream in = body.getBody().toCompletableFuture().get()) {
            assertThat(new String(in.readAllBytes(), StandardCharsets.UTF_8)).isEqualTo("hello world");
            assertThat(in.read()).isEqualTo(-1);
        }
        assertThat(demand.requested.get()).isEqualTo(4 + 3);
        assertThat(demand.cancelled).isFalse();
    }

    @Test
    void anErrorUpstreamIsAnIOExceptionForTheReader() throws Exception {
        InterruptibleBody body = new InterruptibleBody(Duration.ofSeconds(30));
        body.onSubscribe(new Demand());
        body.onNext(bytes("part"));
        body.onError(new IOException("connection reset"));

        InputStream in = body.getBody().toCompletableFuture().get();
        assertThat(in.readNBytes(4)).hasSize(4);
        AtomicReference<Throwable> error = new AtomicReference<>();
        try {
            in.read();
        } catch (IOException e) {
            error.set(e);
        }
        assertThat(error.get()).hasMessage("connection reset");
    }

    @Test
    void anInterruptStopsABlockedReadCancelsTheStreamAndKeepsTheStatus() throws Exception {
        InterruptibleBody body = new InterruptibleBody(Duration.ofSeconds(30));
        Demand demand = new Demand();
        body.onSubscribe(demand);
        InputStream in = body.getBody().toCompletableFuture().get();
        AtomicReference<Throwable> error = new AtomicReference<>();
        AtomicBoolean stillInterrupted = new AtomicBoolean();
        Thread reader = new Thread(() -> {
            try {
                in.read();
            } catch (IOException e) {
                error.set(e);
                stillInterrupted.set(Thread.currentThread().isInterrupted());
            }
        });
        reader.start();
        // Interrupt a reader blocked in read(), not one still on its way there. (client-lib's tests cannot see
        // the server's testing.Await: this is the one wait of its kind here.)
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (reader.getState() != Thread.State.WAITING && reader.getState() != Thread.State.TIMED_WAITING) {
            assertThat(System.nanoTime()).as("the reader blocks in read()").isLessThan(deadline);
            Thread.sleep(1); // a poll's pause, not a wait for time
        }
        reader.interrupt();
        reader.join(5_000);

        assertThat(reader.isAlive()).isFalse();
        assertThat(error.get()).isInstanceOf(InterruptedIOException.class);
        assertThat(stillInterrupted).isTrue();
        assertThat(demand.cancelled).isTrue();
    }

    @Test
    void closingABodyWhoseEndHasArrivedCancelsNothing() throws Exception {
        InterruptibleBody body = new InterruptibleBody(Duration.ofSeconds(30));
        Demand demand = new Demand();
        body.onSubscribe(demand);
        body.onNext(bytes("the rest is not read"));
        body.onComplete();

        try (InputStream in = body.getBody().toCompletableFuture().get()) {
            assertThat(in.read()).isEqualTo('t');
        }
        assertThat(demand.cancelled).isFalse();
    }

    @Test
    void closingABodyBeforeItsEndCancelsTheStream() throws Exception {
        InterruptibleBody body = new InterruptibleBody(Duration.ofSeconds(30));
        Demand demand = new Demand();
        body.onSubscribe(demand);
        body.onNext(bytes("more to come"));

        try (InputStream in = body.getBody().toCompletableFuture().get()) {
            assertThat(in.read()).isEqualTo('m');
        }
        assertThat(demand.cancelled).isTrue();
    }

    @Test
    void aBodyThatStopsComingIsATimeoutAfterTheReadTimeoutAndCancelsTheStream() throws Exception {
        InterruptibleBody body = new InterruptibleBody(Duration.ofMillis(200));
        Demand demand = new Demand();
        body.onSubscribe(demand);
        body.onNext(bytes("part"));

        InputStream in = body.getBody().toCompletableFuture().get();
        assertThat(in.readNBytes(4)).hasSize(4);
        assertThatThrownBy(in::read).isInstanceOf(HttpTimeoutException.class)
                .hasMessage("no byte of the response body within 200 ms");
        assertThat(demand.cancelled).isTrue();
    }
}
