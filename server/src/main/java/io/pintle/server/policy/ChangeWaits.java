package io.pintle.server.policy;

import io.pintle.server.overload.Bounded;
import io.pintle.server.overload.PerAddress;
import io.pintle.server.problem.PintleException;
import io.pintle.server.threads.Lane;
import io.pintle.server.watch.DirectoryWatch;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Requests parked until a resource's ETag changes ({@code ?wait=SECONDS} with {@code If-None-Match}). A parked
 * request holds no thread: it is a small object here, woken by a file-system event in one of the directories its
 * resource depends on (the file's ancestors; for a tree, every directory in it and its ancestors), after which
 * the resource's ETag is computed again. A periodic re-check covers events the kernel dropped (every {@code
 * recheck}, or less often for a resource whose look takes long: at most {@value #RECHECK_SHARE_PERCENT} % of a core
 * per resource, so that a relay's share of thousands of nodes parked at rest costs next to nothing). Their number is
 * bounded: past {@code maxWaiters} in all, or past its share from one client address, {@link #park} refuses. A
 * request whose client goes away is {@link Parked#cancel}led and gives its slot back at once.
 *
 * <p>All bookkeeping runs one task at a time on a serial {@link Lane} (on the server's workers, its timers on the
 * server's scheduler), so none of it is locked; the directories are watched by the server's one {@link
 * DirectoryWatch}, whose thread only hands events over. Listeners are called on the lane and must hand real work
 * to another executor.
 */
public final class ChangeWaits implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ChangeWaits.class);

    /**
     * The periodic re-check of a resource spends at most this share of one core on it: a resource whose last look
     * took {@code t} is looked at again after {@code 100 t / RECHECK_SHARE_PERCENT} at the soonest (a relay's share of
     * 1,000 nodes takes about 0.1 s to look at here: every 10 s instead of every 5).
     */
    static final int RECHECK_SHARE_PERCENT = 1;

    /** The {@code Retry-After} of a refused wait: slots free up as waits end. */
    public static final long RETRY_AFTER_SECONDS = 5;

    private final int maxWaiters;
    private final PerAddress perAddress;
    private final Duration quiet;
    private final Duration recheck;
    private final Bounded waiting;
    private final Map<String, Group> groups = new HashMap<>();
    /** Each watched directory and the groups that depend on it. */
    private final Map<Path, Set<Group>> watched = new HashMap<>();
    /** Whether the kernel's watch limit was met and said (the lane's only). */
    private boolean watchLimitLogged;
    private final DirectoryWatch watch;
    private final Executor workers;
    private final ScheduledExecutorService scheduler;
    private final LongSupplier nanoTime;
    /** Made at start, dropped at close. */
    private volatile Lane lane;
    private volatile DirectoryWatch.Client client;

    /**
     * @param maxWaiters the most requests parked at once
     * @param maxPerAddress the most requests parked at once from one client address (IPv6: one /64)
     * @param watch the directory watch to be a client of
     * @param quiet how long events are gathered before a resource is looked at again
     * @param recheck how often every parked resource is looked at again even without events
     * @param workers the server's worker pool (probes look at the file system)
     * @param scheduler the server's scheduler (timeouts, quiet periods, re-checks)
     */
    public ChangeWaits(int maxWaiters, int maxPerAddress, DirectoryWatch watch, Duration quiet, Duration recheck,
            Executor workers, ScheduledExecutorService scheduler) {
        this(maxWaiters, maxPerAddress, watch, quiet, recheck, workers, scheduler, System::nanoTime);
    }

    /** As above, with the clock that times looks and re-checks (tests give their own). */
    ChangeWaits(int maxWaiters, int maxPerAddress, DirectoryWatch watch, Duration quiet, Duration recheck,
            Executor workers, ScheduledExecutorService scheduler, LongSupplier nanoTime) {
        if (maxWaiters < 0) {
            throw new IllegalArgumentException("maxWaiters must not be negative");
        }
        this.maxWaiters = maxWaiters;
        this.waiting = new Bounded(maxWaiters);
        this.perAddress = new PerAddress(maxPerAddress);
        this.watch = Objects.requireNonNull(watch);
        this.quiet = Objects.requireNonNull(quiet);
        this.recheck = Objects.requireNonNull(recheck);
        this.workers = Objects.requireNonNull(workers);
        this.scheduler = Objects.requireNonNull(scheduler);
        this.nanoTime = Objects.requireNonNull(nanoTime);
    }

    /**
     * What a resource looks like now: its ETag (null when it is gone), the directories it depends on, and what the
     * look computed that a woken request may answer with instead of looking again (null when nothing).
     */
    public record Observation(String etag, List<Path> directories, Object answer) {
        public Observation {
            directories = List.copyOf(directories);
        }

        public Observation(String etag, List<Path> directories) {
            this(etag, directories, null);
        }
    }

    /**
     * A look's answer that holds a resource (a spooled change list): each request the look wakes gets a reference
     * of its own, taken before its listener is told and given back by the request once answered; the look's own
     * reference is given back once every waiter was told, so an answer nobody got is freed at once.
     */
    public interface Shared {
        /** @return whether a reference was taken (false: freed already) */
        boolean retain();

        /** Gives a reference back. */
        void release();
    }

    /** Looks at a resource again. */
    @FunctionalInterface
    public interface Probe {
        /**
         * @return the resource as it is now
         * @throws IOException if it cannot be looked at (the waiters are then woken, to report the error)
         */
        Observation observe() throws IOException;
    }

    /** Told how a wait ended; called on the waits' lane, so it must not block. */
    public interface Listener {
        /**
         * The ETag differs from the one the request had (or the resource could not be looked at).
         *
         * @param now the look that found it so (its ETag null when the resource could not be looked at)
         */
        void changed(Observation now);

        /** The wait's time is up with the ETag unchanged. */
        void timedOut();

        /** The wait was {@link Parked#cancel}led: nobody is waiting for an answer any more. */
        void cancelled();
    }

    /**
     * Starts the lane and becomes a client of the directory watch (which must be started).
     *
     * @throws IOException declared for its callers; watch failures are reported per directory instead
     */
    public synchronized void start() throws IOException {
        if (lane != null) {
            return;
        }
        // Told of each event as it is read: which groups to look at again, and when, is decided here.
        client = watch.client("change waits", DirectoryWatch.Debounce.NONE, this::changed);
        lane = Lane.serial("change waits", workers, scheduler);
        lane.scheduleWithFixedDelay(() -> recheckAll(false), recheck.toMillis(), recheck.toMillis(),
                TimeUnit.MILLISECONDS);
    }

    /** Stops the lane and the watches; parked requests are told their time is up. */
    @Override
    public synchronized void close() {
        if (lane == null) {
            return;
        }
        try {
            CompletableFuture.runAsync(() -> {
                for (Group group : List.copyOf(groups.values())) {
                    for (Waiter waiter : List.copyOf(group.waiters)) {
                        finish(group, waiter, Outcome.TIMED_OUT);
                    }
                }
            }, lane).get(5, TimeUnit.SECONDS);
        } catch (Exception e) {
            LOG.warn("parked requests not all answered at stop: {}", e.toString());
        }
        client.close();
        lane.shutdownNow();
        lane = null;
    }

    /** @return requests parked now */
    public int waiting() {
        return (int) waiting.get();
    }

    /** @return the most requests that may be parked at once */
    public int maxWaiters() {
        return maxWaiters;
    }

    /**
     * Parks a request until the resource's ETag differs from {@code seen}, or {@code timeout} passes.
     *
     * @param key what the resource is (the same key for every request on the same resource and view)
     * @param seen the ETag the request has (from {@code If-None-Match})
     * @param first the resource as the request just saw it (its directories are watched from now on)
     * @param probe how to look at the resource again
     * @param timeout the longest wait
     * @param client the client's address (its parked requests are bounded too)
     * @param listener told how the wait ends
     * @return the parked request
     * @throws PintleException.Unavailable when {@code maxWaiters} requests are parked already, or the client's
     *     address has its share parked (nothing was parked)
     */
    public Parked park(String key, String seen, Observation first, Probe probe, Duration timeout,
            InetAddress client, Listener listener) {
        Lane executor = lane;
        if (executor == null) {
            throw new PintleException.Unavailable("stopping", "the server is stopping; retry in "
                    + RETRY_AFTER_SECONDS + " s", RETRY_AFTER_SECONDS);
        }
        if (!waiting.tryIncrement()) {
            throw new PintleException.Unavailable("too-many-waiters", "all " + maxWaiters
                    + " change-wait slots are taken; retry in " + RETRY_AFTER_SECONDS + " s", RETRY_AFTER_SECONDS);
        }
        if (!perAddress.tryAcquire(client)) {
            waiting.decrement();
            throw new PintleException.Unavailable("client-limit", "this client address already has "
                    + perAddress.limit() + " requests parked (limits.max_waiters_per_address); retry in "
                    + RETRY_AFTER_SECONDS + " s", RETRY_AFTER_SECONDS);
        }
        Waiter waiter = new Waiter(seen, client, listener);
        executor.execute(() -> {
            Group group = groups.computeIfAbsent(key, k -> new Group(k, probe, nanoTime.getAsLong()));
            waiter.group = group;
            group.waiters.add(waiter);
            watch(group, first.directories());
            waiter.timeout = executor.schedule(() -> finish(group, waiter, Outcome.TIMED_OUT), timeout.toMillis(),
                    TimeUnit.MILLISECONDS);
            // The resource may have changed between the request's look and the watch: look again at once.
            schedule(group, Duration.ZERO);
        });
        return new Parked(executor, waiter);
    }

    private void schedule(Group group, Duration delay) {
        if (group.probeScheduled) {
            return;
        }
        Lane current = lane;
        if (current == null) {
            return;
        }
        group.probeScheduled = true;
        try {
            current.schedule(() -> probe(group), delay.toMillis(), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException stopping) {
            // Parked requests were all answered already.
        }
    }

    private void probe(Group group) {
        group.probeScheduled = false;
        if (group.waiters.isEmpty()) {
            return;
        }
        Observation now;
        long start = nanoTime.getAsLong();
        try {
            now = group.probe.observe();
        } catch (IOException | RuntimeException e) {
            LOG.debug("cannot look at {} again: {}", group.key, e.toString());
            now = new Observation(null, List.of());
        }
        group.probed = nanoTime.getAsLong();
        group.probeCost = group.probed - start;
        Shared shared = now.answer() instanceof Shared s ? s : null;
        for (Waiter waiter : List.copyOf(group.waiters)) {
            if (!Objects.equals(now.etag(), waiter.seen)) {
                if (shared != null) {
                    shared.retain(); // the look's own reference is still held: never freed yet
                }
                finish(group, waiter, Outcome.CHANGED, now);
            }
        }
        if (shared != null) {
            shared.release();
        }
        if (!group.waiters.isEmpty()) {
            watch(group, now.directories());
        }
    }

    private void finish(Group group, Waiter waiter, Outcome outcome) {
        finish(group, waiter, outcome, null);
    }

    private void finish(Group group, Waiter waiter, Outcome outcome, Observation now) {
        if (!group.waiters.remove(waiter)) {
            return;
        }
        waiting.decrement();
        perAddress.release(waiter.client);
        if (waiter.timeout != null) {
            waiter.timeout.cancel(false);
        }
        if (group.waiters.isEmpty()) {
            groups.remove(group.key);
            watch(group, List.of());
        }
        try {
            switch (outcome) {
                case CHANGED -> waiter.listener.changed(now);
                case TIMED_OUT -> waiter.listener.timedOut();
                case CANCELLED -> waiter.listener.cancelled();
            }
        } catch (RuntimeException e) {
            LOG.warn("a parked request's listener failed", e);
        }
    }

    /** How a wait ends. */
    private enum Outcome {
        CHANGED,
        TIMED_OUT,
        CANCELLED
    }

    /** A parked request. */
    public final class Parked {
        private final Lane executor;
        private final Waiter waiter;

        Parked(Lane executor, Waiter waiter) {
            this.executor = executor;
            this.waiter = waiter;
        }

        /**
         * Ends the wait (its client went away): its slot is free again at once, and its listener is told {@link
         * Listener#cancelled}. Does nothing when the wait is over already.
         */
        public void cancel() {
            try {
                // After the parking itself: the lane runs tasks one at a time, in order.
                executor.execute(() -> {
                    Group group = waiter.group;
                    if (group != null) {
                        finish(group, waiter, Outcome.CANCELLED);
                    }
                });
            } catch (RejectedExecutionException stopping) {
                // Every parked request was answered at stop.
            }
        }
    }

    /** Makes the set of directories watched for {@code group} exactly {@code directories}. */
    private void watch(Group group, List<Path> directories) {
        Set<Path> wanted = new LinkedHashSet<>(directories);
        for (Path gone : List.copyOf(group.directories)) {
            if (!wanted.contains(gone)) {
                group.directories.remove(gone);
                Set<Group> dependents = watched.get(gone);
                if (dependents != null && dependents.remove(group) && dependents.isEmpty()) {
                    watched.remove(gone);
                    client.unwatch(gone);
                }
            }
        }
        for (Path directory : wanted) {
            try {
                // Watching again is cheap and catches a directory replaced by another of the same name.
                client.watch(directory);
                watched.computeIfAbsent(directory, d -> new HashSet<>()).add(group);
                group.directories.add(directory);
            } catch (IOException e) {
                // Gone already (the next probe sees it), or unreadable: the periodic re-check still covers it.
                LOG.debug("cannot watch {}: {}", directory, e.toString());
                if (!watchLimitLogged && String.valueOf(e.getMessage()).contains("inotify watches")) {
                    // A relay's share of Rudder nodes is ~12 directories a node, all watched while it waits.
                    watchLimitLogged = true;
                    LOG.warn("the kernel's inotify watch limit is reached ({}): a change in a directory not "
                            + "watched reaches the requests waiting on it at the periodic re-check only (every 5 s "
                            + "or more, 100 times a large tree's look); raise sysctl fs.inotify.max_user_watches",
                            e.getMessage());
                }
            }
        }
    }

    /**
     * @param all every group (events were lost); otherwise those whose last look is long enough ago for its cost
     *     ({@link #RECHECK_SHARE_PERCENT})
     */
    private void recheckAll(boolean all) {
        long now = nanoTime.getAsLong();
        for (Group group : List.copyOf(groups.values())) {
            long every = Math.max(recheck.toNanos(), group.probeCost * 100 / RECHECK_SHARE_PERCENT);
            if (all || now - group.probed >= every) {
                schedule(group, Duration.ZERO);
            }
        }
    }

    /** On the watch thread: hands the changes over to the lane. */
    private void changed(List<DirectoryWatch.Change> changes) {
        Lane executor = lane;
        if (executor == null) {
            return;
        }
        try {
            for (DirectoryWatch.Change change : changes) {
                executor.execute(() -> changedIn(change.directory(), change.overflow()));
            }
        } catch (RejectedExecutionException stopping) {
            // Parked requests were all answered already.
        }
    }

    private void changedIn(Path directory, boolean all) {
        if (all) {
            recheckAll(true);
            return;
        }
        Set<Group> dependents = watched.get(directory);
        if (dependents != null) {
            for (Group group : List.copyOf(dependents)) {
                schedule(group, quiet);
            }
        }
    }

    /** Requests parked on one resource, and what it depends on. */
    private static final class Group {
        private final String key;
        private final Probe probe;
        private final Set<Waiter> waiters = new LinkedHashSet<>();
        private final Set<Path> directories = new HashSet<>();
        private boolean probeScheduled;
        /** When the last look ended ({@code nanoTime}), and how long it took. */
        private long probed;
        private long probeCost;

        Group(String key, Probe probe, long created) {
            this.key = key;
            this.probe = probe;
            this.probed = created;
        }
    }

    /** One parked request; its mutable fields are touched on the lane only. */
    private static final class Waiter {
        private final String seen;
        private final InetAddress client;
        private final Listener listener;
        private Group group;
        private ScheduledFuture<?> timeout;

        Waiter(String seen, InetAddress client, Listener listener) {
            this.seen = seen;
            this.client = client;
            this.listener = listener;
        }
    }

    /**
     * @param path a path
     * @param stopAt an ancestor of {@code path} (or itself)
     * @return the directories from {@code stopAt} down to {@code path}'s parent, then {@code path} itself when
     *     {@code includeSelf}
     */
    public static List<Path> ancestors(Path path, Path stopAt, boolean includeSelf) {
        List<Path> result = new ArrayList<>();
        Path current = includeSelf ? path : path.getParent();
        while (current != null && current.startsWith(stopAt)) {
            result.add(0, current);
            current = current.getParent();
        }
        return result;
    }
}
