package io.pintle.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pintle.api.dto.Manifest;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The sync algorithm against a stand-in server over plain HTTP, with real files. */
class DirectorySyncTest {
    @TempDir
    Path dir;

    Path source;
    Path local;
    FakeTreeServer server;

    @BeforeEach
    void start() throws Exception {
        source = Files.createDirectories(dir.resolve("source"));
        local = dir.resolve("work/inputs");
        for (int i = 0; i < 20; i++) {
            write("file-" + i + ".cf", 1000 + i * 100, i);
        }
        write("sub dir/ünïcode & co.txt", 5000, 100);
        write("sub dir/deeper/a.txt", 10, 101);
        Files.createSymbolicLink(source.resolve("sub dir/link"), Path.of("deeper/a.txt"));
        Files.setPosixFilePermissions(source.resolve("file-1.cf"), PosixFilePermissions.fromString("rwx------"));
        server = new FakeTreeServer(source);
    }

    @AfterEach
    void stop() {
        server.close();
    }

    private byte[] write(String relative, int size, long seed) throws IOException {
        byte[] content = new byte[size];
        new Random(seed).nextBytes(content);
        Path file = source.resolve(relative);
        Files.createDirectories(file.getParent());
        Files.write(file, content);
        return content;
    }

    private SyncResult sync() throws Exception {
        return server.sync(TreeSwap.atomic()).sync(FakeTreeServer.REMOTE, local);
    }

    /** Every entry: type, content or target, mode and mtime (files). */
    static Map<String, String> snapshot(Path root) throws IOException {
        Map<String, String> tree = new TreeMap<>();
        try (Stream<Path> walk = Files.walk(root)) {
            for (Path path : walk.toList()) {
                String relative = root.relativize(path).toString();
                if (Files.isSymbolicLink(path)) {
                    tree.put(relative, "link " + Files.readSymbolicLink(path));
                } else if (Files.isDirectory(path)) {
                    tree.put(relative, "dir " + PosixFilePermissions.toString(Files.getPosixFilePermissions(path)));
                } else {
                    tree.put(relative, "file " + FakeTreeServer.sha256(Files.readAllBytes(path)) + " "
                            + PosixFilePermissions.toString(Files.getPosixFilePermissions(path)) + " "
                            + Files.getLastModifiedTime(path));
                }
            }
        }
        return tree;
    }

