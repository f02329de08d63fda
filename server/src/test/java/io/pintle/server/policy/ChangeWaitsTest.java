package io.pintle.server.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pintle.server.problem.PintleException;
import io.pintle.server.testing.TestThreads;
import io.pintle.server.watch.DirectoryWatch;
import java.net.InetAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
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

    private Ends park(InetAddress client) {
        CompletableFuture<String> how = new CompletableFuture<>();
        ChangeWaits.Observation now = new ChangeWaits.Observation("\"a\"", List.of(dir));
        ChangeWaits.Parked parked = waits.park("file:" + dir, "\"a\"", now, () -> now, Duration.ofMinutes(5), client,
                new ChangeWaits.Listener() {
                    @Override
                    public void changed() {
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
                });
        return new Ends(parked, how);
    }

    private record Ends(ChangeWaits.Parked parked, CompletableFuture<String> how) {}
}
