package io.pintle.server.overload;

import static org.assertj.core.api.Assertions.assertThat;

import io.pintle.server.testing.Hammer;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class GateTest {
    @Test
    void admitsUpToConcurrencyQueuesUpToTheQueueAndRefusesTheRest() {
        Gate<String> gate = new Gate<>(2, 2);
        assertThat(gate.enter("a")).isInstanceOf(Gate.Admission.Admitted.class);
        assertThat(gate.enter("b")).isInstanceOf(Gate.Admission.Admitted.class);
        assertThat(gate.enter("c")).isInstanceOf(Gate.Admission.Queued.class);
        assertThat(gate.enter("d")).isInstanceOf(Gate.Admission.Queued.class);
        assertThat(gate.enter("e")).isInstanceOf(Gate.Admission.Refused.class);
        assertThat(gate.active()).isEqualTo(2);
        assertThat(gate.waiting()).isEqualTo(2);

        // Permits go to the waiters in order, then back to the gate.
        assertThat(gate.leave()).isEqualTo("c");
        assertThat(gate.leave()).isEqualTo("d");
        assertThat(gate.leave()).isNull();
        assertThat(gate.leave()).isNull();
        assertThat(gate.active()).isZero();
        assertThat(gate.waiting()).isZero();
    }

    @Test
    void anAbandonedWaiterIsSkippedAndItsPermitNotLost() {
        Gate<String> gate = new Gate<>(1, 2);
        gate.enter("a");
        Gate.Ticket<String> b = ((Gate.Admission.Queued<String>) gate.enter("b")).ticket();
        gate.enter("c");
        assertThat(gate.abandon(b)).isTrue();

        assertThat(gate.leave()).isEqualTo("c");
        assertThat(gate.leave()).isNull();
        assertThat(gate.active()).isZero();
        assertThat(gate.enter("d")).isInstanceOf(Gate.Admission.Admitted.class);
    }

    @Test
    void aWaiterThatGotAPermitCannotBeAbandoned() {
        Gate<String> gate = new Gate<>(1, 1);
        gate.enter("a");
        Gate.Ticket<String> b = ((Gate.Admission.Queued<String>) gate.enter("b")).ticket();
        assertThat(gate.leave()).isEqualTo("b");
        assertThat(gate.abandon(b)).isFalse();
    }

    /**
     * Refusals, hand-overs and abandons interleaved from many threads: no thread is left spinning in {@code leave}
     * (a refusal that touched the shared count for an instant made a concurrent leave wait for a waiter that never
     * came), no more holders than permits at any time, and every request ends exactly once.
     */
    @ParameterizedTest(name = "concurrency {0}, queue {1}")
    @CsvSource({"1, 0", "2, 0", "1, 1", "2, 3", "3, 5"})
    void refusalsLeavesAndAbandonsInterleavedNeitherSpinNorLoseAPermit(int concurrency, int queue) throws Exception {
        Gate<Integer> gate = new Gate<>(concurrency, queue);
        AtomicInteger holders = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        AtomicInteger ran = new AtomicInteger();
        AtomicInteger refused = new AtomicInteger();
        AtomicInteger abandoned = new AtomicInteger();
        int threads = 16;
        int iterations = 5_000;
        Hammer.run(threads, iterations, Duration.ofSeconds(60), (thread, iteration) -> {
            Gate.Admission<Integer> admission = gate.enter(iteration);
            if (admission instanceof Gate.Admission.Admitted<Integer>) {
                // Hold, then leave; a waiter handed the permit holds it in turn (run here, as the next request).
                do {
                    most.accumulateAndGet(holders.incrementAndGet(), Math::max);
                    if (iteration % 64 == 0) {
                        // Hold a little longer now and then, so that the others fill the queue and are refused.
                        Thread.yield();
                    }
                    holders.decrementAndGet();
                    ran.incrementAndGet();
                } while (gate.leave() != null);
            } else if (admission instanceof Gate.Admission.Queued<Integer> queued) {
                // Every other waiter gives up at once (a queue timeout, a client gone); the others are run by
                // whoever hands them a permit.
                if (iteration % 2 == 0 && gate.abandon(queued.ticket())) {
                    abandoned.incrementAndGet();
                }
            } else {
                refused.incrementAndGet();
            }
        });
        assertThat(most.get()).isBetween(1, concurrency);
        assertThat(ran.get() + refused.get() + abandoned.get()).isEqualTo(threads * iterations);
        assertThat(refused.get()).as("the gate was contended").isPositive();
        assertThat(gate.active()).isZero();
        assertThat(gate.waiting()).isZero();
        assertThat(gate.enter(0)).isInstanceOf(Gate.Admission.Admitted.class);
    }

    @Test
    void retryAfterStaysWithinBasePlusOrMinusJitter() {
        RetryAfter retry = new RetryAfter(java.time.Duration.ofSeconds(60), java.time.Duration.ofSeconds(30));
        long least = Long.MAX_VALUE;
        long most = 0;
        for (int i = 0; i < 10_000; i++) {
            long seconds = retry.nextSeconds();
            least = Math.min(least, seconds);
            most = Math.max(most, seconds);
        }
        assertThat(least).isGreaterThanOrEqualTo(30).isLessThan(35);
        assertThat(most).isLessThanOrEqualTo(90).isGreaterThan(85);
    }
}
