package io.pintle.server.overload;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

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

    @Test
    void neverMoreHoldersThanPermitsUnderContention() throws Exception {
        Gate<Runnable> gate = new Gate<>(3, 5);
        AtomicInteger holders = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        AtomicInteger done = new AtomicInteger();
        AtomicInteger refused = new AtomicInteger();
        int tasks = 20_000;
        ExecutorService pool = Executors.newFixedThreadPool(8);
        CountDownLatch finished = new CountDownLatch(tasks);
        List<Runnable> work = new ArrayList<>();
        for (int i = 0; i < tasks; i++) {
            work.add(new Runnable() {
                @Override
                public void run() {
                    most.accumulateAndGet(holders.incrementAndGet(), Math::max);
                    holders.decrementAndGet();
                    done.incrementAndGet();
                    Runnable next = gate.leave();
                    if (next != null) {
                        pool.execute(next);
                    }
                    // Only once it has left the gate: the assertions below read the gate's counters.
                    finished.countDown();
                }
            });
        }
        for (Runnable task : work) {
            pool.execute(() -> {
                Gate.Admission<Runnable> admission = gate.enter(task);
                if (admission instanceof Gate.Admission.Admitted<Runnable>) {
                    task.run();
                } else if (admission instanceof Gate.Admission.Refused<Runnable>) {
                    refused.incrementAndGet();
                    finished.countDown();
                }
            });
        }
        assertThat(finished.await(20, TimeUnit.SECONDS)).isTrue();
        pool.shutdown();
        assertThat(most.get()).isLessThanOrEqualTo(3);
        assertThat(done.get() + refused.get()).isEqualTo(tasks);
        assertThat(gate.active()).isZero();
        assertThat(gate.waiting()).isZero();
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