    private List<String> siblings() throws IOException {
        try (Stream<Path> list = Files.list(local.getParent())) {
            return list.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    @Test
    void syncFromNothingUsesTheArchiveAndGivesAnIdenticalTree() throws Exception {
        SyncResult result = sync();

        assertThat(result.changed()).isTrue();
        assertThat(result.usedArchive()).isTrue();
        assertThat(result.filesDownloaded()).isEqualTo(22);
        assertThat(result.requests()).isEqualTo(2);
        assertThat(result.etag()).isEqualTo(server.manifest().etag());
        assertThat(snapshot(local)).isEqualTo(snapshot(source));
        assertThat(siblings()).containsExactly(".inputs.pintle-sync.json", ".inputs.pintle-sync.lock", "inputs");
    }

    @Test
    void everyAnswerOfASyncIsReadToItsEndSoNoStreamIsCancelled() throws Exception {
        PintleClient client = server.client();
        CancelCountingClient http = new CancelCountingClient(client.httpClient());
        DirectorySync sync = new DirectorySync(http, client.uri("/"), Duration.ofSeconds(30), 4, TreeSwap.atomic());

        assertThat(sync.sync(FakeTreeServer.REMOTE, local).usedArchive()).isTrue();
        assertThat(sync.sync(FakeTreeServer.REMOTE, local).changed()).as("answered 304").isFalse();
        write("file-3.cf", 700, 33);
        assertThat(sync.sync(FakeTreeServer.REMOTE, local).usedArchive()).as("file by file").isFalse();

        assertThat(http.responses).hasValue(5);
        assertThat(http.cancelled).as("bodies closed before their end").hasValue(0);
        assertThat(snapshot(local)).isEqualTo(snapshot(source));
    }

    @Test
    void aManifestThatGetsNoAnswerIsCutAtTheRequestTimeoutAndRetriedAndTheListenerIsTold() throws Exception {
        List<DirectorySync.Retry> retries = new CopyOnWriteArrayList<>();
        CountDownLatch toldOfRetry = new CountDownLatch(1);
        server.afterManifest = () -> {
            if (server.requests.size() == 1) {
                try {
                    toldOfRetry.await(60, TimeUnit.SECONDS); // no answer until the client gave up on it
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        };
        PintleClient client = server.client();
        DirectorySync sync = new DirectorySync(client.httpClient(), client.uri("/"), Duration.ofSeconds(1), 4,
                TreeSwap.atomic()).withRetryListener(retry -> {
                    retries.add(retry);
                    toldOfRetry.countDown();
                });

        SyncResult result = sync.sync(FakeTreeServer.REMOTE, local);

        assertThat(result.attempts()).isEqualTo(2);
        assertThat(snapshot(local)).isEqualTo(snapshot(source));
        assertThat(retries).singleElement().satisfies(retry -> {
            assertThat(retry.remote()).isEqualTo("/tree/");
            assertThat(retry.attempt()).isEqualTo(2);
            assertThat(retry.attempts()).isEqualTo(DirectorySync.MAX_ATTEMPTS);
            assertThat(retry.reason()).startsWith("GET the manifest of /tree/ got no answer within 1 s");
        });
    }

    @Test
    void anUnchangedTreeCostsOneRequestAnswered304() throws Exception {
        sync();
        server.requests.clear();

        SyncResult result = sync();

        assertThat(result.changed()).isFalse();
        assertThat(result.requests()).isEqualTo(1);
        assertThat(server.requests).containsExactly("/tree/?view=manifest");
        assertThat(snapshot(local)).isEqualTo(snapshot(source));
    }

    @Test
    void onlyChangedFilesAreDownloadedAndDeletionsArePurged() throws Exception {
        sync();
        for (int i = 0; i < 3; i++) {
            write("file-" + i + ".cf", 777, 1000 + i);
        }
        Files.delete(source.resolve("file-19.cf"));
        Files.delete(source.resolve("sub dir/deeper/a.txt"));
        Files.delete(source.resolve("sub dir/deeper"));
        Path inode = local.resolve("file-10.cf");
        Object before = Files.getAttribute(inode, "unix:ino");
        server.requests.clear();

        SyncResult result = sync();

        assertThat(result.changed()).isTrue();
        assertThat(result.usedArchive()).isFalse();
        assertThat(result.filesDownloaded()).isEqualTo(3);
        assertThat(result.bytesDownloaded()).isEqualTo(3 * 777);
        assertThat(result.removed()).isEqualTo(3);
        assertThat(server.requests).containsExactlyInAnyOrder("/tree/?view=manifest", "/tree/file-0.cf",
                "/tree/file-1.cf", "/tree/file-2.cf");
        assertThat(snapshot(local)).isEqualTo(snapshot(source));
        assertThat(Files.isSymbolicLink(local.resolve("sub dir/link"))).isTrue();
        assertThat(Files.getAttribute(inode, "unix:ino")).as("an unchanged file is hard-linked, not rewritten")
                .isEqualTo(before);
        assertThat(siblings()).containsExactly(".inputs.pintle-sync.json", ".inputs.pintle-sync.lock", "inputs");
    }

    @Test
    void pathsArePercentEncodedSegmentBySegment() throws Exception {
        sync();
        write("sub dir/ünïcode & co.txt", 10, 5);
        server.requests.clear();

        sync();

        assertThat(server.requests).contains("/tree/sub%20dir/%C3%BCn%C3%AFcode%20%26%20co.txt");
    }

    @Test
    void withoutSidecarAMatchingLocalTreeIsHashedAndLeftAlone() throws Exception {
        sync();
        Files.delete(SyncState.file(local));
        Object before = Files.getAttribute(local, "unix:ino");

        SyncResult result = sync();

        assertThat(result.changed()).isFalse();
        assertThat(result.requests()).isEqualTo(1);
        assertThat(Files.getAttribute(local, "unix:ino")).as("no swap").isEqualTo(before);
        assertThat(SyncState.file(local)).exists();
    }

    @Test
    void aLocalEditIsNoticedWhenTheServerChangesAndRepaired() throws Exception {
        sync();
        Files.writeString(local.resolve("file-5.cf"), "edited by hand");
        Files.writeString(local.resolve("stray.txt"), "not from the server");
        write("file-6.cf", 50, 66);

        SyncResult result = sync();

        assertThat(result.filesDownloaded()).isEqualTo(2);
        assertThat(result.removed()).isEqualTo(1);
        assertThat(snapshot(local)).isEqualTo(snapshot(source));
    }

    @Test
    void aModeOrMtimeChangeAloneDoesNotTouchTheCurrentTreesInode() throws Exception {
        sync();
        Path kept = local.resolve("file-3.cf");
        String keptMode = PosixFilePermissions.toString(Files.getPosixFilePermissions(kept));
        Files.setPosixFilePermissions(source.resolve("file-3.cf"), PosixFilePermissions.fromString("r--r-----"));
        Files.setLastModifiedTime(source.resolve("file-3.cf"), FileTime.from(Instant.parse("2020-01-01T00:00:00Z")));
        Path keptBefore = dir.resolve("kept");
        Files.createLink(keptBefore, kept);

        SyncResult result = sync();

        assertThat(result.filesDownloaded()).isZero();
        assertThat(result.requests()).isEqualTo(1);
        assertThat(snapshot(local)).isEqualTo(snapshot(source));
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(keptBefore)))
                .as("the old tree's file was copied, not chmod-ed through a hard link").isEqualTo(keptMode);
    }

    /**
     * With shared inodes (a relay's way: Rudder rewrites every file of a node at each generation), a file whose
     * mtime alone changed is hard-linked and its mtime set on the shared inode; one whose mode changed too is still
     * copied, so the current tree's copy never takes another mode, and so is one whose inode has a third name.
     */
    @Test
    void withSharedInodesAnMtimeChangeAloneKeepsTheInodeAndAModeChangeIsStillCopied() throws Exception {
        DirectorySync shared = server.sync(TreeSwap.atomic()).withSharedInodes();
        shared.sync(FakeTreeServer.REMOTE, local);
        Object timeOnly = Files.getAttribute(local.resolve("file-3.cf"), "unix:ino");
        Object modeToo = Files.getAttribute(local.resolve("file-4.cf"), "unix:ino");
        String modeBefore = PosixFilePermissions.toString(Files.getPosixFilePermissions(local.resolve("file-4.cf")));
        Object elsewhere = Files.getAttribute(local.resolve("file-5.cf"), "unix:ino");
        Path frozen = dir.resolve("frozen");
        Files.createLink(frozen, local.resolve("file-5.cf"));
        FileTime frozenTime = Files.getLastModifiedTime(frozen);
        FileTime newTime = FileTime.from(Instant.parse("2020-01-01T00:00:00.123456Z"));
        Files.setLastModifiedTime(source.resolve("file-3.cf"), newTime);
        Files.setLastModifiedTime(source.resolve("file-5.cf"), newTime);
        Files.setPosixFilePermissions(source.resolve("file-4.cf"), PosixFilePermissions.fromString("r--r-----"));
        Files.setLastModifiedTime(source.resolve("file-4.cf"), newTime);
        Path modeTooBefore = dir.resolve("mode-too");
        Files.createLink(modeTooBefore, local.resolve("file-4.cf"));

        SyncResult result = shared.sync(FakeTreeServer.REMOTE, local);

        assertThat(result.changed()).isTrue();
        assertThat(result.filesDownloaded()).isZero();
        assertThat(snapshot(local)).isEqualTo(snapshot(source));
        assertThat(Files.getAttribute(local.resolve("file-3.cf"), "unix:ino")).as("linked").isEqualTo(timeOnly);
        assertThat(Files.getLastModifiedTime(local.resolve("file-3.cf"))).isEqualTo(newTime);
        assertThat(Files.getAttribute(local.resolve("file-4.cf"), "unix:ino")).as("copied").isNotEqualTo(modeToo);
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(modeTooBefore)))
                .as("the old tree's file kept its mode").isEqualTo(modeBefore);
        // An inode with a third name (a frozen copy of the server's state) is copied: the copy keeps its mtime.
        assertThat(Files.getAttribute(local.resolve("file-5.cf"), "unix:ino")).isNotEqualTo(elsewhere);
        assertThat(Files.getLastModifiedTime(frozen)).isEqualTo(frozenTime);
        // And the next sync finds the tree as the manifest has it: nothing to do.
        assertThat(shared.sync(FakeTreeServer.REMOTE, local).changed()).isFalse();
    }

