package io.pintle.client;

import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.HexFormat;

/**
 * Names of what a sync keeps next to the directory it syncs, in the same parent (so that renames between them
 * are atomic, and nothing of the sync's is ever inside the synced tree): {@code .<name>.pintle-sync.json} (the
 * state; {@code .tmp} added while it is written, {@code .retired} while its tree is swapped),
 * {@code .<name>.pintle-sync.lock}, {@code .<name>.pintle-staging-<random>} (the tree being built, and after an
 * atomic exchange the previous one until deleted) and {@code .<name>.pintle-old-<random>} (the previous tree, while
 * it is swapped out without an atomic exchange).
 */
final class SyncNames {
    /** Suffix of the sidecar state ({@link SyncState}). */
    static final String STATE = "pintle-sync.json";

    /** Suffix of the lock that keeps two syncs out of one directory. */
    static final String LOCK = "pintle-sync.lock";

    /** Suffix of staging directories, before their random part. */
    static final String STAGING = "pintle-staging-";
    /** Suffix of swapped-out trees, before their random part. */
    static final String OLD = "pintle-old-";

    private SyncNames() {}

    /**
     * @param localDir the synced directory
     * @param suffix what follows {@code .<name>.}
     * @return {@code <parent>/.<name>.<suffix>}
     */
    static Path sibling(Path localDir, String suffix) {
        Path absolute = localDir.toAbsolutePath().normalize();
        Path name = absolute.getFileName();
        if (name == null) {
            throw new IllegalArgumentException("cannot sync into the root directory");
        }
        return absolute.resolveSibling(prefix(absolute) + suffix);
    }

    /**
     * @param localDir the synced directory
     * @return {@code .<name>.}
     */
    static String prefix(Path localDir) {
        return "." + localDir.toAbsolutePath().normalize().getFileName() + ".";
    }

    /**
     * @param localDir the synced directory
     * @param suffix {@link #STAGING} or {@link #OLD}
     * @param random the random source
     * @return a new name with a random part
     */
    static Path unique(Path localDir, String suffix, SecureRandom random) {
        byte[] bytes = new byte[6];
        random.nextBytes(bytes);
        return sibling(localDir, suffix + HexFormat.of().formatHex(bytes));
    }
}
