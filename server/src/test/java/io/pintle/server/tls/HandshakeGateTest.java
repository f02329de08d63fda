package io.pintle.server.tls;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pintle.server.testing.Await;
import io.pintle.server.testing.Hammer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

class HandshakeGateTest {
    /** A connection that records its turn and keeps the permit it was given. */
    private static final class Connection implements HandshakeGate.Waiter {
        final String name;
        final List<String> turns;
        volatile boolean open = true;
        boolean refuse;
        HandshakeGate.Permit permit;

        Connection(String name, List<String> turns) {
            this.name = name;
            this.turns = turns;
        }

        @Override
        public boolean resume(HandshakeGate.Permit given) {
            if (refuse) {
                turns.add(name + " refused");
                return false;
            }
            turns.add(name);
            permit = given;
            return true;
        }

        @Override
        public boolean isOpen() {
            return open;
        }
    }

    @Test
    void aHandshakeUnderWayGoesBeforeNewOnesAndNewOnesInArrivalOrder() {
        HandshakeGate gate = new HandshakeGate(1);
        List<String> turns = new ArrayList<>();
        Connection first = new Connection("first", turns);
        Connection second = new Connection("second", turns);
        Connection third = new Connection("third", turns);
        Connection goingOn = new Connection("under way", turns);

        HandshakeGate.Permit running = gate.enter(new Connection("running", turns), HandshakeGate.Turn.NEW);
        assertThat(running).isNotNull();
        assertThat(gate.enter(first, HandshakeGate.Turn.NEW)).isNull();
        assertThat(gate.enter(second, HandshakeGate.Turn.NEW)).isNull();
        assertThat(gate.enter(goingOn, HandshakeGate.Turn.UNDER_WAY)).isNull();
        assertThat(gate.enter(third, HandshakeGate.Turn.NEW)).isNull();
        assertThat(gate.running()).isEqualTo(1);
        assertThat(gate.waiting()).isEqualTo(4);
        assertThat(turns).isEmpty();

        // Each step's end hands its permit to exactly one waiter.
        running.release();
        assertThat(turns).containsExactly("under way");
        goingOn.permit.release();
        first.permit.release();
        second.permit.release();
        assertThat(turns).containsExactly("under way", "first", "second", "third");
        assertThat(gate.running()).isEqualTo(1);
        third.permit.release();
        assertThat(gate.running()).isZero();
        assertThat(gate.waiting()).isZero();
    }

    /**
     * An agent's second connection (its address just finished a handshake) goes after handshakes under way and
     * before every other new one, whenever it arrived; among themselves, returning ones keep their arrival order.
     */
    @Test
    void aReturningClientsNewHandshakeGoesBeforeOtherNewOnes() {
        HandshakeGate gate = new HandshakeGate(1);
        List<String> turns = new ArrayList<>();
        Connection newA = new Connection("new A", turns);
        Connection newB = new Connection("new B", turns);
        Connection backC = new Connection("back C", turns);
        Connection goingOn = new Connection("under way", turns);
        Connection backD = new Connection("back D", turns);

        HandshakeGate.Permit running = gate.enter(new Connection("running", turns), HandshakeGate.Turn.NEW);
        assertThat(gate.enter(newA, HandshakeGate.Turn.NEW)).isNull();
        assertThat(gate.enter(newB, HandshakeGate.Turn.NEW)).isNull();
        assertThat(gate.enter(backC, HandshakeGate.Turn.RETURNING)).isNull();
        assertThat(gate.enter(goingOn, HandshakeGate.Turn.UNDER_WAY)).isNull();
        assertThat(gate.enter(backD, HandshakeGate.Turn.RETURNING)).isNull();
        assertThat(gate.waiting()).isEqualTo(5);

        running.release();
        goingOn.permit.release();
        backC.permit.release();
        backD.permit.release();
        newA.permit.release();
        assertThat(turns).containsExactly("under way", "back C", "back D", "new A", "new B");
        newB.permit.release();
        assertThat(gate.running()).isZero();
        assertThat(gate.waiting()).isZero();
    }

