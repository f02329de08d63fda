package io.pintle.server.remoterun;

import static org.assertj.core.api.Assertions.assertThat;

import io.pintle.api.dto.RemoteRunEvent;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AgentLauncherTest {
    private final ScheduledExecutorService timers = Executors.newSingleThreadScheduledExecutor();
    private final AgentLauncher launcher = new AgentLauncher(timers);
    private final List<RemoteRunEvent> events = new CopyOnWriteArrayList<>();

    @TempDir
    Path dir;

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

    @Test
    void withoutTheHelperTheStatusSaysHowToStartIt() {
        Path socket = dir.resolve("absent.sock");
        launcher.run("n", socket, RunOrder.of("run", null, null), Duration.ofSeconds(10), events::add);

        assertThat(status().status()).isEqualTo("error");
        assertThat(status().detail()).contains("cannot reach the agent helper at " + socket)
                .contains("systemctl enable --now pintle-agent.socket");
    }

    @Test
    void onlyTheStatusLineWithThisRunsNonceEndsTheOutput() throws Exception {
        CompletableFuture<String> request = helper(line -> {
            String nonce = line.split(" ")[1];
            return "one\n\n" + "0123456789abcdef0123456789abcdef exit 0\n" + nonce + " exit 12x\n" + "\n\n"
                    + nonce + " exit 5\n" + "after\n";
        });
        launcher.run("n", dir.resolve("helper.sock"), RunOrder.of("update", List.of("a", "b"), "trace"),
                Duration.ofSeconds(42), events::add);

        assertThat(request.get()).matches("pintle-agent/1 [0-9a-f]{32} 42 update a,b,trace");
        // An empty line is the agent's unless the status line follows it; another nonce is output too.
        assertThat(lines()).containsExactly("one", "", "0123456789abcdef0123456789abcdef exit 0",
                request.get().split(" ")[1] + " exit 12x", "");
        assertThat(status().status()).isEqualTo("failed");
        assertThat(status().exitCode()).isEqualTo(5);
    }

    @Test
    void aRefusalBecomesTheStatusDetail() throws Exception {
        helper(line -> "pintle-agent: refused: the command must be run, update or inventory\n");
        launcher.run("n", dir.resolve("helper.sock"), RunOrder.of("run", null, null), Duration.ofSeconds(10),
                events::add);

        assertThat(status().status()).isEqualTo("error");
        assertThat(status().detail()).isEqualTo("the agent helper ended without an exit status: the command must be "
                + "run, update or inventory");
    }

    /** A helper on {@code helper.sock} for one connection: reads the request line, writes the answer, closes. */
    private CompletableFuture<String> helper(Function<String, String> answer) throws IOException {
        ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        server.bind(UnixDomainSocketAddress.of(dir.resolve("helper.sock")));
        CompletableFuture<String> request = new CompletableFuture<>();
        Thread thread = new Thread(() -> {
            try (server; SocketChannel channel = server.accept()) {
                String line = new String(Channels.newInputStream(channel).readAllBytes(), StandardCharsets.US_ASCII);
                request.complete(line.strip());
                channel.write(ByteBuffer.wrap(answer.apply(line.strip()).getBytes(StandardCharsets.US_ASCII)));
            } catch (IOException | RuntimeException e) {
                request.completeExceptionally(e);
            }
        });
        thread.setDaemon(true);
        thread.start();
        return request;
    }
}
