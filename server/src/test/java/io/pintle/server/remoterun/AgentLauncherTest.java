package io.pintle.server.remoterun;

import static org.assertj.core.api.Assertions.assertThat;

import io.pintle.api.dto.RemoteRunEvent;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class AgentLauncherTest {
    private final ScheduledExecutorService timers = Executors.newSingleThreadScheduledExecutor();
    private final AgentLauncher launcher = new AgentLauncher(timers);
    private final List<RemoteRunEvent> events = new CopyOnWriteArrayList<>();

    @AfterEach
    void stop() {
        timers.shutdownNow();
    }

    private List<String> lines() {
        return events.stream().filter(e -> e.type().equals("output")).map(RemoteRunEvent::line).toList();
    }

    private RemoteRunEvent status() {
        return events.stream().filter(e -> e.type().equals("status")).reduce((a, b) -> {
            throw new AssertionError("two statuses: " + a + ", " + b);
        }).orElseThrow();
    }

    @Test
    void argumentsReachTheProgramVerbatimWithoutAShell() {
        launcher.run("n", List.of("/bin/echo", "$(id)", "a;b", "*", "-D", "x,y"), Duration.ofSeconds(10),
                events::add);
        assertThat(lines()).containsExactly("$(id) a;b * -D x,y");
        assertThat(status().status()).isEqualTo("success");
        assertThat(status().exitCode()).isZero();
    }

    @Test
    void standardErrorIsMergedCrlfAndAnUnterminatedLastLineKept() {
        launcher.run("n", List.of("/bin/sh", "-c", "printf 'one\\r\\n'; printf 'two\\n' >&2; printf three; exit 4"),
                Duration.ofSeconds(10), events::add);
        assertThat(lines()).containsExactly("one", "two", "three");
        assertThat(status().status()).isEqualTo("failed");
        assertThat(status().exitCode()).isEqualTo(4);
    }

    @Test
    void aVeryLongLineIsSplitInsteadOfGrowingWithoutBound() {
        launcher.run("n", List.of("/bin/sh", "-c", "head -c 150000 /dev/zero | tr '\\0' x"),
                Duration.ofSeconds(10), events::add);
        assertThat(lines()).extracting(String::length)
                .containsExactly(AgentLauncher.MAX_LINE_BYTES, AgentLauncher.MAX_LINE_BYTES,
                        150000 - 2 * AgentLauncher.MAX_LINE_BYTES);
    }

    @Test
    void aMissingProgramIsAnErrorStatusNotAnException() {
        launcher.run("n", List.of("/nonexistent/rudder", "agent", "run"), Duration.ofSeconds(10), events::add);
        assertThat(status().status()).isEqualTo("error");
        assertThat(status().detail()).contains("cannot start the agent");
    }

    @Test
    void theAgentAndWhatItStartedAreStoppedAtTheTimeout() {
        long start = System.nanoTime();
        launcher.run("n", List.of("/bin/sh", "-c", "echo started; sleep 60; echo never"), Duration.ofMillis(500),
                events::add);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
        assertThat(lines()).containsExactly("started");
        assertThat(status().status()).isEqualTo("timeout");
        assertThat(status().timedOut()).isTrue();
    }
}
