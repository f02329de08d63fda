package io.pintle.server.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Collectors;

/**
 * Runs one body from many threads at once, for the tests that prove a concurrent structure (gates, shares,
 * bounded counters) under contention. The threads start together; a thread that does not finish by the deadline
 * fails the test with its stack (a thread spinning or parked for good is the bug such a test looks for), and is
 * left behind as a daemon, so one failure does not hold up the JVM.
 */
public final class Hammer {
    private Hammer() {}

    /** One thread's share of the work. */
    @FunctionalInterface
    public interface Body {
        /**
         * @param thread the thread's number, from 0
         * @param iteration the iteration's number, from 0
         */
        void run(int thread, int iteration) throws Exception;
    }

    /**
     * @param threads threads started together
     * @param iterations how often each runs the body
     * @param deadline how long all of them may take: far above what a healthy run needs on a loaded machine, since
     *     its only purpose is to tell a hang from slowness
     * @param body the work
     */
    public static void run(int threads, int iterations, Duration deadline, Body body) throws InterruptedException {
        CountDownLatch start = new CountDownLatch(1);
        List<Throwable> failures = new CopyOnWriteArrayList<>();
        List<Thread> started = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int number = t;
            Thread thread = new Thread(() -> {
                try {
                    start.await();
                    for (int i = 0; i < iterations; i++) {
                        body.run(number, i);
                    }
                } catch (Throwable e) {
                    failures.add(e);
                }
            }, "hammer-" + t);
            thread.setDaemon(true);
            thread.start();
            started.add(thread);
        }
        start.countDown();
        long end = System.nanoTime() + deadline.toNanos();
        for (Thread thread : started) {
            thread.join(Math.max(1, (end - System.nanoTime()) / 1_000_000));
        }
        List<String> stuck = started.stream().filter(Thread::isAlive)
                .map(thread -> thread.getName() + " " + thread.getState() + Arrays.stream(thread.getStackTrace())
                        .limit(8).map(frame -> "\n    at " + frame).collect(Collectors.joining()))
                .toList();
        assertThat(stuck).as("threads still running after %s", deadline).isEmpty();
        assertThat(failures).isEmpty();
    }
}
