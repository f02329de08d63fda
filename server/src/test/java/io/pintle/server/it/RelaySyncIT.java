package io.pintle.server.it;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.pintle.api.KeyPins;
import io.pintle.client.PintleClient;
import io.pintle.server.testing.Await;
import io.pintle.server.testing.LogCapture;
import io.pintle.server.testing.NodeKeys;
import io.pintle.server.testing.Sandbox;
import io.pintle.server.testing.TestServer;
import io.pintle.server.tls.SelfSigned;
import java.net.http.HttpResponse;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Comparator;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Root and relay, two Pintle servers over loopback: the relay keeps its nodes' policies, {@code common/} and the
 * shared folder in step with the root over HTTPS (mutual TLS, the root's key pinned), and a node behind the relay
 * gets what the root generated within seconds of the generation; a node accepted under the relay is served as
 * soon as the relay's nodes list, generated on the root, comes down.
 */
class RelaySyncIT {
    private static final Duration PROMPT = Duration.ofSeconds(15);
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void policiesGeneratedOnRootReachANodeBehindTheRelay(@TempDir Path dir) throws Exception {
        Sandbox root = Sandbox.create(dir.resolve("root"));
        Sandbox relay = Sandbox.create(dir.resolve("relay"), "relay-1", "relay");
        // The root knows the relay as one of its nodes (its agent certificate), the relay knows its own nodes.
        root.register("relay-1", relay.server().certificate(), Sandbox.Pinning.BOTH);
        NodeKeys nodeX = relay.addNode("node-x", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        NodeKeys nodeY = relay.addNode("node-y", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        Path upstreamShare = dir.resolve("root/share/relay-1/share");
        generation(upstreamShare.resolve("node-x/rules"), "generation 1");
        generation(upstreamShare.resolve("node-y/rules"), "node-y 1");
        root.shareFile("common/policies-library-linux.tar.bz2", "library 1".getBytes(StandardCharsets.UTF_8));
        Files.createDirectories(dir.resolve("root/shared-folder/tools"));
        Files.writeString(dir.resolve("root/shared-folder/tools/check.sh"), "#!/bin/sh\n");
        // Something of the relay's own, which the sync must leave alone.
        Files.createDirectories(dir.resolve("relay/share/local-only"));

        try (TestServer rootServer = TestServer.start(root);
                TestServer relayServer = TestServer.start(relay, "[upstream]\nurl = \"" + rootServer.uri()
                        + "\"\nkey_hash = \"" + root.serverPin() + "\"\n")) {
            PintleClient agent = relayServer.client(nodeX);
            String policy = "/policies/node-x/rules/rudder.tar.bz2";
            Await.until(PROMPT, () -> body(agent, policy).equals("generation 1"));
            // Node directories are synced one after the other: node-y may come a moment after node-x.
            Await.until(PROMPT, () -> Files.exists(dir.resolve("relay/share/node-y/rules/rudder.tar.bz2")));
            assertThat(dir.resolve("relay/share/node-y/rules/rudder.tar.bz2")).hasContent("node-y 1");
            Await.until(PROMPT, () -> Files.exists(dir.resolve("relay/share/common/policies-library-linux.tar.bz2")));
            Await.until(PROMPT, () -> Files.exists(dir.resolve("relay/shared-folder/tools/check.sh")));

            // A new generation on root, published as Rudder does (rules.new, then renames).
            ListAppender<ILoggingEvent> access = LogCapture.attach("io.pintle.access");
            long generated = System.nanoTime();
            Path rules = upstreamShare.resolve("node-x/rules");
            generation(rules.resolveSibling("rules.new"), "generation 2");
            Path old = Files.move(rules, rules.resolveSibling("rules.old"));
            Files.move(rules.resolveSibling("rules.new"), rules);
            deleteTree(old);
            Await.until(PROMPT, () -> body(agent, policy).equals("generation 2"));
            Duration delay = Duration.ofNanos(System.nanoTime() - generated);
            assertThat(delay).isLessThan(PROMPT);
            LogCapture.detach("io.pintle.access", access);
            // What the relay asked the root: a change list of its share since the version it held, then the archive
            // of the one node it names; no whole manifest of the share, no manifest per node.
            List<String> asked = access.list.stream().map(ILoggingEvent::getFormattedMessage)
                    .filter(line -> line.contains("relay-1 [")).toList();
            assertThat(asked).anyMatch(line -> line.contains("GET /policies/relay-1/share/?view=manifest&since=%22m-"));
            assertThat(asked).anyMatch(line -> line.contains("GET /policies/relay-1/share/?view=archive&only=node-x "));
            assertThat(asked).noneMatch(line -> line.contains("/policies/relay-1/share/node-x/?view=manifest"));
            if (CurlIT.available("curl")) {
                // The agent as Rudder runs it: curl with its certificate, the relay's key pinned.
                CurlIT.Result curl = CurlIT.curl(List.of("-sS", "--tlsv1.3", "--fail", "--pinnedpubkey",
                        relay.serverPin(), "--insecure", "--cert", nodeX.certificatePath().toString(), "--key",
                        nodeX.keyPath().toString()), relayServer.uri() + policy);
                assertThat(curl.exit()).as(curl.stderr()).isZero();
                assertThat(curl.stdout()).isEqualTo("generation 2");
            }

            // A node removed upstream is removed on the relay; what the relay had of its own stays.
            deleteTree(upstreamShare.resolve("node-y"));
            Await.until(PROMPT, () -> !Files.exists(dir.resolve("relay/share/node-y")));
            assertThat(dir.resolve("relay/share/local-only")).isDirectory();
            assertThat(dir.resolve("relay/share/node-x/rules/rudder.tar.bz2")).hasContent("generation 2");

            // The library and the shared folder follow too.
            root.shareFile("common/policies-library-linux.tar.bz2", "library 2".getBytes(StandardCharsets.UTF_8));
            Files.writeString(dir.resolve("root/shared-folder/tools/new.sh"), "#!/bin/sh\necho new\n");
            Await.until(PROMPT, () -> Files.readString(dir.resolve("relay/share/common/policies-library-linux.tar.bz2"))
                    .equals("library 2"));
            Await.until(PROMPT, () -> Files.exists(dir.resolve("relay/shared-folder/tools/new.sh")));

            // A node accepted under the relay: its entry comes down in the relay's own policies (where Rudder
            // generates the relay's nodeslist.json), the relay reloads, and the new node is served.
            NodeKeys nodeZ = relay.unregisteredIdentity("node-z", "node-z");
            generation(upstreamShare.resolve("node-z/rules"), "node-z 1");
            assertThat(body(relayServer.client(nodeZ), "/policies/node-z/rules/rudder.tar.bz2")).isEqualTo("HTTP 403");
            ObjectNode nodesList = (ObjectNode) JSON.readTree(dir.resolve("relay/lib/nodeslist.json").toFile());
            nodesList.putObject("node-z").put("hostname", "node-z.example.org")
                    .put("key-hash", KeyPins.sha256(nodeZ.certificate().getPublicKey()))
                    .put("policy-server", "relay-1");
            Path relayNodesList = dir.resolve("root/share/relay-1/rules/cfengine-community/rudder-service-relayd/1.0/"
                    + "relay/nodeslist.json");
            Files.createDirectories(relayNodesList.getParent());
            // Rudder generates both, and the relay knows node-z only once both have it (NodeRegistry).
            Path relayCertificates = dir.resolve("root/share/relay-1/rules/cfengine-community/"
                    + "rudder-service-apache/1.0/apache/nodescerts.pem");
            Files.createDirectories(relayCertificates.getParent());
            SelfSigned.writeCertificates(relayCertificates, nodeX.certificate(), nodeY.certificate(),
                    nodeZ.certificate());
            Files.write(relayNodesList, JSON.writeValueAsBytes(nodesList));
            Await.until(PROMPT, () -> body(relayServer.client(nodeZ), "/policies/node-z/rules/rudder.tar.bz2")
                    .equals("node-z 1"));

            // The root goes away: the relay keeps serving what it has.
            rootServer.stopAsInProduction();
            Await.quietFor(Duration.ofMillis(1500), () -> assertThat(body(agent, policy)).isEqualTo("generation 2"));
        }
    }

    @Test
    void aNodeThatCannotBeSyncedHoldsUpNoOtherAndIsSyncedOnceItCan(@TempDir Path dir) throws Exception {
        Sandbox root = Sandbox.create(dir.resolve("root"));
        Sandbox relay = Sandbox.create(dir.resolve("relay"), "relay-1", "relay");
        root.register("relay-1", relay.server().certificate(), Sandbox.Pinning.BOTH);
        Path upstreamShare = dir.resolve("root/share/relay-1/share");
        Path relayShare = dir.resolve("relay/share");
        List<String> nodes = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            String node = String.format("node-%02d", i);
            nodes.add(node);
            relay.addNode(node, SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
            generation(upstreamShare.resolve(node + "/rules"), node + " 1");
        }
        try (TestServer rootServer = TestServer.start(root);
                TestServer relayServer = TestServer.start(relay, "[upstream]\nurl = \"" + rootServer.uri()
                        + "\"\nkey_hash = \"" + root.serverPin() + "\"\n")) {
            for (String node : nodes) {
                Await.until(PROMPT, () -> Files.exists(relayShare.resolve(node + "/rules/rudder.tar.bz2")));
            }
            // Attached before the lock is released: the round that syncs node-07 may start before the release.
            ListAppender<ILoggingEvent> access = LogCapture.attach("io.pintle.access");
            try {
                // Another sync holds node-07's directory (its lock), so the relay cannot sync it for now.
                Path lockFile = relayShare.resolve(".node-07.pintle-sync.lock");
                try (FileChannel channel = FileChannel.open(lockFile, StandardOpenOption.CREATE,
                        StandardOpenOption.WRITE); FileLock held = channel.lock()) {
                    for (String node : nodes) {
                        generation(upstreamShare.resolve(node + "/rules.new"), node + " 2");
                        Path rules = upstreamShare.resolve(node + "/rules");
                        Path old = Files.move(rules, rules.resolveSibling("rules.old"));
                        Files.move(rules.resolveSibling("rules.new"), rules);
                        deleteTree(old);
                    }
                    for (String node : nodes) {
                        if (!node.equals("node-07")) {
                            Await.until(PROMPT, () -> Files.readString(relayShare.resolve(node
                                    + "/rules/rudder.tar.bz2")).equals(node + " 2"));
                        }
                    }
                    assertThat(relayShare.resolve("node-07/rules/rudder.tar.bz2")).as("left as it was")
                            .hasContent("node-07 1");
                }
                // Released: the next round (after the relay's retry delay) syncs it...
                Await.until(PROMPT, () -> Files.readString(relayShare.resolve("node-07/rules/rudder.tar.bz2"))
                        .equals("node-07 2"));
            } finally {
                LogCapture.detach("io.pintle.access", access);
            }
            // ...on its own (its manifest: unchanged since the share's version last answered, it is on no change
            // list), the share asked for as a change list, never whole, while node-07 was locked and after.
            List<String> asked = access.list.stream().map(ILoggingEvent::getFormattedMessage)
                    .filter(line -> line.contains("relay-1 [")).toList();
            assertThat(asked).anyMatch(line -> line.contains("GET /policies/relay-1/share/node-07/?view=manifest"));
            assertThat(asked).filteredOn(line -> line.contains("GET /policies/relay-1/share/?view=manifest"))
                    .isNotEmpty().allMatch(line -> line.contains("since=%22m-"));
        }
    }

    /**
     * A share of Rudder-sized nodes (59 entries each) whose manifest and change list are past the 1 MiB a spool
     * holds in the heap, on the root and on the relay: the relay reads them as streams, one node at a time, and
     * syncs every node of both generations, the second from a change list.
     */
    @Test
    void aShareOfRudderSizedNodesWhoseManifestsAreSpooledToFilesIsSyncedWhole(@TempDir Path dir) throws Exception {
        Sandbox root = Sandbox.create(dir.resolve("root"));
        Sandbox relay = Sandbox.create(dir.resolve("relay"), "relay-1", "relay");
        root.register("relay-1", relay.server().certificate(), Sandbox.Pinning.BOTH);
        Path upstreamShare = dir.resolve("root/share/relay-1/share");
        Path relayShare = dir.resolve("relay/share");
        int nodes = 160;
        for (int node = 0; node < nodes; node++) {
            rudderSized(upstreamShare.resolve(String.format("node-%03d/rules", node)), "1");
        }
        ListAppender<ILoggingEvent> access = LogCapture.attach("io.pintle.access");
        try (TestServer rootServer = TestServer.start(root);
                TestServer relayServer = TestServer.start(relay, "[upstream]\nurl = \"" + rootServer.uri()
                        + "\"\nkey_hash = \"" + root.serverPin() + "\"\n")) {
            Await.until(PROMPT.multipliedBy(2), "every node's first generation on the relay",
                    () -> allHave(relayShare, nodes, "node-%03d 1 directive 9\n"));
            // Every node's next generation written, then published at once as Rudder does (rules.new renamed).
            for (int node = 0; node < nodes; node++) {
                rudderSized(upstreamShare.resolve(String.format("node-%03d/rules.new", node)), "2");
            }
            for (int node = 0; node < nodes; node++) {
                Path rules = upstreamShare.resolve(String.format("node-%03d/rules", node));
                Files.move(rules, rules.resolveSibling("rules.old"));
                Files.move(rules.resolveSibling("rules.new"), rules);
            }
            Await.until(PROMPT.multipliedBy(2), "every node's second generation on the relay",
                    () -> allHave(relayShare, nodes, "node-%03d 2 directive 9\n"));
            try (Stream<Path> files = Files.walk(relayShare.resolve("node-042/rules"))) {
                assertThat(files.filter(Files::isRegularFile)).hasSize(36);
            }
        } finally {
            LogCapture.detach("io.pintle.access", access);
        }
        List<String> asked = access.list.stream().map(ILoggingEvent::getFormattedMessage)
                .filter(line -> line.contains("relay-1 [") && line.contains("/policies/relay-1/share/?view=manifest"))
                .toList();
        // The first whole manifest is past 1 MiB (160 nodes of 59 entries); none refused (400 tree-too-large) or
        // failed (500). (503s and 499s: waits ended by a server's stop, this test's or the one before.)
        assertThat(asked).anyMatch(line -> line.contains(" 200 ")
                && Long.parseLong(line.split(" 200 ")[1].split(" ")[0]) > 1 << 20);
        assertThat(asked).noneMatch(line -> line.contains("\" 400 ") || line.contains("\" 500 "));
    }

    /** A node's policies shaped as Rudder's (Rudder's test fixture node-cfe-with-two-directives: 36 files). */
    private static void rudderSized(Path rules, String generation) throws Exception {
        String node = rules.getParent().getFileName().toString();
        Path cfe = rules.resolve("cfengine-community");
        for (int technique = 0; technique < 10; technique++) {
            Path dir = cfe.resolve("technique-" + technique + "/1.0");
            Files.createDirectories(dir);
            Files.writeString(dir.resolve("bundle.cf"), "bundle agent t" + technique + " { } # same each time\n");
            Files.writeString(dir.resolve("directive.cf"), node + " " + generation + " directive " + technique + "\n");
            Files.writeString(dir.resolve("params.json"), "{\"t\": " + technique + "}\n");
        }
        Files.writeString(cfe.resolve("promises.cf"), "bundle common main { } # " + generation + "\n");
        Files.writeString(cfe.resolve("rudder-promises-generated"), generation + "\n");
        Files.writeString(cfe.resolve("rudder.json"), "{}\n");
        Files.writeString(cfe.resolve("rudder-directives.cf"), node + " " + generation + "\n");
        Files.writeString(cfe.resolve("rudder-system-directives.cf"), "system\n");
        Files.writeString(rules.resolve("rudder.tar.bz2"), node + " " + generation + "\n");
    }

    private static boolean allHave(Path share, int nodes, String format) throws Exception {
        for (int node = 0; node < nodes; node++) {
            Path file = share.resolve(String.format("node-%03d/rules/cfengine-community/technique-9/1.0/directive.cf",
                    node));
            if (!Files.exists(file) || !Files.readString(file).equals(String.format(format, node))) {
                return false;
            }
        }
        return true;
    }

    private static void generation(Path rules, String content) throws Exception {
        Files.createDirectories(rules.resolve("cfengine-community"));
        Files.writeString(rules.resolve("rudder.tar.bz2"), content);
        Files.writeString(rules.resolve("cfengine-community/promises.cf"), "bundle agent main { } # " + content + "\n");
    }

    private static String body(PintleClient client, String path) throws Exception {
        HttpResponse<String> response = client.httpClient().send(PolicyServingIT.request(client, path).build(),
                HttpResponse.BodyHandlers.ofString());
        return response.statusCode() == 200 ? response.body() : "HTTP " + response.statusCode();
    }

    private static void deleteTree(Path root) throws Exception {
        try (Stream<Path> walk = Files.walk(root)) {
            for (Path path : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(path);
            }
        }
    }
}
