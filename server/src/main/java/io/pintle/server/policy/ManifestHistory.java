package io.pintle.server.policy;

import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * What recently answered versions of trees looked like at their top level, so that a later {@code ?since=} can be
 * answered with what changed ({@link TreeManifest#write}): per (tree, ETag), each top-level entry's fingerprint.
 * Only manifest requests that carry {@code since} read or add to it (a relay following its share, a few requests a
 * minute); agents never do. Bounded: {@value #VERSIONS_PER_TREE} versions per tree, and at most {@code maxNames}
 * top-level names over all versions held, the least recently used version going first. A version that is no longer
 * held is answered with the whole manifest, so eviction costs bytes, never correctness. One lock: every call is
 * short, and none is on an agent's path.
 */
public final class ManifestHistory {
    /** Versions kept per tree: the one a follower was last given, and the one before (its retry after a failure). */
    static final int VERSIONS_PER_TREE = 2;

    /** Names held over all versions by default: about 100 bytes each, 20 MB. */
    public static final int DEFAULT_MAX_NAMES = 200_000;

    private final int maxNames;
    /** Every version held, least recently used first. */
    private final LinkedHashMap<Key, Fingerprints> versions = new LinkedHashMap<>(16, 0.75f, true);
    /** Per tree, its versions held, oldest first. */
    private final Map<Path, ArrayDeque<String>> perTree = new HashMap<>();
    private int names;

    public ManifestHistory(int maxNames) {
        if (maxNames < 1) {
            throw new IllegalArgumentException("maxNames must be positive");
        }
        this.maxNames = maxNames;
    }

    private record Key(Path root, String etag) {}

    /**
     * One version's top level: its names, sorted (String order), and each one's fingerprint (16 bytes, as two
     * longs). Immutable once built.
     */
    public static final class Fingerprints {
        private final String[] names;
        private final long[] high;
        private final long[] low;

        private Fingerprints(String[] names, long[] high, long[] low) {
            this.names = names;
            this.high = high;
            this.low = low;
        }

        /** @return the number of top-level names */
        public int size() {
            return names.length;
        }

        /**
         * @param name a top-level name
         * @param fingerprint its fingerprint in another version (a {@link io.pintle.api.dto.ManifestEtag} value)
         * @return whether this version has the name with that same fingerprint
         */
        public boolean same(String name, String fingerprint) {
            int at = Arrays.binarySearch(names, name);
            return at >= 0 && high[at] == high(fingerprint) && low[at] == low(fingerprint);
        }

        /** @return whether this version has the name */
        public boolean has(String name) {
            return Arrays.binarySearch(names, name) >= 0;
        }

        /** @return the names, sorted */
        public Iterable<String> names() {
            return Arrays.asList(names);
        }
    }

    /** Collects one version's fingerprints as they go by, in any order. */
    public static final class Builder {
        private final Map<String, String> fingerprints = new HashMap<>();

        /**
         * @param name a top-level name
         * @param fingerprint its {@link io.pintle.api.dto.ManifestEtag} value
         */
        public void add(String name, String fingerprint) {
            fingerprints.put(name, fingerprint);
        }

        /** @return the version's fingerprints */
        public Fingerprints build() {
            String[] names = fingerprints.keySet().toArray(String[]::new);
            Arrays.sort(names);
            long[] high = new long[names.length];
            long[] low = new long[names.length];
            for (int i = 0; i < names.length; i++) {
                String fingerprint = fingerprints.get(names[i]);
                high[i] = high(fingerprint);
                low[i] = low(fingerprint);
            }
            return new Fingerprints(names, high, low);
        }
    }

    /** A {@code "m-<32 hex>"} value's first 16 hex digits. */
    private static long high(String fingerprint) {
        return Long.parseUnsignedLong(fingerprint, 3, 19, 16);
    }

    private static long low(String fingerprint) {
        return Long.parseUnsignedLong(fingerprint, 19, 35, 16);
    }

    /**
     * @param root a tree's real path
     * @param etag one of its versions' ETag
     * @return that version's fingerprints, or null when it is not held (never seen, or evicted)
     */
    public synchronized Fingerprints get(Path root, String etag) {
        return versions.get(new Key(root, etag));
    }

    /**
     * Holds a version answered just now, evicting what the bounds require.
     *
     * @param root the tree's real path
     * @param etag the version's ETag
     * @param fingerprints its top level
     */
    public synchronized void put(Path root, String etag, Fingerprints fingerprints) {
        Objects.requireNonNull(fingerprints);
        Key key = new Key(root, etag);
        if (fingerprints.size() > maxNames) {
            return; // larger than the whole history: its next since is answered whole
        }
        Fingerprints old = versions.put(key, fingerprints);
        ArrayDeque<String> tree = perTree.computeIfAbsent(root, r -> new ArrayDeque<>());
        if (old != null) {
            names -= old.size();
            tree.remove(etag);
        }
        tree.addLast(etag);
        names += fingerprints.size();
        while (tree.size() > VERSIONS_PER_TREE) {
            drop(new Key(root, tree.peekFirst()));
        }
        Iterator<Key> oldest = versions.keySet().iterator();
        while (names > maxNames) {
            drop(oldest.next());
            oldest = versions.keySet().iterator();
        }
    }

    private void drop(Key key) {
        Fingerprints gone = versions.remove(key);
        if (gone != null) {
            names -= gone.size();
        }
        ArrayDeque<String> tree = perTree.get(key.root());
        if (tree != null) {
            tree.remove(key.etag());
            if (tree.isEmpty()) {
                perTree.remove(key.root());
            }
        }
    }

    /** @return the versions held (for tests) */
    synchronized int versions() {
        return versions.size();
    }

    /** @return the names held over all versions (for tests) */
    synchronized int names() {
        return names;
    }
}
