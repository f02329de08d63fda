package io.pintle.server.threads;

import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The server's scheduler and worker pool, made once in the composition root and closed after every component
 * that uses them.
 */
public final class Threads implements AutoCloseable {
    /** Timers only fire and hand work on: two threads, so that one slow timer task delays no other. */
    public static final int SCHEDULER_THREADS = 2;
    /** An idle worker ends after this long; the pool grows with the work (remote runs hold one each). */
    static final Duration WORKER_IDLE = Duration.ofSeconds(60);
    /**
     * At close, pending timers (an agent's SIGKILL after its {@code AgentLauncher.KILL_GRACE}) get this long
     * to run, and running work this long to end after its component stopped it.
     */
    static final Duration CLOSE_GRACE = Duration.ofSeconds(10);

    private final ScheduledThreadPoolExecutor scheduler;
    private final ThreadPoolExecutor workers;

    /** Makes the scheduler ({@code pintle-scheduler-N}) and the worker pool ({@code pintle-worker-N}). */
    public Threads() {
        scheduler = new ScheduledThreadPoolExecutor(SCHEDULER_THREADS, daemon("pintle-scheduler-"));
        // Cancelled timers (a parked request answered early) leave the queue at once instead of at their time.
        scheduler.setRemoveOnCancelPolicy(true);
        workers = new ThreadPoolExecutor(0, Integer.MAX_VALUE, WORKER_IDLE.toMillis(), TimeUnit.MILLISECONDS,
                new SynchronousQueue<>(), daemon("pintle-worker-"));
    }

    /** @return the scheduler: short tasks only, that hand blocking work to {@link #workers} */
    public ScheduledExecutorService scheduler() {
        return scheduler;
    }

    /** @return the worker pool for blocking background work (reloads, hashing, remote runs, fetches) */
    public ExecutorService workers() {
        return workers;
    }

    /**
     * Stops both, once the components have stopped their work: timers still pending run (up to {@link
     * #CLOSE_GRACE}), then whatever remains is interrupted.
     */
    @Override
    public void close() {
        scheduler.shutdown();
        workers.shutdown();
        long deadline = System.nanoTime() + CLOSE_GRACE.toNanos();
        try {
            if (!scheduler.awaitTermination(deadline - System.nanoTime(), TimeUnit.NANOSECONDS)) {
                scheduler.shutdownNow();
            }
            if (!workers.awaitTermination(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                workers.shutdownNow();
            }
        } catch (InterruptedException e) {
            scheduler.shutdownNow();
            workers.shutdownNow();
            Thread.currentThread().interrupt();
        }
    }

    private static ThreadFactory daemon(String prefix) {
        AtomicInteger count = new AtomicInteger();
        return task -> {
            Thread thread = new Thread(task, prefix + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
    }
}