    @Test
    void contentThatNeverMatchesTheManifestFailsAfterThreeAttemptsAndLeavesTheTreeAsItWas() throws Exception {
        sync();
        Map<String, String> before = snapshot(local);
        write("file-4.cf", 1400, 44);
        server.tampered.put("file-4.cf", new byte[1400]);
        server.requests.clear();

        assertThatThrownBy(this::sync)
                .isInstanceOf(SyncException.class)
                .hasMessageContaining("failed after 3 attempts")
                .hasMessageContaining("file-4.cf")
                .hasMessageContaining("SHA-256");

        assertThat(server.requests).filteredOn(r -> r.endsWith("view=manifest")).hasSize(3);
        assertThat(snapshot(local)).isEqualTo(before);
        assertThat(siblings()).containsExactly(".inputs.pintle-sync.json", ".inputs.pintle-sync.lock", "inputs");
    }

    @Test
    void anArchiveThatIsNotTheManifestsFailsTheAttemptAndTheNextOneSucceeds() throws Exception {
        server.tampered.put("file-7.cf", "other version".getBytes(StandardCharsets.UTF_8));
        server.afterManifest = () -> {
            if (server.requests.size() > 2) {
                server.tampered.clear();
            }
        };

        List<DirectorySync.Retry> retries = new CopyOnWriteArrayList<>();

        SyncResult result = server.sync(TreeSwap.atomic()).withRetryListener(retries::add)
                .sync(FakeTreeServer.REMOTE, local);

        assertThat(result.attempts()).isEqualTo(2);
        assertThat(result.requests()).isEqualTo(4);
        assertThat(retries).singleElement().satisfies(retry -> {
            assertThat(retry.attempt()).isEqualTo(2);
            assertThat(retry.delay()).isEqualTo(Duration.ofMillis(250));
            assertThat(retry.reason()).contains("file-7.cf");
        });
        assertThat(snapshot(local)).isEqualTo(snapshot(source));
        assertThat(siblings()).containsExactly(".inputs.pintle-sync.json", ".inputs.pintle-sync.lock", "inputs");
    }

