package io.pintle.server.sharedfiles;

import io.pintle.server.nodes.KeyHash;
import io.pintle.server.nodes.NodeId;
import io.pintle.server.nodes.NodeRegistry;
import io.pintle.server.problem.PintleException;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.PublicKey;
import java.security.Signature;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.Optional;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Stores, checks, finds and expires node-to-node shared files under {@code [paths] shared_files}, as relayd does:
 * {@code {root}/{target}/files/{source}/{fileId}} plus {@code {fileId}.metadata} with {@code expires=}.
 *
 * <p>An upload is checked in relayd's order — the source is a known node; the hash of the public key in the
 * metadata is pinned for that node; the RSA signature over the file is valid — and, stricter than relayd, the
 * file's hash must be the metadata's {@code hash_value} (the HEAD check relies on it). The file is streamed to a
 * temporary file in the destination directory and renamed into place only when every check passed, so a failed
 * or refused upload leaves nothing behind; the metadata is renamed last, so a file is never announced before it
 * is there.
 */
public final class SharedFileStore {
    private static final Logger LOG = LoggerFactory.getLogger(SharedFileStore.class);

    /** Temporary files of uploads cut short by a crash are removed once this old. */
    static final Duration STALE_UPLOAD = Duration.ofHours(1);

    /** The longest time to live accepted. */
    static final Duration MAX_TTL = Duration.ofDays(3650);

    private static final String PART = ".part";

    private final Clock clock;
    private final long maxBytes;

    /**
     * @param clock the clock for expiry
     * @param maxBytes the largest upload body accepted (metadata and file)
     */
    public SharedFileStore(Clock clock, long maxBytes) {
        this.clock = clock;
        this.maxBytes = maxBytes;
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
        InputStream body = new BufferedInputStream(upload, 64 * 1024);
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
        Path temporary = directory.resolve("." + id.fileId() + "." + UUID.randomUUID() + PART);
        Path temporaryMetadata = directory.resolve("." + id.fileId() + SharedFileMetadata.EXTENSION + "."
                + UUID.randomUUID() + PART);
        boolean stored = false;
        try {
            Signature verifier = Signature.getInstance(metadata.signatureAlgorithm());
            verifier.initVerify(key);
            MessageDigest hash = MessageDigest.getInstance(metadata.hashAlgorithm());
            try (OutputStream out = Files.newOutputStream(temporary)) {
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
            Files.write(temporaryMetadata, kept.format());
            Files.move(temporary, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            Files.move(temporaryMetadata, id.metadata(root), StandardCopyOption.ATOMIC_MOVE,
                    StandardCopyOption.REPLACE_EXISTING);
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
     * @throws IOException if the metadata cannot be read
     */
    public boolean present(Path root, SharedFileId id, String hash) throws IOException {
        Optional<SharedFileMetadata> metadata = current(root, id);
        return metadata.isPresent() && metadata.get().hashValue().equalsIgnoreCase(hash);
    }

    /**
     * @param root the shared files directory
     * @param id the file
     * @return its metadata, when it is stored and not expired
     * @throws IOException if the metadata cannot be read
     */
    public Optional<SharedFileMetadata> current(Path root, SharedFileId id) throws IOException {
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
        return Files.isRegularFile(id.file(root)) ? Optional.of(metadata) : Optional.empty();
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
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(directory)) {
            for (Path entry : entries) {
                String name = entry.getFileName().toString();
                if (name.endsWith(PART)) {
                    if (Files.getLastModifiedTime(entry).toInstant().isBefore(now.minus(STALE_UPLOAD))) {
                        removed += Files.deleteIfExists(entry) ? 1 : 0;
                    }
                } else if (name.endsWith(SharedFileMetadata.EXTENSION)) {
                    Optional<Instant> expires = expiry(entry);
                    if (expires.isPresent() && expires.get().isBefore(now)) {
                        Path file = entry.resolveSibling(
                                name.substring(0, name.length() - SharedFileMetadata.EXTENSION.length()));
                        removed += Files.deleteIfExists(file) ? 1 : 0;
                        Files.deleteIfExists(entry);
                    }
                }
            }
        }
        return removed;
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

    /** An upload or request refused: the refusal to answer, carried through the store's I/O signature. */
    public static final class RejectedException extends IOException {
        private static final long serialVersionUID = 1L;

        private final transient PintleException refusal;

        /** @param refusal what to answer */
        public RejectedException(PintleException refusal) {
            super(refusal.detail());
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
