package io.pintle.server.reload;

import java.io.IOException;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchEvent;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches the directory of every input file of the live snapshot and asks for a reload when one of those files is
 * created, modified, deleted or renamed into place (Rudder replaces {@code nodeslist.json} and certificate bundles
 * by atomic rename). Bursts are coalesced: the reload starts once no relevant event came for the quiet period, or
 * at the latest after {@link #MAX_DELAY}. After each reload the watched set follows the new snapshot's inputs.
 */
public final class InputWatcher implements ReloadListener {
    /** Upper bound between the first event of a burst and its reload, whatever keeps happening. */
    public static final Duration MAX_DELAY = Duration.ofSeconds(2);

    private static final Logger LOG = LoggerFactory.getLogger(InputWatcher.class);

    private final Reloader reloader;
    private final SnapshotHolder snapshots;
    private final Duration quietPeriod;
    private final Map<Path, WatchKey> keys = new HashMap<>();
    private WatchService watchService;
    private Thread thread;
    private volatile Set<Path> inputs = Set.of();

    /**
     * @param reloader the single writer to trigger
     * @param snapshots the live snapshot, whose inputs are watched
     * @param quietPeriod how long a burst of events must pause before the reload starts
     */
    public InputWatcher(Reloader reloader, SnapshotHolder snapshots, Duration quietPeriod) {
        this.reloader = reloader;
        this.snapshots = snapshots;
        this.quietPeriod = quietPeriod;
    }

    /**
     * Registers the watches and starts the watching thread.
     *
     * @throws IOException when the file system refuses the watches
     */
    public synchronized void start() throws IOException {
        watchService = FileSystems.getDefault().newWatchService();
        rewatch();
        thread = new Thread(this::run, "pintle-watch");
        thread.setDaemon(true);
        thread.start();
    }

    /** Stops watching. */
    public synchronized void stop() throws IOException, InterruptedException {
        if (watchService != null) {
            watchService.close();
        }
        if (thread != null) {
            thread.join(TimeUnit.SECONDS.toMillis(5));
        }
    }

    /** After each reload the watched set follows the live snapshot's inputs (a no-op until started). */
    @Override
    public void finished(ReloadOutcome outcome) {
        try {
            rewatch();
        } catch (IOException e) {
            LOG.warn("cannot watch the new inputs: {}", e.getMessage());
        }
    }

    private synchronized void rewatch() throws IOException {
        if (watchService == null) {
            return;
        }
        Set<Path> files = Set.copyOf(snapshots.current().inputs().keySet());
        Set<Path> directories = new TreeSet<>();
        for (Path file : files) {
            directories.add(file.getParent());
        }
        for (Path directory : directories) {
            if (!keys.containsKey(directory) && Files.isDirectory(directory)) {
                keys.put(directory, directory.register(watchService, StandardWatchEventKinds.ENTRY_CREATE,
                        StandardWatchEventKinds.ENTRY_MODIFY, StandardWatchEventKinds.ENTRY_DELETE));
            }
        }
        keys.entrySet().removeIf(entry -> {
            if (!directories.contains(entry.getKey())) {
                entry.getValue().cancel();
                return true;
            }
            return false;
        });
        inputs = files;
    }

    private void run() {
        try {
            while (true) {
                Set<String> changed = new TreeSet<>();
                collect(watchService.take(), changed);
                if (changed.isEmpty()) {
                    continue;
                }
                long deadline = System.nanoTime() + MAX_DELAY.toNanos();
                while (System.nanoTime() < deadline) {
                    long wait = Math.min(quietPeriod.toNanos(), deadline - System.nanoTime());
                    WatchKey next = watchService.poll(Math.max(0, wait), TimeUnit.NANOSECONDS);
                    if (next == null) {
                        break;
                    }
                    collect(next, changed);
                }
                reloader.reload("file watch: " + String.join(", ", changed));
            }
        } catch (ClosedWatchServiceException | InterruptedException stopped) {
            LOG.debug("input watch stopped");
        }
    }

    private void collect(WatchKey key, Set<String> changed) {
        Path directory = (Path) key.watchable();
        for (WatchEvent<?> event : key.pollEvents()) {
            if (event.kind() == StandardWatchEventKinds.OVERFLOW) {
                changed.add(directory + " (overflow)");
            } else if (event.context() instanceof Path name && inputs.contains(directory.resolve(name))) {
                changed.add(directory.resolve(name).toString());
            }
        }
        key.reset();
    }
}
