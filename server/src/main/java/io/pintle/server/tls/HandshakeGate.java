package io.pintle.server.tls;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Lets at most {@code permits} TLS handshake steps run at once (a step: what one read of a handshaking connection
 * makes the server compute: the server's flight and its signature after a ClientHello, the client's certificate
 * check and the end of the handshake after its last flight), and decides who runs next: a handshake already under
 * way before a new one, and new ones in the order they arrived.
 *
 * <p>Why: under a herd (more new connections per second than one core can sign for) every connection had its
 * handshake run on a thread of its own, and the threads shared the cores: each signature took as long as all of
 * them together, so every connection finished late, the first ones with the last (processor sharing). With a step
 * at a time per core, a connection's steps run at full speed one after the other, a handshake that has begun
 * finishes before new ones start, and the connections that wait, wait in arrival order. The work is the same;
 * latency drops for all but the last arrivals. A client that stalls mid-handshake holds no permit: permits are held
 * for the computation, never across a wait for the network.
 *
 * <p>Lock-free: two queues and a counter; no thread ever blocks on the gate.
 */
final class HandshakeGate {
    /** A connection waiting for its next step. */
    interface Waiter {
        /**
         * The gate has taken a permit for this waiter: run the step (on another thread), then {@link #exit()}.
         * Called on the thread that freed the permit, which must not run the step itself.
         */
        void resume();
    }

    private final int permits;
    private final AtomicInteger running = new AtomicInteger();
    /** Handshakes already under way: their next step goes first. */
    private final Queue<Waiter> continuing = new ConcurrentLinkedQueue<>();
    /** New handshakes, in arrival order. */
    private final Queue<Waiter> fresh = new ConcurrentLinkedQueue<>();

    /** @param permits steps that may run at once (the cores) */
    HandshakeGate(int permits) {
        if (permits < 1) {
            throw new IllegalArgumentException("permits must be at least 1, not " + permits);
        }
        this.permits = permits;
    }

    /**
     * A step wants to run.
     *
     * @param waiter the connection
     * @param underWay whether its handshake has had a step already
     * @return true when it holds a permit and runs now (then it calls {@link #exit()}); false when it was queued, and
     *     {@link Waiter#resume()} will be called when its turn comes
     */
    boolean enter(Waiter waiter, boolean underWay) {
        if (continuing.isEmpty() && fresh.isEmpty() && tryAcquire()) {
            return true;
        }
        (underWay ? continuing : fresh).offer(waiter);
        drain();
        return false;
    }

    /** A step that held a permit is over. */
    void exit() {
        running.decrementAndGet();
        drain();
    }

    /** @return steps running now */
    int running() {
        return running.get();
    }

    /** @return connections waiting for a step */
    int waiting() {
        return continuing.size() + fresh.size();
    }

    /**
     * Hands free permits to waiters. Either the thread that queues a waiter sees a free permit, or the thread that
     * frees one sees the waiter: every queue change and permit change is atomic, so none is left behind.
     */
    private void drain() {
        while (!continuing.isEmpty() || !fresh.isEmpty()) {
            if (!tryAcquire()) {
                return;
            }
            Waiter next = continuing.poll();
            if (next == null) {
                next = fresh.poll();
            }
            if (next == null) {
                // Another thread took them: give the permit back and look again.
                running.decrementAndGet();
                continue;
            }
            next.resume();
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