    @Test
    void aNewStepWaitsBehindWaitersEvenWhenAPermitIsFree() {
        HandshakeGate gate = new HandshakeGate(2);
        List<String> turns = new ArrayList<>();
        HandshakeGate.Permit a = gate.enter(new Connection("a", turns), HandshakeGate.Turn.NEW);
        assertThat(gate.enter(new Connection("b", turns), HandshakeGate.Turn.NEW)).isNotNull();
        Connection c = new Connection("c", turns);
        assertThat(gate.enter(c, HandshakeGate.Turn.NEW)).isNull();
        a.release();
        // c has the freed permit: a newcomer does not overtake a waiter.
        assertThat(turns).containsExactly("c");
        assertThat(gate.enter(new Connection("d", turns), HandshakeGate.Turn.NEW)).isNull();
        assertThat(gate.running()).isEqualTo(2);
        c.permit.release();
        assertThat(turns).containsExactly("c", "d");
    }

    /**
     * Two steps of one connection can overlap (a step re-arms the read interest before it returns) and the
     * handshake's end releases the latest step's permit early: whatever the order, each permit goes back once.
     */
    @Test
    void aPermitGoesBackOnceHoweverOftenItIsReleased() {
        HandshakeGate gate = new HandshakeGate(2);
        List<String> turns = new ArrayList<>();
        Connection connection = new Connection("overlapping", turns);
        HandshakeGate.Permit firstStep = gate.enter(connection, HandshakeGate.Turn.NEW);
        HandshakeGate.Permit secondStep = gate.enter(connection, HandshakeGate.Turn.UNDER_WAY);
        assertThat(gate.running()).isEqualTo(2);

        secondStep.release(); // the handshake ended during the second step
        firstStep.release(); // the first step returns
        secondStep.release(); // the second step returns
        firstStep.release();

        assertThat(gate.running()).isZero();
        Connection next = new Connection("next", turns);
        assertThat(gate.enter(next, HandshakeGate.Turn.NEW)).isNotNull();
        assertThat(gate.enter(new Connection("and next", turns), HandshakeGate.Turn.NEW)).isNotNull();
        assertThat(gate.running()).isEqualTo(2);
    }

    @Test
    void closedConnectionsAreDroppedFromTheQueueWithoutAPermit() {
        HandshakeGate gate = new HandshakeGate(1);
        List<String> turns = new ArrayList<>();
        HandshakeGate.Permit running = gate.enter(new Connection("running", turns), HandshakeGate.Turn.NEW);
        Connection closed = new Connection("closed", turns);
        Connection open = new Connection("open", turns);
        gate.enter(closed, HandshakeGate.Turn.NEW);
        gate.enter(open, HandshakeGate.Turn.NEW);
        closed.open = false;

        running.release();

        assertThat(turns).containsExactly("open");
        assertThat(gate.waiting()).isZero();
        assertThat(gate.running()).isEqualTo(1);
        open.permit.release();
        assertThat(gate.running()).isZero();
    }

    @Test
    void aRefusedResumeGivesThePermitToTheNextWaiter() {
        HandshakeGate gate = new HandshakeGate(1);
        List<String> turns = new ArrayList<>();
        HandshakeGate.Permit running = gate.enter(new Connection("running", turns), HandshakeGate.Turn.NEW);
        Connection refusing = new Connection("stopping pool", turns);
        refusing.refuse = true;
        Connection next = new Connection("next", turns);
        gate.enter(refusing, HandshakeGate.Turn.NEW);
        gate.enter(next, HandshakeGate.Turn.NEW);

        running.release();

        assertThat(turns).containsExactly("stopping pool refused", "next");
        assertThat(gate.running()).isEqualTo(1);
        next.permit.release();
        assertThat(gate.running()).isZero();
    }

