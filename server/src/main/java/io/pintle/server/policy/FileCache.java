package io.pintle.server.policy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * What a download of a file found last time, so that the next download of the same unchanged file costs one
 * {@code lstat} instead of the real-path walk (a {@code readlink} per component), a second stat, an open, a read
 * and a close. Each entry is keyed by the file's path as the request names it (below its root, with no link
 * between the root and the file) and holds the {@link FileVersion} served and, for files up to {@link
 * #MAX_BODY_BYTES}, their bytes.
 *
 * <p>An entry is used only while a fresh {@code lstat} of that path, not following a link, gives the same regular
 * file: same device and inode, size, modification time and status-change time (ctime). A file replaced by a
 * rename is another inode; a file rewritten in place, truncated, renamed, re-linked, or whose mode or times were
 * set, has another ctime; a link put in its place is not a regular file. Each of those is a miss, which takes the
 * full path again ({@link SafePaths}, {@link FileVersion}) and replaces the entry. Bytes are kept only for a file
 * whose times are at least {@link #SETTLED} in the past when it was read, and only if a stat after the read still
 * shows the same file: a write in the same clock tick as the last one would otherwise leave both times as they
 * were. What is not covered: a directory above the file moved out of the tree with a link left in its place
 * serves, from the cache, the same unchanged bytes it served from inside the tree, until the file changes.
 *
 * <p>Bounded by {@code maxBytes} (bodies plus about {@link #ENTRY_OVERHEAD} bytes per entry); past it, arbitrary
 * entries are dropped until a quarter is free. Lock-free for readers; safe for concurrent use.
 */
public final class FileCache {
    /** Largest file whose bytes are kept. */
    public static final int MAX_BODY_BYTES = 64 * 1024;
    /** Bytes counted per entry besides its body: the key, the version, the stamp. */
    static final int ENTRY_OVERHEAD = 512;
    /** How old a file's modification and change times must be before its bytes are kept. */
    public static final Duration SETTLED = Duration.ofSeconds(2);
    /** The attributes {@link #stamp} reads, in one {@code lstat}. */
    private static final String STAMP_ATTRIBUTES = "unix:fileKey,size,lastModifiedTime,ctime,isRegularFile";

    private final ConcurrentHashMap<Path, Entry> entries = new ConcurrentHashMap<>();
    private final AtomicLong bytes = new AtomicLong();
    private final LongAdder hits = new LongAdder();
    private final LongAdder misses = new LongAdder();
    private final long maxBytes;
    private final Clock clock;

    /**
     * @param maxBytes the most the cache may hold; 0 turns it off
     * @param clock the clock {@link #SETTLED} is measured with
     */
    public FileCache(long maxBytes, Clock clock) {
        if (maxBytes < 0) {
            throw new IllegalArgumentException("maxBytes must be 0 or more");
        }
        this.maxBytes = maxBytes;
        this.clock = Objects.requireNonNull(clock);
    }

    /**
     * What {@code lstat} says of a path, as far as a cache entry depends on it.
     *
     * @param key the file system's identity of the file (device and inode); null where it has none
     * @param size the size in bytes
     * @param modified the modification time
     * @param changed the status-change time (ctime)
     * @param regular whether it is a regular file (not a link, directory or other)
     */
    public record Stamp(Object key, long size, FileTime modified, FileTime changed, boolean regular) {
        public Stamp {
            Objects.requireNonNull(modified);
            Objects.requireNonNull(changed);
        }
    }

    /**
     * A cached download.
     *
     * @param version the version served
     * @param stamp what {@code lstat} said of the path when it was cached
     * @param body the file's bytes, or null when only the version is kept; never to be modified
     */
    public record Entry(FileVersion version, Stamp stamp, byte[] body) {
        public Entry {
            Objects.requireNonNull(version);
            Objects.requireNonNull(stamp);
        }

        long cost() {
            return ENTRY_OVERHEAD + (body != null ? body.length : 0);
        }
    }

    /**
     * Reads what an entry depends on, in one {@code lstat} that does not follow a link in the last component.
     *
     * @param path the path as the request names it
     * @return its stamp
     * @throws IOException if it cannot be read ({@link java.nio.file.NoSuchFileException} when absent)
     */
    public static Stamp stamp(Path path) throws IOException {
        Map<String, Object> read = Files.readAttributes(path, STAMP_ATTRIBUTES, LinkOption.NOFOLLOW_LINKS);
        return new Stamp(read.get("fileKey"), (Long) read.get("size"),
                (FileTime) read.get("lastModifiedTime"), (FileTime) read.get("ctime"),
                (Boolean) read.get("isRegularFile"));
    }

    /**
     * @return whether entries are kept at all
     */
    public boolean enabled() {
        return maxBytes > 0;
    }

    /**
     * The entry for a path, if the path still names the same file. A stale entry is dropped.
     *
     * @param path the path as the request names it
     * @param now its stamp, just read
     * @return the entry, or null (counted as a miss)
     */
    public Entry get(Path path, Stamp now) {
        Entry entry = entries.get(path);
        if (entry != null) {
            if (entry.stamp().equals(now)) {
                hits.increment();
                return entry;
            }
            remove(path, entry);
        }
        misses.increment();
        return null;
    }

    /**
     * Keeps a version found by the full path, with no bytes yet. Kept only if the stamp, read before the version,
     * describes the same regular file as the version.
     *
     * @param path the path as the request names it; it must have no link below its root
     * @param stamp its stamp, read before {@code version}
     * @param version the version the full path found for it
     * @return the entry kept, or null when not kept
     */
    public Entry keep(Path path, Stamp stamp, FileVersion version) {
        if (!enabled() || !sameFile(stamp, version)) {
            return null;
        }
        return store(path, new Entry(version, stamp, null));
    }

    /**
     * Adds the bytes of an entry's file, read through {@link FileVersion#open}, if the file had settled when they
     * were read and is still the same file after.
     *
     * @param path the entry's path
     * @param entry the entry the bytes were read for
     * @param body the bytes, all of them; not to be modified afterwards
     * @return the entry with its bytes, or the same entry when they are not kept
     */
    public Entry withBody(Path path, Entry entry, byte[] body) {
        if (!enabled() || body.length > MAX_BODY_BYTES || body.length != entry.version().size()
                || !settled(entry.stamp())) {
            return entry;
        }
        Stamp after;
        try {
            after = stamp(path);
        } catch (IOException gone) {
            remove(path, entry);
            return entry;
        }
        if (!after.equals(entry.stamp())) {
            remove(path, entry);
            return entry;
        }
        return store(path, new Entry(entry.version(), entry.stamp(), body));
    }

    /** @return downloads answered from an entry */
    public long hits() {
        return hits.sum();
    }

    /** @return lookups that found no entry, or a stale one */
    public long misses() {
        return misses.sum();
    }

    /** @return the bytes held now, bodies and per-entry overhead */
    public long size() {
        return bytes.get();
    }

    /** @return the entries held now */
    public int entries() {
        return entries.size();
    }

    private boolean settled(Stamp stamp) {
        Instant threshold = clock.instant().minus(SETTLED);
        return stamp.modified().toInstant().isBefore(threshold) && stamp.changed().toInstant().isBefore(threshold);
    }

    private static boolean sameFile(Stamp stamp, FileVersion version) {
        return stamp.regular() && stamp.key() != null && !version.directory() && stamp.size() == version.size()
                && stamp.modified().toInstant().equals(version.lastModified())
                && version.identity().equals(stamp.key().toString());
    }

    private Entry store(Path path, Entry entry) {
        if (entry.cost() > maxBytes) {
            return entry;
        }
        Entry previous = entries.put(path, entry);
        long total = bytes.addAndGet(entry.cost() - (previous != null ? previous.cost() : 0));
        if (total > maxBytes) {
            shrink();
        }
        return entry;
    }

    private void remove(Path path, Entry entry) {
        if (entries.remove(path, entry)) {
            bytes.addAndGet(-entry.cost());
        }
    }

    /** Drops arbitrary entries until a quarter of the budget is free. */
    private void shrink() {
        long target = maxBytes - maxBytes / 4;
        for (Map.Entry<Path, Entry> each : entries.entrySet()) {
            if (bytes.get() <= target) {
                return;
            }
            remove(each.getKey(), each.getValue());
        }
    }
}
