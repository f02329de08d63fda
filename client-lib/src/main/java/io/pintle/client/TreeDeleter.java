package io.pintle.client;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Deletes what a {@link SubtreeSync} put aside (the trees swapped out, the retired sidecars) on a thread of its own,
 * while the sync goes on with the next directories. Removing a tree is an unlink per file and an rmdir per
 * directory, and on a journalled file system those wait for the journal: on this project's ext4 test machine about
 * 0.2 ms of CPU but 0.3 to 1 ms of waiting per node directory when idle, and milliseconds under a generation's
 * writes, time the sync's thread would otherwise not spend fetching and writing the next directories.
 *
 * <p>What is handed over has a name of its own ({@code .<name>.pintle-staging-<random>}, {@code
 * .<name>.pintle-old-<random>}, {@code .<name>.pintle-sync.json.retired}) that only a look for a crashed sync's
 * leftovers would touch: a relay does that once per process, before it syncs ({@link
 * DirectorySync#removeStaleIn}). At most {@value #WAITING} directories' worth wait; past that the sync's own thread
 * deletes the next ones itself, which bounds what lies on disk waiting. {@link #close} waits until everything handed
 * over is gone, so a sync returns with nothing of its own left beside the directories. The thread is started with
 * the first tree.
 */
final class TreeDeleter implements AutoCloseable {
    /** Directories whose leftovers may wait at most: a generation's worth on a large relay. */
    static final int WAITING = 1024;

    private final Consumer<Path> delete;
    private final int waiting;
    private ThreadPoolExecutor executor;

    /** Deletes with {@link DirectorySync#deleteQuietly} (a tree it cannot delete is left for the next stale look). */
    TreeDeleter() {
        this(DirectorySync::deleteQuietly, WAITING);
    }

    /**
     * @param delete what deletes a tree or file (must not throw)
     * @param waiting how many directories' leftovers may wait
     */
    TreeDeleter(Consumer<Path> delete, int waiting) {
        this.delete = delete;
        this.waiting = waiting;
    }

    /**
     * Deletes {@code trees} in order on the deleting thread, or on this one when {@link #WAITING} directories'
     * already wait. Called by one thread (the sync's) only.
     *
     * @param trees what one directory's sync put aside: its swapped-out tree, its retired sidecar (a file)
     */
    void delete(List<Path> trees) {
        List<Path> all = List.copyOf(trees);
        if (executor != null && executor.isShutdown()) {
            all.forEach(this::deleteOne); // after close: here, rather than dropped
            return;
        }
        if (executor == null) {
            executor = new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS, new ArrayBlockingQueue<>(waiting),
                    runnable -> {
                        Thread thread = new Thread(runnable, "pintle-tree-delete");
                        thread.setDaemon(true);
                        return thread;
                    }, new ThreadPoolExecutor.CallerRunsPolicy());
        }
        executor.execute(() -> all.forEach(this::deleteOne));
    }

    private void deleteOne(Path tree) {
        try {
            delete.accept(tree);
        } catch (RuntimeException e) {
            // Left for the next look for leftovers, as a tree that cannot be deleted; the others still go.
        }
    }

    /**
     * Waits until everything handed over is deleted, an interrupt included (kept for the caller): the caller is
     * told that nothing of its own is left, and a look for leftovers right after must not race the deleting thread.
     */
    @Override
    public void close() {
        if (executor == null) {
            return;
        }
        executor.shutdown();
        DirectorySync.awaitStopped(executor);
    }
}
