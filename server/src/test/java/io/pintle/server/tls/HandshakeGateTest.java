package io.pintle.server.tls;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class HandshakeGateTest {
    @Test
    void aHandshakeUnderWayGoesBeforeNewOnesAndNewOnesInArrivalOrder() {
        HandshakeGate gate = new HandshakeGate(1);
        List<String> resumed = new ArrayList<>();
        HandshakeGate.Waiter first = () -> resumed.add("first");
        HandshakeGate.Waiter second = () -> resumed.add("second");
        HandshakeGate.Waiter third = () -> resumed.add("third");
        HandshakeGate.Waiter goingOn = () -> resumed.add("under way");

        assertThat(gate.enter(() -> resumed.add("running"), false)).isTrue();
        assertThat(gate.enter(first, false)).isFalse();
        assertThat(gate.enter(second, false)).isFalse();
        assertThat(gate.enter(goingOn, true)).isFalse();
        assertThat(gate.enter(third, false)).isFalse();
        assertThat(gate.running()).isEqualTo(1);
        assertThat(gate.waiting()).isEqualTo(4);
        assertThat(resumed).isEmpty();

        // Each step's end hands its permit to exactly one waiter.
        gate.exit();
        assertThat(resumed).containsExactly("under way");
        gate.exit();
        gate.exit();
        gate.exit();
        assertThat(resumed).containsExactly("under way", "first", "second", "third");
        assertThat(gate.running()).isEqualTo(1);
        gate.exit();
        assertThat(gate.running()).isZero();
        assertThat(gate.waiting()).isZero();
    }

    @Test
    void aNewStepWaitsBehindWaitersEvenWhenAPermitIsFree() {
        HandshakeGate gate = new HandshakeGate(2);
        List<String> resumed = new ArrayList<>();
        assertThat(gate.enter(() -> resumed.add("a"), false)).isTrue();
        assertThat(gate.enter(() -> resumed.add("b"), false)).isTrue();
        assertThat(gate.enter(() -> resumed.add("c"), false)).isFalse();
        gate.exit();
        // c has the freed permit: a newcomer does not overtake a waiter.
        assertThat(resumed).containsExactly("c");
        assertThat(gate.enter(() -> resumed.add("d"), false)).isFalse();
        assertThat(gate.running()).isEqualTo(2);
        gate.exit();
        assertThat(resumed).containsExactly("c", "d");
    }

    @Test
    void atMostPermitsStepsRunAtOnceAndNoneIsLeftBehind() throws InterruptedException {
        int permits = 2;
        int threads = 8;
        int stepsPerThread = 20_000;
        HandshakeGate gate = new HandshakeGate(permits);
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        AtomicInteger done = new AtomicInteger();
        CountDownLatch all = new CountDownLatch(threads * stepsPerThread);
        ExecutorService pool = Executors.newFixedThreadPool(4);
        Runnable step = () -> {
            int now = inside.incrementAndGet();
            most.accumulateAndGet(now, Math::max);
            inside.decrementAndGet();
            done.incrementAndGet();
            gate.exit();
            all.countDown();
        };
        try {
            List<Thread> callers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                boolean underWay = t % 2 == 0;
                Thread caller = new Thread(() -> {
                    for (int i = 0; i < stepsPerThread; i++) {
                        if (gate.enter(() -> pool.execute(step), underWay)) {
                            step.run();
                        }
                    }
                });
                callers.add(caller);
                caller.start();
            }
            for (Thread caller : callers) {
                caller.join();
            }
            // A lost wake-up would leave steps queued forever: the latch would not reach zero.
            assertThat(all.await(60, TimeUnit.SECONDS)).as("steps done: %d", done.get()).isTrue();
        } finally {
            pool.shutdownNow();
        }
        assertThat(done.get()).isEqualTo(threads * stepsPerThread);
        assertThat(most.get()).isBetween(1, permits);
        assertThat(gate.waiting()).isZero();
        assertThat(gate.running()).isZero();
    }

    @Test
    void needsAPermit() {
        assertThatThrownBy(() -> new HandshakeGate(0)).isInstanceOf(IllegalArgumentException.class);
    }
}
