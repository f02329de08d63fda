package io.pintle.server.overload;

import java.util.ArrayDeque;
import java.util.Objects;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Admission to one class of work: at most {@code concurrency} holders of a permit at once, at most {@code
 * queue} waiters behind them, and a refusal past that. A permit is handed straight from the holder that leaves to
 * the oldest waiter, so waiters are served in order and never overtaken by newcomers.
 *
 * <p>Why a lock: a lock-free gate (one counter of free permits minus waiters, beside a lock-free queue) counts a
 * waiter before its ticket is in the queue, so a holder that leaves can see a waiter whose ticket is not there
 * yet and has to wait for it, and a refusal that counts itself and takes the count back looks like such a waiter.
 * Under the lock the count and the queue change together: a refusal only reads them and a leave never waits for
 * anything. The work under the lock is a few field updates (an abandon searches the queue from its oldest ticket),
 * and no method waits or calls out while holding it.
 *
 * @param <T> what a waiter carries (the suspended request)
 */
public final class Gate<T> {
    private final int concurrency;
    private final int queueLimit;
    private final ReentrantLock lock = new ReentrantLock();
    /** Permits held; guarded by {@link #lock}. */
    private int held;
    /** Tickets waiting, oldest first; guarded by {@link #lock}. */
    private final ArrayDeque<Ticket<T>> queue = new ArrayDeque<>();

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
        lock.lock();
        try {
            if (held < concurrency) {
                held++;
                return new Admission.Admitted<>();
            }
            if (queue.size() >= queueLimit) {
                return new Admission.Refused<>();
            }
            Ticket<T> ticket = new Ticket<>(waiter);
            queue.addLast(ticket);
            return new Admission.Queued<>(ticket);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Gives a permit back.
     *
     * @return the waiter the permit was handed to (now its holder, which must {@link #leave} in turn), or null
     *     when nobody was waiting
     */
    public T leave() {
        lock.lock();
        try {
            Ticket<T> next = queue.pollFirst();
            if (next != null) {
                return next.waiter;
            }
            if (held == 0) {
                throw new IllegalStateException("leave without a permit");
            }
            held--;
            return null;
        } finally {
            lock.unlock();
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
        lock.lock();
        try {
            return queue.removeFirstOccurrence(ticket);
        } finally {
            lock.unlock();
        }
    }

    /** @return permits currently held */
    public int active() {
        lock.lock();
        try {
            return held;
        } finally {
            lock.unlock();
        }
    }

    /** @return tickets waiting */
    public int waiting() {
        lock.lock();
        try {
            return queue.size();
        } finally {
            lock.unlock();
        }
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

        Ticket(T waiter) {
            this.waiter = waiter;
        }

        /** @return what the waiter carries */
        public T waiter() {
            return waiter;
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
