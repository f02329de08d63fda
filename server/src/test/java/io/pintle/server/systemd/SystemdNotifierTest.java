package io.pintle.server.systemd;

import static org.assertj.core.api.Assertions.assertThat;

import io.pintle.server.testing.NotifySocket;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SystemdNotifierTest {
    private static final Duration WAIT = Duration.ofSeconds(5);

    @Test
    void readyReloadingAndStoppingReachTheNotifySocket(@TempDir Path dir) throws Exception {
        try (NotifySocket manager = NotifySocket.bind(dir.resolve("notify"))) {
            SystemdNotifier notifier = new SystemdNotifier(manager.path());
            assertThat(notifier.enabled()).isTrue();

            notifier.ready("serving 3 nodes\nsecond line");
            assertThat(manager.receive(WAIT)).isEqualTo("READY=1\nSTATUS=serving 3 nodes second line");

            long before = System.nanoTime() / 1000; // HotSpot on Linux reads CLOCK_MONOTONIC too
            notifier.reloading("reloading (test)");
            String reloading = manager.receive(WAIT);
            assertThat(reloading).startsWith("RELOADING=1\nMONOTONIC_USEC=").endsWith("\nSTATUS=reloading (test)");
            long usec = Long.parseLong(reloading.split("\n")[1].substring("MONOTONIC_USEC=".length()));
            assertThat(usec).isBetween(before - 1_000_000, before + 5_000_000);

            notifier.stopping();
            assertThat(manager.receive(WAIT)).startsWith("STOPPING=1\n");
        }
    }

    @Test
    void withoutANotifySocketNothingIsSentAndNothingFails() {
        SystemdNotifier notifier = SystemdNotifier.disabled();
        assertThat(notifier.enabled()).isFalse();
        assertThat(notifier.send("READY=1")).isFalse();
        notifier.ready("x");
        notifier.reloading("x");
        notifier.stopping();
    }

    @Test
    void aSocketThatIsGoneIsNotAnError(@TempDir Path dir) {
        SystemdNotifier notifier = new SystemdNotifier(dir.resolve("nobody-listens").toString());
        assertThat(notifier.send("READY=1")).isFalse();
        notifier.ready("still fine");
    }

    @Test
    void addressesFollowSdNotifyRules() {
        assertThat(SystemdNotifier.address("relative/path")).isNull();
        assertThat(SystemdNotifier.address("/" + "x".repeat(200))).isNull();
        byte[] file = SystemdNotifier.address("/run/systemd/notify");
        assertThat(file).hasSize(2 + "/run/systemd/notify".length() + 1);
        assertThat(file[file.length - 1]).isZero();
        byte[] abstractName = SystemdNotifier.address("@/org/freedesktop/systemd1/notify/1");
        assertThat(abstractName).hasSize(2 + "@/org/freedesktop/systemd1/notify/1".length());
        assertThat(abstractName[2]).isZero();
    }
}
