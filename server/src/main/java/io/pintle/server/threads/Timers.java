package io.pintle.server.threads;

import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Delayed;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One component's timers on the shared scheduler: what its own single-thread scheduler's {@code shutdownNow} did,
 * {@link #close} does for its timers alone (every pending one cancelled, new ones refused). Tasks run on the
 * scheduler's threads, possibly two at once: they must be short, and a component that needs them one at a time
 * runs them on a {@link Lane}.
 */
public final class Timers implements AutoCloseable {
    private final ScheduledExecutorService scheduler;
    private final Set<Timer> pending = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    /** @param scheduler the shared scheduler */
    public Timers(ScheduledExecutorService scheduler) {
        this.scheduler = Objects.requireNonNull(scheduler);
    }

    /**
     * @param task what to run
     * @param delay after how long
     * @param unit the delay's unit
     * @return the timer, to cancel
     * @throws RejectedExecutionException once closed (or the scheduler is shut down)
     */
    public ScheduledFuture<?> schedule(Runnable task, long delay, TimeUnit unit) {
        Timer timer = new Timer(true);
        return track(timer, scheduler.schedule(() -> timer.run(task), delay, unit));
    }

    /**
     * @param task what to run, again and again
     * @param initialDelay before the first run
     * @param delay between the end of one run and the start of the next
     * @param unit the delays' unit
     * @return the timer, to cancel
     * @throws RejectedExecutionException once closed (or the scheduler is shut down)
     */
    public ScheduledFuture<?> scheduleWithFixedDelay(Runnable task, long initialDelay, long delay, TimeUnit unit) {
        Timer timer = new Timer(false);
        return track(timer, scheduler.scheduleWithFixedDelay(() -> timer.run(task), initialDelay, delay, unit));
    }

    /**
     * @param task what to run, again and again
     * @param initialDelay before the first run
     * @param period between the starts of two runs
     * @param unit the delays' unit
     * @return the timer, to cancel
     * @throws RejectedExecutionException once closed (or the scheduler is shut down)
     */
    public ScheduledFuture<?> scheduleAtFixedRate(Runnable task, long initialDelay, long period, TimeUnit unit) {
        Timer timer = new Timer(false);
        return track(timer, scheduler.scheduleAtFixedRate(() -> timer.run(task), initialDelay, period, unit));
    }

    /** @return timers scheduled and neither run (once), cancelled nor closed */
    public int pending() {
        return pending.size();
    }

    /** Cancels every pending timer (one already running ends normally) and refuses new ones. */
    @Override
    public void close() {
        closed = true;
        for (Timer timer : List.copyOf(pending)) {
            timer.cancel(false);
        }
    }

    private ScheduledFuture<?> track(Timer timer, ScheduledFuture<?> future) {
        if (closed) {
            future.cancel(false);
            throw new RejectedExecutionException("these timers are closed");
        }
        timer.future = future;
        pending.add(timer);
        // Closed, or a one-shot that already ran, in between: it must not stay listed.
        if (closed || timer.ran) {
            timer.cancel(false);
        }
        return timer;
    }

    /** A scheduled task, listed while pending; cancelling it lists it no more. */
    private final class Timer implements ScheduledFuture<Object> {
        private final boolean once;
        private volatile ScheduledFuture<?> future;
        private volatile boolean ran;

        Timer(boolean once) {
            this.once = once;
        }

        void run(Runnable task) {
            if (closed) {
                return;
            }
            try {
                task.run();
            } finally {
                if (once) {
                    ran = true;
                    pending.remove(this);
                }
            }
        }

        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            pending.remove(this);
            return future.cancel(mayInterruptIfRunning);
        }

        @Override
        public boolean isCancelled() {
            return future.isCancelled();
        }

        @Override
        public boolean isDone() {
            return future.isDone();
        }

        @Override
        public Object get() throws InterruptedException, ExecutionException {
            return future.get();
        }

        @Override
        public Object get(long timeout, TimeUnit unit) throws InterruptedException, ExecutionException,
                TimeoutException {
            return future.get(timeout, unit);
        }

        @Override
        public long getDelay(TimeUnit unit) {
            return future.getDelay(unit);
        }

        @Override
        public int compareTo(Delayed other) {
            return Long.compare(getDelay(TimeUnit.NANOSECONDS), other.getDelay(TimeUnit.NANOSECONDS));
        }
    }
}
