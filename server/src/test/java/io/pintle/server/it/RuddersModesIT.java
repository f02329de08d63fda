package io.pintle.server.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import io.pintle.client.ClientTls;
import io.pintle.client.PintleClient;
import io.pintle.server.testing.AgentHelper;
import io.pintle.server.testing.NodeKeys;
import io.pintle.server.testing.Sandbox;
import io.pintle.server.testing.ServerProcess;
import io.pintle.server.tls.SelfSigned;
import io.pintle.server.uploads.UploadKind;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import javax.net.ssl.KeyManager;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The server as its systemd unit runs it, on files with the modes Rudder's agent enforces: an unprivileged user
 * (here {@code nobody}) with one capability, {@code CAP_DAC_READ_SEARCH} (ambient, as the unit's
 * {@code AmbientCapabilities=} gives it; set here by {@code setpriv}), reads the server key and the networks file
 * left {@code 0600 root}, serves, takes uploads into directories of its group, has its own agent run as root by the
 * agent helper behind a socket of its group (pintle-agent.socket), and can write nowhere else. Needs
 * root to switch users (CI runs as root); skipped elsewhere.
 */
class RuddersModesIT {
    private static final int NOBODY = 65534;
    private static final String NODE = "0e2d8f4c-5b7a-4f5e-9a59-3c4d5e6f7a8b";

    @TempDir
    static Path dir;

    static Sandbox sandbox;
    static NodeKeys node;
    static Path jar;
    static Path agentDir;
    static AgentHelper helper;

