package io.pintle.server.remoterun;

import static org.assertj.core.api.Assertions.assertThat;

import io.pintle.api.dto.RemoteRunEvent;
import io.pintle.server.nodes.NodeId;
import io.pintle.server.testing.AgentHelper;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@code rudder remote run} for nodes that are not Pintle servers, against {@code fake-rudder-remote-run.sh}, which
 * records its argv and answers as cf-runagent and Rudder's formatter do; started from the argv prefix, or by the
 * real agent helper ({@code deploy/lib/pintle-agent-run} behind {@code systemd-socket-activate}).
 */
class RudderRemoteRunTest {
    /** How the two ways reach {@code rudder remote run}. */
    enum Mode { ARGV, HELPER }

    private static final Function<String, List<String>> NO_DNS = host -> List.of();

    private final ScheduledExecutorService timers = Executors.newSingleThreadScheduledExecutor();
    private final AgentLauncher launcher = new AgentLauncher(timers);
    private final List<RemoteRunEvent> events = new CopyOnWriteArrayList<>();
    private AgentHelper helper;

    @TempDir
    Path dir;

    Path rudder;

    @BeforeEach
    void install() throws IOException {
        rudder = dir.resolve("rudder");
        try (InputStream in = RudderRemoteRunTest.class.getResourceAsStream("/fake-rudder-remote-run.sh")) {
            Files.copy(in, rudder);
        }
        assertThat(rudder.toFile().setExecutable(true)).isTrue();
    }

    @AfterEach
    void stop() throws IOException {
        timers.shutdownNow();
        if (helper != null) {
            helper.close();
        }
    }

    private RudderRemoteRun remoteRun(Mode mode, Function<String, List<String>> resolver) throws Exception {
        if (mode == Mode.ARGV) {
            return new RudderRemoteRun(launcher, List.of(rudder.toString(), "remote", "run"), null, resolver);
        }
        helper = AgentHelper.start(dir.resolve("agent.sock"), rudder, dir.resolve("helper.log"));
        // The argv names a program that does not exist: with a socket it must not be used.
        return new RudderRemoteRun(launcher, List.of("/nonexistent/rudder", "remote", "run"), helper.socket(),
                resolver);
    }

    private static RudderRemoteRun.Target target(String node, String hostname) {
        return new RudderRemoteRun.Target(new NodeId(node), hostname);
    }

    private static RunOrder run(String... conditions) {
        return new RunOrder(AgentCommand.RUN, new Conditions(List.of(conditions)));
    }

    @ParameterizedTest
    @EnumSource(Mode.class)
    void oneInvocationRunsEveryHostWithTheConditionsAfterDashDash(Mode mode) throws Exception {
        remoteRun(mode, NO_DNS).run(List.of(target("n1", "192.0.2.1"), target("n2", "node2.example"),
                target("n3", "fd00::3")), run("class2", "class3"), Duration.ofSeconds(10), events::add);

        // rudder remote run appends ":5309" to each host: an IPv6 literal cannot go through it.
        assertThat(runs()).containsExactly(List.of("remote", "run", "-D", "class2,class3", "--",
                "192.0.2.1,node2.example"));
        assertThat(statuses()).containsOnly(Map.entry("n1", "success"), Map.entry("n2", "success"),
                Map.entry("n3", "refused"));

        events.clear();
        deleteRuns();
        remoteRun(Mode.ARGV, NO_DNS).run(List.of(target("n1", "192.0.2.1")), run(), Duration.ofSeconds(10),
                events::add);
        assertThat(runs()).containsExactly(List.of("remote", "run", "--", "192.0.2.1"));
    }

