package io.pintle.server.sharedfiles;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Removes expired shared files periodically (and once at start), from the directory the snapshot names. */
public final class SharedFilesCleanup {
    private static final Logger LOG = LoggerFactory.getLogger(SharedFilesCleanup.class);

    private final SharedFileStore store;
    private final Supplier<Path> root;
    private final Duration period;
    private ScheduledExecutorService scheduler;

    /**
     * @param store the store
     * @param root the shared files directory now in force
     * @param period how often
     */
    public SharedFilesCleanup(SharedFileStore store, Supplier<Path> root, Duration period) {
        this.store = store;
        this.root = root;
        this.period = period;
    }

    /** Starts the periodic cleanup; the first one runs at once. */
    public synchronized void start() {
        if (scheduler != null) {
            return;
        }
        scheduler = Executors.newSingleThreadScheduledExecutor(task -> {
            Thread thread = new Thread(task, "pintle-shared-files-cleanup");
            thread.setDaemon(true);
            return thread;
        });
        scheduler.scheduleWithFixedDelay(this::runOnce, 0, period.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** @return how many files one cleanup removed */
    int runOnce() {
        try {
            return store.removeExpired(root.get());
        } catch (RuntimeException e) {
            LOG.warn("shared files cleanup failed", e);
            return 0;
        }
    }

    /** Stops it. */
    public synchronized void stop() {
        if (scheduler != null) {
            scheduler.shutdownNow();
            scheduler = null;
        }
    }
}
