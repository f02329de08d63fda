package io.pintle.server.threads;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.HashSet;
import java.util.Objects;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One component's work on the shared worker pool, as an executor of its own would run it: tasks start in the order
 * given, at most {@code width} at once. A serial lane (width one) runs one task after another, each seeing all
 * that the previous one did, which is what a component whose state is confined to "its thread" needs; no thread
 * is held while the lane is empty. Delayed and periodic tasks wait on the shared scheduler, then join the lane.
 * {@link #shutdownNow} drops what is queued, cancels the lane's timers and interrupts its running tasks, and
 * nothing else of the pool's.
 */
public final class Lane implements Executor {
    private static final Logger LOG = LoggerFactory.getLogger(Lane.class);

    private final String name;
    private final int width;
    private final Executor workers;
    private final Timers timers;
    /** Guarded by {@code this}, as are the fields below. */
    private final Queue<Runnable> queue = new ArrayDeque<>();
    private final Set<Thread> running = new HashSet<>();
    private int active;
    private boolean shutdown;

    /** Null for a lane without timers. */
    private Lane(String name, int width, Executor workers, ScheduledExecutorService scheduler) {
        if (width < 1) {
            throw new IllegalArgumentException("width must be at least 1");
        }
        this.name = Objects.requireNonNull(name);
        this.width = width;
        this.workers = Objects.requireNonNull(workers);
        this.timers = scheduler == null ? null : new Timers(scheduler);
    }

    /**
     * @param name what runs there, for logs
     * @param workers the shared worker pool
     * @param scheduler the shared scheduler, for delayed and periodic tasks
     * @return a lane that runs one task at a time, in order
     */
    public static Lane serial(String name, Executor workers, ScheduledExecutorService scheduler) {
        return new Lane(name, 1, workers, Objects.requireNonNull(scheduler));
    }

    /**
     * @param name what runs there, for logs
     * @param workers the shared worker pool
     * @return a lane without timers that runs one task at a time, in order
     */
    public static Lane serial(String name, Executor workers) {
        return new Lane(name, 1, workers, null);
    }

    /**
     * @param name what runs there, for logs
     * @param width how many tasks may run at once
     * @param workers the shared worker pool
     * @param scheduler the shared scheduler, for delayed and periodic tasks
     * @return a lane that runs up to {@code width} tasks at once, started in order
     */
    public static Lane of(String name, int width, Executor workers, ScheduledExecutorService scheduler) {
        return new Lane(name, width, workers, Objects.requireNonNull(scheduler));
    }

    /**
     * @param name what runs there, for logs
     * @param width how many tasks may run at once
     * @param workers the shared worker pool
     * @return a lane without timers that runs up to {@code width} tasks at once, started in order
     */
    public static Lane of(String name, int width, Executor workers) {
        return new Lane(name, width, workers, null);
    }

    /** @throws RejectedExecutionException once shut down, or when the pool refuses */
    @Override
    public void execute(Runnable task) {
        Objects.requireNonNull(task);
        synchronized (this) {
            if (shutdown) {
                throw new RejectedExecutionException(name + " is stopped");
            }
            queue.add(task);
            if (active >= width) {
                return;
            }
            active++;
        }
        try {
            workers.execute(this::drain);
        } catch (RejectedExecutionException e) {
            synchronized (this) {
                active--;
                queue.remove(task);
                notifyAll();
            }
            throw e;
        }
    }

    /**
     * @param task what to run on the lane
     * @param delay after how long
     * @param unit the delay's unit
     * @return the timer (cancelling it before it fires keeps the task off the lane)
     * @throws RejectedExecutionException once shut down
     */
    public ScheduledFuture<?> schedule(Runnable task, long delay, TimeUnit unit) {
        return timers().schedule(() -> offer(task), delay, unit);
    }

    /**
     * Runs a task on the lane again and again, never twice at once: a run is skipped while the previous one is
     * still queued or running.
     *
     * @param task what to run
     * @param initialDelay before the first run
     * @param delay between the end of one hand-over to the lane and the next
     * @param unit the delays' unit
     * @return the timer, to cancel
     */
    public ScheduledFuture<?> scheduleWithFixedDelay(Runnable task, long initialDelay, long delay, TimeUnit unit) {
        return timers().scheduleWithFixedDelay(coalesced(task), initialDelay, delay, unit);
    }

    /**
     * Like {@link #scheduleWithFixedDelay}, at a fixed rate; a run that would overlap the previous one is skipped.
     *
     * @param task what to run
     * @param initialDelay before the first run
     * @param period between two hand-overs to the lane
     * @param unit the delays' unit
     * @return the timer, to cancel
     */
    public ScheduledFuture<?> scheduleAtFixedRate(Runnable task, long initialDelay, long period, TimeUnit unit) {
        return timers().scheduleAtFixedRate(coalesced(task), initialDelay, period, unit);
    }

    /** Refuses new tasks and cancels the lane's timers; what is queued still runs. */
    public void shutdown() {
        synchronized (this) {
            shutdown = true;
        }
        if (timers != null) {
            timers.close();
        }
    }

    /** Like {@link #shutdown}, and drops what is queued and interrupts the tasks running. */
    public void shutdownNow() {
        shutdown();
        synchronized (this) {
            queue.clear();
            running.forEach(Thread::interrupt);
        }
    }

    /**
     * @param timeout the longest wait
     * @return whether the lane is shut down and nothing of it runs any more
     * @throws InterruptedException if interrupted while waiting
     */
    public synchronized boolean awaitTermination(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!shutdown || active > 0) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            TimeUnit.NANOSECONDS.timedWait(this, left);
        }
        return true;
    }

    private Timers timers() {
        if (timers == null) {
            throw new IllegalStateException(name + " has no scheduler");
        }
        return timers;
    }

    private void drain() {
        Thread self = Thread.currentThread();
        while (true) {
            Runnable task;
            synchronized (this) {
                task = queue.poll();
                if (task == null) {
                    active--;
                    notifyAll();
                    return;
                }
                running.add(self);
            }
            try {
                task.run();
            } catch (RuntimeException | Error e) {
                LOG.error("{}: a background task failed", name, e);
            } finally {
                synchronized (this) {
                    running.remove(self);
                }
                // An interrupt from shutdownNow was meant for that task, not for the next one.
                Thread.interrupted();
            }
        }
    }

    /** On the scheduler: hands the task to the lane, unless the lane stopped in between. */
    private void offer(Runnable task) {
        try {
            execute(task);
        } catch (RejectedExecutionException stopped) {
            // Shut down while the timer was due: the task is dropped, as a stopped executor's would be.
        }
    }

    private Runnable coalesced(Runnable task) {
        AtomicBoolean queued = new AtomicBoolean();
        Runnable once = () -> {
            try {
                task.run();
            } finally {
                queued.set(false);
            }
        };
        return () -> {
            if (queued.compareAndSet(false, true)) {
                try {
                    execute(once);
                } catch (RejectedExecutionException stopped) {
                    queued.set(false);
                }
            }
        };
    }

    @Override
    public String toString() {
        return name;
    }
}
