package io.pintle.server.delivery;

import static org.assertj.core.api.Assertions.assertThat;

import io.pintle.server.nodes.NodeId;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class DeliveryLogTest {
    @Test
    void manyThreadsRecordingTheSameNodesLoseNoEventAndLeaveWholeRecords() throws Exception {
        DeliveryLog log = new DeliveryLog();
        int threads = 16;
        int events = 5_000;
        List<NodeId> nodes = List.of(new NodeId("node-a"), new NodeId("node-b"), new NodeId("node-c"));
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CountDownLatch start = new CountDownLatch(1);
        List<Future<?>> done = new ArrayList<>();
        try {
            for (int t = 0; t < threads; t++) {
                int thread = t;
                done.add(pool.submit(() -> {
                    start.await();
                    for (int i = 0; i < events; i++) {
                        NodeId node = nodes.get((i / 3) % nodes.size());
                        Instant time = Instant.ofEpochSecond(i);
                        switch (i % 3) {
                            case 0 -> log.request(node, time, "127.0.0." + thread, "policies", 200);
                            case 1 -> log.fetched(node, PolicyEntry.LINUX_ARCHIVE, "\"" + thread + "-" + i + "\"",
                                    200, time, "https");
                            default -> log.uploaded(node, "reports-" + thread, "r" + i, time, "127.0.0.1", 201);
                        }
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> future : done) {
                future.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(log.changes()).isEqualTo((long) threads * events);
        Map<NodeId, NodeRecord> all = log.copy();
        assertThat(all).containsOnlyKeys(nodes);
        for (NodeRecord record : all.values()) {
            assertThat(record.lastRequest()).isNotNull();
            assertThat(record.policies()).isNotNull();
            // Every thread's upload kind reached every node: no update was lost to a concurrent one.
            assertThat(record.uploads()).hasSize(threads);
        }
    }

    @Test
    void restoreKeepsWhatWasRecordedSinceAndRetainForgetsUnlistedNodes() {
        DeliveryLog log = new DeliveryLog();
        NodeId fresh = new NodeId("node-a");
        log.request(fresh, Instant.ofEpochSecond(20), "10.0.0.1", "policies", 200);
        NodeRecord old = NodeRecord.NONE.withRequest(new NodeRecord.Seen(Instant.ofEpochSecond(10), "10.0.0.2",
                "policies", 200));
        log.restore(Map.of(fresh, old, new NodeId("node-b"), old));
        assertThat(log.get(fresh).lastRequest().address()).isEqualTo("10.0.0.1");
        assertThat(log.get(new NodeId("node-b"))).isEqualTo(old);
        log.retain(node -> node.equals(fresh));
        assertThat(log.copy()).containsOnlyKeys(fresh);
        assertThat(log.get(new NodeId("node-b"))).isSameAs(NodeRecord.NONE);
    }
}
