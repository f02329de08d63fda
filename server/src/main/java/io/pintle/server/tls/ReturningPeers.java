package io.pintle.server.tls;

import java.net.InetAddress;
import java.util.Iterator;
import java.util.LinkedHashMap;
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
 * window}. Bounded in memory: at most {@code capacity} addresses, the oldest ticket giving way to a new one. Many
 * agents behind one NAT address share its one ticket: some of their second connections go in arrival order, as
 * before.
 *
 * <p>One lock around a map in ticket order (every ticket lasts the same window, so the oldest is the first to lapse
 * and the first to give way): two map operations per handshake, nothing per request. A {@code ConcurrentHashMap}
 * was tried first; its {@code size()} is not exact while others write (ReturningPeersTest's hammer read 408 entries
 * in a map that never held more than 200 keys), so its capacity was not a bound one could state.
 */
final class ReturningPeers {
    /** How long a ticket lasts: far more than an agent needs between its two requests, far less than a run. */
    static final long WINDOW_NANOS = 10_000_000_000L;
    /** Addresses holding a ticket at most (a herd of this many agents in one window is beyond one server). */
    static final int CAPACITY = 65_536;

    /** Address to the ticket's end ({@link System#nanoTime()} scale), oldest first. Guarded by itself. */
    private final LinkedHashMap<InetAddress, Long> tickets = new LinkedHashMap<>();
    private final long windowNanos;
    private final int capacity;
    private final LongSupplier clock;

    ReturningPeers() {
        this(WINDOW_NANOS, CAPACITY, System::nanoTime);
    }

    /**
     * @param windowNanos how long a ticket lasts
     * @param capacity addresses holding a ticket at most
     * @param clock {@link System#nanoTime()}, or a test's
     */
    ReturningPeers(long windowNanos, int capacity, LongSupplier clock) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be at least 1, not " + capacity);
        }
        this.windowNanos = windowNanos;
        this.capacity = capacity;
        this.clock = clock;
    }

    /** @param address a client whose handshake just succeeded: it holds a ticket (one, however many it finished) */
    void finished(InetAddress address) {
        long now = clock.getAsLong();
        synchronized (tickets) {
            dropLapsed(now);
            // Removed first, so that a renewed ticket moves to the end of the order.
            tickets.remove(address);
            if (tickets.size() >= capacity) {
                Iterator<InetAddress> oldest = tickets.keySet().iterator();
                oldest.next();
                oldest.remove();
            }
            tickets.put(address, now + windowNanos);
        }
    }

    /**
     * @param address a new connection's client
     * @return whether it held a live ticket, which this uses up
     */
    boolean take(InetAddress address) {
        long now = clock.getAsLong();
        Long end;
        synchronized (tickets) {
            end = tickets.remove(address);
        }
        return end != null && end - now > 0;
    }

    /** @return addresses holding a ticket (lapsed ones included until the next {@link #finished}) */
    int size() {
        synchronized (tickets) {
            return tickets.size();
        }
    }

    /** Drops lapsed tickets from the head of the order. Called holding the lock. */
    private void dropLapsed(long now) {
        Iterator<Long> ends = tickets.values().iterator();
        while (ends.hasNext() && ends.next() - now <= 0) {
            ends.remove();
        }
    }
}
