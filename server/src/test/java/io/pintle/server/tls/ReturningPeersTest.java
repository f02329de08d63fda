package io.pintle.server.tls;

import static org.assertj.core.api.Assertions.assertThat;

import io.pintle.server.testing.Hammer;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class ReturningPeersTest {
    private static InetAddress address(int n) throws UnknownHostException {
        return InetAddress.getByAddress(new byte[] {10, (byte) (n >> 16), (byte) (n >> 8), (byte) n});
    }

    @Test
    void aFinishedHandshakeLeavesOneTicketForTheAddressesNextConnection() throws Exception {
        AtomicLong clock = new AtomicLong();
        ReturningPeers peers = new ReturningPeers(10, 100, clock::get);
        assertThat(peers.take(address(1))).as("never served").isFalse();
        peers.finished(address(1));
        peers.finished(address(1));
        assertThat(peers.take(address(2))).as("another address").isFalse();
        assertThat(peers.take(address(1))).isTrue();
        assertThat(peers.take(address(1))).as("one ticket, however many handshakes finished").isFalse();
    }

    @Test
    void aTicketLapsesAfterTheWindow() throws Exception {
        AtomicLong clock = new AtomicLong(1_000);
        ReturningPeers peers = new ReturningPeers(10, 100, clock::get);
        peers.finished(address(1));
        peers.finished(address(2));
        clock.addAndGet(9);
        assertThat(peers.take(address(1))).isTrue();
        clock.addAndGet(1);
        assertThat(peers.take(address(2))).as("lapsed at the window's end").isFalse();
        assertThat(peers.size()).isZero();
    }

    @Test
    void pastItsCapacityTheOldestTicketGivesWay() throws Exception {
        AtomicLong clock = new AtomicLong();
        ReturningPeers peers = new ReturningPeers(10, 3, clock::get);
        for (int i = 0; i < 3; i++) {
            peers.finished(address(i));
            clock.incrementAndGet();
        }
        // Address 0 finishes again: its ticket is renewed, and 1 is now the oldest.
        peers.finished(address(0));
        peers.finished(address(4));
        assertThat(peers.size()).isEqualTo(3);
        assertThat(peers.take(address(1))).as("the oldest gave way").isFalse();
        assertThat(peers.take(address(0))).isTrue();
        assertThat(peers.take(address(2))).isTrue();
        assertThat(peers.take(address(4))).isTrue();
    }

    @Test
    void lapsedTicketsAreDroppedWhenTheNextOneIsLeft() throws Exception {
        AtomicLong clock = new AtomicLong();
        ReturningPeers peers = new ReturningPeers(10, 100, clock::get);
        peers.finished(address(1));
        peers.finished(address(2));
        clock.addAndGet(10);
        peers.finished(address(3));
        assertThat(peers.size()).isEqualTo(1);
        assertThat(peers.take(address(3))).isTrue();
    }

    /**
     * Threads finishing and taking on a few shared addresses at once: a ticket is never used twice (each take that
     * succeeds matches one finish before it), and the capacity holds at every moment.
     */
    @Test
    void underContentionATicketIsUsedAtMostOnceAndTheSizeStaysBounded() throws Exception {
        ReturningPeers peers = new ReturningPeers(Duration.ofMinutes(1).toNanos(), 64, System::nanoTime);
        int threads = 8;
        int iterations = 50_000;
        AtomicInteger finished = new AtomicInteger();
        AtomicInteger taken = new AtomicInteger();
        AtomicInteger largest = new AtomicInteger();
        Hammer.run(threads, iterations, Duration.ofSeconds(60), (thread, i) -> {
            InetAddress address = address(i % 200);
            if ((i + thread) % 2 == 0) {
                peers.finished(address);
                finished.incrementAndGet();
            } else if (peers.take(address)) {
                taken.incrementAndGet();
            }
            largest.accumulateAndGet(peers.size(), Math::max);
        });
        assertThat(taken.get()).isPositive().isLessThanOrEqualTo(finished.get());
        assertThat(largest.get()).isEqualTo(64);
        // What is left is what was finished and never taken, one per address at most.
        int left = 0;
        for (int a = 0; a < 200; a++) {
            if (peers.take(address(a))) {
                left++;
            }
        }
        assertThat(taken.get() + left).isLessThanOrEqualTo(finished.get());
        assertThat(left).isLessThanOrEqualTo(64);
    }
}
