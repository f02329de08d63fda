package io.pintle.server.remoterun;

import static org.assertj.core.api.Assertions.assertThat;

import io.pintle.server.config.ConfigLoader;
import io.pintle.server.config.ServerConfig;
import io.pintle.server.nodes.NodeId;
import io.pintle.server.reload.ServerSnapshot;
import io.pintle.server.reload.SnapshotLoader;
import io.pintle.server.testing.Sandbox;
import io.pintle.server.testing.TestThreads;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** "New policy, now", driven by hand: scans and release ticks at chosen instants, real archives on disk. */
class PolicyUpdatesTest {
    private static final long SECOND = TimeUnit.SECONDS.toNanos(1);
    private static final List<String> NODES = IntStream.range(0, 40).mapToObj(i -> "node-" + i).toList();

    @TempDir
    Path dir;

    @RegisterExtension
    final TestThreads threads = new TestThreads();

    private final PullChannels channels = new PullChannels(1000, Duration.ofSeconds(30),
            ServerConfig.RemoteRun.DEFAULTS.reconnectGrace(), threads.scheduler());
    private final Map<String, String> orders = new ConcurrentHashMap<>();
    private final java.util.concurrent.atomic.AtomicReference<ServerSnapshot> live =
            new java.util.concurrent.atomic.AtomicReference<>();

    @AfterEach
    void close() {
        channels.close();
    }

    private PolicyUpdates start(String remoteRun) throws Exception {
        Sandbox sandbox = Sandbox.create(dir);
        for (String node : NODES) {
            sandbox.shareFile(node + "/rules/rudder.tar.bz2", "v1".getBytes(StandardCharsets.US_ASCII));
        }
        ServerSnapshot snapshot = new SnapshotLoader(ConfigLoader.load(sandbox.config("[remote_run]\n" + remoteRun)),
                Clock.systemUTC()).load(1);
        for (String node : NODES) {
            channels.park(new NodeId(node), Duration.ofMinutes(10), new PullChannels.Poll() {
                @Override
                public void order(PullChannels.Order order) {
                    orders.put(node, order.line().substring(33));
                }

                @Override
                public void nothing() {
                    orders.put(node, "nothing");
                }

                @Override
                public void replaced() {
                    orders.put(node, "replaced");
                }
            });
        }
        live.set(snapshot);
        return new PolicyUpdates(channels, live::get, threads.workers(), threads.scheduler());
    }

    /** As Rudder writes an archive: a new file renamed over the old one. */
    private void changeAll() throws Exception {
        for (String node : NODES) {
            Path next = java.nio.file.Files.writeString(dir.resolve("share/" + node + "/rules/rudder.tar.bz2.part"),
                    "v2, longer");
            java.nio.file.Files.move(next, next.resolveSibling("rudder.tar.bz2"),
                    java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        }
    }

    @Test
    void frozenNodesGetNoUpdateOrderUntilReleased() throws Exception {
        PolicyUpdates updates = start("policy_update_rate = 1000\npolicy_update_splay = 0\n");
        updates.scan(0);
        java.util.Set<NodeId> frozen = new java.util.TreeSet<>();
        for (String node : NODES.subList(0, 5)) {
            frozen.add(new NodeId(node));
            io.pintle.server.delivery.TreeCopy.copy(dir.resolve("share/" + node), dir.resolve("frozen/" + node));
        }
        ServerSnapshot unfrozen = live.get();
        live.set(unfrozen.withFreeze(new io.pintle.server.policy.Freeze("f1", java.time.Instant.now(), false, false,
                frozen, dir.resolve("frozen"), null), 2, java.time.Instant.now()));
        updates.scan(0);
        assertThat(updates.pending()).as("a hard-linked copy is the same version").isZero();

        changeAll();
        updates.scan(0);
        updates.release(SECOND);
        assertThat(orders).hasSize(NODES.size() - 5).doesNotContainKeys(NODES.subList(0, 5).toArray(String[]::new));

        live.set(unfrozen);
        updates.scan(SECOND);
        updates.release(2 * SECOND);
        assertThat(orders).as("released: the new version is a change").hasSize(NODES.size());
    }

    @Test
    void changedNodesAreReleasedAtTheConfiguredRateAndOnlyOnce() throws Exception {
        PolicyUpdates updates = start("policy_update_rate = 10\npolicy_update_splay = 0\n");
        long now = 0;
        updates.scan(now);
        for (int tick = 0; tick < 20; tick++) {
            updates.release(now += SECOND / 10);
        }
        assertThat(orders).as("nothing changed since the first look").isEmpty();

        changeAll();
        updates.scan(now);
        assertThat(updates.pending()).isEqualTo(NODES.size());
        // The bucket was full (10 saved up): 10 at once, then 10 a second.
        updates.release(now += SECOND / 10);
        assertThat(orders).hasSize(10);
        for (int tick = 0; tick < 10; tick++) {
            updates.release(now += SECOND / 10);
        }
        assertThat(orders).hasSize(20);
        for (int tick = 0; tick < 30; tick++) {
            updates.release(now += SECOND / 10);
        }
        assertThat(orders).hasSize(NODES.size()).allSatisfy((node, order) -> assertThat(order).isEqualTo("update"));
        assertThat(updates.pending()).isZero();
        assertThat(updates.released()).isEqualTo(NODES.size());

        updates.scan(now);
        assertThat(updates.pending()).as("the same version: no second order").isZero();
    }

    @Test
    void ticksThatRunLateBackToBackReleaseNoMoreThanTheTimeAllows() throws Exception {
        PolicyUpdates updates = start("policy_update_rate = 10\npolicy_update_splay = 0\n");
        updates.scan(0);
        updates.release(0);
        changeAll();
        updates.scan(0);
        // A slow scan held the scheduler for 3 s: 30 ticks now run at once, at the same instant.
        for (int tick = 0; tick < 30; tick++) {
            updates.release(3 * SECOND);
        }
        assertThat(orders).as("one second's worth at most, not a tick's worth per late tick").hasSize(10);
    }

    @Test
    void theSplaySpreadsNodesChangedTogether() throws Exception {
        PolicyUpdates updates = start("policy_update_rate = 1000\npolicy_update_splay = 10\n");
        updates.scan(0);
        changeAll();
        updates.scan(0);

        updates.release(SECOND);
        int afterOneSecond = orders.size();
        updates.release(10 * SECOND);
        // Uniform over 10 s: about 4 of 40 in the first second; all of them by the end.
        assertThat(afterOneSecond).isBetween(0, 16);
        assertThat(orders).hasSize(NODES.size());
    }

    @Test
    void nothingIsWatchedWhenPolicyUpdatesAreOff() throws Exception {
        PolicyUpdates updates = start("policy_updates = false\n");
        updates.scan(0);
        changeAll();
        updates.scan(0);
        updates.release(SECOND);

        assertThat(updates.pending()).isZero();
        assertThat(orders).isEmpty();
    }
}
