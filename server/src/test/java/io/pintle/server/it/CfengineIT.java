package io.pintle.server.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.pintle.server.cfengine.CfengineKey;
import io.pintle.server.testing.CfAgent;
import io.pintle.server.testing.CfProtocol;
import io.pintle.server.testing.LogCapture;
import io.pintle.server.testing.Sandbox;
import io.pintle.server.testing.TestServer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.interfaces.RSAPublicKey;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real {@code cf-agent} 3.21 (Debian's cfengine3) against Pintle's CFEngine listener, with the {@code copy_from}
 * body of Rudder's update policy ({@code remote}: digest comparison, verify, purge, protocol_version 2): a node gets
 * its own tree byte for byte, again after a change, and nothing of another node's; a key no node has gets the
 * shared trees only.
 */
class CfengineIT {
    private static final String NODE = "node-cf1";
    private static final String OTHER = "node-cf2";

    @TempDir
    static Path dir;

    static Sandbox box;
    static TestServer server;
    static CfAgent node;
    static CfAgent other;
    static CfAgent stranger;
    static CfAgent self;
    static io.pintle.server.testing.FakeAgent rudder;

    @BeforeAll
    static void start() throws Exception {
        CfAgent.assumeInstalled();
        box = Sandbox.create(dir.resolve("root"));
        node = CfAgent.create(dir.resolve("agent-" + NODE));
        other = CfAgent.create(dir.resolve("agent-" + OTHER));
        stranger = CfAgent.create(dir.resolve("agent-stranger"));
        self = CfAgent.create(dir.resolve("agent-self"));
        self.useKey(box.server().keyPair());
        rudder = io.pintle.server.testing.FakeAgent.install(dir.resolve("rudder"), "/fake-agent.sh");
        box.register(NODE, node.certificate(NODE), Sandbox.Pinning.NODES_LIST);
        box.register(OTHER, other.certificate(OTHER), Sandbox.Pinning.NODES_LIST);
        tree(NODE, 42);
        tree(OTHER, 43);
        Files.createDirectories(dir.resolve("root/masterfiles"));
        Files.writeString(dir.resolve("root/masterfiles/promises.cf"), "# initial policies\n");
        Files.createDirectories(dir.resolve("root/ncf/local/50_techniques/secret"));
        Files.writeString(dir.resolve("root/ncf/local/50_techniques/secret/technique.cf"), "# not for agents\n");
        Files.writeString(dir.resolve("root/ncf/local/ncf_hash_file"), "abc\n");
        server = TestServer.start(box, String.join("\n",
                "[cfengine]",
                "listen = \"127.0.0.1:0\"",
                "masterfiles = \"masterfiles\"",
                "ncf_common = \"ncf/common\"",
                "ncf_local = \"ncf/local\"",
                "[remote_run]",
                "run = [" + rudder.toml() + ", \"agent\", \"run\", \"-uR\"]"));
        RSAPublicKey serverKey = (RSAPublicKey) box.server().keyPair().getPublic();
        for (CfAgent agent : new CfAgent[] {node, other, stranger, self}) {
            agent.trust("127.0.0.1", serverKey);
        }
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    private static void tree(String id, long seed) throws IOException {
        String rules = id + "/rules/cfengine-community/";
        box.shareFile(rules + "promises.cf", ("# promises of " + id + "\n").getBytes(StandardCharsets.UTF_8));
        box.shareFile(rules + "rudder-promises-generated", "1780492118337\n".getBytes(StandardCharsets.UTF_8));
        box.shareFile(rules + "common/1.0/update.cf", "bundle agent update {}\n".getBytes(StandardCharsets.UTF_8));
        box.randomShareFile(rules + "common/1.0/big.dat", 300_000, seed);
        box.randomShareFile(rules + "rudder-directives/odd.bin", 2048 * 3, seed + 1);
        box.shareFile(rules + "empty.cf", new byte[0]);
    }

    /** Rudder's {@code body copy_from remote} (update.st): digest, verify, purge, protocol_version 2. */
    private String remoteBody() {
        return String.join("\n",
                "body copy_from remote(server, path) {",
                "  servers => { \"$(server)\" };",
                "  source => \"$(path)\";",
                "  compare => \"digest\";",
                "  preserve => \"false\";",
                "  verify => \"true\";",
                "  purge => \"true\";",
                "  copy_backup => \"false\";",
                "  portnumber => \"" + server.server().cfenginePort() + "\";",
                "  protocol_version => \"2\";",
                "}");
    }

    private String copyPolicy(String source, Path destination) {
        return String.join("\n",
                "body common control { bundlesequence => { \"copy\" }; }",
                remoteBody(),
                "body depth_search recurse(d) { depth => \"$(d)\"; }",
                "bundle agent copy {",
                "  files:",
                "    \"" + destination + "/.\"",
                "      create => \"true\",",
                "      copy_from => remote(\"127.0.0.1\", \"" + source + "\"),",
                "      depth_search => recurse(\"inf\");",
                "}",
                "");
    }

    private static Map<String, String> contents(Path root) throws IOException {
        Map<String, String> files = new TreeMap<>();
        if (!Files.exists(root)) {
            return files;
        }
        try (Stream<Path> walk = Files.walk(root)) {
            for (Path path : walk.filter(Files::isRegularFile).toList()) {
                files.put(root.relativize(path).toString(),
                        java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-256")
                                .digest(Files.readAllBytes(path))));
            }
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        return files;
    }

    private String rudderUpdatePolicy(Path inputs, Path ncfLocal) {
        String root = box.share().resolve(NODE + "/rules/cfengine-community").toString();
        return String.join("\n",
                "body common control { bundlesequence => { \"update\" }; }",
                remoteBody(),
                "body depth_search recurse(d) { depth => \"$(d)\"; }",
                "body depth_search recurse_ignore(d, list) { depth => \"$(d)\"; exclude_dirs => { @(list) }; }",
                "body file_select exclude(name) { leaf_name => { \"$(name)\" }; file_result => \"!leaf_name\"; }",
                "body action immediate { ifelapsed => \"0\"; }",
                "bundle agent update {",
                "  vars:",
                "    \"excluded\" slist => { \"50_techniques\" };",
                "  files:",
                "    \"" + inputs + "/rudder-promises-generated.tmp\"",
                "      copy_from => remote(\"127.0.0.1\", \"" + root + "/rudder-promises-generated\"),",
                "      action => immediate;",
                "    \"" + inputs + "/.\"",
                "      create => \"true\",",
                "      copy_from => remote(\"127.0.0.1\", \"" + root + "\"),",
                "      depth_search => recurse(\"inf\"),",
                "      file_select => exclude(\"rudder-promises-generated.tmp\"),",
                "      action => immediate;",
                "    \"" + ncfLocal + "/.\"",
                "      create => \"true\",",
                "      copy_from => remote(\"127.0.0.1\", \"" + dir.resolve("root/ncf/local") + "\"),",
                "      depth_search => recurse_ignore(\"inf\", @(excluded)),",
                "      action => immediate;",
                "}",
                "");
    }

    @Test
    void aNodeCopiesItsOwnTreeByteForByteAndAgainAfterAChange() throws Exception {
        Path source = box.share().resolve(NODE + "/rules/cfengine-community");
        Path destination = node.workdir().resolve("inputs-copy");
        CfAgent.Result run = node.agent("copy.cf", copyPolicy(source.toString(), destination), "-I");
        assertThat(contents(destination)).as(run.output()).isEqualTo(contents(source)).hasSize(6);

        // A new generation: one file changed (same size, so only the digest sees it), one added, one removed.
        byte[] promises = Files.readAllBytes(source.resolve("promises.cf"));
        promises[2] = (byte) (promises[2] ^ 1);
        Files.write(source.resolve("promises.cf"), promises);
        box.shareFile(NODE + "/rules/cfengine-community/new/added.cf", "# added\n".getBytes(StandardCharsets.UTF_8));
        Files.delete(source.resolve("empty.cf"));
        CfAgent.Result again = node.agent("copy.cf", copyPolicy(source.toString(), destination), "-I");
        assertThat(contents(destination)).as(again.output()).isEqualTo(contents(source)).hasSize(6)
                .containsKey("new/added.cf").doesNotContainKey("empty.cf");
        assertThat(again.output()).contains("promises.cf").doesNotContain("big.dat");
    }

    @Test
    void aFrozenNodeCopiesItsFrozenTreeAndItsFetchIsRecorded() throws Exception {
        Path source = box.share().resolve(OTHER + "/rules/cfengine-community");
        Map<String, String> frozen = contents(source);
        CfAgent.Result run = other.agent("copy.cf", copyPolicy(source.toString(),
                other.workdir().resolve("before-freeze")), "-I");
        assertThat(contents(other.workdir().resolve("before-freeze"))).as(run.output()).isEqualTo(frozen);
        // Its stamp was sent whole: the delivery state says it holds what is served, through this door.
        io.pintle.server.testing.Await.until(java.time.Duration.ofSeconds(20), () -> "cfengine".equals(
                server.admin("GET", "/v1/nodes/" + OTHER).body().path("policies").path("door").asText()));
        com.fasterxml.jackson.databind.JsonNode state = server.admin("GET", "/v1/nodes/" + OTHER).body();
        assertThat(state.path("behind").asBoolean()).isFalse();
        assertThat(state.path("policies").path("path").asText())
                .isEqualTo("rules/cfengine-community/rudder-promises-generated");

        assertThat(server.admin("POST", "/v1/freeze", "{\"nodes\": [\"" + OTHER + "\"]}").status()).isEqualTo(200);
        try {
            // A new generation, written as Rudder writes files (a new file renamed over the old one).
            Path next = Files.writeString(source.resolveSibling("promises.cf.new"), "# generation 2\n");
            Files.move(next, source.resolve("promises.cf"), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            Path stamp = Files.writeString(source.resolveSibling("stamp.new"), "1780492999999\n");
            Files.move(stamp, source.resolve("rudder-promises-generated"),
                    java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            assertThat(contents(source)).isNotEqualTo(frozen);
            Path copy = other.workdir().resolve("while-frozen");
            CfAgent.Result held = other.agent("copy.cf", copyPolicy(source.toString(), copy), "-I");
            assertThat(contents(copy)).as(held.output()).isEqualTo(frozen);
        } finally {
            assertThat(server.admin("DELETE", "/v1/freeze").status()).isEqualTo(200);
        }
        Path copy = other.workdir().resolve("after-release");
        CfAgent.Result released = other.agent("copy.cf", copyPolicy(source.toString(), copy), "-I");
        assertThat(contents(copy)).as(released.output()).isEqualTo(contents(source))
                .containsEntry("promises.cf", contents(source).get("promises.cf"));
    }

    @Test
    void rudderUpdatePolicyGetsTheNodesPoliciesAndNcfWithout50Techniques() throws Exception {
        Path inputs = node.workdir().resolve("update-inputs");
        Path ncfLocal = node.workdir().resolve("ncf-local");
        // As on a bootstrapped agent, whose inputs/ exists before its first update.
        Files.createDirectories(inputs);
        CfAgent.Result first = node.agent("update.cf", rudderUpdatePolicy(inputs, ncfLocal), "-I");
        Path source = box.share().resolve(NODE + "/rules/cfengine-community");
        // The flag was fetched first (the agent's own purge may then take its .tmp copy away again).
        assertThat(first.output()).contains("rudder-promises-generated.tmp");
        Map<String, String> copied = new TreeMap<>(contents(inputs));
        copied.remove("rudder-promises-generated.tmp");
        assertThat(copied).as(first.output()).isEqualTo(contents(source));
        assertThat(contents(ncfLocal)).as(first.output()).containsOnlyKeys("ncf_hash_file");
        assertThat(first.output()).doesNotContain("error:");

        // Nothing changed: the second run copies nothing but the flag (which this policy's purge took away).
        CfAgent.Result second = node.agent("update.cf", rudderUpdatePolicy(inputs, ncfLocal), "-I");
        assertThat(second.output()).doesNotContain("error:");
        assertThat(second.output().lines().filter(line -> line.contains("Copied file")))
                .allSatisfy(line -> assertThat(line).contains("rudder-promises-generated.tmp.cfnew"));
    }

    @Test
    void anotherNodesTreeIsRefused() throws Exception {
        Path source = box.share().resolve(OTHER + "/rules/cfengine-community");
        Path destination = node.workdir().resolve("stolen");
        try (LogTail log = LogTail.access()) {
            CfAgent.Result run = node.agent("steal.cf", copyPolicy(source.toString(), destination), "-I");
            assertThat(contents(destination)).as(run.output()).isEmpty();
            assertThat(log.lines()).anySatisfy(line -> assertThat(line)
                    .contains("\"STAT " + source + " CFEngine\" 403").contains("denied:key-mismatch")
                    .contains("proto=cfengine"));
        }
    }

    @Test
    void anUnknownKeyGetsTheSharedTreesButNoNodesTree() throws Exception {
        Path masterfiles = stranger.workdir().resolve("masterfiles-copy");
        CfAgent.Result bootstrap = stranger.agent("bootstrap.cf",
                copyPolicy(dir.resolve("root/masterfiles").toString(), masterfiles), "-I");
        assertThat(contents(masterfiles)).as(bootstrap.output()).containsOnlyKeys("promises.cf");

        Path policies = stranger.workdir().resolve("policies");
        CfAgent.Result steal = stranger.agent("steal.cf",
                copyPolicy(box.share().resolve(NODE + "/rules/cfengine-community").toString(), policies), "-I");
        assertThat(contents(policies)).as(steal.output()).isEmpty();

        // ncf's 50_techniques is denied to everyone, even when asked for by a full copy of ncf local.
        Path ncf = stranger.workdir().resolve("ncf");
        CfAgent.Result all = stranger.agent("ncf.cf", copyPolicy(dir.resolve("root/ncf/local").toString(), ncf), "-I");
        assertThat(contents(ncf)).as(all.output()).containsOnlyKeys("ncf_hash_file");
    }

    @Test
    void cfKeysDigestAndTheServersKey() throws Exception {
        assertThat(CfengineKey.md5((RSAPublicKey) node.keyPair().getPublic())).isEqualTo(node.digest());
        try (CfProtocol client = CfProtocol.connect(server.server().cfenginePort(), node.keyPair())) {
            assertThat(client.hello()).startsWith("CFE_v3 ");
            assertThat(client.serverCertificate().getPublicKey()).isEqualTo(box.server().keyPair().getPublic());
            assertThat(client.identify(2)).isEqualTo("OK WELCOME USERNAME=root");
            client.send("VERSION");
            assertThat(client.receiveText()).startsWith("OK: ");
        }
    }

    @Test
    void cfNetStatsListsAndGetsOneFile() throws Exception {
        String host = "127.0.0.1:" + server.server().cfenginePort();
        Path file = box.share().resolve(NODE + "/rules/cfengine-community/common/1.0/big.dat");
        CfAgent.Result stat = node.net("-H", host, "stat", file.toString());
        assertThat(stat.output()).as("cf-net stat").contains("is a regular file");
        CfAgent.Result list = node.net("-H", host, "opendir", file.getParent().toString());
        assertThat(list.output()).as("cf-net opendir").contains("big.dat").contains("update.cf");
        Path out = node.workdir().resolve("net-get.dat");
        CfAgent.Result get = node.net("-H", host, "get", "-o", out.toString(), file.toString());
        assertThat(out).as(get.output()).hasSameBinaryContentAs(file);
        CfAgent.Result refused = other.net("-H", host, "stat", file.toString());
        assertThat(refused.output()).as("another node's cf-net stat").doesNotContain("is a regular file");
    }

    @Test
    void aReloadAppliesToTheNextRequestWhileAConnectionIsOpen() throws Exception {
        String added = "node-cf3";
        try (CfProtocol held = CfProtocol.connect(server.server().cfenginePort(), node.keyPair())) {
            assertThat(held.identify(3)).startsWith("OK WELCOME");
            tree(added, 44);
            Path source = box.share().resolve(added + "/rules/cfengine-community");
            Path destination = stranger.workdir().resolve("own-policies");
            CfAgent.Result before = stranger.agent("own.cf", copyPolicy(source.toString(), destination), "-I");
            assertThat(contents(destination)).as(before.output()).isEmpty();

            box.register(added, stranger.certificate(added), Sandbox.Pinning.NODES_LIST);
            // The server's input watch may reload the new nodes list first (then this reload finds nothing new:
            // UNCHANGED); reloads run one after the other, so once this one returns the node is known either way.
            assertThat(server.server().reloader().reload("test").get().result()).isIn(
                    io.pintle.server.reload.ReloadOutcome.Result.APPLIED,
                    io.pintle.server.reload.ReloadOutcome.Result.UNCHANGED);
            CfAgent.Result after = stranger.agent("own.cf", copyPolicy(source.toString(), destination), "-I");
            assertThat(contents(destination)).as(after.output()).isEqualTo(contents(source));

            // The connection opened before the reload is still served, on the new snapshot.
            held.send("VERSION");
            assertThat(held.receiveText()).startsWith("OK: ");
        } finally {
            box.remove(added);
            server.server().reloader().reload("test").get();
        }
    }

    @Test
    void aRemovedNodeIsRefusedOnItsNextRequest() throws Exception {
        Path file = box.share().resolve(OTHER + "/rules/cfengine-community/promises.cf");
        try (CfProtocol held = CfProtocol.connect(server.server().cfenginePort(), other.keyPair())) {
            assertThat(held.identify(2)).startsWith("OK WELCOME");
            held.send("SYNCH " + java.time.Instant.now().getEpochSecond() + " STAT " + file);
            assertThat(held.receiveText()).startsWith("OK: 0 ");
            assertThat(held.receiveText()).isEqualTo("OK:");
            box.remove(OTHER);
            server.server().reloader().reload("test").get();
            held.send("SYNCH " + java.time.Instant.now().getEpochSecond() + " STAT " + file);
            assertThat(held.receiveText()).isEqualTo("BAD: Unspecified server refusal (see verbose server output)");
        } finally {
            box.register(OTHER, other.certificate(OTHER), Sandbox.Pinning.NODES_LIST);
            server.server().reloader().reload("test").get();
        }
    }

    @Test
    void requestsOutsideTheProtocolOrTheTreesAreRefused() throws Exception {
        Path own = box.share().resolve(NODE + "/rules/cfengine-community");
        Files.createSymbolicLink(own.resolve("escape"), Path.of("/etc"));
        long now = java.time.Instant.now().getEpochSecond();
        try (CfProtocol client = CfProtocol.connect(server.server().cfenginePort(), node.keyPair())) {
            assertThat(client.identify(2)).startsWith("OK WELCOME");
            // A link that leaves the tree, a '..', a relative path: the refusal cf-serverd sends for all.
            for (String path : new String[] {own + "/escape/hostname", own + "/../../" + OTHER + "/rules",
                    "etc/passwd", "/etc/passwd"}) {
                client.send("SYNCH " + now + " STAT " + path);
                assertThat(client.receiveText()).as(path).startsWith("BAD: Unspecified server refusal");
            }
            // An agent whose clock is two hours off (denybadclocks).
            client.send("SYNCH " + (now - 7200) + " STAT " + own + "/promises.cf");
            assertThat(client.receiveText()).startsWith("BAD: Clocks are too far unsynchronized");
            // A digest comparison: the same file, then another digest.
            byte[] md5 = java.security.MessageDigest.getInstance("MD5").digest(Files.readAllBytes(own.resolve("promises.cf")));
            client.send(CfProtocol.md5Request(own + "/promises.cf", md5));
            assertThat(client.receiveText()).isEqualTo("CFD_FALSE");
            md5[0] ^= 1;
            client.send(CfProtocol.md5Request(own + "/promises.cf", md5));
            assertThat(client.receiveText()).isEqualTo("CFD_TRUE");
            // EXEC is granted to nobody here: refused, terminated, closed.
            client.send("EXEC -D foo");
            assertThat(client.receiveText()).startsWith("BAD: Unspecified server refusal");
            assertThat(client.receiveText()).isEqualTo("---cfXen/gine/cfXen/gine---");
            assertThat(client.closedByServer()).isTrue();
        } finally {
            Files.delete(own.resolve("escape"));
        }
        try (CfProtocol client = CfProtocol.connect(server.server().cfenginePort(), node.keyPair())) {
            assertThat(client.identify(3)).startsWith("OK WELCOME");
            client.send("SGET 2048 /etc/passwd");
            assertThat(client.receiveText()).isEqualTo("BAD: Request denied");
            assertThat(client.closedByServer()).isTrue();
        }
        try (CfProtocol client = CfProtocol.connect(server.server().cfenginePort(), node.keyPair())) {
            assertThat(client.identify(1)).as("the classic protocol, asked for inside TLS").isNull();
        }
    }

    @Test
    void theClassicProtocolIsRefusedWithALogLine() throws Exception {
        String series = "pintle_cfengine_connections_refused_total{reason=\"classic-protocol\"}";
        double before = server.metric(series) != null ? server.metric(series) : 0;
        try (LogTail log = LogTail.of(io.pintle.server.cfengine.CfengineListener.class.getName());
                java.net.Socket socket = new java.net.Socket("127.0.0.1", server.server().cfenginePort())) {
            socket.setSoTimeout(10_000);
            // cf-agent's classic CAUTH transaction: a plain-text header, then the command.
            byte[] header = java.util.Arrays.copyOf("t 40".getBytes(StandardCharsets.US_ASCII), 8);
            socket.getOutputStream().write(header);
            socket.getOutputStream().write("CAUTH 127.0.0.1 localhost root 0".getBytes(StandardCharsets.US_ASCII));
            assertThat(socket.getInputStream().read()).isEqualTo(-1);
            io.pintle.server.testing.Await.until(java.time.Duration.ofSeconds(10), "the refusal's log line",
                    () -> log.lines().stream().anyMatch(line -> line.contains("not TLS")));
        }
        assertThat(server.metric(series)).isEqualTo(before + 1);
    }

    @Test
    void explainDecidesAsTheListenerAnswers() throws Exception {
        Path config = dir.resolve("root/pintle.toml");
        Path own = box.share().resolve(NODE + "/rules/cfengine-community/promises.cf");
        Path others = box.share().resolve(OTHER + "/rules/cfengine-community/promises.cf");
        String nodeKey = node.workdir().resolve("ppkeys/localhost.pub").toString();
        String strangerKey = stranger.workdir().resolve("ppkeys/localhost.pub").toString();
        io.pintle.server.testing.Cli.Run allowed = io.pintle.server.testing.Cli.pintle("explain", "--config",
                config.toString(), "--cfengine-key", nodeKey, "--path", own.toString(), "--method", "STAT");
        assertThat(allowed.exitCode()).as(allowed.out() + allowed.err()).isZero();
        assertThat(allowed.out()).contains(node.digest()).contains("node " + NODE).contains("admit_keys");
        io.pintle.server.testing.Cli.Run refused = io.pintle.server.testing.Cli.pintle("explain", "--config",
                config.toString(), "--cfengine-key", nodeKey, "--path", others.toString());
        assertThat(refused.exitCode()).as(refused.out()).isEqualTo(io.pintle.server.cli.ExitCodes.EXPLAIN_REFUSED);
        assertThat(refused.out()).contains("key-mismatch");
        io.pintle.server.testing.Cli.Run bootstrap = io.pintle.server.testing.Cli.pintle("explain", "--config",
                config.toString(), "--cfengine-key", strangerKey, "--path",
                dir.resolve("root/masterfiles/promises.cf").toString());
        assertThat(bootstrap.exitCode()).as(bootstrap.out()).isZero();
        assertThat(bootstrap.out()).contains("unknown-key").contains("trustkeysfrom");
        io.pintle.server.testing.Cli.Run outside = io.pintle.server.testing.Cli.pintle("explain", "--config",
                config.toString(), "--cfengine-key", nodeKey, "--path", own.toString(), "--address", "192.0.2.9");
        assertThat(outside.out()).contains("network-not-allowed");
    }

    @Test
    void cfRunagentRunsTheRootsOwnAgentWithRuddersRolesOnly() throws Exception {
        rudder.reset();
        String host = "127.0.0.1:" + server.server().cfenginePort();
        CfAgent.Result run = self.runagent("-H", host, "-D", "info");
        assertThat(run.output()).contains("fake agent: started agent run -uR -D info").contains("(exit code: 0)");
        assertThat(rudder.runs()).containsExactly(java.util.List.of("agent", "run", "-uR", "-D", "info"));

        CfAgent.Result role = self.runagent("-H", host, "-D", "evil_class");
        assertThat(role.output()).contains("EXEC denied role activation");
        CfAgent.Result notPolicyServer = node.runagent("-H", host);
        assertThat(notPolicyServer.output()).doesNotContain("fake agent");
        assertThat(rudder.runs()).hasSize(1);
    }

    /** What a logger writes while a test runs. */
    private static final class LogTail implements AutoCloseable {
        private final String logger;
        private final ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> appender;

        private LogTail(String logger) {
            this.logger = logger;
            this.appender = LogCapture.attach(logger);
        }

        static LogTail access() {
            return new LogTail("io.pintle.access");
        }

        static LogTail of(String logger) {
            return new LogTail(logger);
        }

        java.util.List<String> lines() {
            return java.util.List.copyOf(appender.list).stream()
                    .map(ch.qos.logback.classic.spi.ILoggingEvent::getFormattedMessage).toList();
        }

        @Override
        public void close() {
            LogCapture.detach(logger, appender);
        }
    }
}
