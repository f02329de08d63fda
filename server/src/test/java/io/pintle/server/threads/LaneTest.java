package io.pintle.server.threads;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class LaneTest {
    private final Threads threads = new Threads();

    @AfterEach
    void close() {
        threads.close();
    }

    @Test
    void aSerialLaneRunsItsTasksOneAtATimeInTheOrderGiven() throws Exception {
        Lane lane = Lane.serial("test", threads.workers(), threads.scheduler());
        List<Integer> seen = new ArrayList<>(); // unsynchronised on purpose: the lane is the only writer
        AtomicInteger running = new AtomicInteger();
        AtomicBoolean overlapped = new AtomicBoolean();
        CountDownLatch done = new CountDownLatch(2000);
        Thread[] givers = new Thread[4];
        for (int g = 0; g < givers.length; g++) {
            int giver = g;
            givers[g] = new Thread(() -> {
                for (int i = 0; i < 500; i++) {
                    int value = giver * 1000 + i;
                    lane.execute(() -> {
                        if (running.incrementAndGet() > 1) {
                            overlapped.set(true);
                        }
                        seen.add(value);
                        running.decrementAndGet();
                        done.countDown();
                    });
                }
            });
            givers[g].start();
        }
        for (Thread giver : givers) {
            giver.join();
        }
        assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
        lane.shutdown();
        assertThat(lane.awaitTermination(Duration.ofSeconds(5))).isTrue();
        assertThat(overlapped).isFalse();
        assertThat(seen).hasSize(2000);
        for (int g = 0; g < givers.length; g++) {
            int giver = g;
            // Each giver's tasks ran in the order it gave them.
            assertThat(seen.stream().filter(v -> v / 1000 == giver).toList()).isSorted();
        }
    }

    @Test
    void aWideLaneRunsNoMoreThanItsWidthAtOnce() throws Exception {
        Lane lane = Lane.of("test", 3, threads.workers());
        AtomicInteger running = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        CountDownLatch done = new CountDownLatch(30);
        for (int i = 0; i < 30; i++) {
            lane.execute(() -> {
                most.accumulateAndGet(running.incrementAndGet(), Math::max);
                try {
                    Thread.sleep(5); // holds its slot while the others queue
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                running.decrementAndGet();
                done.countDown();
            });
        }
        assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(most.get()).isEqualTo(3);
    }

    @Test
    void shutdownNowDropsWhatIsQueuedInterruptsWhatRunsAndRefusesMore() throws Exception {
        Lane lane = Lane.serial("test", threads.workers());
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch interrupted = new CountDownLatch(1);
        AtomicBoolean queuedRan = new AtomicBoolean();
        lane.execute(() -> {
            started.countDown();
            try {
                Thread.sleep(60_000);
            } catch (InterruptedException e) {
                interrupted.countDown();
            }
        });
        lane.execute(() -> queuedRan.set(true));
        assertThat(started.await(5, TimeUnit.SECONDS)).isTrue();
        lane.shutdownNow();
        assertThat(interrupted.await(5, TimeUnit.SECONDS)).isTrue();
        assertThat(lane.awaitTermination(Duration.ofSeconds(5))).isTrue();
        assertThat(queuedRan).isFalse();
        assertThatThrownBy(() -> lane.execute(() -> { })).isInstanceOf(RejectedExecutionException.class);
    }

    @Test
    void closedTimersAreCancelledAndRefuseNewOnes() {
        Timers timers = new Timers(threads.scheduler());
        AtomicBoolean ran = new AtomicBoolean();
        ScheduledFuture<?> later = timers.schedule(() -> ran.set(true), 1, TimeUnit.HOURS);
        ScheduledFuture<?> cancelled = timers.schedule(() -> ran.set(true), 1, TimeUnit.HOURS);
        cancelled.cancel(false);
        assertThat(timers.pending()).isEqualTo(1);
        timers.close();
        assertThat(later.isCancelled()).isTrue();
        assertThat(timers.pending()).isZero();
        assertThatThrownBy(() -> timers.schedule(() -> { }, 1, TimeUnit.SECONDS))
                .isInstanceOf(RejectedExecutionException.class);
        assertThat(ran).isFalse();
    }

    @Test
    void aTimerThatRanIsNoLongerPending() throws Exception {
        Timers timers = new Timers(threads.scheduler());
        CountDownLatch ran = new CountDownLatch(1);
        timers.schedule(ran::countDown, 0, TimeUnit.MILLISECONDS);
        assertThat(ran.await(5, TimeUnit.SECONDS)).isTrue();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (timers.pending() > 0 && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertThat(timers.pending()).isZero();
    }
}
