package io.pintle.server.watch;

import java.io.IOException;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.FileSystems;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchEvent;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches directories for their clients: one {@link WatchService}, one thread ({@code pintle-watch}), any number of
 * {@link Client}s, each with its own directories, filter and debounce. A directory two clients watch is registered
 * once and its events go to both.
 *
 * <p>Events are gathered per client: a batch starts with the first event the client's {@link Listener#concerns}
 * accepts (or an overflow), every later event in its directories extends it, and it is handed to the listener once
 * no event came for the client's quiet period, or at the latest its maximum delay after it started. A client with
 * {@link Debounce#NONE} is told after each event read. Listeners run on the watch thread: they must not block.
 */
public final class DirectoryWatch {
    private static final Logger LOG = LoggerFactory.getLogger(DirectoryWatch.class);

    /** How long a client's events are gathered before it is told. */
    public record Debounce(Duration quiet, Duration maxDelay) {
        /** Told after each event read. */
        public static final Debounce NONE = new Debounce(Duration.ZERO, Duration.ZERO);

        public Debounce {
            Objects.requireNonNull(quiet);
            Objects.requireNonNull(maxDelay);
            if (quiet.isNegative() || maxDelay.compareTo(quiet) < 0) {
                throw new IllegalArgumentException("need 0 <= quiet <= maxDelay, not " + quiet + ", " + maxDelay);
            }
        }
    }

    /**
     * What changed in one watched directory during a batch.
     *
     * @param directory the directory, as the client registered it
     * @param entries the entries created, modified or deleted in it that the client's filter accepted
     * @param overflow whether the kernel dropped events for it: anything in it may have changed
     */
    public record Change(Path directory, Set<Path> entries, boolean overflow) {
        public Change {
            Objects.requireNonNull(directory);
            entries = Set.copyOf(entries);
        }
    }

    /** A client's side: which entries matter, and what to do once a batch of changes settled. */
    public interface Listener {
        /**
         * @param entry a created, modified or deleted entry of a watched directory
         * @return whether it matters to this client; only such entries (and overflows) start a batch
         */
        default boolean concerns(Path entry) {
            return true;
        }

        /**
         * Called on the watch thread; must not block.
         *
         * @param changes per directory, in the order their first event came
         */
        void changed(List<Change> changes);
    }

    private final List<Client> clients = new CopyOnWriteArrayList<>();
    /** Guarded by {@code this}: registrations, per directory and per key (aliases of one directory share a key). */
    private final Map<Path, Registration> registrations = new HashMap<>();
    private final Map<WatchKey, Set<Path>> directoriesOf = new HashMap<>();
    private WatchService watchService;
    private Thread thread;

    /**
     * @param name the client's name, for logs
     * @param debounce how its events are gathered
     * @param listener told of its changes
     * @return a client without directories yet
     */
    public Client client(String name, Debounce debounce, Listener listener) {
        Client client = new Client(name, debounce, listener);
        clients.add(client);
        return client;
    }

    /**
     * Opens the watch service and starts the watch thread.
     *
     * @throws IOException if the file system refuses a watch service
     */
    public synchronized void start() throws IOException {
        if (watchService != null) {
            return;
        }
        watchService = FileSystems.getDefault().newWatchService();
        WatchService service = watchService;
        // A thread of its own: it spends its life blocked on the WatchService (take, or poll until a client's quiet
        // period ends), which is no work for a shared pool.
        thread = new Thread(() -> run(service), "pintle-watch");
        thread.setDaemon(true);
        thread.start();
    }

    /** Closes the watch service and waits (bounded) for the watch thread to end; no client is told anything more. */
    public void close() throws InterruptedException {
        Thread stopping;
        synchronized (this) {
            if (watchService == null) {
                return;
            }
            try {
                watchService.close();
            } catch (IOException e) {
                LOG.debug("closing the watch service: {}", e.toString());
            }
            registrations.clear();
            directoriesOf.clear();
            watchService = null;
            stopping = thread;
            thread = null;
        }
        if (stopping != Thread.currentThread()) {
            stopping.join(TimeUnit.SECONDS.toMillis(5));
        }
    }

    /**
     * Registers (again) a directory for a client. Registering again is cheap, and catches a directory replaced by
     * another of the same name.
     */
    private synchronized void add(Client client, Path directory) throws IOException {
        if (watchService == null) {
            throw new IOException("the directory watch is not started");
        }
        WatchKey key;
        try {
            key = directory.register(watchService, StandardWatchEventKinds.ENTRY_CREATE,
                    StandardWatchEventKinds.ENTRY_DELETE, StandardWatchEventKinds.ENTRY_MODIFY);
        } catch (ClosedWatchServiceException e) {
            throw new IOException("the directory watch is stopped", e);
        }
        Registration registration = registrations.get(directory);
        if (registration == null) {
            registration = new Registration(key);
            registrations.put(directory, registration);
        } else if (!registration.key.equals(key)) {
            release(registration.key, directory);
            registration.key = key;
        }
        directoriesOf.computeIfAbsent(key, k -> new LinkedHashSet<>()).add(directory);
        registration.clients.add(client);
    }

    private synchronized void remove(Client client, Path directory) {
        Registration registration = registrations.get(directory);
        if (registration != null && registration.clients.remove(client) && registration.clients.isEmpty()) {
            registrations.remove(directory);
            release(registration.key, directory);
        }
    }

    /** The key no longer serves {@code directory}; cancelled once it serves no directory. */
    private void release(WatchKey key, Path directory) {
        Set<Path> directories = directoriesOf.get(key);
        if (directories != null && directories.remove(directory) && directories.isEmpty()) {
            directoriesOf.remove(key);
            key.cancel();
        }
    }

    /** @return the clients of each directory {@code key} serves, as of now */
    private synchronized Map<Path, List<Client>> recipients(WatchKey key) {
        Map<Path, List<Client>> recipients = new LinkedHashMap<>();
        for (Path directory : directoriesOf.getOrDefault(key, Set.of())) {
            Registration registration = registrations.get(directory);
            if (registration != null && registration.key.equals(key)) {
                recipients.put(directory, List.copyOf(registration.clients));
            }
        }
        return recipients;
    }

    private void run(WatchService service) {
        try {
            while (true) {
                long due = Long.MAX_VALUE;
                for (Client client : clients) {
                    due = Math.min(due, client.due());
                }
                WatchKey key = due == Long.MAX_VALUE
                        ? service.take()
                        : service.poll(Math.max(0, due - System.nanoTime()), TimeUnit.NANOSECONDS);
                if (key != null) {
                    read(key);
                }
                long now = System.nanoTime();
                for (Client client : clients) {
                    client.flushIfDue(now);
                }
            }
        } catch (ClosedWatchServiceException | InterruptedException stopped) {
            LOG.debug("directory watch stopped");
        }
    }

    private void read(WatchKey key) {
        List<WatchEvent<?>> events = key.pollEvents();
        key.reset();
        long now = System.nanoTime();
        recipients(key).forEach((directory, recipients) -> {
            for (Client client : recipients) {
                client.offer(directory, events, now);
            }
        });
    }

    /** One directory's key and the clients watching it. */
    private static final class Registration {
        private WatchKey key;
        private final Set<Client> clients = new LinkedHashSet<>();

        Registration(WatchKey key) {
            this.key = key;
        }
    }

    /**
     * One user of the watch: its directories, and its batch in progress (touched on the watch thread only).
     * {@link #watch}, {@link #unwatch} and {@link #close} may be called from any thread.
     */
    public final class Client {
        private final String name;
        private final Debounce debounce;
        private final Listener listener;
        private final Set<Path> directories = new HashSet<>();
        private final Map<Path, Pending> pending = new LinkedHashMap<>();
        private long first;
        private long last;

        private Client(String name, Debounce debounce, Listener listener) {
            this.name = Objects.requireNonNull(name);
            this.debounce = Objects.requireNonNull(debounce);
            this.listener = Objects.requireNonNull(listener);
        }

        /**
         * Watches a directory (again: see {@link DirectoryWatch}).
         *
         * @param directory an existing directory
         * @throws IOException if it cannot be watched (gone, unreadable) or the watch is not running
         */
        public void watch(Path directory) throws IOException {
            synchronized (DirectoryWatch.this) {
                add(this, directory);
                directories.add(directory);
            }
        }

        /** @param directory a directory no longer of interest to this client */
        public void unwatch(Path directory) {
            synchronized (DirectoryWatch.this) {
                if (directories.remove(directory)) {
                    remove(this, directory);
                }
            }
        }

        /** @return the directories this client watches now */
        public Set<Path> directories() {
            synchronized (DirectoryWatch.this) {
                return Set.copyOf(directories);
            }
        }

        /** Stops watching every directory; the client is told nothing more. */
        public void close() {
            synchronized (DirectoryWatch.this) {
                for (Path directory : directories) {
                    remove(this, directory);
                }
                directories.clear();
                clients.remove(this);
            }
        }

        private void offer(Path directory, List<WatchEvent<?>> events, long now) {
            boolean started = !pending.isEmpty();
            Pending batch = null;
            for (WatchEvent<?> event : events) {
                if (event.kind() == StandardWatchEventKinds.OVERFLOW) {
                    batch = pending.computeIfAbsent(directory, d -> new Pending());
                    batch.overflow = true;
                } else if (event.context() instanceof Path entry && concerns(directory.resolve(entry))) {
                    batch = pending.computeIfAbsent(directory, d -> new Pending());
                    batch.entries.add(directory.resolve(entry));
                }
            }
            if (!started && pending.isEmpty()) {
                return;
            }
            if (!started) {
                first = now;
            }
            // Any event in its directories extends a batch in progress, even one the client does not care about:
            // the writer is still busy there.
            last = now;
        }

        private boolean concerns(Path entry) {
            try {
                return listener.concerns(entry);
            } catch (RuntimeException e) {
                LOG.warn("watch client {} failed on {}", name, entry, e);
                return false;
            }
        }

        /** @return when the batch in progress is due ({@code System.nanoTime()}), or {@code Long.MAX_VALUE} */
        private long due() {
            if (pending.isEmpty()) {
                return Long.MAX_VALUE;
            }
            return Math.min(last + debounce.quiet().toNanos(), first + debounce.maxDelay().toNanos());
        }

        private void flushIfDue(long now) {
            if (pending.isEmpty() || now - due() < 0) {
                return;
            }
            List<Change> changes = new ArrayList<>();
            pending.forEach((directory, batch) -> changes.add(new Change(directory, batch.entries, batch.overflow)));
            pending.clear();
            try {
                listener.changed(List.copyOf(changes));
            } catch (RuntimeException e) {
                LOG.warn("watch client {} failed on {}", name, changes, e);
            }
        }

        @Override
        public String toString() {
            return name;
        }
    }

    /** A directory's part of a batch in progress. */
    private static final class Pending {
        private final Set<Path> entries = new LinkedHashSet<>();
        private boolean overflow;
    }

    @Override
    public String toString() {
        return "directory watch";
    }
}
