package io.pintle.server.tls;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Lets at most {@code permits} TLS handshake steps run at once (a step: what one read of a handshaking connection
 * makes the server compute: the server's flight and its signature after a ClientHello, the client's certificate
 * check and the end of the handshake after its last flight), and decides who runs next: a handshake the server has
 * already answered first; then a new one from a client the server has just served (an agent's next request: see
 * {@link ReturningPeers}); then new ones in the order they arrived.
 *
 * <p>Why: under a herd (more new connections per second than the cores can sign for) every connection had its
 * handshake run on a thread of its own, and the threads shared the cores: each signature took as long as all of
 * them together, so every connection finished late, the first ones with the last (processor sharing). With a step
 * at a time per core, a connection's steps run at full speed one after the other, a handshake that has begun
 * finishes before new ones start, and the connections that wait, wait in arrival order. The work is the same;
 * latency drops for all but the last arrivals. A client that stalls mid-handshake holds no permit: permits are held
 * for the computation, never across a wait for the network.
 *
 * <p>Returning clients: a Rudder agent's update is two connections in a row (the common library's check, then its
 * policies, one curl process each). Under a herd the second queued behind every newer agent's first, so each agent
 * finished only after all had started (median 10 s against an ideal order's ~6 s, 2,000 agents in 10 s on one
 * core). A new connection whose address holds a ticket goes before the other new ones: the agent that began is
 * finished first, the work is the same.
 *
 * <p>Lock-free: three queues and a counter; no thread ever blocks on the gate. Each permit is a {@link Permit} given
 * back once, however many times its release is asked for.
 */
final class HandshakeGate {
    /** A connection waiting for its next step. */
    interface Waiter {
        /**
         * The gate has taken a permit for this waiter: run the step on another thread (never on the caller's, which
         * is freeing a permit of its own), and release the permit when it ends.
         *
         * @param permit the permit taken for it
         * @return false when the step could not be started (the executor refused it): the gate takes the permit back
         */
        boolean resume(Permit permit);

        /** @return false once the connection is closed: it is dropped from the queue without a permit */
        boolean isOpen();
    }

    /** One step's right to run; {@link #release()} gives it back once, later calls do nothing. */
    final class Permit {
        private final AtomicBoolean held = new AtomicBoolean(true);

        private Permit() {}

        /** Gives the permit back (the first call only) and hands it on to a waiter, if any. */
        void release() {
            if (held.compareAndSet(true, false)) {
                running.decrementAndGet();
                drain();
            }
        }
    }

    private final int permits;
    private final AtomicInteger running = new AtomicInteger();
    /** Handshakes the server has answered: their next step goes first. */
    private final Queue<Waiter> continuing = new ConcurrentLinkedQueue<>();
    /** New handshakes of returning clients, in arrival order: after {@link #continuing}, before {@link #fresh}. */
    private final Queue<Waiter> returning = new ConcurrentLinkedQueue<>();
    /** New handshakes, in arrival order. */
    private final Queue<Waiter> fresh = new ConcurrentLinkedQueue<>();

    /** @param permits steps that may run at once (the cores) */
    HandshakeGate(int permits) {
        if (permits < 1) {
            throw new IllegalArgumentException("permits must be at least 1, not " + permits);
        }
        this.permits = permits;
    }

    /** Where a step stands in the order. */
    enum Turn {
        /** The server has answered this handshake already. */
        UNDER_WAY,
        /** A new handshake from a client the server has just served. */
        RETURNING,
        /** A new handshake. */
        NEW
    }

    /**
     * A step wants to run.
     *
     * @param waiter the connection
     * @param turn where it stands
     * @return the permit when it runs now (the caller releases it); null when it was queued, and
     *     {@link Waiter#resume} will be called when its turn comes
     */
    Permit enter(Waiter waiter, Turn turn) {
        if (continuing.isEmpty() && returning.isEmpty() && fresh.isEmpty() && tryAcquire()) {
            return new Permit();
        }
        (switch (turn) {
            case UNDER_WAY -> continuing;
            case RETURNING -> returning;
            case NEW -> fresh;
        }).offer(waiter);
        drain();
        return null;
    }

    /** @return steps running now */
    int running() {
        return running.get();
    }

    /** @return connections waiting for a step (closed ones included until their turn comes) */
    int waiting() {
        return continuing.size() + returning.size() + fresh.size();
    }

    /**
     * Hands free permits to waiters. Either the thread that queues a waiter sees a free permit, or the thread that
     * frees one sees the waiter: every queue change and permit change is atomic, so none is left behind. A loop,
     * not a recursion: a refused resume gives its permit back here.
     */
    private void drain() {
        while (!continuing.isEmpty() || !returning.isEmpty() || !fresh.isEmpty()) {
            if (!tryAcquire()) {
                return;
            }
            Waiter next = nextOpen();
            if (next == null) {
                // Another thread took them, or only closed ones were left: give the permit back and look again.
                running.decrementAndGet();
                continue;
            }
            boolean started = false;
            try {
                started = next.resume(new Permit());
            } finally {
                if (!started) {
                    running.decrementAndGet();
                }
            }
        }
    }

    /** @return the next waiter whose connection is still open, dropping closed ones, or null */
    private Waiter nextOpen() {
        while (true) {
            Waiter next = continuing.poll();
            if (next == null) {
                next = returning.poll();
            }
            if (next == null) {
                next = fresh.poll();
            }
            if (next == null || next.isOpen()) {
                return next;
            }
        }
    }

    private boolean tryAcquire() {
        while (true) {
            int now = running.get();
            if (now >= permits) {
                return false;
            }
            if (running.compareAndSet(now, now + 1)) {
                return true;
            }
        }
    }
}
