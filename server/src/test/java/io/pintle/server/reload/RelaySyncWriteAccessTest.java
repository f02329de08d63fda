package io.pintle.server.reload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import io.pintle.server.config.ConfigLoader;
import io.pintle.server.testing.Sandbox;
import io.pintle.server.testing.TestThreads;
import io.pintle.server.tls.SelfSigned;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.util.Set;
import java.util.function.Predicate;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A relay that syncs from its policy server is loaded only where it can write: the share, next to the shared
 * folder, next to the inputs it copies. Root passes access(2) whatever the mode (and CI runs as root), so the
 * refusal is driven by a stand-in for {@code Files::isWritable}; one test uses a real read-only directory.
 */
class RelaySyncWriteAccessTest {
    private static final String FIXES = "Set [upstream] sync = false to serve what Rudder's own relay synchronisation "
            + "writes there, or point the synced trees at a directory this user owns, such as the unit's state "
            + "directory /var/lib/pintle: [paths] share = \"/var/lib/pintle/share\", shared_folder = "
            + "\"/var/lib/pintle/shared-folder\", [nodes] list = \"/var/lib/pintle/nodeslist.json\", certificates = "
            + "[\"/var/lib/pintle/nodescerts.pem\"]";

    @TempDir
    Path dir;

    @RegisterExtension
    final TestThreads threads = new TestThreads();

    Sandbox relay;