    /**
     * Steps from many threads, some of whose connections close while they wait (dropped without a permit) and some
     * of whose resumes are refused (the permit taken for them goes back): both make the gate take a permit and
     * give it back, which other threads must never see as a gate that is full for good. No more steps than
     * permits at once, every step either runs or is accounted for, none is left queued, no permit is left taken.
     */
    @Test
    void atMostPermitsStepsRunAtOnceAndNoneIsLeftBehind() throws InterruptedException {
        int permits = 2;
        int threads = 8;
        int stepsPerThread = 20_000;
        HandshakeGate gate = new HandshakeGate(permits);
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        AtomicInteger ran = new AtomicInteger();
        AtomicInteger dropped = new AtomicInteger();
        AtomicInteger refused = new AtomicInteger();
        CountDownLatch all = new CountDownLatch(threads * stepsPerThread);
        ExecutorService pool = Executors.newFixedThreadPool(4);
        // A step, then its permit released twice, as a handshake's end and the step's own end both do.
        Consumer<HandshakeGate.Permit> step = permit -> {
            int now = inside.incrementAndGet();
            most.accumulateAndGet(now, Math::max);
            Thread.onSpinWait();
            inside.decrementAndGet();
            ran.incrementAndGet();
            permit.release();
            permit.release();
            all.countDown();
        };
        // Both permits are held until 200 steps wait: by then some thread has queued its first 25 steps, a closed
        // one and a refused one among them, so both paths are taken whatever the scheduler does; then the hammer
        // goes on with entries and releases interleaved.
        HandshakeGate.Waiter idle = new HandshakeGate.Waiter() {
            @Override
            public boolean resume(HandshakeGate.Permit permit) {
                throw new AssertionError("the gate was empty: a permit is given at once");
            }

            @Override
            public boolean isOpen() {
                return true;
            }
        };
        List<HandshakeGate.Permit> held = List.of(gate.enter(idle, HandshakeGate.Turn.NEW), gate.enter(idle, HandshakeGate.Turn.NEW));
        Thread releaser = new Thread(() -> {
            try {
                Await.until(Duration.ofSeconds(60), "200 steps waiting", () -> gate.waiting() >= 200);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                held.forEach(HandshakeGate.Permit::release);
            }
        }, "releaser");
        releaser.start();
        try {
            Hammer.run(threads, stepsPerThread, Duration.ofSeconds(60), (thread, iteration) -> {
                boolean closed = iteration % 7 == 3;
                boolean refuse = iteration % 11 == 5;
                HandshakeGate.Waiter waiter = new HandshakeGate.Waiter() {
                    @Override
                    public boolean resume(HandshakeGate.Permit permit) {
                        if (refuse) {
                            refused.incrementAndGet();
                            all.countDown();
                            return false;
                        }
                        pool.execute(() -> step.accept(permit));
                        return true;
                    }

                    @Override
                    public boolean isOpen() {
                        if (closed) {
                            dropped.incrementAndGet();
                            all.countDown();
                        }
                        return !closed;
                    }
                };
                HandshakeGate.Permit permit = gate.enter(waiter, HandshakeGate.Turn.values()[thread % 3]);
                if (permit != null) {
                    step.accept(permit);
                }
            });
            // A lost wake-up would leave steps queued forever: the latch would not reach zero.
            assertThat(all.await(60, TimeUnit.SECONDS))
                    .as("ran %d, dropped %d, refused %d", ran.get(), dropped.get(), refused.get()).isTrue();
        } finally {
            releaser.join();
            pool.shutdownNow();
        }
        assertThat(ran.get() + dropped.get() + refused.get()).isEqualTo(threads * stepsPerThread);
        assertThat(dropped.get()).as("some waited, closed").isPositive();
        assertThat(refused.get()).as("some waited, refused").isPositive();
        assertThat(most.get()).isBetween(1, permits);
        assertThat(gate.waiting()).isZero();
        assertThat(gate.running()).isZero();
    }

    @Test
    void needsAPermit() {
        assertThatThrownBy(() -> new HandshakeGate(0)).isInstanceOf(IllegalArgumentException.class);
    }
}
