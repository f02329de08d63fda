package io.pintle.server.overload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class PerAddressTest {
    @Test
    void anAddressHoldsUpToItsLimitAndOthersAreNotAffected() throws Exception {
        PerAddress shares = new PerAddress(2);
        InetAddress a = InetAddress.getByName("192.0.2.1");
        InetAddress b = InetAddress.getByName("192.0.2.2");
        assertThat(shares.tryAcquire(a)).isTrue();
        assertThat(shares.tryAcquire(a)).isTrue();
        assertThat(shares.tryAcquire(a)).isFalse();
        assertThat(shares.tryAcquire(b)).isTrue();
        assertThat(shares.held(a)).isEqualTo(2);
        shares.release(a);
        assertThat(shares.tryAcquire(a)).isTrue();
        shares.release(a);
        shares.release(a);
        shares.release(b);
        assertThat(shares.addresses()).isZero();
        assertThatThrownBy(() -> shares.release(a)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void anIpv6ClientCountsByItsSlash64() throws Exception {
        PerAddress shares = new PerAddress(1);
        assertThat(shares.tryAcquire(InetAddress.getByName("2001:db8:1:2::1"))).isTrue();
        assertThat(shares.tryAcquire(InetAddress.getByName("2001:db8:1:2:ffff:1:2:3"))).isFalse();
        assertThat(shares.tryAcquire(InetAddress.getByName("2001:db8:1:3::1"))).isTrue();
        assertThat(PerAddress.key(InetAddress.getByName("2001:db8:1:2:aaaa::9")))
                .isEqualTo(InetAddress.getByName("2001:db8:1:2::"));
    }

    @Test
    void concurrentHoldsAndReleasesNeverExceedTheLimitNorLeaveAnything() throws Exception {
        PerAddress shares = new PerAddress(3);
        InetAddress address = InetAddress.getByName("198.51.100.7");
        AtomicInteger holding = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
            Thread thread = new Thread(() -> {
                try {
                    start.await();
                } catch (InterruptedException e) {
                    return;
                }
                for (int i = 0; i < 20_000; i++) {
                    if (shares.tryAcquire(address)) {
                        most.accumulateAndGet(holding.incrementAndGet(), Math::max);
                        holding.decrementAndGet();
                        shares.release(address);
                    }
                }
            });
            thread.start();
            threads.add(thread);
        }
        start.countDown();
        for (Thread thread : threads) {
            thread.join();
        }
        assertThat(most.get()).isBetween(1, 3);
        assertThat(shares.held(address)).isZero();
        assertThat(shares.addresses()).isZero();
    }
}
