package io.pintle.server.reload;

import io.pintle.server.watch.DirectoryWatch;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches the directory of every input file of the live snapshot and asks for a reload when one of those files is
 * created, modified, deleted or renamed into place (Rudder replaces {@code nodeslist.json} and certificate bundles
 * by atomic rename). Bursts are coalesced: the reload starts once no event came for the quiet period, or at the
 * latest after {@link #MAX_DELAY}. After each reload the watched set follows the new snapshot's inputs. A client of
 * the server's one {@link DirectoryWatch}.
 */
public final class InputWatcher implements ReloadListener {
    /** Upper bound between the first event of a burst and its reload, whatever keeps happening. */
    public static final Duration MAX_DELAY = Duration.ofSeconds(2);

    private static final Logger LOG = LoggerFactory.getLogger(InputWatcher.class);

    private final Reloader reloader;
    private final SnapshotHolder snapshots;
    private final DirectoryWatch watch;
    private final Duration quietPeriod;
    private volatile Set<Path> inputs = Set.of();
    /** Guarded by {@code this}; null unless started. */
    private DirectoryWatch.Client client;

    /**
     * @param reloader the single writer to trigger
     * @param snapshots the live snapshot, whose inputs are watched
     * @param watch the directory watch to be a client of
     * @param quietPeriod how long a burst of events must pause before the reload starts
     */
    public InputWatcher(Reloader reloader, SnapshotHolder snapshots, DirectoryWatch watch, Duration quietPeriod) {
        this.reloader = reloader;
        this.snapshots = snapshots;
        this.watch = watch;
        this.quietPeriod = quietPeriod;
    }

    /**
     * Watches the live snapshot's input directories (the directory watch must be started).
     *
     * @throws IOException when the file system refuses the watches
     */
    public synchronized void start() throws IOException {
        if (client == null) {
            client = watch.client("input watcher", new DirectoryWatch.Debounce(quietPeriod, MAX_DELAY), new Inputs());
        }
        rewatch();
    }

    /** Stops watching. */
    public synchronized void stop() {
        if (client != null) {
            client.close();
            client = null;
        }
    }

    /** After each reload the watched set follows the live snapshot's inputs (a no-op unless started). */
    @Override
    public void finished(ReloadOutcome outcome) {
        try {
            rewatch();
        } catch (IOException e) {
            LOG.warn("cannot watch the new inputs: {}", e.getMessage());
        }
    }

    private synchronized void rewatch() throws IOException {
        if (client == null) {
            return;
        }
        Set<Path> files = Set.copyOf(snapshots.current().watched());
        Set<Path> directories = new TreeSet<>();
        for (Path file : files) {
            directories.add(file.getParent());
        }
        inputs = files;
        Set<Path> watched = client.directories();
        for (Path directory : directories) {
            if (!watched.contains(directory) && Files.isDirectory(directory)) {
                client.watch(directory);
            }
        }
        for (Path directory : watched) {
            if (!directories.contains(directory)) {
                client.unwatch(directory);
            }
        }
    }

    /** Which entries are inputs, and the reload once a burst of changes to them settled. */
    private final class Inputs implements DirectoryWatch.Listener {
        @Override
        public boolean concerns(Path entry) {
            return inputs.contains(entry);
        }

        @Override
        public void changed(List<DirectoryWatch.Change> changes) {
            Set<String> changed = new TreeSet<>();
            for (DirectoryWatch.Change change : changes) {
                if (change.overflow()) {
                    changed.add(change.directory() + " (overflow)");
                }
                for (Path entry : change.entries()) {
                    changed.add(entry.toString());
                }
            }
            reloader.reload("file watch: " + String.join(", ", changed));
        }
    }
}