    @BeforeAll
    static void layOut() throws Exception {
        assumeThat(Files.getAttribute(Path.of("/proc/self"), "unix:uid")).as("running as root").isEqualTo(0);
        assumeThat(Files.isExecutable(Path.of("/usr/bin/setpriv"))).as("setpriv (util-linux) is installed").isTrue();
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
        sandbox = Sandbox.create(dir.resolve("rudder"));
        // This test is about privileges, with bodies that are not agents' signed reports:
        // the edge check ([uploads] verify_signatures) has its own, UploadSignaturesIT.
        sandbox.uploadsConfig("verify_signatures = false");
        node = sandbox.addNode(NODE, SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        sandbox.shareFile(NODE + "/rules/rudder.tar.bz2", "policies".getBytes(StandardCharsets.US_ASCII));
        // The agent helper, root's, as pintle-agent.socket runs it: its socket 0660, group of the server's user.
        agentDir = Files.createDirectories(dir.resolve("agent"));
        Path rudder = agentDir.resolve("rudder");
        try (InputStream in = RuddersModesIT.class.getResourceAsStream("/fake-agent.sh")) {
            Files.copy(in, rudder);
        }
        Files.setPosixFilePermissions(rudder, PosixFilePermissions.fromString("rwxr-xr-x"));
        helper = AgentHelper.start(dir.resolve("agent.sock"), rudder, dir.resolve("helper.log"));
        Files.setAttribute(helper.socket(), "unix:gid", NOBODY);
        Files.setPosixFilePermissions(helper.socket(), PosixFilePermissions.fromString("rw-rw----"));
        sandbox.config("[reload]\nwatch = false\n[remote_run]\nagent_socket = \"" + helper.socket() + "\"");
        // Everything root's, readable by all, as Rudder leaves it; but these two, which its agent forces to 0600.
        try (Stream<Path> all = Files.walk(sandbox.dir())) {
            for (Path path : all.toList()) {
                Files.setPosixFilePermissions(path, PosixFilePermissions.fromString(
                        Files.isDirectory(path) ? "rwxr-xr-x" : "rw-r--r--"));
            }
        }
        for (Path secret : List.of(sandbox.dir().resolve("server/localhost.priv"),
                sandbox.dir().resolve("lib/networks.conf"))) {
            Files.setPosixFilePermissions(secret, PosixFilePermissions.fromString("rw-------"));
        }
        // The upload directories: Rudder's are group rudder, 0770, and the unit runs in that group.
        for (UploadKind kind : UploadKind.values()) {
            Files.setAttribute(sandbox.uploads(kind), "unix:gid", NOBODY);
            Files.setPosixFilePermissions(sandbox.uploads(kind), PosixFilePermissions.fromString("rwxrwx---"));
        }
        jar = Files.copy(Path.of(ServerProcess.jar()), dir.resolve("pintle.jar"));
        Files.setPosixFilePermissions(jar, PosixFilePermissions.fromString("rw-r--r--"));
    }

    @AfterAll
    static void stopHelper() throws Exception {
        if (helper != null) {
            helper.close();
        }
    }

    @Test
    void withoutTheCapabilityTheServerNamesTheUnreadableFileAndTheFix() throws Exception {
        Path log = dir.resolve("without.log");
        Process server = start(false, log);
        assertThat(server.waitFor(120, TimeUnit.SECONDS)).isTrue();

        assertThat(server.exitValue()).isEqualTo(2);
        // The first input read that it cannot: the networks file (the key would be next).
        assertThat(Files.readString(log)).contains(sandbox.dir().resolve("lib/networks.conf") + ": cannot read")
                .contains("rw------- root:root").contains("uid " + NOBODY)
                .contains("Do not change its mode").contains("CAP_DAC_READ_SEARCH");
    }

    @Test
    void withItAnUnprivilegedUserServesRuddersFilesAsTheAgentLeavesThem() throws Exception {
        Path log = dir.resolve("with.log");
        Process server = start(true, log);
        try {
            URI uri = URI.create(ServerProcess.awaitServing(log, server));
            PintleClient client = PintleClient.builder(uri).pin(sandbox.serverPin())
                    .identity(node.certificatePath(), node.keyPath()).build();
            assertThat(ReloadIT.status(client, "/policies/" + NODE + "/rules/rudder.tar.bz2", dir)).isEqualTo(200);

            HttpClient http = HttpClient.newBuilder()
                    .sslContext(ClientTls.context((KeyManager[]) null, Set.of(sandbox.serverPin()))).build();
            HttpResponse<String> upload = http.send(HttpRequest.newBuilder(URI.create(uri + "/reports/r.log.gz"))
                    .header("Authorization", "Basic " + Base64.getEncoder().encodeToString(
                            (Sandbox.UPLOAD_USER + ":" + Sandbox.WEBDAV_PASSWORD).getBytes(StandardCharsets.UTF_8)))
                    .PUT(HttpRequest.BodyPublishers.ofString("report")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(upload.statusCode()).isEqualTo(201);
            Path stored = sandbox.uploads(UploadKind.REPORTS).resolve("r.log.gz");
            assertThat(Files.readString(stored)).isEqualTo("report");
            assertThat(Files.getAttribute(stored, "unix:uid")).isEqualTo(NOBODY);

            // Remote run of this server's own agent, as Rudder's webapp asks for it on https://localhost: the
            // server, nobody without privileges, has it run as root by the helper behind the socket.
            HttpResponse<String> run = http.send(HttpRequest.newBuilder(
                            URI.create(uri + "/rudder/relay-api/remote-run/nodes/root"))
                    .header("Content-Type", "application/x-www-form-urlencoded")
                    .POST(HttpRequest.BodyPublishers.ofString("asynchronous=false&keep_output=true&classes=c1"))
                    .build(), HttpResponse.BodyHandlers.ofString());
            assertThat(run.statusCode()).as(run.body()).isEqualTo(200);
            assertThat(run.body()).isEqualTo("root> fake agent: started agent run -uR -D c1\nroot> fake agent: done\n");
            try (Stream<Path> runs = Files.list(agentDir.resolve("runs"))) {
                List<Path> uids = runs.filter(f -> f.toString().endsWith(".uid")).toList();
                assertThat(uids).hasSize(1);
                assertThat(Files.readString(uids.get(0)).trim()).as("the agent's uid").isEqualTo("0");
            }
        } finally {
            server.destroy();
            server.waitFor(30, TimeUnit.SECONDS);
        }
    }

    @Test
    void theSameUserReadsWhatTheCapabilityAllowsAndWritesOnlyInItsDirectories() throws Exception {
        Path key = sandbox.dir().resolve("server/localhost.priv");
        Path share = sandbox.dir().resolve("share");

        assertThat(as(true, "cat '" + key + "' > /dev/null")).as("reads the 0600 root key").isZero();
        assertThat(as(false, "cat '" + key + "' > /dev/null")).as("not without the capability").isNotZero();
        assertThat(as(true, "echo x > '" + sandbox.uploads(UploadKind.REPORTS).resolve("probe") + "'"))
                .as("writes in its upload directory").isZero();
        for (Path elsewhere : List.of(share.resolve("probe"), sandbox.dir().resolve("server/probe"),
                sandbox.dir().resolve("pintle.toml"), key)) {
            assertThat(as(true, "echo x >> '" + elsewhere + "'")).as("cannot write %s", elsewhere).isNotZero();
        }
        assertThat(share.resolve("probe")).doesNotExist();
    }

    /** Runs a shell line as the unit's user, with or without the unit's one capability; returns its exit code. */
    private static int as(boolean capability, String line) throws Exception {
        List<String> command = setpriv(capability);
        command.addAll(List.of("sh", "-c", line));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        process.getInputStream().readAllBytes();
        assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
        return process.exitValue();
    }

    private static Process start(boolean capability, Path log) throws Exception {
        List<String> command = setpriv(capability);
        command.addAll(List.of(ServerProcess.java(), "-jar", jar.toString(), "serve", "--config",
                sandbox.dir().resolve("pintle.toml").toString()));
        return new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    }

    private static List<String> setpriv(boolean capability) {
        List<String> command = new ArrayList<>(List.of("setpriv", "--reuid=" + NOBODY, "--regid=" + NOBODY,
                "--clear-groups"));
        if (capability) {
            command.addAll(List.of("--inh-caps=-all,+dac_read_search", "--ambient-caps=-all,+dac_read_search",
                    "--bounding-set=-all,+dac_read_search"));
        } else {
            command.add("--bounding-set=-all");
        }
        command.add("--");
        return command;
    }
}
