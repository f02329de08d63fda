package io.pintle.server.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class AwaitTest {
    private static final Duration LONG = Duration.ofSeconds(10);
    private static final Duration SHORT = Duration.ofMillis(200);

    @Test
    void untilReturnsAsSoonAsTheConditionHolds() throws Exception {
        AtomicInteger checks = new AtomicInteger();
        long start = System.nanoTime();
        Await.until(LONG, () -> checks.incrementAndGet() >= 3);
        assertThat(checks).hasValue(3);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
    }

    @Test
    void untilSeesAChangeMadeByAnotherThread() throws Exception {
        CountDownLatch latch = new CountDownLatch(1);
        Thread setter = new Thread(latch::countDown, "setter");
        setter.start();
        Await.until(LONG, "the latch counted down", () -> latch.getCount() == 0);
        setter.join();
    }

    @Test
    void untilFailsAfterTheTimeoutSayingWhatItWaitedFor() {
        AtomicInteger checks = new AtomicInteger();
        long start = System.nanoTime();
        assertThatThrownBy(() -> Await.until(SHORT, "node-a's archive served", () -> {
            checks.incrementAndGet();
            return false;
        }))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("not within PT0.2S")
                .hasMessageContaining("node-a's archive served");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(SHORT);
        // Polled, with pauses: neither a single look nor a busy spin.
        assertThat(checks.get()).isBetween(3, 200);
    }

    @Test
    void untilComputesALazyMessageOnlyOnFailure() throws Exception {
        AtomicInteger built = new AtomicInteger();
        Await.until(LONG, () -> "log: " + built.incrementAndGet(), () -> true);
        assertThat(built).hasValue(0);
        assertThatThrownBy(() -> Await.until(Duration.ZERO, () -> "log: " + built.incrementAndGet(), () -> false))
                .hasMessageContaining("log: 1");
    }

    @Test
    void untilChecksOnceMoreAtTheDeadline() throws Exception {
        long deadline = System.nanoTime() + SHORT.toNanos();
        // Holds only from the deadline on: met during the last pause, it must not be reported as missed.
        Await.until(SHORT, () -> System.nanoTime() >= deadline);
    }

    @Test
    void anExceptionFromTheConditionEndsTheWaitAtOnce() {
        AtomicInteger checks = new AtomicInteger();
        assertThatThrownBy(() -> Await.until(LONG, () -> {
            checks.incrementAndGet();
            throw new IOException("no such file");
        })).isInstanceOf(IOException.class).hasMessage("no such file");
        assertThat(checks).hasValue(1);
    }

    @Test
    void assertedReturnsOnceTheAssertionsPass() throws Exception {
        AtomicInteger checks = new AtomicInteger();
        Await.asserted(LONG, () -> assertThat(checks.incrementAndGet()).isEqualTo(4));
        assertThat(checks).hasValue(4);
    }

    @Test
    void assertedRethrowsTheLastAssertionErrorOnTimeout() {
        AtomicInteger checks = new AtomicInteger();
        Throwable thrown = catchThrowable(() ->
                Await.asserted(SHORT, () -> {
                    int attempt = checks.incrementAndGet();
                    assertThat(attempt).as("attempt %d", attempt).isNegative();
                }));
        // The last attempt's own error, not the first's.
        assertThat(thrown).isInstanceOf(AssertionError.class).hasMessageContaining("[attempt " + checks.get() + "]");
        assertThat(checks.get()).isGreaterThan(1);
        assertThat(thrown.getSuppressed()).singleElement().asString().contains("still failing after PT0.2S");
    }

    @Test
    void assertedDoesNotRetryOtherExceptions() {
        AtomicInteger checks = new AtomicInteger();
        assertThatThrownBy(() -> Await.asserted(LONG, () -> {
            checks.incrementAndGet();
            throw new IllegalStateException("broken");
        })).isInstanceOf(IllegalStateException.class);
        assertThat(checks).hasValue(1);
    }

    @Test
    void quietForPassesWhenNothingHappensAndLastsThePeriod() throws Exception {
        AtomicInteger checks = new AtomicInteger();
        long start = System.nanoTime();
        Await.quietFor(SHORT, "anything", () -> {
            checks.incrementAndGet();
            return false;
        });
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(SHORT);
        assertThat(checks.get()).isGreaterThan(2);
        Await.quietFor(SHORT, () -> assertThat(checks.get()).isPositive());
    }

    @Test
    void quietForFailsAsSoonAsSomethingHappens() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        Thread late = new Thread(() -> {
            try {
                Thread.sleep(50); // the event under test comes late on purpose, inside the period
            } catch (InterruptedException e) {
                return;
            }
            runs.incrementAndGet();
        }, "late-run");
        late.start();
        long start = System.nanoTime();
        assertThatThrownBy(() -> Await.quietFor(LONG, "a second run started", () -> runs.get() > 0))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("a second run started")
                .hasMessageContaining("should not within PT10S");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
        late.join();

        assertThatThrownBy(() -> Await.quietFor(LONG, () -> assertThat(runs.get()).as("runs").isZero()))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("runs");
    }
}
