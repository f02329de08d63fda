package io.pintle.server.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pintle.server.problem.PintleException;
import io.pintle.server.testing.Await;
import io.pintle.server.testing.TestThreads;
import io.pintle.server.watch.DirectoryWatch;
import java.net.InetAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

class ChangeWaitsTest {
    @TempDir
    Path dir;

    @RegisterExtension
    final TestThreads threads = new TestThreads();

    private DirectoryWatch watch;
    private ChangeWaits waits;

    @BeforeEach
    void start() throws Exception {
        watch = new DirectoryWatch();
        watch.start();
        waits = new ChangeWaits(5, 2, watch, Duration.ofMillis(10), Duration.ofMinutes(5),
                threads.workers(), threads.scheduler());
        waits.start();
    }

    @AfterEach
    void stop() throws Exception {
        waits.close();
        watch.close();
    }

    @Test
    void aCancelledWaitFreesItsSlotsAtOnceAndIsToldSo() throws Exception {
        InetAddress client = InetAddress.getByName("192.0.2.10");
        Ends first = park(client);
        Ends second = park(client);
        assertThat(waits.waiting()).isEqualTo(2);
        // The address's share is taken: a third from it is refused, another address still parks.
        assertThatThrownBy(() -> park(client)).isInstanceOfSatisfying(PintleException.Unavailable.class,
                refusal -> assertThat(refusal.reason()).isEqualTo("client-limit"));
        Ends other = park(InetAddress.getByName("192.0.2.11"));
        assertThat(waits.waiting()).isEqualTo(3);

        first.parked.cancel();
        assertThat(first.how.get(5, TimeUnit.SECONDS)).isEqualTo("cancelled");
        assertThat(waits.waiting()).isEqualTo(2);
        // Its share is back: the address parks again.
        Ends again = park(client);
        assertThat(waits.waiting()).isEqualTo(3);

        // Cancelling a wait that is over does nothing.
        first.parked.cancel();
        second.parked.cancel();
        other.parked.cancel();
        again.parked.cancel();
        assertThat(List.of(second.how.get(5, TimeUnit.SECONDS), other.how.get(5, TimeUnit.SECONDS),
                again.how.get(5, TimeUnit.SECONDS))).containsOnly("cancelled");
        assertThat(waits.waiting()).isZero();
    }

    @Test
    void pastTheTotalEveryAddressIsRefused() throws Exception {
        for (int i = 0; i < 5; i++) {
            park(InetAddress.getByName("198.51.100." + i));
        }
        assertThatThrownBy(() -> park(InetAddress.getByName("198.51.100.99")))
                .isInstanceOfSatisfying(PintleException.Unavailable.class,
                        refusal -> assertThat(refusal.reason()).isEqualTo("too-many-waiters"));
        assertThat(waits.waiting()).isEqualTo(5);
    }

    @Test
    void aStoppedServerRefusesToParkWithA503() throws Exception {
        waits.close();
        assertThatThrownBy(() -> park(InetAddress.getLoopbackAddress()))
                .isInstanceOfSatisfying(PintleException.Unavailable.class,
                        refusal -> assertThat(refusal.reason()).isEqualTo("stopping"));
    }

    @Test
    void aWokenRequestIsGivenTheLookThatFoundTheChange() throws Exception {
        CompletableFuture<ChangeWaits.Observation> found = new CompletableFuture<>();
        ChangeWaits.Observation first = new ChangeWaits.Observation("\"a\"", List.of(dir));
        ChangeWaits.Observation next = new ChangeWaits.Observation("\"b\"", List.of(dir), "the answer");
        waits.park("tree:" + dir, "\"a\"", first, () -> next, Duration.ofMinutes(5), InetAddress.getLoopbackAddress(),
                new Ends.Recorder(new CompletableFuture<>()) {
                    @Override
                    public void changed(ChangeWaits.Observation now) {
                        found.complete(now);
                    }
                });
        // Parking looks again at once (the resource may have changed before its watch): that look differs.
        assertThat(found.get(5, TimeUnit.SECONDS).answer()).isEqualTo("the answer");
    }

