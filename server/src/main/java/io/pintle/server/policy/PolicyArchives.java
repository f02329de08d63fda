package io.pintle.server.policy;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFileAttributes;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveOutputStream;
import org.apache.commons.compress.compressors.bzip2.BZip2CompressorOutputStream;
import org.apache.commons.compress.archivers.tar.TarConstants;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Builds a node's {@code rules/rudder.tar.bz2} when Rudder's hook has not written it (yet). Rudder's webapp moves
 * every node's new {@code rules/} into place first and only then runs {@code policy-generation-node-finished}, whose
 * {@code 91-compress-linux-policies} writes the archive, node by node: between the two, an HTTPS agent's {@code curl
 * --fail} would get a 404 and its update would fail. The archive is made as that hook makes it ({@code tar -cjf …
 * --mode=go=-rwx --owner=0 --group=0 --transform "s|^cfengine-community|policies_next|" cfengine-community} in
 * {@code rules/}): every entry below {@code policies_next/}, group and other bits cleared, owner and group 0
 * ({@code root}), symbolic links stored as links, bzip2. Entries are in name order (GNU tar's are in directory order,
 * which agents do not depend on).
 *
 * <p>Built archives are kept in {@code [paths] state}/{@value #DIRECTORY}/&lt;node&gt;/&lt;tree ETag&gt;.tar.bz2 (the
 * tree's manifest ETag, so the same tree is built once), written to a temporary file, fsync'd and renamed; a node's
 * older ones are removed once a newer one is in. One build per node and tree at a time (the others wait for it),
 * at most {@link #PARALLEL} builds at once.
 */
public final class PolicyArchives {
    /** Directory in the state directory. */
    public static final String DIRECTORY = "archives";
    /** The archive, below a node's directory. */
    public static final String ARCHIVE = "rules/rudder.tar.bz2";
    /** The tree it packs, below a node's directory. */
    public static final String TREE = "rules/cfengine-community";
    /** The generation stamp in it, rewritten by every generation. */
    public static final String STAMP = TREE + "/rudder-promises-generated";
    /** Builds at once. */
    static final int PARALLEL = 2;
    private static final String PREFIX = "policies_next";
    private static final Logger LOG = LoggerFactory.getLogger(PolicyArchives.class);

    private final TreeScanner scanner;
    private final Semaphore builds = new Semaphore(PARALLEL);
    private final Map<Path, CompletableFuture<Path>> underWay = new ConcurrentHashMap<>();
    private final Map<Path, Built> last = new ConcurrentHashMap<>();
    private final AtomicLong built = new AtomicLong();
    private final AtomicLong buildNanos = new AtomicLong();

    /**
     * @param scanner gives the tree's ETag
     */
    public PolicyArchives(TreeScanner scanner) {
        this.scanner = scanner;
    }

    /**
     * The last archive built for a node directory.
     *
     * @param stamp the ETag of the generation stamp when it was built
     * @param etag the ETag it is served with
     */
    private record Built(String stamp, String etag) {}

    /**
     * Whether Rudder's archive is missing while the tree it packs is there (two stats).
     *
     * @param nodeRoot a node's directory, as served
     * @return the reason to build ({@code absent}), or null when Rudder's archive is there (or no tree is)
     */
    public static String needed(Path nodeRoot) {
        // Only a missing archive is built: an mtime comparison with the tree misfires on trees copied in any
        // order (a relay's sync, a restore), and would replace Rudder's own archive by a different one.
        if (Files.exists(nodeRoot.resolve(ARCHIVE), LinkOption.NOFOLLOW_LINKS)) {
            return null;
        }
        return Files.isDirectory(nodeRoot.resolve(TREE), LinkOption.NOFOLLOW_LINKS) ? "absent" : null;
    }

    /**
     * The ETag a node's Linux archive is served with now when Pintle builds it: that of the last one built for this
     * directory if the generation stamp has not changed since, else null (not built yet for this generation).
     *
     * @param nodeRoot a node's directory, as served
     * @return the ETag, or null
     */
    public String builtEtag(Path nodeRoot) {
        Built known = last.get(nodeRoot);
        if (known == null) {
            return null;
        }
        try {
            return known.stamp().equals(FileVersion.of(nodeRoot.resolve(STAMP)).etag()) ? known.etag() : null;
        } catch (IOException absent) {
            return null;
        }
    }

    /**
     * The archive of a node's tree, built unless it is kept already. Blocks: call it on a worker.
     *
     * @param state {@code [paths] state}
     * @param node the node's id (the cache's directory name)
     * @param nodeRoot its directory, as served
     * @param why {@code absent}, for the log
     * @return the archive, to serve as a file
     * @throws IOException when the tree cannot be read or the archive written
     */
    public FileVersion archive(Path state, String node, Path nodeRoot, String why) throws IOException {
        String stamp = stampEtag(nodeRoot);
        TreeVersion tree = scanner.scan(nodeRoot.resolve(TREE), false);
        Path cache = state.resolve(DIRECTORY).resolve(node);
        Path file = cache.resolve(tree.etag().replace("\"", "").replaceAll("[^A-Za-z0-9._-]", "_") + ".tar.bz2");
        if (!Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
            CompletableFuture<Path> mine = new CompletableFuture<>();
            CompletableFuture<Path> running = underWay.putIfAbsent(file, mine);
            if (running != null) {
                await(running);
            } else {
                try {
                    build(nodeRoot.resolve(TREE), file, node, tree, why);
                    mine.complete(file);
                } catch (IOException | RuntimeException e) {
                    mine.completeExceptionally(e);
                    throw e;
                } finally {
                    underWay.remove(file, mine);
                }
            }
        }
        FileVersion version = FileVersion.of(file);
        if (stamp != null) {
            last.put(nodeRoot, new Built(stamp, version.etag()));
        }
        return version;
    }

    /** @return archives built since start */
    public long built() {
        return built.get();
    }

    /** @return seconds spent building them */
    public double buildSeconds() {
        return buildNanos.get() / 1e9;
    }

    private static String stampEtag(Path nodeRoot) {
        try {
            return FileVersion.of(nodeRoot.resolve(STAMP)).etag();
        } catch (IOException absent) {
            return null;
        }
    }

    private static void await(CompletableFuture<Path> running) throws IOException {
        try {
            running.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while another request built the archive", e);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof IOException io ? io : new IOException(e.getCause());
        }
    }

    private void build(Path tree, Path file, String node, TreeVersion version, String why) throws IOException {
        try {
            builds.acquire();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while waiting to build the archive", e);
        }
        long started = System.nanoTime();
        Path directory = file.getParent();
        Files.createDirectories(directory, StateFile.PRIVATE_DIRECTORY);
        Path temp = Files.createTempFile(directory, ".build-", ".tmp");
        try {
            int entries;
            try (OutputStream out = new BufferedOutputStream(Files.newOutputStream(temp), 64 * 1024);
                    BZip2CompressorOutputStream bzip2 = new BZip2CompressorOutputStream(out);
                    TarArchiveOutputStream tar = new TarArchiveOutputStream(bzip2)) {
                tar.setLongFileMode(TarArchiveOutputStream.LONGFILE_GNU);
                tar.setBigNumberMode(TarArchiveOutputStream.BIGNUMBER_STAR);
                entries = add(tar, tree, PREFIX);
            }
            try (FileChannel channel = FileChannel.open(temp, StandardOpenOption.WRITE)) {
                channel.force(true);
            }
            Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE);
            removeOlder(directory, file);
            long nanos = System.nanoTime() - started;
            built.incrementAndGet();
            buildNanos.addAndGet(nanos);
            LOG.info("built the policy archive of node {} ({} Rudder's): {} entries, {} bytes, {} ms", node,
                    "missing", entries, Files.size(file),
                    nanos / 1_000_000);
        } finally {
            Files.deleteIfExists(temp);
            builds.release();
        }
    }

    /** Adds a directory and what is below it, in name order; returns the entries written. */
    private static int add(TarArchiveOutputStream tar, Path directory, String name) throws IOException {
        PosixFileAttributes attributes = Files.readAttributes(directory, PosixFileAttributes.class,
                LinkOption.NOFOLLOW_LINKS);
        TarArchiveEntry entry = entry(name + "/", TarConstants.LF_DIR, attributes);
        tar.putArchiveEntry(entry);
        tar.closeArchiveEntry();
        int entries = 1;
        List<Path> children = new ArrayList<>();
        try (DirectoryStream<Path> listing = Files.newDirectoryStream(directory)) {
            listing.forEach(children::add);
        }
        children.sort(null);
        for (Path child : children) {
            String childName = name + "/" + child.getFileName();
            PosixFileAttributes childAttributes = Files.readAttributes(child, PosixFileAttributes.class,
                    LinkOption.NOFOLLOW_LINKS);
            if (childAttributes.isDirectory()) {
                entries += add(tar, child, childName);
            } else if (childAttributes.isSymbolicLink()) {
                TarArchiveEntry link = entry(childName, TarConstants.LF_SYMLINK, childAttributes);
                link.setLinkName(Files.readSymbolicLink(child).toString());
                tar.putArchiveEntry(link);
                tar.closeArchiveEntry();
                entries++;
            } else if (childAttributes.isRegularFile()) {
                TarArchiveEntry file = entry(childName, TarConstants.LF_NORMAL, childAttributes);
                try (InputStream in = Files.newInputStream(child, LinkOption.NOFOLLOW_LINKS)) {
                    file.setSize(childAttributes.size());
                    tar.putArchiveEntry(file);
                    long copied = in.transferTo(tar);
                    if (copied != childAttributes.size()) {
                        throw new FileVersion.FileChangedException(child + " changed while it was archived");
                    }
                }
                tar.closeArchiveEntry();
                entries++;
            }
            // Sockets, devices and pipes: GNU tar would store them; a policy tree has none, and no agent wants one.
        }
        return entries;
    }

    private static TarArchiveEntry entry(String name, byte type, PosixFileAttributes attributes) {
        TarArchiveEntry entry = new TarArchiveEntry(name, type);
        // --mode=go=-rwx: the owner's bits only.
        entry.setMode(FileStat.mode(attributes.permissions()) & 0700);
        entry.setIds(0, 0);
        entry.setNames("root", "root");
        entry.setModTime(attributes.lastModifiedTime());
        return entry;
    }

    private static void removeOlder(Path directory, Path kept) {
        try (DirectoryStream<Path> listing = Files.newDirectoryStream(directory, "*.tar.bz2")) {
            for (Path other : listing) {
                if (!other.equals(kept)) {
                    Files.deleteIfExists(other);
                }
            }
        } catch (IOException e) {
            LOG.warn("cannot remove older built archives in {}: {}", directory, e.getMessage());
        }
    }
}
