package io.pintle.server.sharedfiles;

import io.pintle.server.threads.Lane;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Executor;
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
    private final Executor workers;
    private final ScheduledExecutorService scheduler;
    /** Made at start (guarded by this): a cleanup never overlaps the previous one. */
    private Lane lane;

    /**
     * @param store the store
     * @param root the shared files directory now in force
     * @param period how often
     * @param workers the server's worker pool (a cleanup lists and removes files)
     * @param scheduler the server's scheduler
     */
    public SharedFilesCleanup(SharedFileStore store, Supplier<Path> root, Duration period, Executor workers,
            ScheduledExecutorService scheduler) {
        this.store = store;
        this.root = root;
        this.period = period;
        this.workers = workers;
        this.scheduler = scheduler;
    }

    /** Starts the periodic cleanup; the first one runs at once. */
    public synchronized void start() {
        if (lane != null) {
            return;
        }
        lane = Lane.serial("shared files cleanup", workers, scheduler);
        lane.scheduleWithFixedDelay(this::runOnce, 0, period.toMillis(), TimeUnit.MILLISECONDS);
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
        if (lane != null) {
            lane.shutdownNow();
            lane = null;
        }
    }
}
