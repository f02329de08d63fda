package io.pintle.server.remoterun;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pintle.api.dto.RemoteRunEvent;
import io.pintle.server.config.ServerConfig;
import io.pintle.server.nodes.NodeId;
import io.pintle.server.testing.Await;
import io.pintle.server.testing.TestThreads;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class PullChannelsTest {
    private static final NodeId NODE = new NodeId("node-1");
    private static final RunOrder RUN = RunOrder.of("run", List.of("c1", "c2"), null);

    /** {@code [remote_run] reconnect_grace}'s default. */
    private static final Duration GRACE = ServerConfig.RemoteRun.DEFAULTS.reconnectGrace();

    @RegisterExtension
    final TestThreads threads = new TestThreads();

    private final AtomicLong now = new AtomicLong(1_000_000_000_000L);
    private final PullChannels channels = new PullChannels(2, Duration.ofMillis(200), GRACE, now::get,
            threads.scheduler());
    private final BlockingQueue<PullChannels.Order> activity = new LinkedBlockingQueue<>();

    @AfterEach
    void close() {
        channels.close();
    }

    /** Records what answered a poll. */
    private static final class Answers implements PullChannels.Poll {
        final List<String> answers = new CopyOnWriteArrayList<>();
        volatile PullChannels.Order order;

        @Override
        public void order(PullChannels.Order given) {
            order = given;
            answers.add(given.line());
        }

        @Override
        public void nothing() {
            answers.add("nothing");
        }

        @Override
        public void replaced() {
            answers.add("replaced");
        }
    }

    @Test
    void aNodeThatNeverPolledIsNotConnectedAndGetsNoOrder() {
        assertThat(channels.connected(NODE)).isFalse();
        assertThat(channels.dispatch(NODE, RUN, Duration.ofSeconds(10), activity::offer)).isNull();
        assertThat(channels.awaited()).isZero();
    }

    @Test
    void aParkedPollIsAnsweredWithTheOrderAtOnce() {
        Answers poll = new Answers();
        assertThat(channels.park(NODE, Duration.ofSeconds(60), poll)).isNotNull();
        assertThat(channels.parked()).isEqualTo(1);

        PullChannels.Order order = channels.dispatch(NODE, RUN, Duration.ofSeconds(10), activity::offer);

        assertThat(poll.answers).containsExactly(order.id() + " run c1,c2");
        assertThat(order.id()).matches("[0-9a-f]{32}");
        assertThat(channels.parked()).isZero();
        assertThat(channels.connected(NODE)).as("running its order").isTrue();
        assertThat(channels.awaited(order.id(), NODE)).isSameAs(order);
        assertThat(channels.awaited(order.id(), new NodeId("node-2"))).as("another node's").isNull();
    }

    @Test
    void theReportIsFramedByTheOrderIdAndEndsTheOrder() throws Exception {
        channels.park(NODE, Duration.ofSeconds(60), new Answers());
        PullChannels.Order order = channels.dispatch(NODE, RUN, Duration.ofSeconds(10), activity::offer);
        PullChannels.Reader reader = order.reader();
        String body = "first\r\n\nforeign exit 0\n" + "0".repeat(32) + " exit 1\n\n" + order.id() + " exit 3\nlate\n";
        // In small chunks, as a network delivers them.
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        for (int i = 0; i < bytes.length; i += 5) {
            reader.feed(ByteBuffer.wrap(bytes, i, Math.min(5, bytes.length - i)));
        }
        Integer exit = reader.finish();
        channels.finish(order, RemoteRunEvent.FAILED, exit, false, "the agent exited with code " + exit);

        assertThat(exit).isEqualTo(3);
        assertThat(activity.poll(1, TimeUnit.SECONDS)).isSameAs(order);
        List<RemoteRunEvent> events = new ArrayList<>();
        order.drain(events::add);
        assertThat(events).extracting(RemoteRunEvent::line)
                .containsExactly("first", "", "foreign exit 0", "0".repeat(32) + " exit 1");
        assertThat(order.ended().status()).isEqualTo("failed");
        assertThat(order.ended().exitCode()).isEqualTo(3);
        assertThat(channels.awaited(order.id(), NODE)).as("reported once").isNull();
        assertThat(channels.awaited()).isZero();
    }

    @Test
    void betweenTwoPollsAnOrderWaitsForTheNextOneWithinTheGrace() throws Exception {
        Answers first = new Answers();
        channels.park(NODE, Duration.ofMillis(1), first);
        Await.asserted(Duration.ofSeconds(10), () -> assertThat(first.answers).containsExactly("nothing"));
        now.addAndGet(Duration.ofSeconds(5).toNanos());

        PullChannels.Order order = channels.dispatch(NODE, RUN, Duration.ofSeconds(10), activity::offer);
        assertThat(order).as("seen 5 s ago: still connected").isNotNull();
        assertThat(order.ended()).isNull();
        Answers next = new Answers();
        assertThat(channels.park(NODE, Duration.ofSeconds(60), next)).as("answered at once").isNull();
        assertThat(next.answers).containsExactly(order.line());
    }

    @Test
    void anOrderForABusyNodeWaitsForItsReportThenForItsNextPoll() throws Exception {
        channels.park(NODE, Duration.ofSeconds(60), new Answers());
        PullChannels.Order first = channels.dispatch(NODE, RUN, Duration.ofMinutes(10), activity::offer);
        // The node runs its agent for a long while: longer than the reconnect grace.
        now.addAndGet(Duration.ofMinutes(2).toNanos());
        PullChannels.Order second = channels.dispatch(NODE, RUN, Duration.ofMinutes(10), activity::offer);
        assertThat(second).as("running an order: connected").isNotNull();
        Await.quietFor(Duration.ofMillis(200),
                () -> assertThat(second.ended()).as("queued behind the first, with no grace running").isNull());

        assertThat(first.claimReport()).isTrue();
        assertThat(first.claimReport()).as("one report per order").isFalse();
        channels.finish(first, RemoteRunEvent.SUCCESS, 0, false, null);
        Answers next = new Answers();
        assertThat(channels.park(NODE, Duration.ofSeconds(60), next)).isNull();
        assertThat(next.answers).containsExactly(second.line());
    }

    @Test
    void pastFourQueuedOrdersTheNextEndsAtOnce() {
        channels.park(NODE, Duration.ofSeconds(60), new Answers());
        channels.dispatch(NODE, RUN, Duration.ofMinutes(10), activity::offer);
        List<PullChannels.Order> queued = new ArrayList<>();
        for (int i = 0; i < PullChannels.MAX_QUEUED; i++) {
            queued.add(channels.dispatch(NODE, RUN, Duration.ofMinutes(10), activity::offer));
        }
        PullChannels.Order fifth = channels.dispatch(NODE, RUN, Duration.ofMinutes(10), activity::offer);

        assertThat(queued).allSatisfy(order -> assertThat(order.ended()).isNull());
        assertThat(fifth.ended().status()).isEqualTo("error");
        assertThat(fifth.ended().detail()).contains("orders already wait");
    }

    @Test
    void outputPastTheBufferIsDroppedAndSaidSo() {
        channels.park(NODE, Duration.ofSeconds(60), new Answers());
        PullChannels.Order order = channels.dispatch(NODE, RUN, Duration.ofMinutes(10), activity::offer);
        PullChannels.Reader reader = order.reader();
        // Empty lines cost their overhead: 4 MiB of them is far fewer than 4 Mi lines.
        byte[] newlines = new byte[1 << 20];
        java.util.Arrays.fill(newlines, (byte) '\n');
        for (int i = 0; i < 8; i++) {
            reader.feed(ByteBuffer.wrap(newlines));
        }
        List<RemoteRunEvent> events = new ArrayList<>();
        order.drain(events::add);

        assertThat(order.dropped()).isTrue();
        assertThat((long) events.size()).isLessThanOrEqualTo(PullChannels.MAX_BUFFERED_BYTES
                / PullChannels.LINE_OVERHEAD);
    }

    @Test
    void aNodeGoneLongerThanTheGraceIsNotConnected() {
        Answers poll = new Answers();
        PullChannels.Parked parked = channels.park(NODE, Duration.ofSeconds(60), poll);
        parked.cancel();
        now.addAndGet(GRACE.toNanos() + 1);

        assertThat(channels.connected(NODE)).isFalse();
        assertThat(channels.dispatch(NODE, RUN, Duration.ofSeconds(10), activity::offer)).isNull();
        assertThat(poll.answers).as("a cancelled poll is not answered").isEmpty();
    }

    @Test
    void aNewerPollOfTheSameNodeReplacesTheOlder() {
        Answers older = new Answers();
        Answers newer = new Answers();
        PullChannels.Parked first = channels.park(NODE, Duration.ofSeconds(60), older);
        channels.park(NODE, Duration.ofSeconds(60), newer);

        assertThat(older.answers).containsExactly("replaced");
        assertThat(first.cancel()).as("answered already: its request must not be failed too").isFalse();
        assertThat(newer.answers).isEmpty();
        assertThat(channels.parked()).isEqualTo(1);
    }

    @Test
    void pastMaxParkedANewNodesPollIsRefused() {
        channels.park(NODE, Duration.ofSeconds(60), new Answers());
        channels.park(new NodeId("node-2"), Duration.ofSeconds(60), new Answers());

        assertThatThrownBy(() -> channels.park(new NodeId("node-3"), Duration.ofSeconds(60), new Answers()))
                .isInstanceOf(PullChannels.Full.class).hasMessageContaining("max_channels");
        assertThat(channels.parked()).isEqualTo(2);
    }

    @Test
    void anOrderNotReportedByItsDeadlineEndsAsATimeout() throws Exception {
        channels.park(NODE, Duration.ofSeconds(60), new Answers());
        PullChannels.Order order = channels.dispatch(NODE, RUN, Duration.ofMillis(100), activity::offer);

        assertThat(activity.poll(10, TimeUnit.SECONDS)).isSameAs(order);
        assertThat(order.ended().status()).isEqualTo("timeout");
        assertThat(order.ended().timedOut()).isTrue();
        assertThat(order.ended().detail()).contains("did not report");
        assertThat(channels.awaited(order.id(), NODE)).isNull();
    }

    @Test
    void closingAnswersParkedPollsAndEndsAwaitedOrders() {
        Answers parked = new Answers();
        channels.park(new NodeId("node-2"), Duration.ofSeconds(60), parked);
        channels.park(NODE, Duration.ofSeconds(60), new Answers());
        PullChannels.Order order = channels.dispatch(NODE, RUN, Duration.ofSeconds(60), activity::offer);

        channels.close();

        assertThat(parked.answers).containsExactly("nothing");
        assertThat(order.ended().status()).isEqualTo("error");
        assertThat(channels.parked()).isZero();
    }
}