    @ParameterizedTest
    @EnumSource(Mode.class)
    void eachLineGoesToTheNodeItsAddressNamesAndTheRestToEveryNode(Mode mode) throws Exception {
        // cf-runagent prints the address it connected to, not the name: node2.example is reached at 192.0.2.2.
        Files.writeString(dir.resolve("addresses"), "node2.example=192.0.2.2\n");
        Function<String, List<String>> dns = host -> host.equals("node2.example") ? List.of("192.0.2.2") : List.of();
        remoteRun(mode, dns).run(List.of(target("n1", "192.0.2.1"), target("n2", "node2.example")), run(),
                Duration.ofSeconds(10), events::add);

        String header = "Hostname        M| State         Technique";
        String summary = "## Summary #####";
        assertThat(outputs("n1")).containsExactly(header, "-> agent run on 192.0.2.1",
                "192.0.2.1       E| compliant     row of 192.0.2.1", summary);
        assertThat(outputs("n2")).containsExactly(header, "-> agent run on node2.example",
                "192.0.2.2       E| compliant     row of node2.example", summary);
    }

    @ParameterizedTest
    @EnumSource(Mode.class)
    void theExitCodeIsEveryNodesAndAHostCfRunagentCouldNotReachIsUnreachable(Mode mode) throws Exception {
        Files.writeString(dir.resolve("exit-code"), "1");
        remoteRun(mode, NO_DNS).run(List.of(target("n1", "192.0.2.1"), target("n2", "down.example")), run(),
                Duration.ofSeconds(10), events::add);

        RemoteRunEvent failed = status("n1");
        assertThat(failed.status()).isEqualTo("failed");
        assertThat(failed.exitCode()).isEqualTo(1);
        assertThat(failed.detail()).contains("batch of 2 host(s)");
        RemoteRunEvent unreachable = status("n2");
        assertThat(unreachable.status()).isEqualTo("unreachable");
        assertThat(unreachable.detail()).contains("Failed to connect to host: down.example");
        assertThat(outputs("n2")).contains("   error: Failed to connect to host: down.example");
        assertThat(outputs("n1")).doesNotContain("   error: Failed to connect to host: down.example");
    }

