package io.pintle.server.uploads;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pintle.server.problem.PintleException;
import java.net.InetAddress;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Hostile testing, issue 34 N5: 146 wrong passwords a second from one address were each checked. The throttle's
 * outcome on a clock the test moves: the attempt past the limit is refused without a check, another address is not,
 * the right password works again once the window ends, and right passwords never count.
 */
class LoginThrottleTest {
    private static final LoginThrottle.Limits LIMITS = new LoginThrottle.Limits(3, Duration.ofSeconds(60));
    private static final String PASSWORD = "right";

    private final AtomicLong now = new AtomicLong(1_000_000_000L);
    private final AtomicInteger checks = new AtomicInteger();
    private final PasswordCheck file = (user, password) -> {
        checks.incrementAndGet();
        return "rudder".equals(user) && PASSWORD.equals(password);
    };
    private final LoginThrottle throttle = new LoginThrottle(100, now::get);

    private boolean login(String address, String password) throws Exception {
        return throttle.guard(InetAddress.getByName(address), file, LIMITS, "htpasswd-webdav")
                .verify("rudder", password);
    }

    private void advance(Duration duration) {
        now.addAndGet(duration.toNanos());
    }

    @Test
    void theAttemptPastTheLimitIsRefusedAtOnceUntilTheWindowEnds() throws Exception {
        for (int i = 0; i < 3; i++) {
            assertThat(login("192.0.2.7", "guess-" + i)).isFalse();
        }
        assertThat(checks).hasValue(3);
        advance(Duration.ofSeconds(20));

        assertThatThrownBy(() -> login("192.0.2.7", "guess-3"))
                .isInstanceOfSatisfying(PintleException.TooManyRequests.class, refused -> {
                    assertThat(refused.reason()).isEqualTo("too-many-failures");
                    assertThat(refused.retryAfterSeconds()).isEqualTo(40);
                    assertThat(refused.detail()).contains("3 failed logins from 192.0.2.7 within 60 s")
                            .contains("max_failures_per_address").contains("htpasswd-webdav");
                });
        // Even the right password: checking it would tell a right guess from a wrong one.
        assertThatThrownBy(() -> login("192.0.2.7", PASSWORD)).isInstanceOf(PintleException.TooManyRequests.class);
        assertThat(checks).as("refused attempts check nothing").hasValue(3);
        assertThat(throttle.throttled(LIMITS)).isEqualTo(1);

        // Another address is not concerned.
        assertThat(login("192.0.2.8", PASSWORD)).isTrue();

        // Refused attempts did not extend the window: it ends 60 s after the first failure.
        advance(Duration.ofSeconds(40));
        assertThat(login("192.0.2.7", PASSWORD)).isTrue();
        assertThat(throttle.throttled(LIMITS)).isZero();
    }

    @Test
    void rightPasswordsNeverCountAsNodesBehindOneNatUploadThemAllTheTime() throws Exception {
        for (int i = 0; i < 1_000; i++) {
            assertThat(login("198.51.100.1", PASSWORD)).isTrue();
        }
        // Two failures of a misconfigured node among them stay under the limit.
        assertThat(login("198.51.100.1", "old-password")).isFalse();
        assertThat(login("198.51.100.1", "old-password")).isFalse();
        assertThat(login("198.51.100.1", PASSWORD)).isTrue();
        assertThat(checks).hasValue(1_003);
    }

    @Test
    void failuresCountPerWindowNotForever() throws Exception {
        assertThat(login("192.0.2.9", "a")).isFalse();
        assertThat(login("192.0.2.9", "b")).isFalse();
        advance(Duration.ofSeconds(61));
        assertThat(login("192.0.2.9", "c")).isFalse();
        assertThat(login("192.0.2.9", "d")).isFalse();
        assertThat(login("192.0.2.9", PASSWORD)).as("two failures in this window, not four").isTrue();
    }

    @Test
    void anIpv6ClientCountsByItsSlash64() throws Exception {
        assertThat(login("2001:db8:1:2::1", "a")).isFalse();
        assertThat(login("2001:db8:1:2::2", "b")).isFalse();
        assertThat(login("2001:db8:1:2:ffff::3", "c")).isFalse();
        assertThatThrownBy(() -> login("2001:db8:1:2::4", PASSWORD))
                .isInstanceOfSatisfying(PintleException.TooManyRequests.class,
                        refused -> assertThat(refused.detail()).contains("from 2001:db8:1:2:0:0:0:0/64"));
        assertThat(login("2001:db8:1:3::1", PASSWORD)).isTrue();
    }

    @Test
    void aSprayOfAddressesHoldsAtMostTheCapacity() throws Exception {
        LoginThrottle small = new LoginThrottle(3, now::get);
        for (int i = 0; i < 50; i++) {
            assertThat(small.guard(InetAddress.getByName("203.0.113." + i), file, LIMITS, "f").verify("x", "y"))
                    .isFalse();
            assertThat(small.addresses()).isLessThanOrEqualTo(3);
        }
        // The newest are kept: the last address still counts its failures.
        PasswordCheck last = small.guard(InetAddress.getByName("203.0.113.49"), file, LIMITS, "f");
        assertThat(last.verify("x", "y")).isFalse();
        assertThat(last.verify("x", "y")).isFalse();
        assertThatThrownBy(() -> last.verify("rudder", PASSWORD)).isInstanceOf(PintleException.TooManyRequests.class);
    }

    @Test
    void zeroFailuresAllowedMeansNoThrottle() throws Exception {
        PasswordCheck unthrottled = throttle.guard(InetAddress.getByName("192.0.2.10"), file, LoginThrottle.Limits.OFF,
                "f");
        for (int i = 0; i < 100; i++) {
            assertThat(unthrottled.verify("rudder", "wrong")).isFalse();
        }
        assertThat(unthrottled.verify("rudder", PASSWORD)).isTrue();
        assertThat(throttle.addresses()).isZero();
    }
}
