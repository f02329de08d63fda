package io.pintle.server.policy;

import io.pintle.server.threads.Lane;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.LongAdder;

/**
 * SHA-256 digests of files, computed once per file version and kept. A version is the file's identity (device
 * and inode), size and modification time, as a stat sees them: Rudder replaces files by writing a new one and
 * renaming it (a new inode), and an in-place write changes the modification time, so a cached digest is used only
 * while the stat still describes the file it was computed from. Nothing is ever rehashed per request.
 *
 * <p>Digests are computed on the server's workers, a few at once (a {@link Lane} of {@code threads}), so that a
 * cold tree is hashed in parallel; two requests
 * that need the same version at once share one computation. The cache holds at most {@code maxEntries} digests;
 * past that, arbitrary entries are dropped (they are computed again when next needed).
 */
public final class DigestCache implements AutoCloseable {
    private static final int BUFFER_BYTES = 64 * 1024;

    private final int maxEntries;
    private final Lane hashers;
    private final ConcurrentHashMap<Path, Digest> digests = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<FileStat, CompletableFuture<String>> inFlight = new ConcurrentHashMap<>();
    private final LongAdder hits = new LongAdder();
    private final LongAdder computed = new LongAdder();
    private final LongAdder bytesHashed = new LongAdder();

    /**
     * @param maxEntries the most digests kept
     * @param threads digests computed in parallel at most
     * @param workers the server's worker pool
     */
    public DigestCache(int maxEntries, int threads, Executor workers) {
        if (maxEntries < 1 || threads < 1) {
            throw new IllegalArgumentException("maxEntries and threads must be at least 1");
        }
        this.maxEntries = maxEntries;
        this.hashers = Lane.of("digests", threads, workers);
    }

    /** @return a sensible number of digests computed at once on this machine: I/O and SHA-256 both gain from a few */
    public static int defaultThreads() {
        return Math.max(2, Math.min(8, Runtime.getRuntime().availableProcessors()));
    }

    /**
     * The digest of one file version, from the cache or computed on the hashing pool.
     *
     * @param version the file as a stat saw it just now
     * @return the lower-case hex SHA-256; fails with {@link FileVersion.FileChangedException} when the file is
     *     no longer that version while it is read, or {@link NoSuchFileException} when it is gone
     */
    public CompletableFuture<String> sha256(FileStat version) {
        Digest known = digests.get(version.path());
        if (known != null && known.version().equals(version)) {
            hits.increment();
            return CompletableFuture.completedFuture(known.sha256());
        }
        CompletableFuture<String> mine = new CompletableFuture<>();
        CompletableFuture<String> running = inFlight.putIfAbsent(version, mine);
        if (running != null) {
            return running;
        }
        try {
            hashers.execute(() -> {
                try {
                    String sha256 = hash(version, "SHA-256");
                    remember(new Digest(version, sha256));
                    mine.complete(sha256);
                } catch (Throwable failure) {
                    mine.completeExceptionally(failure);
                } finally {
                    inFlight.remove(version, mine);
                }
            });
        } catch (RuntimeException rejected) {
            inFlight.remove(version, mine);
            mine.completeExceptionally(rejected);
        }
        return mine;
    }

    private void remember(Digest digest) {
        Path path = digest.version().path();
        // Removed first so that the key is the entry's own path: put() keeps an existing key, which once a file
        // changed would leave two path objects an entry (the old key, the new version's), ~200 bytes each.
        digests.remove(path);
        digests.put(path, digest);
        if (digests.size() > maxEntries) {
            // Drop about a tenth, in the map's (hash) order: effectively arbitrary, and cheap.
            int excess = digests.size() - maxEntries + maxEntries / 10;
            Iterator<Path> keys = digests.keySet().iterator();
            while (excess-- > 0 && keys.hasNext()) {
                keys.next();
                keys.remove();
            }
        }
    }

    /**
     * Computes a digest without the cache, on the calling thread (for the rare algorithms a client may ask for,
     * such as relayd's {@code hash_type=sha512}).
     *
     * @param version the file as a stat saw it just now
     * @param algorithm a JDK digest name, for example {@code SHA-512}
     * @return the lower-case hex digest
     * @throws FileVersion.FileChangedException if the file is no longer that version while it is read
     * @throws IOException if it cannot be read
     */
    public String compute(FileStat version, String algorithm) throws IOException {
        return hash(version, algorithm);
    }

    private String hash(FileStat version, String algorithm) throws IOException {
        MessageDigest sha256;
        try {
            sha256 = MessageDigest.getInstance(algorithm);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalArgumentException(algorithm + " is not available in this JVM", e);
        }
        long total = 0;
        // Opened through a copy of the path: a FileChannel keeps its path's string, which the path object then
        // caches for good (another ~190 bytes an entry, kept by the cache's key).
        Path path = version.path();
        Path copy = path.getParent() == null ? path : path.getParent().resolve(path.getFileName());
        try (FileChannel channel = FileVersion.openNoFollow(copy)) {
            ByteBuffer buffer = ByteBuffer.allocate(BUFFER_BYTES);
            int read;
            while ((read = channel.read(buffer)) >= 0) {
                buffer.flip();
                sha256.update(buffer);
                buffer.clear();
                total += read;
            }
        }
        // The digest belongs to the version only if the file is still that version after the read.
        FileStat after;
        try {
            after = FileStat.of(version.path());
        } catch (NoSuchFileException gone) {
            throw new FileVersion.FileChangedException(version.path() + " was removed while it was hashed");
        }
        if (!after.equals(version) || total != version.size()) {
            throw new FileVersion.FileChangedException(version.path() + " changed while it was hashed");
        }
        computed.increment();
        bytesHashed.add(total);
        return HexFormat.of().formatHex(sha256.digest());
    }

    /** @return a new SHA-256 digester */
    static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is not available in this JVM", e);
        }
    }

    /** @return the cache's key for this path (the same object as its entry's version's path), or null */
    Path key(Path path) {
        for (Path key : digests.keySet()) {
            if (key.equals(path)) {
                return key;
            }
        }
        return null;
    }

    /** @return the version the cached digest of this path belongs to, or null */
    FileStat cached(Path path) {
        Digest digest = digests.get(path);
        return digest == null ? null : digest.version();
    }

    /** @return how many digests were answered from the cache */
    public long hits() {
        return hits.sum();
    }

    /** @return how many digests were computed (each reads the whole file) */
    public long computed() {
        return computed.sum();
    }

    /** @return bytes read to compute digests */
    public long bytesHashed() {
        return bytesHashed.sum();
    }

    /** Stops hashing; digests still being computed fail. */
    @Override
    public void close() {
        hashers.shutdownNow();
        try {
            hashers.awaitTermination(Duration.ofSeconds(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private record Digest(FileStat version, String sha256) {
        Digest {
            Objects.requireNonNull(version);
            Objects.requireNonNull(sha256);
        }
    }
}