    @BeforeEach
    void setUp() throws Exception {
        relay = Sandbox.create(dir, "relay-1", "relay");
        relay.addNode("node-a", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
    }

    @Test
    void aRelayWhoseShareIsNotWritableIsRefusedNamingTheKeyThePathItsModeAndBothFixes() throws Exception {
        Path config = relayConfig("");

        assertThatThrownBy(() -> load(config, refusing(relay.share())))
                .isInstanceOf(SnapshotException.class)
                .hasMessageStartingWith("relay sync ([upstream] sync = true) cannot write where it must: "
                        + "[paths] share: the sync writes in " + relay.share() + ", which is not writable by this "
                        + "process (rwx")
                .hasMessageContaining("; Pintle runs as uid ")
                .hasMessageEndingWith(". " + FIXES)
                .message().doesNotContain("shared_folder:", "[nodes] list:", "Exception");
    }

    @Test
    void theSharedFolderIsCheckedWhereTheSyncWritesNextToIt() throws Exception {
        Path config = relayConfig("");

        assertThatThrownBy(() -> load(config, refusing(dir)))
                .isInstanceOf(SnapshotException.class)
                .hasMessageContaining("[paths] shared_folder: the sync writes next to " + dir.resolve("shared-folder")
                        + ", in " + dir + ", which is not writable by this process (")
                .message().doesNotContain("[paths] share:");
    }

    @Test
    void aMissingSharedFolderIsCheckedAtTheNearestDirectoryThatExists() throws Exception {
        Path config = relayConfig("");
        Files.writeString(config, Files.readString(config).replace("shared_folder = \"shared-folder\"",
                "shared_folder = \"not/yet/shared-folder\""));

        assertThatThrownBy(() -> load(config, refusing(dir)))
                .isInstanceOf(SnapshotException.class)
                .hasMessageContaining("[paths] shared_folder: the sync writes next to "
                        + dir.resolve("not/yet/shared-folder") + ", in " + dir.resolve("not/yet")
                        + ", which does not exist yet; " + dir + ", where it would be created, is not writable by "
                        + "this process (");
    }

    @Test
    void aSharedFolderThatIsASymbolicLinkIsCheckedNextToItsTarget() throws Exception {
        Path elsewhere = Files.createDirectories(dir.resolve("elsewhere"));
        Files.createSymbolicLink(dir.resolve("shared-folder"), Files.createDirectory(elsewhere.resolve("shared")));
        Path config = relayConfig("");

        load(config, refusing(dir));
        assertThatThrownBy(() -> load(config, refusing(elsewhere)))
                .isInstanceOf(SnapshotException.class)
                .hasMessageContaining("[paths] shared_folder: the sync writes next to " + dir.resolve("shared-folder")
                        + ", in " + elsewhere + ", which is not writable by this process (");
    }

    @Test
    void theCopiedInputsAreCheckedNextToThemOnlyWhenTheyAreCopied() throws Exception {
        Path lib = dir.resolve("lib");

        assertThatThrownBy(() -> load(relayConfig(""), refusing(lib)))
                .isInstanceOf(SnapshotException.class)
                .hasMessageContaining("[nodes] list: the sync writes next to " + lib.resolve("nodeslist.json")
                        + ", in " + lib + ", which is not writable")
                .hasMessageContaining("[nodes] certificates: the sync writes next to " + lib.resolve("nodescerts.pem")
                        + ", in " + lib + ", which is not writable");

        ServerSnapshot loaded = load(relayConfig("nodes_list = \"\"\nnodes_certificates = \"\"\n"), refusing(lib));
        assertThat(loaded.nodes().nodeCount()).isEqualTo(1);
    }

    @Test
    void aRelayWithoutSyncARelayWithoutPolicyServerAndARootAreNotChecked() throws Exception {
        Predicate<Path> nothingIsWritable = refusing(relay.share(), dir, dir.resolve("lib"));

        load(relayConfig("sync = false\n"), nothingIsWritable);
        load(relay.config(""), nothingIsWritable);
        Sandbox root = Sandbox.create(dir.resolve("root"));
        load(root.config(""), refusing(root.share(), root.dir(), root.dir().resolve("lib")));
    }

    @Test
    void aRelayThatCanWriteWhereItSyncsIsLoaded() throws Exception {
        assertThat(new SnapshotLoader(ConfigLoader.load(relayConfig("")), Clock.systemUTC()).load(1).self().value())
                .isEqualTo("relay-1");
    }

    @Test
    void aReadOnlyShareIsRefusedByTheRealCheck() throws Exception {
        assumeFalse(uid() == 0, "root passes access(2) whatever the mode: covered with a stand-in above");
        Path config = relayConfig("");
        Set<java.nio.file.attribute.PosixFilePermission> before = Files.getPosixFilePermissions(relay.share());
        Files.setPosixFilePermissions(relay.share(), PosixFilePermissions.fromString("r-xr-xr-x"));
        try {
            assertThatThrownBy(() -> new SnapshotLoader(ConfigLoader.load(config), Clock.systemUTC()).load(1))
                    .isInstanceOf(SnapshotException.class)
                    .hasMessageContaining("[paths] share: the sync writes in " + relay.share()
                            + ", which is not writable by this process (r-xr-xr-x ")
                    .hasMessageContaining("Pintle runs as uid " + uid() + ")");
        } finally {
            Files.setPosixFilePermissions(relay.share(), before);
        }
    }

    @Test
    void aReloadThatMovesTheShareWhereTheSyncCannotWriteIsRefusedAndThePreviousSnapshotKeepsServing()
            throws Exception {
        Path config = relayConfig("");
        Path readOnly = Files.createDirectories(dir.resolve("read-only-share"));
        Predicate<Path> writable = refusing(readOnly);
        SnapshotHolder holder = new SnapshotHolder(load(config, writable));
        Reloader reloader = new Reloader(() -> ConfigLoader.load(config), holder, new ReloaderTest.RecordingTls(),
                Clock.systemUTC(), writable, threads.workers());
        try {
            ServerSnapshot before = holder.current();
            Files.writeString(config, Files.readString(config).replace("share = \"share\"",
                    "share = \"read-only-share\""));

            ReloadOutcome outcome = reloader.reload("test").get();

            assertThat(outcome.result()).isEqualTo(ReloadOutcome.Result.FAILED);
            assertThat(outcome.error()).contains("[paths] share: the sync writes in " + readOnly).contains(FIXES);
            assertThat(holder.current()).isSameAs(before);
            assertThat(holder.current().share().root()).isEqualTo(relay.share());
            assertThat(reloader.history().failed()).isEqualTo(1);
        } finally {
            reloader.stop();
        }
    }

    /** A relay of a policy server (pinned by key, so no certificate file is read) that syncs from it. */
    private Path relayConfig(String upstreamKeys) throws IOException {
        Path config = relay.config("");
        Files.writeString(config, Files.readString(config) + "\n[upstream]\nurl = \"https://127.0.0.1:1\"\n"
                + "key_hash = \"" + relay.serverPin() + "\"\n" + upstreamKeys);
        return config;
    }

    private static ServerSnapshot load(Path config, Predicate<Path> writable) throws Exception {
        return new SnapshotLoader(ConfigLoader.load(config), Clock.systemUTC(), writable).load(1);
    }

    /** A stand-in for {@code Files::isWritable} that refuses these directories and asks the real one otherwise. */
    private static Predicate<Path> refusing(Path... directories) {
        Set<Path> refused = Set.of(directories);
        return directory -> !refused.contains(directory) && Files.isWritable(directory);
    }

    private static int uid() throws IOException {
        return (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
    }
}
