package io.pintle.server.overload;

import java.util.concurrent.atomic.AtomicLong;

/**
 * A count with a ceiling, shared by many threads (parked requests, queued lines, buffered bytes). An addition
 * that would pass the ceiling is refused and leaves the count untouched: a compare-and-set loop, never an add
 * taken back afterwards, which other threads would see, for an instant, as a count that is full when it is not.
 */
public final class Bounded {
    private final long ceiling;
    private final AtomicLong count = new AtomicLong();

    /** @param ceiling the most the count may reach, at least 0 */
    public Bounded(long ceiling) {
        if (ceiling < 0) {
            throw new IllegalArgumentException("ceiling " + ceiling);
        }
        this.ceiling = ceiling;
    }

    /**
     * @param amount what to add, at least 0
     * @return the count with it added, or -1 when that would pass the ceiling (nothing was added)
     */
    public long addIfRoom(long amount) {
        if (amount < 0) {
            throw new IllegalArgumentException("amount " + amount);
        }
        while (true) {
            long now = count.get();
            long next = now + amount;
            if (next > ceiling) {
                return -1;
            }
            if (count.compareAndSet(now, next)) {
                return next;
            }
        }
    }

    /** @return whether one more fits (and was added: {@link #subtract} it when done) */
    public boolean tryIncrement() {
        return addIfRoom(1) >= 0;
    }

    /** @param amount what to take back, that was added before */
    public void subtract(long amount) {
        if (count.addAndGet(-amount) < 0) {
            throw new IllegalStateException("took back more than was added");
        }
    }

    /** Takes back one, added by {@link #tryIncrement}. */
    public void decrement() {
        subtract(1);
    }

    /** @return the count now */
    public long get() {
        return count.get();
    }

    /** @return the most the count may reach */
    public long ceiling() {
        return ceiling;
    }
}