    @ParameterizedTest
    @EnumSource(Mode.class)
    void aBatchStoppedAtItsTimeoutIsATimeoutForEachNode(Mode mode) throws Exception {
        Files.writeString(dir.resolve("sleep"), "30");
        long start = System.nanoTime();
        // One second per host, two hosts: stopped after 2 s.
        remoteRun(mode, NO_DNS).run(List.of(target("n1", "192.0.2.1"), target("n2", "192.0.2.2")), run(),
                Duration.ofSeconds(1), events::add);

        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(20));
        assertThat(statuses()).containsExactly(Map.entry("n1", "timeout"), Map.entry("n2", "timeout"));
        assertThat(status("n1").detail()).contains("after 2 s");
    }

    @Test
    void updateAndInventoryAreRefusedAndNothingRuns() throws Exception {
        for (AgentCommand command : List.of(AgentCommand.UPDATE, AgentCommand.INVENTORY)) {
            events.clear();
            remoteRun(Mode.ARGV, NO_DNS).run(List.of(target("n1", "192.0.2.1")),
                    new RunOrder(command, Conditions.NONE), Duration.ofSeconds(10), events::add);
            assertThat(statuses()).containsExactly(Map.entry("n1", "refused"));
            assertThat(status("n1").detail()).contains("'" + command + "'",
                    "full agent run");
        }
        assertThat(runs()).isEmpty();
    }

    @Test
    void aHostnameThatCouldBeAnOptionNeverReachesTheArgv() throws Exception {
        remoteRun(Mode.ARGV, NO_DNS).run(List.of(target("n1", "-a"), target("n2", "a b"), target("n3", "ok.example"),
                target("n4", "ok.example")), run(), Duration.ofSeconds(10), events::add);

        assertThat(runs()).containsExactly(List.of("remote", "run", "--", "ok.example"));
        assertThat(statuses()).containsExactly(Map.entry("n1", "error"), Map.entry("n2", "error"),
                Map.entry("n3", "success"), Map.entry("n4", "success"));
        assertThat(status("n1").detail()).contains("'-a'");
        // Two nodes of one hostname: passed once, the lines and the status are both's.
        assertThat(outputs("n3")).isEqualTo(outputs("n4")).contains("-> agent run on ok.example");
    }

    @Test
    void moreHostsThanOneInvocationTakesAreRunInSeveralBatches() {
        List<String> hosts = new ArrayList<>();
        for (int i = 0; i < 2500; i++) {
            hosts.add("h" + i);
        }
        assertThat(RudderRemoteRun.batches(hosts)).extracting(List::size).containsExactly(1000, 1000, 500);
        List<String> long64 = new ArrayList<>();
        for (int i = 0; i < 1100; i++) {
            long64.add(String.format("h%063d", i));
        }
        // 64 characters and a comma each: 1008 fit in 65536, 1000 hosts at most.
        assertThat(RudderRemoteRun.batches(long64)).extracting(List::size).containsExactly(1000, 100);
        List<String> long100 = new ArrayList<>();
        for (int i = 0; i < 700; i++) {
            long100.add(String.format("h%099d", i));
        }
        assertThat(RudderRemoteRun.batches(long100)).extracting(List::size).containsExactly(648, 52);
        assertThat(RudderRemoteRun.batches(long100).get(0).stream().mapToInt(String::length).sum() + 647)
                .isLessThanOrEqualTo(RudderRemoteRun.MAX_HOSTS_CHARS);
    }

    @Test
    void aWordOfTheFormatterIsNeverTakenForAHostCalledSo() {
        Map<String, List<NodeId>> byHost = new LinkedHashMap<>();
        byHost.put("Hostname", List.of(new NodeId("n1")));
        byHost.put("192.0.2.2", List.of(new NodeId("n2")));
        RudderRemoteRun.Attribution attribution = new RudderRemoteRun.Attribution(byHost, NO_DNS);

        assertThat(attribution.attribute("Hostname        M| State").nodes()).extracting(NodeId::value)
                .containsExactly("n1", "n2");
        assertThat(attribution.attribute("Hostname> -> its line").nodes()).extracting(NodeId::value)
                .containsExactly("n1");
        assertThat(attribution.attribute("999.1.1.1 x").nodes()).hasSize(2);
        assertThat(RudderRemoteRun.canonicalAddress("999.1.1.1")).isNull();
        assertThat(RudderRemoteRun.canonicalAddress("fd00::3")).isEqualTo("fd00:0:0:0:0:0:0:3");
    }

    private Map<String, String> statuses() {
        Map<String, String> statuses = new LinkedHashMap<>();
        for (RemoteRunEvent event : events) {
            if (event.type().equals(RemoteRunEvent.STATUS)) {
                assertThat(statuses.put(event.node(), event.status())).as("one status per node: %s", event).isNull();
            }
        }
        return statuses;
    }

    private RemoteRunEvent status(String node) {
        return events.stream().filter(e -> e.type().equals(RemoteRunEvent.STATUS) && e.node().equals(node))
                .findFirst().orElseThrow();
    }

    private List<String> outputs(String node) {
        return events.stream().filter(e -> e.type().equals(RemoteRunEvent.OUTPUT) && e.node().equals(node))
                .map(RemoteRunEvent::line).toList();
    }

    private List<List<String>> runs() throws IOException {
        Path runs = dir.resolve("runs");
        if (!Files.isDirectory(runs)) {
            return List.of();
        }
        try (Stream<Path> files = Files.list(runs)) {
            List<List<String>> argvs = new ArrayList<>();
            for (Path file : files.filter(f -> f.toString().endsWith(".argv")).toList()) {
                argvs.add(List.of(Files.readString(file).split("\n")));
            }
            return argvs;
        }
    }

    private void deleteRuns() throws IOException {
        Path runs = dir.resolve("runs");
        try (Stream<Path> files = Files.list(runs)) {
            for (Path file : files.toList()) {
                Files.delete(file);
            }
        }
    }
}
