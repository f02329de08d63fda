package io.pintle.server.sharedfiles;

import io.pintle.server.nodes.KeyHash;
import io.pintle.server.nodes.NodeId;
import io.pintle.server.nodes.NodeRegistry;
import io.pintle.server.policy.FileVersion;
import io.pintle.server.problem.PintleException;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.PublicKey;
import java.security.Signature;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Stores, checks, finds and expires node-to-node shared files under {@code [paths] shared_files}, as relayd does:
 * {@code {root}/{target}/files/{source}/{fileId}} plus {@code {fileId}.metadata} with {@code expires=}. The
 * layout is relayd's (and what {@code cf-serverd} serves to agents), so a file and its metadata are two files,
 * published by two renames; this class makes them one unit for everyone who reads them:
 *
 * <ul>
 *   <li><b>Writers</b> stream an upload to a temporary file, check it, then publish the file and then its
 *       metadata under a lock for that id, so concurrent uploads of one id publish one after the other and the
 *       last one's file and metadata are what stays. Temporary names contain {@code ~}, which no id may, so no
 *       stored file is ever taken for a temporary one, and they do not grow with the id.
 *   <li><b>Readers</b> take no lock: {@link #current} pairs the metadata with the file only when the file's
 *       hash is the metadata's {@code hash_value} (computed once per file version, and already known for what
 *       this store wrote), and hands out that exact {@link FileVersion}, which a download then opens. Between
 *       the two renames of a publish a reader sees the new file with the old metadata: it never serves that pair,
 *       but waits for the publish under way to end and looks again (the only time a reader takes the lock).
 *   <li><b>The cleanup</b> removes an expired pair under the same lock, the file first, so a crash in between
 *       leaves metadata without a file (absent to readers, removed by the next cleanup).
 * </ul>
 *
 * <p>An upload is checked in relayd's order — the source is a known node; the hash of the public key in the
 * metadata is pinned for that node; the RSA signature over the file is valid — and, stricter than relayd, the
 * file's hash must be the metadata's {@code hash_value}. A refused, failed or cut upload leaves nothing behind.
 */
public final class SharedFileStore {
    private static final Logger LOG = LoggerFactory.getLogger(SharedFileStore.class);

    /** Temporary files of uploads cut short by a crash are removed once this old. */
    static final Duration STALE_UPLOAD = Duration.ofHours(1);

    /** The longest time to live accepted. */
    static final Duration MAX_TTL = Duration.ofDays(3650);

    /** Suffix of the temporary files of an upload, after {@link #TEMPORARY} and a random part. */
    private static final String PART = ".part";

    /** Start of every temporary name; it contains {@link SharedFileId#NOT_IN_IDS}, so no valid id can take it. */
    private static final String TEMPORARY = "." + SharedFileId.NOT_IN_IDS + "upload-";

    /**
     * How many times a reader looks when the file it finds is not the one the metadata describes: it waits for
     * the publish under way between two looks, so only a stream of uploads of that very id needs a third look; a
     * mismatch that stays is what a crash between the two renames leaves, and is not served.
     */
    private static final int READ_ATTEMPTS = 5;

    /** Publishing locks: a stripe per id hash; a publish holds one for two renames, so 64 hardly ever contend. */
    private static final int LOCK_STRIPES = 64;

    /** How many file hashes (per file version) this store keeps; a few hundred bytes each. */
    static final int VERIFIED_ENTRIES = 4096;

    private final Clock clock;
    private final long maxBytes;
    private final Lock[] publishing = new Lock[LOCK_STRIPES];
    private final ConcurrentMap<String, String> verified = new ConcurrentHashMap<>();

    /**
     * @param clock the clock for expiry
     * @param maxBytes the largest upload body accepted (metadata and file)
     */
    public SharedFileStore(Clock clock, long maxBytes) {
        this.clock = clock;
        this.maxBytes = maxBytes;
        for (int i = 0; i < LOCK_STRIPES; i++) {
            publishing[i] = new ReentrantLock();
        }
    }

    /** @return the largest upload body accepted */
    public long maxBytes() {
        return maxBytes;
    }