    /**
     * A look's answer that holds a resource (a spooled change list): each woken request gets a reference of its own
     * before it is told, the look's is given back after; one nobody got is freed by the look at once.
     */
    @Test
    void aSharedAnswerIsHeldOncePerWokenRequestAndFreedByTheLastOne() throws Exception {
        AtomicInteger references = new AtomicInteger();
        AtomicInteger looks = new AtomicInteger();
        ChangeWaits.Shared answer = new ChangeWaits.Shared() {
            @Override
            public boolean retain() {
                references.incrementAndGet();
                return true;
            }

            @Override
            public void release() {
                assertThat(references.decrementAndGet()).isNotNegative();
            }
        };
        ChangeWaits.Observation first = new ChangeWaits.Observation("\"a\"", List.of(dir));
        ChangeWaits.Probe probe = () -> {
            references.incrementAndGet(); // the look's own reference
            // The first look (at park) finds nothing new; the next, after the second park's, the change.
            return new ChangeWaits.Observation(looks.incrementAndGet() <= 1 ? "\"a\"" : "\"b\"", List.of(dir),
                    answer);
        };
        List<CompletableFuture<Integer>> told = new ArrayList<>();
        for (int waiter = 0; waiter < 2; waiter++) {
            CompletableFuture<Integer> held = new CompletableFuture<>();
            told.add(held);
            waits.park("changes:" + dir, "\"a\"", first, probe, Duration.ofMinutes(5),
                    InetAddress.getLoopbackAddress(), new Ends.Recorder(new CompletableFuture<>()) {
                        @Override
                        public void changed(ChangeWaits.Observation now) {
                            held.complete(references.get()); // as a request is told: its reference taken
                        }
                    });
            if (waiter == 0) {
                Await.until(Duration.ofSeconds(5), "the look at the first park", () -> looks.get() == 1);
                assertThat(references.get()).isZero(); // the look's answer went to nobody: freed
            }
        }
        for (CompletableFuture<Integer> held : told) {
            assertThat(held.get(5, TimeUnit.SECONDS)).isBetween(2, 3); // the look's, and one each
        }
        Await.until(Duration.ofSeconds(5), "the look's reference given back", () -> references.get() == 2);
        answer.release();
        answer.release();
        assertThat(references.get()).isZero();
    }

    @Test
    void theRecheckOfAResourceSpendsAtMostOnePercentOfACoreOnIt() throws Exception {
        // Real time, plus what the test adds.
        AtomicLong added = new AtomicLong();
        try (ChangeWaits rechecking = new ChangeWaits(5, 2, watch, Duration.ofMillis(10), Duration.ofMillis(20),
                threads.workers(), threads.scheduler(), () -> System.nanoTime() + added.get())) {
            rechecking.start();
            ChangeWaits.Observation now = new ChangeWaits.Observation("\"a\"", List.of(dir));
            AtomicInteger cheapLooks = new AtomicInteger();
            rechecking.park("cheap", "\"a\"", now, () -> {
                cheapLooks.incrementAndGet();
                return now;
            }, Duration.ofMinutes(5), InetAddress.getLoopbackAddress(), new Ends.Recorder(new CompletableFuture<>()));
            AtomicInteger costlyLooks = new AtomicInteger();
            rechecking.park("costly", "\"a\"", now, () -> {
                costlyLooks.incrementAndGet();
                added.addAndGet(TimeUnit.SECONDS.toNanos(10)); // this look takes ten seconds
                return now;
            }, Duration.ofMinutes(5), InetAddress.getLoopbackAddress(), new Ends.Recorder(new CompletableFuture<>()));
            Await.until(Duration.ofSeconds(10), "the costly resource's look at park", () -> costlyLooks.get() == 1);
            // The cheap resource is looked at again at every 20 ms re-check...
            Await.until(Duration.ofSeconds(10), "cheap re-checks", () -> cheapLooks.get() >= 5);
            // ...the one whose look took ten seconds not before 1,000 s have passed since its first (at park).
            assertThat(costlyLooks.get()).isEqualTo(1);
            added.addAndGet(TimeUnit.SECONDS.toNanos(900));
            int cheap = cheapLooks.get();
            Await.until(Duration.ofSeconds(10), "more cheap re-checks", () -> cheapLooks.get() >= cheap + 5);
            assertThat(costlyLooks.get()).isEqualTo(1);
            added.addAndGet(TimeUnit.SECONDS.toNanos(100));
            Await.until(Duration.ofSeconds(10), "the costly re-check", () -> costlyLooks.get() == 2);
        }
    }

    private Ends park(InetAddress client) {
        CompletableFuture<String> how = new CompletableFuture<>();
        ChangeWaits.Observation now = new ChangeWaits.Observation("\"a\"", List.of(dir));
        ChangeWaits.Parked parked = waits.park("file:" + dir, "\"a\"", now, () -> now, Duration.ofMinutes(5), client,
                new Ends.Recorder(how));
        return new Ends(parked, how);
    }

    private record Ends(ChangeWaits.Parked parked, CompletableFuture<String> how) {
        /** Completes {@code how} with the way the wait ended. */
        static class Recorder implements ChangeWaits.Listener {
            private final CompletableFuture<String> how;

            Recorder(CompletableFuture<String> how) {
                this.how = how;
            }

            @Override
            public void changed(ChangeWaits.Observation found) {
                how.complete("changed");
            }

            @Override
            public void timedOut() {
                how.complete("timed out");
            }

            @Override
            public void cancelled() {
                how.complete("cancelled");
            }
        }
    }
}
