package io.pintle.client;

import io.pintle.api.Routes;
import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Deletes the trees a {@link SubtreeSync} swapped out on a thread of its own, while the sync goes on with the next
 * directories. Removing a tree is an unlink per file and an rmdir per directory, and on a journalled file system
 * those wait for the journal: on this project's ext4 test machine about 0.2 ms of CPU but 0.3 to 1 ms of waiting per
 * node directory when idle, and tens of milliseconds under a generation's writes, all of it time the sync's
 * thread would not spend fetching and writing the next directories.
 *
 * <p>A tree handed over keeps its directory's sync lock (the lock file's channel, closed once the tree is gone), so
 * no other sync of that directory, whose look for leftovers would delete the same tree, runs meanwhile. At most
 * {@value #WAITING} trees wait; past that the sync's own thread deletes the next one itself, which bounds the open
 * lock files and the swapped-out trees on disk. {@link #close} waits until every tree handed over is gone, so a
 * sync returns with nothing of its own left beside the directories. The thread is started with the first tree.
 */
final class TreeDeleter implements AutoCloseable {
    /** Trees waiting at most: an archive's worth of directories. */
    static final int WAITING = Routes.MAX_ONLY;

    private final Consumer<Path> delete;
    private final int waiting;
    private ThreadPoolExecutor executor;

    /** Deletes with {@link DirectorySync#deleteQuietly} (a tree it cannot delete is left for the next stale look). */
    TreeDeleter() {
        this(DirectorySync::deleteQuietly, WAITING);
    }

    /**
     * @param delete what deletes a tree (must not throw)
     * @param waiting trees that may wait
     */
    TreeDeleter(Consumer<Path> delete, int waiting) {
        this.delete = delete;
        this.waiting = waiting;
    }

    /**
     * Deletes {@code trees} in order, then closes {@code lock}, on the deleting thread, or on this one when {@value
     * #WAITING} already wait. Called by one thread (the sync's) only.
     *
     * @param trees what a directory's sync put aside: its swapped-out tree, its retired sidecar (a file)
     * @param lock the channel of the directory's lock file, or null
     */
    void delete(List<Path> trees, Closeable lock) {
        List<Path> all = List.copyOf(trees);
        if (executor == null) {
            executor = new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS, new ArrayBlockingQueue<>(waiting),
                    runnable -> {
                        Thread thread = new Thread(runnable, "pintle-tree-delete");
                        thread.setDaemon(true);
                        return thread;
                    }, new ThreadPoolExecutor.CallerRunsPolicy());
        }
        executor.execute(() -> {
            all.forEach(delete);
            closeQuietly(lock);
        });
    }

    private static void closeQuietly(Closeable lock) {
        if (lock == null) {
            return;
        }
        try {
            lock.close();
        } catch (IOException e) {
            // Closing a lock file's channel releases its lock whatever close reports.
        }
    }

    /**
     * Waits until every tree handed over is deleted. When interrupted, returns at once with the interrupt kept: the
     * deleting thread still finishes what it has, then ends.
     */
    @Override
    public void close() {
        if (executor == null) {
            return;
        }
        executor.shutdown();
        try {
            while (!executor.awaitTermination(1, TimeUnit.MINUTES)) {
                // A tree of many files on a slow disk: keep waiting, the caller expects them gone.
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
