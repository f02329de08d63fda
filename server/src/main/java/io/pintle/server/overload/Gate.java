package io.pintle.server.overload;

import java.util.Objects;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Admission to one class of work: at most {@code concurrency} holders of a permit at once, at most {@code
 * queue} waiters behind them, and a refusal past that. No lock: one atomic counter (free permits minus waiters)
 * decides, and a lock-free queue carries the waiters. A permit is handed straight from the holder that leaves to
 * the oldest waiter, so waiters are served in order and never overtaken by newcomers.
 *
 * @param <T> what a waiter carries (the suspended request)
 */
public final class Gate<T> {
    private final int concurrency;
    private final int queueLimit;
    /** Free permits when positive; minus the number of tickets in the queue when negative. */
    private final AtomicInteger state;
    private final Queue<Ticket<T>> queue = new ConcurrentLinkedQueue<>();

    /**
     * @param concurrency permits, at least 1
     * @param queue waiters allowed, at least 0
     */
    public Gate(int concurrency, int queue) {
        if (concurrency < 1 || queue < 0) {
            throw new IllegalArgumentException("concurrency " + concurrency + ", queue " + queue);
        }
        this.concurrency = concurrency;
        this.queueLimit = queue;
        this.state = new AtomicInteger(concurrency);
    }

    /**
     * Asks for a permit.
     *
     * @param waiter what to hand back from {@link #leave} if the caller has to wait
     * @return {@link Admission.Admitted} (the caller holds a permit and must {@link #leave}),
     *     {@link Admission.Queued} (its waiter will come out of a {@link #leave} holding a permit, unless
     *     {@link #abandon}ed first) or {@link Admission.Refused}
     */
    public Admission<T> enter(T waiter) {
        Objects.requireNonNull(waiter);
        int permits = state.decrementAndGet();
        if (permits >= 0) {
            return new Admission.Admitted<>();
        }
        if (-permits > queueLimit) {
            state.incrementAndGet();
            return new Admission.Refused<>();
        }
        Ticket<T> ticket = new Ticket<>(waiter);
        queue.offer(ticket);
        return new Admission.Queued<>(ticket);
    }

    /**
     * Gives a permit back.
     *
     * @return the waiter the permit was handed to (now its holder, which must {@link #leave} in turn), or null
     *     when nobody was waiting
     */
    public T leave() {
        while (true) {
            if (state.incrementAndGet() > 0) {
                return null;
            }
            // A waiter is counted but maybe not yet in the queue (enter() counts, then offers): wait for it.
            Ticket<T> ticket;
            while ((ticket = queue.poll()) == null) {
                Thread.onSpinWait();
            }
            if (ticket.claim()) {
                return ticket.waiter;
            }
            // That ticket was abandoned: its count is the one just given back; give this permit back again.
        }
    }

    /**
     * Gives up waiting (the queue timeout).
     *
     * @param ticket from {@link Admission.Queued}
     * @return true when the ticket was still waiting, and now never gets a permit; false when a permit was
     *     handed to it meanwhile (its waiter runs)
     */
    public boolean abandon(Ticket<T> ticket) {
        // Its queue slot is reclaimed by the next leave(), which skips it.
        return ticket.claim();
    }

    /** @return permits currently held (approximate while requests come and go) */
    public int active() {
        return concurrency - Math.max(0, state.get());
    }

    /** @return tickets waiting (including abandoned ones not yet skipped) */
    public int waiting() {
        return Math.max(0, -state.get());
    }

    /** @return the number of permits */
    public int concurrency() {
        return concurrency;
    }

    /**
     * A place in the queue.
     *
     * @param <T> what the waiter carries
     */
    public static final class Ticket<T> {
        private final T waiter;
        private final AtomicBoolean claimed = new AtomicBoolean();

        Ticket(T waiter) {
            this.waiter = waiter;
        }

        /** @return what the waiter carries */
        public T waiter() {
            return waiter;
        }

        /** The first of a permit hand-over and an abandon wins; the other sees false. */
        boolean claim() {
            return claimed.compareAndSet(false, true);
        }
    }

    /**
     * The outcome of {@link #enter}.
     *
     * @param <T> what a waiter carries
     */
    public sealed interface Admission<T> {
        /**
         * Holds a permit now.
         *
         * @param <T> what a waiter carries
         */
        record Admitted<T>() implements Admission<T> {}

        /**
         * Waits in the queue.
         *
         * @param ticket its place
         * @param <T> what a waiter carries
         */
        record Queued<T>(Ticket<T> ticket) implements Admission<T> {}

        /**
         * Refused: the queue is full.
         *
         * @param <T> what a waiter carries
         */
        record Refused<T>() implements Admission<T> {}
    }
}