    @Test
    void aTreeChangingBetweenManifestAndDownloadIsRetriedFromAFreshManifest() throws Exception {
        sync();
        write("file-8.cf", 300, 88);
        server.afterManifest = () -> {
            if (server.requests.size() == 1) {
                try {
                    write("file-8.cf", 301, 89); // after the manifest was computed, before the download
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            }
        };
        server.requests.clear();

        SyncResult result = sync();

        assertThat(result.attempts()).isEqualTo(2);
        assertThat(snapshot(local)).isEqualTo(snapshot(source));
    }

    @ParameterizedTest
    @ValueSource(strings = {"../escape", "/etc/escape", "a/../../escape", "a//b", ".", "x\u0000y", "sub dir\\..\\x"})
    void aHostileManifestPathIsRefusedBeforeAnythingIsWritten(String hostile) throws Exception {
        sync();
        Map<String, String> before = snapshot(local);
        server.manifestEdit = manifest -> withEntry(manifest,
                new Manifest.Entry(hostile, Manifest.Types.FILE, 4L, "0644", null, FakeTreeServer.sha256(
                        "evil".getBytes(StandardCharsets.UTF_8)), null));

        assertThatThrownBy(this::sync).isInstanceOf(SyncException.class).hasMessageContaining("refused the manifest");

        assertThat(snapshot(local)).isEqualTo(before);
        assertThat(dir.resolve("escape")).doesNotExist();
        assertThat(Path.of("/etc/escape")).doesNotExist();
        assertThat(siblings()).containsExactly(".inputs.pintle-sync.json", ".inputs.pintle-sync.lock", "inputs");
    }

    @ParameterizedTest
    @ValueSource(strings = {"/etc/passwd", "../../x", "../..", "loop/../.."})
    void aSymlinkLeavingTheTreeIsRefused(String target) throws Exception {
        server.manifestEdit = manifest -> withEntry(withEntry(manifest,
                new Manifest.Entry("sub dir/loop", Manifest.Types.SYMLINK, null, null, null, null, ".")),
                new Manifest.Entry("sub dir/evil", Manifest.Types.SYMLINK, null, null, null, null, target));

        assertThatThrownBy(this::sync).isInstanceOf(SyncException.class)
                .hasMessageContaining("refused the manifest")
                .hasMessageContaining("symbolic link 'sub dir/evil'");

        assertThat(local).doesNotExist();
    }

    private static Manifest withEntry(Manifest manifest, Manifest.Entry entry) {
        List<Manifest.Entry> entries = new ArrayList<>(manifest.entries());
        entries.add(entry);
        return new Manifest(manifest.format(), "\"edited-" + entries.size() + "\"", manifest.files(), manifest.bytes(),
                entries);
    }

    @Test
    void theFallbackSwapByTwoRenamesGivesTheSameTree() throws Exception {
        DirectorySync fallback = server.sync(TreeSwap.renameAside());
        fallback.sync(FakeTreeServer.REMOTE, local);
        write("file-2.cf", 10, 2);

        SyncResult result = fallback.sync(FakeTreeServer.REMOTE, local);

        assertThat(result.changed()).isTrue();
        assertThat(snapshot(local)).isEqualTo(snapshot(source));
        assertThat(siblings()).containsExactly(".inputs.pintle-sync.json", ".inputs.pintle-sync.lock", "inputs");
    }

    @Test
    void leftoversOfACrashedSyncAreCleanedUpAndASwappedOutTreeIsPutBack() throws Exception {
        sync();
        Map<String, String> synced = snapshot(local);
        Files.createDirectories(local.resolveSibling(".inputs.pintle-staging-0123456789ab/x"));
        Files.move(local, local.resolveSibling(".inputs.pintle-old-0123456789ab"));
        Files.writeString(local.resolveSibling(".inputs.pintle-sync.json.retired"), "{}");
        Files.writeString(local.resolveSibling(".inputs.pintle-sync.json.tmp"), "{\"cut");

        SyncResult result = sync();

        assertThat(result.requests()).as("the tree is back, so the sidecar's ETag still holds").isEqualTo(1);
        assertThat(snapshot(local)).isEqualTo(synced);
        assertThat(siblings()).containsExactly(".inputs.pintle-sync.json", ".inputs.pintle-sync.lock", "inputs");
    }

    @Test
    void oneListingOfTheParentCleansEveryDirectorysLeftoversAndASyncWithoutTheScanLeavesThem() throws Exception {
        sync();
        Map<String, String> synced = snapshot(local);
        Path parent = local.getParent();
        Files.createDirectories(parent.resolve(".inputs.pintle-staging-0123456789ab/x"));
        Files.move(local, parent.resolve(".inputs.pintle-old-0123456789ab"));
        Files.createDirectories(parent.resolve("other"));
        Files.createDirectories(parent.resolve(".other.pintle-old-00000000000a/y"));
        Files.createDirectories(parent.resolve(".other.pintle-staging-00000000000b"));
        Files.createDirectories(parent.resolve(".unrelated"));
        Files.writeString(parent.resolve(".other.pintle-sync.json.retired"), "{}");
        Files.writeString(parent.resolve(".inputs.pintle-sync.json.tmp"), "{\"cut");

        DirectorySync.removeStaleIn(parent);

        assertThat(snapshot(local)).as("swapped-out tree put back").isEqualTo(synced);
        assertThat(siblings()).containsExactly(".inputs.pintle-sync.json", ".inputs.pintle-sync.lock", ".unrelated",
                "inputs", "other");

        Files.createDirectories(parent.resolve(".inputs.pintle-staging-0123456789ac/x"));
        server.sync(TreeSwap.atomic()).withoutStaleScan().sync(FakeTreeServer.REMOTE, local);
        assertThat(parent.resolve(".inputs.pintle-staging-0123456789ac")).as("not looked for").isDirectory();
        sync();
        assertThat(parent.resolve(".inputs.pintle-staging-0123456789ac")).as("the ordinary sync looks").doesNotExist();
    }

    @Test
    void aMissingLocalTreeIsSyncedAgainEvenWithASidecar() throws Exception {
        sync();
        StagingTree.delete(local);

        SyncResult result = sync();

        assertThat(result.changed()).isTrue();
        assertThat(snapshot(local)).isEqualTo(snapshot(source));
    }

    @Test
    void anEmptyRemoteTreeEmptiesTheLocalOne() throws Exception {
        sync();
        StagingTree.delete(source);
        Files.createDirectory(source);

        SyncResult result = sync();

        assertThat(result.removed()).isEqualTo(25);
        try (Stream<Path> list = Files.list(local)) {
            assertThat(list).isEmpty();
        }
    }

    @Test
    void syncWhenChangedAsksTheServerToWaitOnlyWhenThereIsAVersionToWaitOn() throws Exception {
        DirectorySync sync = server.sync(TreeSwap.atomic());
        sync.syncWhenChanged(FakeTreeServer.REMOTE, local, java.time.Duration.ofSeconds(5));
        sync.syncWhenChanged(FakeTreeServer.REMOTE, local, java.time.Duration.ofSeconds(5));

        assertThat(server.requests).startsWith("/tree/?view=manifest", "/tree/?view=archive")
                .endsWith("/tree/?view=manifest&wait=5");
        assertThatThrownBy(() -> sync.syncWhenChanged(FakeTreeServer.REMOTE, local,
                java.time.Duration.ofSeconds(301))).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void theServersProblemDetailsSurface() throws Exception {
        DirectorySync sync = server.sync(TreeSwap.atomic());

        assertThatThrownBy(() -> sync.sync("/elsewhere", local))
                .isInstanceOf(ProblemException.class)
                .hasMessageContaining("404");
        assertThat(local).doesNotExist();
        assertThat(Files.exists(local.getParent().resolve("inputs"), LinkOption.NOFOLLOW_LINKS)).isFalse();
    }
}
