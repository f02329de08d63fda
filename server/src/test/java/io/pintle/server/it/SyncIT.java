package io.pintle.server.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pintle.client.PintleClient;
import io.pintle.client.ProblemException;
import io.pintle.client.SyncException;
import io.pintle.client.SyncResult;
import io.pintle.server.cli.ExitCodes;
import io.pintle.server.testing.Await;
import io.pintle.server.testing.Cli;
import io.pintle.server.testing.NodeKeys;
import io.pintle.server.testing.Sandbox;
import io.pintle.server.testing.TestServer;
import io.pintle.server.tls.SelfSigned;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code PintleClient.sync} and {@code pintle sync} against the real server over mutual TLS (HTTP/2): the
 * manifest and archive views, per-file downloads, the atomic swap, and failures that must leave the local tree
 * as it was. Each test syncs its own directory under {@code /policies/node-1/}.
 */
class SyncIT {
    private static final String NODE = "node-1";

    @TempDir
    static Path dir;

    static Sandbox sandbox;
    static TestServer server;
    static NodeKeys node;

    @TempDir
    Path work;

    @BeforeAll
    static void start() throws Exception {
        sandbox = Sandbox.create(dir);
        node = sandbox.addNode(NODE, SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        server = TestServer.start(sandbox);
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    /** Requests parked by {@code ?wait} on the server. */
    private static double waiters() throws Exception {
        Double parked = server.metric("pintle_change_waiters");
        return parked == null ? 0 : parked;
    }

    /** A Rudder-like policy tree of {@code files} files (1 KiB to 20 KiB), a sub-directory and a symlink. */
    private static Path tree(String name, int files) throws IOException {
        for (int i = 0; i < files; i++) {
            sandbox.randomShareFile(NODE + "/" + name + "/techniques/t" + (i % 5) + "/file-" + i + ".cf",
                    1024 + (i * 997) % (19 * 1024), i);
        }
        Path root = sandbox.share().resolve(NODE + "/" + name);
        sandbox.shareFile(NODE + "/" + name + "/promises.cf",
                "bundle common main { }\n".getBytes(StandardCharsets.UTF_8));
        Files.createSymbolicLink(root.resolve("techniques/current"), Path.of("t0"));
        Files.setPosixFilePermissions(root.resolve("promises.cf"), PosixFilePermissions.fromString("rw-------"));
        return root;
    }

    private static String remote(String name) {
        return "/policies/" + NODE + "/" + name;
    }

    private static String name(TestInfo test) {
        return test.getTestMethod().orElseThrow().getName();
    }

    /** Type, content digest or link target, and mode of every entry; what a sync must reproduce. */
    static Map<String, String> snapshot(Path root) throws Exception {
        Map<String, String> tree = new TreeMap<>();
        try (Stream<Path> walk = Files.walk(root)) {
            for (Path path : walk.toList()) {
                String relative = root.relativize(path).toString();
                if (Files.isSymbolicLink(path)) {
                    tree.put(relative, "link -> " + Files.readSymbolicLink(path));
                } else if (Files.isDirectory(path)) {
                    tree.put(relative, "dir");
                } else {
                    tree.put(relative, "file " + HexFormat.of().formatHex(
                            MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(path))) + " "
                            + PosixFilePermissions.toString(Files.getPosixFilePermissions(path)));
                }
            }
        }
        return tree;
    }

    private List<String> besideLocal(Path local) throws IOException {
        try (Stream<Path> list = Files.list(local.getParent())) {
            return list.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    @Test
    void syncFromNothingCopiesTheTreeInOneArchive(TestInfo test) throws Exception {
        Path source = tree(name(test), 40);
        Path local = work.resolve("inputs");

        SyncResult result = server.client(node).sync(remote(name(test)), local);

        assertThat(result.changed()).isTrue();
        assertThat(result.usedArchive()).isTrue();
        assertThat(result.requests()).isEqualTo(2);
        assertThat(result.filesDownloaded()).isEqualTo(41);
        assertThat(result.etag()).matches("\".+\"");
        assertThat(snapshot(local)).isEqualTo(snapshot(source));
        assertThat(Files.readSymbolicLink(local.resolve("techniques/current"))).isEqualTo(Path.of("t0"));
        assertThat(Files.getLastModifiedTime(local.resolve("promises.cf")))
                .isEqualTo(Files.getLastModifiedTime(source.resolve("promises.cf")));
        assertThat(besideLocal(local))
                .containsExactly(".inputs.pintle-sync.json", ".inputs.pintle-sync.lock", "inputs");
    }

    @Test
    void anUnchangedTreeIsOneRequestAnswered304(TestInfo test) throws Exception {
        tree(name(test), 40);
        Path local = work.resolve("inputs");
        PintleClient client = server.client(node);
        SyncResult first = client.sync(remote(name(test)), local);
        Path sidecar = local.resolveSibling(".inputs.pintle-sync.json");
        FileTime sidecarWritten = Files.getLastModifiedTime(sidecar);
        Map<String, String> synced = snapshot(local);
        Object inode = Files.getAttribute(local, "unix:ino");

        SyncResult again = client.sync(remote(name(test)), local);

        assertThat(again.requests()).isEqualTo(1);
        assertThat(again.changed()).isFalse();
        assertThat(again.etag()).isEqualTo(first.etag());
        // A 200 with the same tree would have rewritten the sidecar; only a 304 leaves it alone.
        assertThat(Files.getLastModifiedTime(sidecar)).isEqualTo(sidecarWritten);
        assertThat(Files.getAttribute(local, "unix:ino")).isEqualTo(inode);
        assertThat(snapshot(local)).isEqualTo(synced);
    }

    @Test
    void tenChangedFilesAreTheOnlyDownloadsOverOneConnection(TestInfo test) throws Exception {
        Path source = tree(name(test), 60);
        Path local = work.resolve("inputs");
        server.client(node).sync(remote(name(test)), local);
        for (int i = 0; i < 10; i++) {
            sandbox.randomShareFile(NODE + "/" + name(test) + "/techniques/t" + (i % 5) + "/file-" + (i * 6) + ".cf",
                    3000 + i, 1000 + i);
        }

        try (CuttingProxy proxy = new CuttingProxy(server.port(), Long.MAX_VALUE)) {
            SyncResult result = proxy.client().sync(remote(name(test)), local);

            assertThat(result.changed()).isTrue();
            assertThat(result.usedArchive()).isFalse();
            assertThat(result.filesDownloaded()).isEqualTo(10);
            assertThat(result.bytesDownloaded()).isEqualTo(10 * 3000 + 45);
            assertThat(result.requests()).isEqualTo(11);
            assertThat(proxy.connections()).as("per-file downloads multiplexed over one HTTP/2 connection")
                    .isEqualTo(1);
        }
        assertThat(snapshot(local)).isEqualTo(snapshot(source));
    }

    @Test
    void deletedFilesArePurgedAndTheSymlinkIsKept(TestInfo test) throws Exception {
        Path source = tree(name(test), 30);
        Path local = work.resolve("inputs");
        PintleClient client = server.client(node);
        client.sync(remote(name(test)), local);
        Files.delete(source.resolve("techniques/t4/file-4.cf"));
        Files.delete(source.resolve("techniques/t4/file-9.cf"));
        Files.writeString(local.resolve("techniques/t1/local-junk.txt"), "not from the server");

        SyncResult result = client.sync(remote(name(test)), local);

        assertThat(result.changed()).isTrue();
        assertThat(result.filesDownloaded()).isZero();
        assertThat(result.removed()).isEqualTo(3);
        assertThat(local.resolve("techniques/t4/file-4.cf")).doesNotExist();
        assertThat(local.resolve("techniques/t1/local-junk.txt")).doesNotExist();
        assertThat(Files.isSymbolicLink(local.resolve("techniques/current"))).isTrue();
        assertThat(snapshot(local)).isEqualTo(snapshot(source));
    }

    @Test
    void aSyncCutMidWayLeavesTheLocalTreeByteForByteAsItWas(TestInfo test) throws Exception {
        Path source = tree(name(test), 40);
        Path local = work.resolve("inputs");
        server.client(node).sync(remote(name(test)), local);
        Map<String, String> before = snapshot(local);
        for (int i = 0; i < 40; i++) {
            sandbox.randomShareFile(NODE + "/" + name(test) + "/techniques/t" + (i % 5) + "/file-" + i + ".cf",
                    100_000, 5000 + i);
        }

        // Every connection is cut after 200 KB from the server: past the manifest, inside the 4 MB download.
        try (CuttingProxy proxy = new CuttingProxy(server.port(), 200_000)) {
            assertThatThrownBy(() -> proxy.client().sync(remote(name(test)), local))
                    .isInstanceOf(SyncException.class)
                    .hasMessageContaining("failed after 3 attempts")
                    .hasMessageContaining("local tree unchanged");
            assertThat(proxy.connections()).isGreaterThanOrEqualTo(3);
        }

        assertThat(snapshot(local)).isEqualTo(before);
        assertThat(besideLocal(local))
                .containsExactly(".inputs.pintle-sync.json", ".inputs.pintle-sync.lock", "inputs");
        SyncResult repaired = server.client(node).sync(remote(name(test)), local);
        assertThat(repaired.changed()).isTrue();
        assertThat(snapshot(local)).isEqualTo(snapshot(source));
    }

    @Test
    void anInterruptDuringTheDownloadLeavesTheLocalTreeAsItWas(TestInfo test) throws Exception {
        Path source = tree(name(test), 5);
        Path local = work.resolve("inputs");
        server.client(node).sync(remote(name(test)), local);
        Map<String, String> before = snapshot(local);
        for (int i = 0; i < 4; i++) {
            sandbox.randomShareFile(NODE + "/" + name(test) + "/big-" + i + ".bin", 2 * 1024 * 1024, 70 + i);
        }
        AtomicReference<Throwable> outcome = new AtomicReference<>();
        // The server's bytes are slowed down (about 1.6 MB/s), so the interrupt lands while the archive streams.
        try (CuttingProxy proxy = new CuttingProxy(server.port(), Long.MAX_VALUE, 16 * 1024)) {
            PintleClient client = proxy.client();
            Thread syncing = new Thread(() -> {
                try {
                    outcome.set(new AssertionError("completed: " + client.sync(remote(name(test)), local)));
                } catch (Exception e) {
                    outcome.set(e);
                }
            }, "syncing");
            syncing.start();
            proxy.awaitBytes(500_000);
            syncing.interrupt();
            syncing.join(30_000);
            assertThat(syncing.isAlive()).isFalse();
        }

        assertThat(outcome.get()).isInstanceOf(InterruptedException.class);
        assertThat(snapshot(local)).isEqualTo(before);
        assertThat(besideLocal(local))
                .containsExactly(".inputs.pintle-sync.json", ".inputs.pintle-sync.lock", "inputs");
        assertThat(snapshot(source)).isNotEqualTo(before);
    }

    @Test
    void aFileIsNotADirectoryToSync(TestInfo test) throws Exception {
        tree(name(test), 1);
        Path local = work.resolve("inputs");

        assertThatThrownBy(() -> server.client(node).sync(remote(name(test)) + "/promises.cf", local))
                .isInstanceOfSatisfying(ProblemException.class,
                        e -> assertThat(e.problem().status()).isEqualTo(404));
        assertThat(local).doesNotExist();
    }

    @Test
    void anotherNodesPoliciesAreRefusedAndNothingIsWritten(TestInfo test) throws Exception {
        tree(name(test), 1);
        NodeKeys other = sandbox.addNode("node-2-" + name(test).length(), SelfSigned.KeyType.EC_P256,
                Sandbox.Pinning.BOTH);
        Path local = work.resolve("inputs");

        assertThatThrownBy(() -> server.client(other).sync(remote(name(test)), local))
                .isInstanceOfSatisfying(ProblemException.class,
                        e -> assertThat(e.problem().status()).isEqualTo(403));
        assertThat(local).doesNotExist();
    }

    @Test
    void syncWhenChangedAnswersAsSoonAsTheTreeChanges(TestInfo test) throws Exception {
        Path source = tree(name(test), 10);
        Path local = work.resolve("inputs");
        PintleClient client = server.client(node);
        client.sync(remote(name(test)), local);

        double parkedBefore = waiters();
        long started = System.nanoTime();
        CompletableFuture<SyncResult> waiting = CompletableFuture.supplyAsync(() -> {
            try {
                return client.syncWhenChanged(remote(name(test)), local, Duration.ofSeconds(30));
            } catch (Exception e) {
                throw new java.util.concurrent.CompletionException(e);
            }
        });
        Await.until(Duration.ofSeconds(10), "the manifest request parked", () -> waiters() > parkedBefore);
        assertThat(waiting).isNotDone();
        sandbox.randomShareFile(NODE + "/" + name(test) + "/techniques/t1/file-1.cf", 2222, 1);
        SyncResult result = waiting.get(20, TimeUnit.SECONDS);

        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(20));
        assertThat(result.changed()).isTrue();
        assertThat(result.filesDownloaded()).isEqualTo(1);
        assertThat(snapshot(local)).isEqualTo(snapshot(source));
    }

    @Test
    void syncWhenChangedReturnsUnchangedAtTheTimeout(TestInfo test) throws Exception {
        tree(name(test), 3);
        Path local = work.resolve("inputs");
        PintleClient client = server.client(node);
        client.sync(remote(name(test)), local);
        long started = System.nanoTime();

        SyncResult result = client.syncWhenChanged(remote(name(test)), local, Duration.ofSeconds(1));

        assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThanOrEqualTo(Duration.ofMillis(900));
        assertThat(result.changed()).isFalse();
        assertThat(result.requests()).isEqualTo(1);
    }

    @Test
    void theSyncCommandSyncsThenReportsUpToDate(TestInfo test) throws Exception {
        Path source = tree(name(test), 12);
        Path local = work.resolve("inputs");
        String[] args = {"sync", "--server", server.uri().toString(), "--cert", node.certificatePath().toString(),
                "--key", node.keyPath().toString(), "--pin", sandbox.serverPin(), "--parallel", "4",
                remote(name(test)), local.toString()};

        Cli.Run first = Cli.pintle(args);
        Cli.Run second = Cli.pintle(args);

        assertThat(first.exitCode()).as(first.err()).isEqualTo(ExitCodes.OK);
        // The server runs in this JVM and its access log goes to the same standard output: keep our lines.
        assertThat(first.out().lines().filter(line -> line.startsWith("synced ")).toList()).singleElement()
                .asString()
                .contains("updated").contains("13 files downloaded").contains("2 requests").contains("etag \"");
        assertThat(snapshot(local)).isEqualTo(snapshot(source));
        assertThat(second.exitCode()).as(second.err()).isEqualTo(ExitCodes.OK);
        assertThat(second.out()).contains("already up to date").contains("1 request,");
    }

    @Test
    void theSyncCommandShowsTheServersProblemOnStderr(TestInfo test) throws Exception {
        tree(name(test), 1);
        Cli.Run run = Cli.pintle("sync", "--server", server.uri().toString(), "--cert", node.certificatePath().toString(),
                "--key", node.keyPath().toString(), "--pin", sandbox.serverPin(),
                remote(name(test)) + "/promises.cf", work.resolve("inputs").toString());

        assertThat(run.exitCode()).isEqualTo(ExitCodes.SYNC_FAILED);
        assertThat(run.err()).startsWith("pintle sync: the server refused: 404").contains("unchanged");
        assertThat(run.out()).doesNotContain("synced ");
    }

    /**
     * A TCP relay on loopback between the client and the server (TLS passes through untouched, so the pin and
     * the client certificate are the real ones) that can cut every connection after so many bytes from the
     * server, and slow the server's bytes down.
     */
    private static final class CuttingProxy implements AutoCloseable {
        private final ServerSocket listener;
        private final int target;
        private final long cutAfter;
        private final int bytesPerTick;
        private final AtomicInteger connections = new AtomicInteger();
        private final java.util.concurrent.atomic.AtomicLong relayed = new java.util.concurrent.atomic.AtomicLong();
        private final List<Socket> sockets = new CopyOnWriteArrayList<>();

        CuttingProxy(int target, long cutAfter) throws IOException {
            this(target, cutAfter, 0);
        }

        /** @param bytesPerTick when positive, at most this many server bytes relayed each 10 ms */
        CuttingProxy(int target, long cutAfter, int bytesPerTick) throws IOException {
            this.target = target;
            this.cutAfter = cutAfter;
            this.bytesPerTick = bytesPerTick;
            this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
            Thread acceptor = new Thread(this::accept, "cutting-proxy");
            acceptor.setDaemon(true);
            acceptor.start();
        }

        PintleClient client() throws Exception {
            return PintleClient.builder(URI.create("https://127.0.0.1:" + listener.getLocalPort()))
                    .identity(node.certificatePath(), node.keyPath())
                    .pin(sandbox.serverPin())
                    .build();
        }

        int connections() {
            return connections.get();
        }

        void awaitBytes(long bytes) throws InterruptedException {
            Await.asserted(Duration.ofSeconds(30),
                    () -> assertThat(relayed.get()).as("bytes relayed from the server").isGreaterThanOrEqualTo(bytes));
        }

        private void accept() {
            try {
                while (true) {
                    Socket client = listener.accept();
                    Socket upstream = new Socket(InetAddress.getLoopbackAddress(), target);
                    connections.incrementAndGet();
                    sockets.add(client);
                    sockets.add(upstream);
                    pump(client, upstream, Long.MAX_VALUE, 0, null);
                    pump(upstream, client, cutAfter, bytesPerTick, relayed);
                }
            } catch (IOException closed) {
                // The proxy was closed.
            }
        }

        private static void pump(Socket from, Socket to, long limit, int perTick,
                java.util.concurrent.atomic.AtomicLong counter) {
            Thread thread = new Thread(() -> {
                byte[] buffer = new byte[perTick > 0 ? Math.min(perTick, 16 * 1024) : 16 * 1024];
                long total = 0;
                try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                    for (int n; (n = in.read(buffer)) > 0; ) {
                        int allowed = (int) Math.min(n, limit - total);
                        out.write(buffer, 0, allowed);
                        out.flush();
                        total += allowed;
                        if (counter != null) {
                            counter.addAndGet(allowed);
                        }
                        if (total >= limit) {
                            break;
                        }
                        if (perTick > 0) {
                            Thread.sleep(10L * n / perTick + 1); // the throttled link under test
                        }
                    }
                } catch (IOException | InterruptedException ended) {
                    // One side closed.
                } finally {
                    closeQuietly(from);
                    closeQuietly(to);
                }
            }, "cutting-proxy-pump");
            thread.setDaemon(true);
            thread.start();
        }

        private static void closeQuietly(Socket socket) {
            try {
                socket.close();
            } catch (IOException ignored) {
                // Already closed.
            }
        }

        @Override
        public void close() throws IOException {
            listener.close();
            sockets.forEach(CuttingProxy::closeQuietly);
        }
    }
}
