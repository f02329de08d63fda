package io.pintle.server.overload;

import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * How much of something each key (a client address, a node) holds, bounded per key: one holder never takes a
 * whole class of workers, every change-wait slot or every upload worker.
 *
 * <p>No lock: one counter per key that holds something, made on its first hold and dropped at its last release.
 * A counter that reached 0 is dead and never counts again (a newcomer drops it and makes another), so a release
 * never loses a concurrent hold. A hold is a compare-and-set below the limit, never an increment taken back, so
 * no thread ever sees a key full when it is not.
 *
 * @param <K> what is counted apart (its {@code equals} and {@code hashCode} say which holders are one)
 */
public final class PerKey<K> {
    private final int limit;
    private final ConcurrentMap<K, AtomicInteger> held = new ConcurrentHashMap<>();

    /** @param limit what one key may hold at once, at least 1 */
    public PerKey(int limit) {
        if (limit < 1) {
            throw new IllegalArgumentException("limit " + limit);
        }
        this.limit = limit;
    }

    /**
     * @param key a holder
     * @return true when it now holds one more (and must {@link #release} it), false when it holds the limit
     */
    public boolean tryAcquire(K key) {
        Objects.requireNonNull(key);
        while (true) {
            AtomicInteger count = held.get(key);
            if (count == null) {
                if (held.putIfAbsent(key, new AtomicInteger(1)) == null) {
                    return true;
                }
                continue;
            }
            int holds = count.get();
            if (holds == 0) {
                // Released to nothing and being dropped: help, then make a new one.
                held.remove(key, count);
                continue;
            }
            if (holds >= limit) {
                return false;
            }
            if (count.compareAndSet(holds, holds + 1)) {
                return true;
            }
        }
    }

    /** @param key a holder that holds one (from {@link #tryAcquire}) */
    public void release(K key) {
        AtomicInteger count = held.get(key);
        if (count == null) {
            throw new IllegalStateException("release without a hold");
        }
        if (count.decrementAndGet() == 0) {
            held.remove(key, count);
        }
    }

    /**
     * @param key a holder
     * @return what it holds now
     */
    public int held(K key) {
        AtomicInteger count = held.get(key);
        return count == null ? 0 : count.get();
    }

    /** @return keys holding something now */
    public int keys() {
        return held.size();
    }

    /** @return what one key may hold */
    public int limit() {
        return limit;
    }
}
