package io.pintle.server.overload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.Test;

class PerKeyTest {
    private static final int THREADS = 8;

    @Test
    void aKeyHoldsUpToItsLimitAndOthersAreNotAffected() {
        PerKey<String> held = new PerKey<>(1);
        assertThat(held.tryAcquire("node-a")).isTrue();
        assertThat(held.tryAcquire("node-a")).isFalse();
        assertThat(held.tryAcquire("node-b")).isTrue();
        assertThat(held.held("node-a")).isEqualTo(1);
        held.release("node-a");
        assertThat(held.tryAcquire("node-a")).isTrue();
        held.release("node-a");
        held.release("node-b");
        assertThat(held.keys()).isZero();
        assertThatThrownBy(() -> held.release("node-a")).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> new PerKey<String>(0)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void manyThreadsOnFewKeysNeverPassTheLimitNorLeaveAnything() throws Exception {
        PerKey<Integer> held = new PerKey<>(2);
        int keys = 3;
        AtomicIntegerArray holding = new AtomicIntegerArray(keys);
        AtomicInteger most = new AtomicInteger();
        AtomicInteger granted = new AtomicInteger();
        ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            int first = t;
            Thread thread = new Thread(() -> {
                try {
                    start.await();
                    for (int i = 0; i < 50_000; i++) {
                        int key = (first + i) % keys;
                        if (held.tryAcquire(key)) {
                            granted.incrementAndGet();
                            most.accumulateAndGet(holding.incrementAndGet(key), Math::max);
                            holding.decrementAndGet(key);
                            held.release(key);
                        }
                    }
                } catch (Throwable failure) {
                    failures.add(failure);
                }
            });
            thread.start();
            threads.add(thread);
        }
        start.countDown();
        for (Thread thread : threads) {
            thread.join();
        }
        assertThat(failures).isEmpty();
        assertThat(granted.get()).isPositive();
        assertThat(most.get()).isBetween(1, 2);
        for (int key = 0; key < keys; key++) {
            assertThat(held.held(key)).isZero();
        }
        assertThat(held.keys()).isZero();
    }

    /**
     * The race a lock-free count must survive: a key released to 0 (its counter being dropped) while others take
     * it again. With room for every thread, a take is never refused (a count kept too high would refuse one), and
     * a holder always sees its own hold counted (a hold made on a dropped counter would be lost: the count would
     * read 0 while it holds, and its release would fail).
     */
    @Test
    void noHoldIsLostWhenAKeyIsDroppedAndTakenAgainAtOnce() throws Exception {
        PerKey<String> held = new PerKey<>(THREADS);
        ConcurrentLinkedQueue<String> wrong = new ConcurrentLinkedQueue<>();
        ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            Thread thread = new Thread(() -> {
                try {
                    start.await();
                    for (int i = 0; i < 100_000; i++) {
                        if (!held.tryAcquire("node-a")) {
                            wrong.add("refused with room for every thread");
                            continue;
                        }
                        if (held.held("node-a") < 1) {
                            wrong.add("a hold not counted");
                        }
                        held.release("node-a");
                    }
                } catch (Throwable failure) {
                    failures.add(failure);
                }
            });
            thread.start();
            threads.add(thread);
        }
        start.countDown();
        for (Thread thread : threads) {
            thread.join();
        }
        assertThat(failures).isEmpty();
        assertThat(wrong).isEmpty();
        assertThat(held.held("node-a")).isZero();
        assertThat(held.keys()).isZero();
    }
}
