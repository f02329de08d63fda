package io.pintle.server.tls;

import java.net.InetAddress;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * Addresses that have just finished a TLS handshake, each holding one ticket for its next new connection: the
 * {@link HandshakeGate} runs that connection's handshake before the other new ones ({@link HandshakeGate.Turn#RETURNING}).
 * A Rudder agent's update is two connections in a row from its address; the ticket the first leaves is what the
 * second uses.
 *
 * <p>Bounded in what it lets anyone gain: an address holds at most one ticket, which its next new connection uses
 * up; a ticket is only left by a handshake that waited its turn among the new ones and finished (a returning one
 * leaves none), so handshakes served ahead are never more than new ones served in order; it lapses after {@code
 * window}. Bounded in memory: at most {@code capacity}
 * addresses (beyond that, a handshake leaves no ticket until lapsed ones are swept, at most once a second). Many
 * agents behind one NAT address share its one ticket: some of their second connections go in arrival order, as
 * before.
 *
 * <p>Thread-safe: a {@link ConcurrentHashMap}, whose {@code put} and {@code remove} are atomic; its size is only
 * an estimate while others write, which makes the capacity approximate by a few entries, never unbounded.
 */
final class ReturningPeers {
    /** How long a ticket lasts: far more than an agent needs between its two requests, far less than a run. */
    static final long WINDOW_NANOS = 10_000_000_000L;
    /** Addresses holding a ticket at most (a herd of this many agents in one window is beyond one server). */
    static final int CAPACITY = 65_536;
    private static final long SWEEP_INTERVAL_NANOS = 1_000_000_000L;

    private final ConcurrentHashMap<InetAddress, Long> tickets = new ConcurrentHashMap<>();
    private final long windowNanos;
    private final int capacity;
    private final LongSupplier clock;
    private final AtomicLong nextSweep;

    ReturningPeers() {
        this(WINDOW_NANOS, CAPACITY, System::nanoTime);
    }

    /**
     * @param windowNanos how long a ticket lasts
     * @param capacity addresses holding a ticket at most
     * @param clock {@link System#nanoTime()}, or a test's
     */
    ReturningPeers(long windowNanos, int capacity, LongSupplier clock) {
        this.windowNanos = windowNanos;
        this.capacity = capacity;
        this.clock = clock;
        this.nextSweep = new AtomicLong(clock.getAsLong());
    }

    /** @param address a client whose handshake just succeeded: it holds a ticket (one, however many it finished) */
    void finished(InetAddress address) {
        long now = clock.getAsLong();
        if (tickets.size() >= capacity) {
            sweep(now);
            if (tickets.size() >= capacity) {
                return;
            }
        }
        tickets.put(address, now + windowNanos);
    }

    /**
     * @param address a new connection's client
     * @return whether it held a live ticket, which this uses up
     */
    boolean take(InetAddress address) {
        Long expiry = tickets.remove(address);
        return expiry != null && expiry - clock.getAsLong() > 0;
    }

    /** @return addresses holding a ticket (lapsed ones included until swept) */
    int size() {
        return tickets.size();
    }

    /** Drops lapsed tickets, by one thread at a time and at most once per interval. */
    private void sweep(long now) {
        long due = nextSweep.get();
        if (now - due < 0 || !nextSweep.compareAndSet(due, now + SWEEP_INTERVAL_NANOS)) {
            return;
        }
        tickets.values().removeIf(expiry -> expiry - now <= 0);
    }
}
