package io.pintle.server.reload;

import io.pintle.server.config.ConfigException;
import io.pintle.server.config.ServerConfig;
import io.pintle.server.policy.Freeze;
import io.pintle.server.threads.Lane;
import io.pintle.server.tls.TlsUpdater;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The single writer of the live snapshot. Every trigger (file watch, SIGHUP, the reload API, the CLI) ends in
 * {@link #reload}, which queues one attempt on a serial {@link Lane} (one attempt at a time, in the order asked,
 * on the server's workers): read the configuration, build a complete snapshot
 * from every input, validate it (including a dry run of new TLS credentials), then publish it with one atomic
 * set. A failure leaves the previous snapshot serving and is kept in the {@link #history()}. Requests never wait
 * for a reload: they keep reading whichever snapshot is live.
 */
public final class Reloader {
    private static final Logger LOG = LoggerFactory.getLogger(Reloader.class);

    private final ConfigSource configSource;
    private final SnapshotHolder snapshots;
    private final TlsUpdater tls;
    private final Clock clock;
    private final Predicate<Path> writable;
    private final Lane writer;
    private final AtomicReference<ReloadHistory> history = new AtomicReference<>(ReloadHistory.NONE);
    private final List<ReloadListener> listeners = new CopyOnWriteArrayList<>();

    /**
     * @param configSource reads the configuration at each attempt
     * @param snapshots the live snapshot
     * @param tls receives new server credentials
     * @param clock stamps snapshots and outcomes
     * @param workers the server's worker pool, where attempts run one at a time
     */
    public Reloader(ConfigSource configSource, SnapshotHolder snapshots, TlsUpdater tls, Clock clock,
            Executor workers) {
        this(configSource, snapshots, tls, clock, Files::isWritable, workers);
    }

    /**
     * @param configSource reads the configuration at each attempt
     * @param snapshots the live snapshot
     * @param tls receives new server credentials
     * @param clock stamps snapshots and outcomes
     * @param writable whether this process may write into a directory, as {@link SnapshotLoader} asks it
     * @param workers the server's worker pool, where attempts run one at a time
     */
    public Reloader(ConfigSource configSource, SnapshotHolder snapshots, TlsUpdater tls, Clock clock,
            Predicate<Path> writable, Executor workers) {
        this.configSource = configSource;
        this.snapshots = snapshots;
        this.tls = tls;
        this.clock = clock;
        this.writable = writable;
        // The single writer: attempts never overlap, whichever worker runs each.
        this.writer = Lane.serial("reload", workers);
    }

    /**
     * Queues a reload attempt.
     *
     * @param trigger what asked for it, for logs and status
     * @return completes when the attempt has ended: the new snapshot is live, nothing changed, or it failed
     */
    public CompletableFuture<ReloadOutcome> reload(String trigger) {
        return CompletableFuture.supplyAsync(() -> attempt(trigger), writer);
    }

    /**
     * Puts a freeze in force (or releases one: {@link Freeze#NONE}) on the same serial lane as reloads, so that no
     * reload publishes a snapshot built before it. The snapshot is the live one with that freeze, as a new
     * generation; nothing is read from disk.
     *
     * @param next the freeze to put in force
     * @return completes with the published snapshot
     */
    public CompletableFuture<ServerSnapshot> freeze(Freeze next) {
        return CompletableFuture.supplyAsync(() -> {
            ServerSnapshot current = snapshots.current();
            ServerSnapshot published = current.withFreeze(next, current.generation() + 1, clock.instant());
            snapshots.publish(published);
            LOG.info("generation {}: {}", published.generation(), next.active()
                    ? (next.all() ? "every node" : next.nodes().size() + " node(s)") + " frozen"
                            + (next.rollback() ? " on their previous generation" : "") + " since " + next.since()
                    : "nothing frozen");
            return published;
        }, writer);
    }

    /** @return counts and last outcomes */
    public ReloadHistory history() {
        return history.get();
    }

    /**
     * @param listener told of each attempt from now on, on the reload lane (one attempt at a time), after the
     *     listeners added before it
     */
    public void addListener(ReloadListener listener) {
        listeners.add(Objects.requireNonNull(listener));
    }

    /** Stops accepting attempts; lets a running one finish (bounded). */
    public void stop() throws InterruptedException {
        writer.shutdown();
        if (!writer.awaitTermination(Duration.ofSeconds(30))) {
            writer.shutdownNow();
        }
    }

    private ReloadOutcome attempt(String trigger) {
        for (ReloadListener listener : listeners) {
            listener.attempted(trigger);
        }
        Instant startedAt = clock.instant();
        long started = System.nanoTime();
        ServerSnapshot current = snapshots.current();
        ReloadOutcome outcome;
        try {
            ServerConfig config = configSource.load();
            requireNoRestartOnlyChange(current.config(), config);
            ServerSnapshot next = new SnapshotLoader(config, clock, writable).load(current.generation() + 1, current);
            if (next.sameInputs(current) && config.equals(current.config())) {
                outcome = outcome(trigger, startedAt, started, ReloadOutcome.Result.UNCHANGED, current.generation(), null);
            } else {
                if (!next.credentials().sameAs(current.credentials())) {
                    switchCredentials(next);
                }
                snapshots.publish(next);
                outcome = outcome(trigger, startedAt, started, ReloadOutcome.Result.APPLIED, next.generation(), null);
            }
        } catch (ConfigException | SnapshotException e) {
            outcome = outcome(trigger, startedAt, started, ReloadOutcome.Result.FAILED, current.generation(),
                    e.getMessage());
        } catch (RuntimeException e) {
            LOG.error("reload ({}) failed unexpectedly", trigger, e);
            outcome = outcome(trigger, startedAt, started, ReloadOutcome.Result.FAILED, current.generation(),
                    "unexpected error: " + e);
        }
        ReloadOutcome done = outcome;
        history.updateAndGet(h -> h.with(done));
        log(done);
        for (ReloadListener listener : listeners) {
            listener.finished(done);
        }
        return done;
    }

    /** Validated in full before anything changes: a bad certificate never reaches the listener. */
    private void switchCredentials(ServerSnapshot next) throws SnapshotException {
        try {
            tls.validate(next.credentials());
            tls.apply(next.credentials());
        } catch (Exception e) {
            throw new SnapshotException("server TLS credentials refused: " + e.getMessage(), e);
        }
    }

    private ReloadOutcome outcome(String trigger, Instant startedAt, long started, ReloadOutcome.Result result,
            long generation, String error) {
        return new ReloadOutcome(trigger, startedAt, Duration.ofNanos(System.nanoTime() - started), result,
                generation, error);
    }

    private void log(ReloadOutcome outcome) {
        double ms = outcome.duration().toNanos() / 1e6;
        switch (outcome.result()) {
            case APPLIED -> {
                ServerSnapshot live = snapshots.current();
                int disagreements = live.nodes().disagreements();
                LOG.info("reload ({}) applied: generation {}, {} nodes, {} pinned keys, in {} ms{}", outcome.trigger(),
                        outcome.generation(), live.nodes().nodeCount(), live.nodes().pinCount(),
                        String.format("%.1f", ms), disagreements == 0 ? "" : "; " + disagreements + " node ids "
                                + "refused until nodeslist.json and the node certificates both pin them");
            }
            case UNCHANGED -> LOG.info("reload ({}): inputs unchanged, generation {} stays live", outcome.trigger(),
                    outcome.generation());
            case FAILED -> LOG.error("reload ({}) rejected, generation {} keeps serving: {}", outcome.trigger(),
                    outcome.generation(), outcome.error());
        }
    }

    /**
     * Listeners and identity are bound when the process starts; changing them by reload would half-apply the
     * configuration, so such a change fails the whole reload and says a restart is needed.
     */
    private static void requireNoRestartOnlyChange(ServerConfig live, ServerConfig next) throws ConfigException {
        String source = next.source() != null ? next.source() + ": " : "";
        check(source, "general.listen", live.general().listen(), next.general().listen());
        check(source, "general.proxy_protocol_from", live.general().proxyProtocolFrom(),
                next.general().proxyProtocolFrom());
        check(source, "admin.listen", live.admin().listen(), next.admin().listen());
        check(source, "general.node_id", live.general().nodeId(), next.general().nodeId());
        check(source, "general.role", live.general().role(), next.general().role());
        check(source, "tls.protocols", live.tls().protocols(), next.tls().protocols());
        check(source, "tls.provider", live.tls().provider(), next.tls().provider());
    }

    private static void check(String source, String key, Object live, Object next) throws ConfigException {
        if (!live.equals(next)) {
            throw new ConfigException(source + "'" + key + "' changed from " + live + " to " + next
                    + ": restart Pintle to apply it (nothing was reloaded)");
        }
    }
}
