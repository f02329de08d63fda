package io.pintle.server.it;

import static io.pintle.server.it.DeliveryIT.agentFlags;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.pintle.server.testing.Await;
import io.pintle.server.testing.NodeKeys;
import io.pintle.server.testing.Sandbox;
import io.pintle.server.testing.TestServer;
import io.pintle.server.tls.SelfSigned;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node whose {@code rules/rudder.tar.bz2} is missing (Rudder's webapp moved its new {@code rules/} in place and has
 * not run {@code 91-compress-linux-policies} for it yet) gets one built from its tree, as agent-update fetches it
 * (curl with rudder-client's flags), extracted with agent-update's own tar command, and listed like the hook's.
 */
class ArchiveIT {
    @Test
    void aMissingArchiveIsBuiltAsRuddersHookBuildsItAndServedWithTheSameEtagRules(@TempDir Path dir)
            throws Exception {
        assumeTrue(CurlIT.available("curl") && CurlIT.available("tar") && CurlIT.available("bzip2"),
                "curl, tar or bzip2 is not installed");
        Sandbox sandbox = Sandbox.create(dir);
        NodeKeys node = sandbox.addNode("node-a", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        Path rules = sandbox.share().resolve("node-a/rules");
        Path tree = rules.resolve("cfengine-community");
        write(tree.resolve("promises.cf"), "bundle common g {}\n", "rw-r-----");
        write(tree.resolve("rudder-promises-generated"), "20261206000001\n", "rw-r-----");
        write(tree.resolve("common/1.0/update.cf"), "bundle agent update {}\n", "rw-r--r--");
        write(tree.resolve("certs/root.pem"), "-----BEGIN CERTIFICATE-----\n", "rw-r-----");
        Files.createSymbolicLink(tree.resolve("certs/policy-server.pem"), Path.of("root.pem"));
        write(tree.resolve("bin/script.sh"), "#!/bin/sh\n", "rwxr-xr-x");
        Files.setLastModifiedTime(tree.resolve("promises.cf"), FileTime.from(Instant.parse("2026-01-02T03:04:05Z")));

        try (TestServer server = TestServer.start(sandbox)) {
            String url = server.uri() + "/policies/node-a/rules/rudder.tar.bz2";
            Path etag = dir.resolve("etag");
            Path archive = dir.resolve("rudder.tar.bz2");
            CurlIT.Result first = CurlIT.curl(agentFlags(sandbox, node), "--etag-save", etag.toString(),
                    "--etag-compare", etag.toString(), "-w", "%{http_code}", "-o", archive.toString(), url);
            assertThat(first.stdout()).as(first.stderr()).isEqualTo("200");
            assertThat(rules.resolve("rudder.tar.bz2")).as("Rudder's place is left to Rudder's hook").doesNotExist();

            // agent-update's extraction (rudder-agent share/commands/agent-update): the tree comes out whole.
            Path agent = Files.createDirectories(dir.resolve("agent"));
            run(agent, "tar", "xf", archive.toString(), "-C", agent.toString(), "--no-same-owner",
                    "--no-same-permissions", "--transform", "s|policies_next|inputs|", "--transform",
                    "s|^\\([^/]\\+\\)|\\1.new|");
            assertThat(contents(agent.resolve("inputs.new"))).isEqualTo(contents(tree));
            assertThat(Files.isSymbolicLink(agent.resolve("inputs.new/certs/policy-server.pem"))).isTrue();

            // The hook's own command on the same tree: the same entries, modes, owners, times and link targets.
            Path hook = dir.resolve("hook.tar.bz2");
            run(rules, "tar", "-cjf", hook.toString(), "--mode=go=-rwx", "--owner=0", "--group=0", "--transform",
                    "s|^cfengine-community|policies_next|", "cfengine-community");
            assertThat(listing(dir, archive)).isEqualTo(listing(dir, hook)).anyMatch(line ->
                    line.startsWith("-rw------- root/root") && line.endsWith("policies_next/promises.cf"));

            CurlIT.Result again = CurlIT.curl(agentFlags(sandbox, node), "--etag-save", etag.toString(),
                    "--etag-compare", etag.toString(), "-w", "%{http_code}", "-o", archive.toString(), url);
            assertThat(again.stdout()).isEqualTo("304");
            // The node holds what is served: not behind, even though Rudder's archive is not there.
            Await.until(Duration.ofSeconds(20), () -> !server.admin("GET", "/v1/nodes/node-a").body()
                    .path("behind").asBoolean(true));

            // A new generation of the tree: a new archive, with the new file.
            write(tree.resolve("added.cf"), "# new\n", "rw-r-----");
            write(tree.resolve("rudder-promises-generated"), "20261206000002\n", "rw-r-----");
            CurlIT.Result changed = CurlIT.curl(agentFlags(sandbox, node), "--etag-save", etag.toString(),
                    "--etag-compare", etag.toString(), "-w", "%{http_code}", "-o", archive.toString(), url);
            assertThat(changed.stdout()).isEqualTo("200");
            assertThat(listing(dir, archive)).anyMatch(line -> line.endsWith("policies_next/added.cf"));

            // Many agents at once: one build.
            write(tree.resolve("rudder-promises-generated"), "20261206000003\n", "rw-r-----");
            double before = server.metric("pintle_archives_built_total");
            ExecutorService pool = Executors.newFixedThreadPool(6);
            try {
                List<Future<CurlIT.Result>> results = new ArrayList<>();
                for (int i = 0; i < 6; i++) {
                    int n = i;
                    results.add(pool.submit(() -> CurlIT.curl(agentFlags(sandbox, node), "-w", "%{http_code}", "-o",
                            dir.resolve("parallel-" + n).toString(), url)));
                }
                for (Future<CurlIT.Result> result : results) {
                    assertThat(result.get(60, TimeUnit.SECONDS).stdout()).isEqualTo("200");
                }
            } finally {
                pool.shutdownNow();
            }
            assertThat(server.metric("pintle_archives_built_total")).isEqualTo(before + 1);

            // Rudder's hook writes its archive: served as it is.
            Files.move(hook, rules.resolve("rudder.tar.bz2"));
            Files.setLastModifiedTime(rules.resolve("rudder.tar.bz2"), FileTime.from(Instant.now().plusSeconds(5)));
            CurlIT.Result rudders = CurlIT.curl(agentFlags(sandbox, node), "-w", "%{http_code}", "-o",
                    archive.toString(), url);
            assertThat(rudders.stdout()).isEqualTo("200");
            assertThat(Files.mismatch(archive, rules.resolve("rudder.tar.bz2"))).isEqualTo(-1L);
        }
    }

    private static void write(Path file, String text, String mode) throws Exception {
        Files.createDirectories(file.getParent());
        Path next = Files.writeString(file.resolveSibling(file.getFileName() + ".new"), text, StandardCharsets.UTF_8);
        Files.setPosixFilePermissions(next, PosixFilePermissions.fromString(mode));
        Files.move(next, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    }

    private static String run(Path directory, String... command) throws Exception {
        Process process = new ProcessBuilder(command).directory(directory.toFile()).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).as(String.join(" ", command) + "\n" + output).isZero();
        return output;
    }

    /** {@code tar tvf}, sorted (GNU tar writes in directory order, Pintle in name order). */
    private static List<String> listing(Path dir, Path archive) throws Exception {
        return run(dir, "tar", "--full-time", "-tvf", archive.toString()).lines().sorted().toList();
    }

    private static Map<String, String> contents(Path root) throws Exception {
        Map<String, String> files = new TreeMap<>();
        try (Stream<Path> walk = Files.walk(root)) {
            for (Path path : walk.filter(path -> Files.isRegularFile(path, java.nio.file.LinkOption.NOFOLLOW_LINKS))
                    .toList()) {
                files.put(root.relativize(path).toString(), Files.readString(path));
            }
        }
        return files;
    }
}
