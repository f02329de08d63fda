package io.pintle.server.sharedfiles;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pintle.server.nodes.KeyHash;
import io.pintle.server.nodes.Node;
import io.pintle.server.nodes.NodeId;
import io.pintle.server.nodes.NodeRegistry;
import io.pintle.server.policy.FileVersion;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.SequenceInputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.MessageDigest;
import java.security.Signature;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.bouncycastle.asn1.x509.SubjectPublicKeyInfo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class SharedFileStoreTest {
    @Test
    void ttlAcceptsRelaydsForms() throws Exception {
        assertThat(SharedFileStore.ttl("9136")).isEqualTo(Duration.ofSeconds(9136));
        assertThat(SharedFileStore.ttl("1h 7s")).isEqualTo(Duration.ofSeconds(3607));
        assertThat(SharedFileStore.ttl("1hour 2minutes")).isEqualTo(Duration.ofSeconds(3720));
        assertThat(SharedFileStore.ttl("1d 7seconds")).isEqualTo(Duration.ofSeconds(86407));
        assertThat(SharedFileStore.ttl("3 hours")).isEqualTo(Duration.ofHours(3));
        assertThat(SharedFileStore.ttl("2w")).isEqualTo(Duration.ofDays(14));
        for (String bad : new String[] {"913j", "913b83", "913h 89j", "", "1 2", "-5", "h", "99999d"}) {
            assertThatThrownBy(() -> SharedFileStore.ttl(bad)).as(bad)
                    .isInstanceOf(SharedFileStore.RejectedException.class);
        }
    }

    @Test
    void idsCannotLeaveTheirDirectory() {
        for (String bad : new String[] {".", "..", "a/b", "a b", "", "a\u0000b", "\u00e9"}) {
            assertThatThrownBy(() -> new SharedFileId("t", "s", bad)).as(bad).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> new SharedFileId(bad, "s", "f")).as(bad).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> new SharedFileId("t", bad, "f")).as(bad).isInstanceOf(IllegalArgumentException.class);
        }
        assertThat(new SharedFileId("t", "s", "my.file-1_x").file(Path.of("/r")))
                .isEqualTo(Path.of("/r/t/files/s/my.file-1_x"));
    }

    @Test
    void cleanupRemovesExpiredFilesAndAbandonedUploadsOnly(@TempDir Path root) throws Exception {
        Instant now = Instant.parse("2026-12-02T16:00:00Z");
        SharedFileStore store = new SharedFileStore(Clock.fixed(now, ZoneOffset.UTC), 1024);
        Path dir = Files.createDirectories(root.resolve("target/files/source"));
        write(dir, "old", now.minusSeconds(1));
        write(dir, "fresh", now.plusSeconds(60));
        Path abandoned = Files.writeString(dir.resolve(".x.1234.part"), "half");
        Files.setLastModifiedTime(abandoned, FileTime.from(now.minus(Duration.ofHours(2))));
        Path uploading = Files.writeString(dir.resolve(".y.5678.part"), "in flight");
        Files.setLastModifiedTime(uploading, FileTime.from(now.minusSeconds(5)));
        Path abandonedNow = Files.writeString(dir.resolve(".~upload-1234.part"), "half");
        Files.setLastModifiedTime(abandonedNow, FileTime.from(now.minus(Duration.ofHours(2))));
        Path uploadingNow = Files.writeString(dir.resolve(".~upload-5678.metadata.part"), "in flight");
        Files.setLastModifiedTime(uploadingNow, FileTime.from(now.minusSeconds(5)));

        assertThat(store.removeExpired(root)).isEqualTo(3);
        assertThat(abandonedNow).doesNotExist();
        assertThat(uploadingNow).exists();
        assertThat(dir.resolve("old")).doesNotExist();
        assertThat(dir.resolve("old.metadata")).doesNotExist();
        assertThat(abandoned).doesNotExist();
        assertThat(dir.resolve("fresh")).exists();
        assertThat(dir.resolve("fresh.metadata")).exists();
        assertThat(uploading).exists();
        assertThat(store.current(root, new SharedFileId("target", "source", "fresh"))).isPresent();
        assertThat(store.current(root, new SharedFileId("target", "source", "old"))).isEmpty();
    }

    // ---- concurrency, names and temporaries (issue 18)

    @Test
    void concurrentUploadPairsOfOneIdAlwaysLeaveAFileMatchingItsMetadata(@TempDir Path root) throws Exception {
        Sender sender = new Sender();
        SharedFileStore store = new SharedFileStore(Clock.systemUTC(), 1 << 20);
        SharedFileId id = new SharedFileId("target", "source", "contested");
        byte[][] bodies = {sender.upload(content('a', 3000)), sender.upload(content('b', 5000))};
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            int mismatched = 0;
            for (int round = 0; round < 1000; round++) {
                CyclicBarrier start = new CyclicBarrier(2);
                List<Future<?>> pair = new ArrayList<>();
                for (byte[] body : bodies) {
                    pair.add(pool.submit(() -> {
                        start.await();
                        return store.put(root, id, Duration.ofHours(1), new ByteArrayInputStream(body),
                                sender.registry());
                    }));
                }
                for (Future<?> upload : pair) {
                    upload.get(30, TimeUnit.SECONDS);
                }
                String stored = sha256(Files.readAllBytes(id.file(root)));
                String announced = SharedFileMetadata.parse(Files.readString(id.metadata(root))).hashValue();
                mismatched += stored.equals(announced) ? 0 : 1;
            }
            assertThat(mismatched).as("pairs whose stored file is not the one its metadata describes").isZero();
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void aReaderNeverPairsOneUploadsBytesWithAnothersMetadata(@TempDir Path root) throws Exception {
        Sender sender = new Sender();
        SharedFileStore store = new SharedFileStore(Clock.systemUTC(), 1 << 20);
        SharedFileId id = new SharedFileId("target", "source", "read-while-written");
        byte[][] bodies = {sender.upload(content('a', 3000)), sender.upload(content('b', 5000))};
        store.put(root, id, Duration.ofHours(1), new ByteArrayInputStream(bodies[0]), sender.registry());
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            List<Future<?>> writers = new ArrayList<>();
            for (int w = 0; w < 2; w++) {
                int first = w;
                writers.add(pool.submit(() -> {
                    for (int i = 0; i < 1000; i++) {
                        store.put(root, id, Duration.ofHours(1), new ByteArrayInputStream(bodies[(first + i) % 2]),
                                sender.registry());
                    }
                    return null;
                }));
            }
            int reads = 0;
            int mismatched = 0;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (!writers.stream().allMatch(Future::isDone) || (reads < 1000 && System.nanoTime() < deadline)) {
                Optional<SharedFileStore.Stored> stored = store.current(root, id);
                if (stored.isPresent()) {
                    reads++;
                    try (FileChannel channel = stored.get().version().open()) {
                        ByteBuffer bytes = ByteBuffer.allocate((int) channel.size());
                        while (bytes.hasRemaining() && channel.read(bytes) >= 0) {
                            // reads the whole version
                        }
                        mismatched += sha256(bytes.array()).equals(stored.get().metadata().hashValue()) ? 0 : 1;
                    } catch (FileVersion.FileChangedException replaced) {
                        // A newer upload replaced it after it was found: the reader answers 503 and retries.
                    }
                }
            }
            for (Future<?> writer : writers) {
                writer.get(60, TimeUnit.SECONDS);
            }
            assertThat(reads).isGreaterThanOrEqualTo(1000);
            assertThat(mismatched).as("of %d reads, pairs of one upload's bytes with another's metadata", reads)
                    .isZero();
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void theLongestIdWhoseNamesAllFitIsStored(@TempDir Path root) throws Exception {
        Sender sender = new Sender();
        SharedFileStore store = new SharedFileStore(Clock.systemUTC(), 1 << 20);
        SharedFileId id = new SharedFileId("target", "source", "i".repeat(SharedFileId.MAX_FILE_ID_LENGTH));
        store.put(root, id, Duration.ofHours(1), new ByteArrayInputStream(sender.upload(content('c', 10))),
                sender.registry());
        assertThat(id.file(root)).hasBinaryContent(content('c', 10));
        assertThat(id.metadata(root).getFileName().toString()).hasSize(255);
        try (Stream<Path> left = Files.list(id.file(root).getParent())) {
            assertThat(left).hasSize(2);
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {247, 250, 255, 256, 1000})
    void idsWhoseMetadataNameWouldNotFitAreRefusedWithTheLimit(int length) {
        assertThatThrownBy(() -> new SharedFileId("target", "source", "i".repeat(length)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("246");
    }

    @ParameterizedTest
    @ValueSource(strings = {"x.metadata", ".metadata", "a.b.metadata", "x.METADATA"})
    void idsEndingInMetadataAreRefusedAsRelaydDoes(String fileId) {
        assertThatThrownBy(() -> new SharedFileId("target", "source", fileId))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(".metadata");
    }

    @Test
    void aStoredFileNamedLikeATemporaryOutlivesTheCleanupWithItsMetadata(@TempDir Path root) throws Exception {
        Sender sender = new Sender();
        MovableClock clock = new MovableClock(Instant.now());
        SharedFileStore store = new SharedFileStore(clock, 1 << 20);
        for (String name : List.of("X.part", ".x.1234.part", "y.metadata.part")) {
            SharedFileId id = new SharedFileId("target", "source", name);
            store.put(root, id, Duration.ofDays(1), new ByteArrayInputStream(sender.upload(content('p', 10))),
                    sender.registry());
        }
        clock.advance(Duration.ofHours(2));

        assertThat(store.removeExpired(root)).isZero();
        for (String name : List.of("X.part", ".x.1234.part", "y.metadata.part")) {
            SharedFileId id = new SharedFileId("target", "source", name);
            assertThat(id.file(root)).as(name).hasBinaryContent(content('p', 10));
            assertThat(id.metadata(root)).as(name).exists();
        }
    }

    @Test
    void aRefusedOrCutUploadLeavesNothingAndACutIsTheClientsDoing(@TempDir Path root) throws Exception {
        Sender sender = new Sender();
        SharedFileStore store = new SharedFileStore(Clock.systemUTC(), 1 << 20);
        SharedFileId id = new SharedFileId("target", "source", "refused");
        byte[] tampered = sender.upload(content('t', 100));
        tampered[tampered.length - 1] ^= 1;
        assertThatThrownBy(() -> store.put(root, id, Duration.ofHours(1), new ByteArrayInputStream(tampered),
                sender.registry())).isInstanceOf(SharedFileStore.RejectedException.class);
        InputStream cut = new SequenceInputStream(new ByteArrayInputStream(sender.upload(content('t', 100)), 0, 600),
                new InputStream() {
                    @Override
                    public int read() throws IOException {
                        throw new IOException("the client went away");
                    }
                });
        assertThatThrownBy(() -> store.put(root, id, Duration.ofHours(1), cut, sender.registry()))
                .isInstanceOfSatisfying(SharedFileStore.RejectedException.class,
                        refused -> assertThat(refused.reason()).isEqualTo("upload-incomplete"));
        try (Stream<Path> left = Files.walk(root).filter(Files::isRegularFile)) {
            assertThat(left).isEmpty();
        }
    }

    @Test
    void aFileLeftWithoutItsMetadataIsRemovedOnceStaleAndAFreshOneIsNot(@TempDir Path root) throws Exception {
        Instant now = Instant.now();
        SharedFileStore store = new SharedFileStore(Clock.fixed(now, ZoneOffset.UTC), 1024);
        Path dir = Files.createDirectories(root.resolve("target/files/source"));
        // What a crash between a publish's two renames leaves, and a temporary file of an earlier release.
        Path orphan = Files.writeString(dir.resolve("orphan"), "published, never announced");
        Path legacy = Files.writeString(dir.resolve(".orphan.metadata.0b1c.part"), "header=...");
        for (Path left : List.of(orphan, legacy)) {
            Files.setLastModifiedTime(left, FileTime.from(now.minus(Duration.ofHours(2))));
        }
        Path recent = Files.writeString(dir.resolve("recent"), "maybe being published");

        assertThat(store.removeExpired(root)).isEqualTo(2);
        assertThat(orphan).doesNotExist();
        assertThat(legacy).doesNotExist();
        assertThat(recent).exists();
    }

    private static void write(Path dir, String name, Instant expires) throws Exception {
        Files.writeString(dir.resolve(name), "content");
        // The metadata only parses with a real key: a 2048-bit RSA key in PKCS#1.
        KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
        generator.initialize(2048);
        String key = Base64.getEncoder().encodeToString(SubjectPublicKeyInfo
                .getInstance(generator.generateKeyPair().getPublic().getEncoded()).parsePublicKey().getEncoded());
        Files.writeString(dir.resolve(name + ".metadata"), String.join("\n", "header=rudder-signature-v1",
                "algorithm=sha256", "digest=00", "hash_value=" + sha256("content".getBytes(StandardCharsets.UTF_8)),
                "short_pubkey=" + key, "hostname=h", "keydate=d", "keyid=k", "expires=" + expires.getEpochSecond(),
                ""));
    }

    /** A known node with an RSA agent key, signing uploads as an agent does. */
    private static final class Sender {
        private final KeyPair keys;
        private final NodeRegistry registry;

        Sender() throws Exception {
            KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
            generator.initialize(2048);
            keys = generator.generateKeyPair();
            registry = NodeRegistry.of(List.of(new Node(new NodeId("source"), "source.example.org",
                    Optional.of(KeyHash.sha256(keys.getPublic())), new NodeId("root"))), List.of());
        }

        NodeRegistry registry() {
            return registry;
        }

        byte[] upload(byte[] content) throws Exception {
            Signature signer = Signature.getInstance("SHA256withRSA");
            signer.initSign(keys.getPrivate());
            signer.update(content);
            String key = Base64.getEncoder().encodeToString(
                    SubjectPublicKeyInfo.getInstance(keys.getPublic().getEncoded()).parsePublicKey().getEncoded());
            ByteArrayOutputStream body = new ByteArrayOutputStream();
            body.writeBytes(String.join("\n", "header=rudder-signature-v1", "algorithm=sha256",
                    "digest=" + HexFormat.of().formatHex(signer.sign()), "hash_value=" + sha256(content),
                    "short_pubkey=" + key, "hostname=h", "keydate=d", "keyid=k", "", "")
                    .getBytes(StandardCharsets.UTF_8));
            body.writeBytes(content);
            return body.toByteArray();
        }
    }

    private static byte[] content(char fill, int size) {
        byte[] content = new byte[size];
        Arrays.fill(content, (byte) fill);
        return content;
    }

    private static String sha256(byte[] bytes) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    }

    /** A clock a test moves forward. */
    private static final class MovableClock extends Clock {
        private final AtomicReference<Instant> now;

        MovableClock(Instant start) {
            now = new AtomicReference<>(start);
        }

        void advance(Duration by) {
            now.updateAndGet(instant -> instant.plus(by));
        }

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now.get();
        }
    }
}