    /**
     * Checks and stores an upload.
     *
     * @param root the shared files directory
     * @param id where it goes
     * @param ttl how long it is kept
     * @param body metadata lines, an empty line, then the file's bytes
     * @param registry the nodes this server knows (source and key pins)
     * @return the stored metadata (with {@code expires})
     * @throws RejectedException when a check fails (nothing is left on disk)
     * @throws IOException when the body cannot be read or the file written (nothing is left on disk)
     */
    public SharedFileMetadata put(Path root, SharedFileId id, Duration ttl, InputStream upload, NodeRegistry registry)
            throws IOException {
        InputStream body = new BufferedInputStream(new UploadBody(upload), 64 * 1024);
        NodeId source = nodeId(id.source());
        if (registry.node(source).isEmpty()) {
            throw new RejectedException(new PintleException.NotFound("unknown-source",
                    "the source node " + id.source() + " is not known to this server"));
        }
        SharedFileMetadata metadata;
        try {
            metadata = SharedFileMetadata.parse(readMetadata(body));
        } catch (SharedFileMetadata.InvalidException e) {
            throw new RejectedException(new PintleException.InvalidRequest("bad-metadata", e.getMessage()));
        }
        PublicKey key = metadata.publicKey();
        if (!registry.isPinned(source, KeyHash.sha256(key)) && !registry.isPinned(source, KeyHash.of("sha512", key))) {
            throw new RejectedException(new PintleException.AccessDenied("key-mismatch", "the public key in the "
                    + "metadata (" + KeyHash.sha256(key) + ") is not the key this server knows for " + id.source()));
        }
        Path file = id.file(root);
        Path directory = file.getParent();
        Files.createDirectories(directory);
        String random = UUID.randomUUID().toString();
        Path temporary = directory.resolve(TEMPORARY + random + PART);
        Path temporaryMetadata = directory.resolve(TEMPORARY + random + SharedFileMetadata.EXTENSION + PART);
        boolean stored = false;
        try {
            Signature verifier = Signature.getInstance(metadata.signatureAlgorithm());
            verifier.initVerify(key);
            MessageDigest hash = MessageDigest.getInstance(metadata.hashAlgorithm());
            try (OutputStream out = Files.newOutputStream(temporary, StandardOpenOption.CREATE_NEW,
                    StandardOpenOption.WRITE)) {
                byte[] buffer = new byte[64 * 1024];
                int read;
                while ((read = body.read(buffer)) >= 0) {
                    verifier.update(buffer, 0, read);
                    hash.update(buffer, 0, read);
                    out.write(buffer, 0, read);
                }
            }
            if (!verifier.verify(metadata.signature())) {
                throw new RejectedException(new PintleException.AccessDenied("bad-signature",
                        "the signature (digest) does not verify with the sender's key over the file's bytes"));
            }
            String actual = HexFormat.of().formatHex(hash.digest());
            if (!actual.equals(metadata.hashValue())) {
                throw new RejectedException(new PintleException.InvalidRequest("hash-mismatch",
                        "hash_value is not the " + metadata.algorithm() + " of the file sent"));
            }
            SharedFileMetadata kept = metadata.expiring(clock.instant().plus(ttl));
            Files.write(temporaryMetadata, kept.format(), StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
            FileVersion written = FileVersion.of(temporary);
            Lock lock = lock(id);
            lock.lock();
            try {
                // The file first, then its metadata: until the metadata names the new file, readers that meet the
                // new file with the old metadata see that the hashes differ and look again.
                Files.move(temporary, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                FileVersion published = FileVersion.of(file);
                if (published.etag().equals(written.etag())) {
                    remember(published, metadata.algorithm(), actual);
                }
                Files.move(temporaryMetadata, id.metadata(root), StandardCopyOption.ATOMIC_MOVE,
                        StandardCopyOption.REPLACE_EXISTING);
            } finally {
                lock.unlock();
            }
            stored = true;
            return kept;
        } catch (GeneralSecurityException e) {
            throw new RejectedException(new PintleException.AccessDenied("bad-signature",
                    "the signature cannot be checked: " + e.getMessage()));
        } finally {
            if (!stored) {
                Files.deleteIfExists(temporary);
                Files.deleteIfExists(temporaryMetadata);
            }
        }
    }

    /**
     * relayd's HEAD: whether the file is stored with this hash.
     *
     * @param root the shared files directory
     * @param id the file
     * @param hash the hash (hex) the caller has
     * @return true when a current (not expired) copy with that {@code hash_value} is stored
     * @throws IOException if the metadata or the file cannot be read
     */
    public boolean present(Path root, SharedFileId id, String hash) throws IOException {
        Optional<Stored> stored = current(root, id);
        return stored.isPresent() && stored.get().metadata().hashValue().equalsIgnoreCase(hash);
    }

    /**
     * Finds a stored file and its metadata, published together: the file version returned is the one whose hash
     * is the metadata's {@code hash_value}; open it with {@link FileVersion#open()}, which refuses a later one.
     *
     * @param root the shared files directory
     * @param id the file
     * @return the file and its metadata, when both are stored, match, and have not expired
     * @throws IOException if the metadata or the file cannot be read
     */
    public Optional<Stored> current(Path root, SharedFileId id) throws IOException {
        for (int attempt = 1; ; attempt++) {
            String text;
            try {
                text = Files.readString(id.metadata(root), StandardCharsets.UTF_8);
            } catch (NoSuchFileException absent) {
                return Optional.empty();
            }
            SharedFileMetadata metadata;
            try {
                metadata = SharedFileMetadata.parse(text);
            } catch (SharedFileMetadata.InvalidException e) {
                LOG.warn("{}: unreadable shared file metadata: {}", id.metadata(root), e.getMessage());
                return Optional.empty();
            }
            if (metadata.expires().isPresent() && metadata.expires().get().isBefore(clock.instant())) {
                return Optional.empty();
            }
            try {
                FileVersion version = FileVersion.of(id.file(root));
                if (!version.directory() && hash(version, metadata).equals(metadata.hashValue())) {
                    return Optional.of(new Stored(metadata, version));
                }
                if (attempt == READ_ATTEMPTS) {
                    LOG.warn("{}: the stored file is not the one its metadata describes; not served", id.file(root));
                    return Optional.empty();
                }
            } catch (NoSuchFileException | FileVersion.FileChangedException replaced) {
                // Removed by the cleanup, or replaced by a publish since it was described.
                if (attempt == READ_ATTEMPTS) {
                    return Optional.empty();
                }
            }
            // Most likely the file of a publish under way with the metadata of the one before: wait for that
            // publish to end (two renames), then look again. Only a reader that met a publish ever waits.
            Lock lock = lock(id);
            lock.lock();
            lock.unlock();
        }
    }

    /** The hash of a file version, computed once per version (reading exactly that version). */
    private String hash(FileVersion version, SharedFileMetadata metadata) throws IOException {
        String known = verified.get(verifiedKey(version, metadata.algorithm()));
        if (known != null) {
            return known;
        }
        MessageDigest digest;
        try {
            digest = MessageDigest.getInstance(metadata.hashAlgorithm());
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(metadata.hashAlgorithm() + " is part of every JDK", e);
        }
        try (FileChannel channel = version.open()) {
            ByteBuffer buffer = ByteBuffer.allocate(64 * 1024);
            while (channel.read(buffer) >= 0) {
                buffer.flip();
                digest.update(buffer);
                buffer.clear();
            }
        }
        String hash = HexFormat.of().formatHex(digest.digest());
        remember(version, metadata.algorithm(), hash);
        return hash;
    }

    private void remember(FileVersion version, String algorithm, String hash) {
        if (verified.size() >= VERIFIED_ENTRIES) {
            // Bounded by forgetting all: each forgotten hash costs one more read of its file, and no more.
            verified.clear();
        }
        verified.put(verifiedKey(version, algorithm), hash);
    }

    /** The version's path, identity, size and time (its ETag) and the algorithm name one hash. */
    private static String verifiedKey(FileVersion version, String algorithm) {
        return algorithm + " " + version.etag() + " " + version.path();
    }

    private Lock lock(SharedFileId id) {
        return publishing[Math.floorMod(id.hashCode(), LOCK_STRIPES)];
    }

    /**
     * Removes expired files (and their metadata) and temporary files of uploads cut short long ago.
     *
     * @param root the shared files directory
     * @return how many files were removed
     */
    public int removeExpired(Path root) {
        if (!Files.isDirectory(root)) {
            return 0;
        }
        int removed = 0;
        Instant now = clock.instant();
        try (DirectoryStream<Path> targets = Files.newDirectoryStream(root)) {
            for (Path target : targets) {
                Path files = target.resolve("files");
                if (!Files.isDirectory(files)) {
                    continue;
                }
                try (DirectoryStream<Path> sources = Files.newDirectoryStream(files)) {
                    for (Path source : sources) {
                        removed += clean(source, now);
                    }
                }
            }
        } catch (IOException e) {
            LOG.warn("shared files cleanup of {} stopped: {}", root, e.toString());
        }
        if (removed > 0) {
            LOG.info("shared files cleanup: removed {} expired or abandoned files from {}", removed, root);
        }
        return removed;
    }

    private int clean(Path directory, Instant now) throws IOException {
        if (!Files.isDirectory(directory)) {
            return 0;
        }
        int removed = 0;
        Instant stale = now.minus(STALE_UPLOAD);
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(directory)) {
            for (Path entry : entries) {
                String name = entry.getFileName().toString();
                if (name.startsWith(TEMPORARY)) {
                    if (modifiedBefore(entry, stale)) {
                        removed += Files.deleteIfExists(entry) ? 1 : 0;
                    }
                } else if (name.endsWith(SharedFileMetadata.EXTENSION)) {
                    removed += removeIfExpired(directory, name.substring(0,
                            name.length() - SharedFileMetadata.EXTENSION.length()), now);
                } else if (modifiedBefore(entry, stale)) {
                    removed += removeIfOrphan(directory, name);
                }
            }
        }
        return removed;
    }

    /** Removes a file and its metadata if the metadata says it expired; under the id's lock, file first. */
    private int removeIfExpired(Path directory, String fileName, Instant now) throws IOException {
        Path file = directory.resolve(fileName);
        Path metadata = directory.resolve(fileName + SharedFileMetadata.EXTENSION);
        Lock lock = lock(directory, fileName);
        lock.lock();
        try {
            // Read again under the lock: an upload may have just replaced an expired pair with a fresh one.
            Optional<Instant> expires = expiry(metadata);
            if (expires.isEmpty() || !expires.get().isBefore(now)) {
                return 0;
            }
            int removed = Files.deleteIfExists(file) ? 1 : 0;
            Files.deleteIfExists(metadata);
            return removed;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Removes a file that has had no metadata for a while: what a crash between an upload's two renames leaves,
     * or a temporary file of an earlier release (named {@code .{fileId}.{random}.part}). Readers never serve a
     * file without its metadata; a stored file whose name looks like a temporary one has its metadata, and stays.
     */
    private int removeIfOrphan(Path directory, String fileName) throws IOException {
        Lock lock = lock(directory, fileName);
        lock.lock();
        try {
            if (fileName.length() <= SharedFileId.MAX_FILE_ID_LENGTH
                    && Files.exists(directory.resolve(fileName + SharedFileMetadata.EXTENSION))) {
                return 0;
            }
            Path file = directory.resolve(fileName);
            return Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS) && Files.deleteIfExists(file) ? 1 : 0;
        } finally {
            lock.unlock();
        }
    }

    /** The publishing lock of the id stored in this directory under this name (any stripe for other names). */
    private Lock lock(Path sourceDirectory, String fileName) {
        // The cleanup walks {root}/{target}/files/{source}: the target is two levels up.
        String target = sourceDirectory.getParent().getParent().getFileName().toString();
        try {
            return lock(new SharedFileId(target, sourceDirectory.getFileName().toString(), fileName));
        } catch (IllegalArgumentException notAnId) {
            // Not a name an upload can publish: nobody else takes a lock for it.
            return publishing[0];
        }
    }

    private static boolean modifiedBefore(Path entry, Instant when) throws IOException {
        try {
            return Files.getLastModifiedTime(entry, LinkOption.NOFOLLOW_LINKS).toInstant().isBefore(when);
        } catch (NoSuchFileException gone) {
            return false;
        }
    }

    private static Optional<Instant> expiry(Path metadata) {
        try {
            return SharedFileMetadata.parse(Files.readString(metadata, StandardCharsets.UTF_8)).expires();
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    /**
     * Reads the metadata lines, up to and without the empty line that ends them; bounded.
     *
     * @param body the upload
     * @return the metadata text
     * @throws RejectedException if there is no empty line within {@link SharedFileMetadata#MAX_BYTES}
     * @throws IOException if the body cannot be read
     */
    private static String readMetadata(InputStream body) throws IOException {
        ByteArrayOutputStream metadata = new ByteArrayOutputStream(2048);
        int previous = -1;
        int current;
        while ((current = body.read()) >= 0) {
            if (current == '\n' && (previous == '\n' || previous == -1)) {
                return metadata.toString(StandardCharsets.UTF_8);
            }
            if (current != '\r') {
                metadata.write(current);
                previous = current;
            }
            if (metadata.size() > SharedFileMetadata.MAX_BYTES) {
                break;
            }
        }
        throw new RejectedException(new PintleException.InvalidRequest("bad-metadata", "the body must start with "
                + "metadata lines ending with an empty line (at most " + SharedFileMetadata.MAX_BYTES + " bytes)"));
    }

    /**
     * Parses relayd's {@code ttl}: a number of seconds, or a duration such as {@code 1d}, {@code 3 hours},
     * {@code 1h 7s}, {@code 2minutes}.
     *
     * @param text the parameter
     * @return the duration
     * @throws RejectedException if it is neither, or longer than ten years
     */
    public static Duration ttl(String text) throws RejectedException {
        if (text == null || text.isBlank()) {
            throw new RejectedException(new PintleException.InvalidRequest("bad-ttl",
                    "ttl is required (seconds, or for example '1d', '3 hours')"));
        }
        java.util.regex.Matcher parts = java.util.regex.Pattern.compile(
                "\\s*(\\d{1,9})\\s*(seconds?|secs?|s|minutes?|mins?|m|hours?|hrs?|h|days?|d|weeks?|w)?\\s*")
                .matcher(text);
        Duration total = Duration.ZERO;
        int position = 0;
        boolean unitless = false;
        int count = 0;
        while (position < text.length() && parts.find(position) && parts.start() == position) {
            long amount = Long.parseLong(parts.group(1));
            String unit = parts.group(2) == null ? "s" : parts.group(2);
            unitless |= parts.group(2) == null;
            total = total.plus(switch (unit.charAt(0)) {
                case 'm' -> Duration.ofMinutes(amount);
                case 'h' -> Duration.ofHours(amount);
                case 'd' -> Duration.ofDays(amount);
                case 'w' -> Duration.ofDays(7 * amount);
                default -> Duration.ofSeconds(amount);
            });
            position = parts.end();
            count++;
        }
        if (position != text.length() || count == 0 || (unitless && count > 1)) {
            throw new RejectedException(new PintleException.InvalidRequest("bad-ttl",
                    "ttl must be seconds or a duration such as '1d', '3 hours', '1h 7s'"));
        }
        if (total.compareTo(MAX_TTL) > 0) {
            throw new RejectedException(new PintleException.InvalidRequest("bad-ttl", "ttl is longer than ten years"));
        }
        return total;
    }

    private static NodeId nodeId(String text) throws RejectedException {
        try {
            return new NodeId(text);
        } catch (IllegalArgumentException e) {
            throw new RejectedException(new PintleException.NotFound("unknown-source",
                    "the source node " + text + " is not known"));
        }
    }

    /**
     * The request body: failing to read it is the client's doing (it went away, reset its stream or stopped
     * sending), a refusal of the upload, not a server error.
     */
    private static final class UploadBody extends FilterInputStream {
        UploadBody(InputStream body) {
            super(body);
        }

        @Override
        public int read() throws IOException {
            try {
                return super.read();
            } catch (IOException e) {
                throw incomplete(e);
            }
        }

        @Override
        public int read(byte[] buffer, int offset, int length) throws IOException {
            try {
                return super.read(buffer, offset, length);
            } catch (IOException e) {
                throw incomplete(e);
            }
        }

        @Override
        public int available() throws IOException {
            try {
                return super.available();
            } catch (IOException e) {
                throw incomplete(e);
            }
        }

        private static RejectedException incomplete(IOException e) {
            return new RejectedException(new PintleException.InvalidRequest("upload-incomplete",
                    "the body could not be read to its end (the client went away or stopped sending); nothing was "
                            + "stored"), e);
        }
    }

    /**
     * A stored file and its metadata, published by one upload.
     *
     * @param metadata the metadata
     * @param version the file's version whose hash is the metadata's {@code hash_value}
     */
    public record Stored(SharedFileMetadata metadata, FileVersion version) {
        public Stored {
            Objects.requireNonNull(metadata);
            Objects.requireNonNull(version);
        }
    }

    /** An upload or request refused: the refusal to answer, carried through the store's I/O signature. */
    public static final class RejectedException extends IOException {
        private static final long serialVersionUID = 1L;

        private final transient PintleException refusal;

        /** @param refusal what to answer */
        public RejectedException(PintleException refusal) {
            super(refusal.detail());
            this.refusal = refusal;
        }

        /**
         * @param refusal what to answer
         * @param cause what made the store refuse
         */
        public RejectedException(PintleException refusal, Throwable cause) {
            super(refusal.detail(), cause);
            this.refusal = refusal;
        }

        /** @return what to answer */
        public PintleException refusal() {
            return refusal;
        }

        /** @return the reason code */
        public String reason() {
            return refusal.reason();
        }
    }
}
