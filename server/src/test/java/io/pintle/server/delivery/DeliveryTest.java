package io.pintle.server.delivery;

import static org.assertj.core.api.Assertions.assertThat;

import io.pintle.server.config.ConfigLoader;
import io.pintle.server.nodes.NodeId;
import io.pintle.server.reload.ServerSnapshot;
import io.pintle.server.reload.SnapshotLoader;
import io.pintle.server.testing.Sandbox;
import io.pintle.server.testing.TestThreads;
import io.pintle.server.tls.SelfSigned;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Clock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

class DeliveryTest {
    @RegisterExtension
    final TestThreads threads = new TestThreads();

    @Test
    void theCurveMarksTheGenerationAndRisesAsNodesFetchIt(@TempDir Path dir) throws Exception {
        Sandbox sandbox = Sandbox.create(dir);
        for (String node : new String[] {"node-1", "node-2", "node-3", "node-4"}) {
            sandbox.addNode(node, SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
            archive(sandbox, node, "v1");
        }
        ServerSnapshot snapshot = new SnapshotLoader(ConfigLoader.load(sandbox.config("")), Clock.systemUTC()).load(1);
        Delivery delivery = new Delivery(() -> snapshot, new FetchedTrees(new ObjectStore(), threads.workers()), null,
                node -> node.value().equals("node-4"), Clock.systemUTC(), threads.scheduler());
        for (String node : new String[] {"node-1", "node-2", "node-3"}) {
            fetch(delivery, snapshot, node);
        }
        delivery.tick();
        assertThat(delivery.summary()).isEqualTo(new Delivery.Summary(4, 1, 4, 0, 1));
        assertThat(delivery.curve().generation()).isNull();

        for (String node : new String[] {"node-1", "node-2", "node-3", "node-4"}) {
            archive(sandbox, node, "v2");
        }
        delivery.tick();
        DeliveryCurve.Sample generation = delivery.curve().last();
        assertThat(generation.changed()).isEqualTo(4);
        assertThat(generation.current()).isZero();
        assertThat(delivery.curve().generation()).isEqualTo(generation.time());

        fetch(delivery, snapshot, "node-2");
        fetch(delivery, snapshot, "node-4");
        delivery.tick();
        assertThat(delivery.curve().last().current()).isEqualTo(2);
        assertThat(delivery.curve().last().changed()).isZero();
        assertThat(delivery.summary().currentShare()).isEqualTo(0.5);
        assertThat(delivery.curve().samples()).extracting(DeliveryCurve.Sample::current).containsExactly(3, 0, 2);
    }

    private static void archive(Sandbox sandbox, String node, String version) throws Exception {
        Path file = sandbox.shareFile(node + "/rules/rudder.tar.bz2.part", version.getBytes(StandardCharsets.UTF_8));
        Files.move(file, file.resolveSibling("rudder.tar.bz2"), StandardCopyOption.REPLACE_EXISTING);
    }

    private static void fetch(Delivery delivery, ServerSnapshot snapshot, String node) {
        NodeId id = new NodeId(node);
        delivery.fetched(snapshot, id, PolicyEntry.LINUX_ARCHIVE,
                PolicyEntry.currentEtag(snapshot.nodeRoot(id), PolicyEntry.LINUX_ARCHIVE), 200, "https");
    }
}
