package io.pintle.server;

import io.pintle.server.cfengine.CfengineDoor;
import io.pintle.server.cfengine.CfengineListener;
import io.pintle.api.dto.RemoteRunEvent;
import io.pintle.server.remoterun.AgentCommand;
import io.pintle.server.remoterun.Conditions;
import io.pintle.server.remoterun.RunOrder;
import io.pintle.server.remoterun.RunPlan;
import io.pintle.server.config.ConfigLoader;
import io.pintle.server.config.ServerConfig;
import io.pintle.server.delivery.Delivery;
import io.pintle.server.delivery.FetchedTrees;
import io.pintle.server.delivery.Freezer;
import io.pintle.server.delivery.ObjectStore;
import io.pintle.server.http.edge.HttpServerFactory;
import io.pintle.server.http.jersey.JerseyConfig;
import io.pintle.server.http.admin.Readiness;
import io.pintle.server.metrics.ServerMetrics;
import io.pintle.server.policy.PolicyArchives;
import io.pintle.server.policy.ChangeWaits;
import io.pintle.server.policy.DigestCache;
import io.pintle.server.policy.FileCache;
import io.pintle.server.policy.TreeScanner;
import io.pintle.server.reload.ConfigSource;
import io.pintle.server.reload.CrlFetch;
import io.pintle.server.reload.InputWatcher;
import io.pintle.server.reload.RelaySyncTargets;
import io.pintle.server.reload.Reloader;
import io.pintle.server.reload.ServerSnapshot;
import io.pintle.server.reload.SnapshotException;
import io.pintle.server.reload.SnapshotHolder;
import io.pintle.server.reload.SnapshotLoader;
import io.pintle.server.remoterun.RemoteRunner;
import io.pintle.server.sharedfiles.SharedFileStore;
import io.pintle.server.sharedfiles.SharedFilesCleanup;
import io.pintle.server.systemd.ReloadNotifier;
import io.pintle.server.systemd.SystemdHandoff;
import io.pintle.server.threads.Threads;
import io.pintle.server.tls.ServerTls;
import io.pintle.server.uploads.UploadStore;
import io.pintle.server.uploads.LoginThrottle;
import io.pintle.server.uploads.UploadTally;
import io.pintle.server.upstream.RelaySync;
import io.pintle.server.upstream.UploadForwarder;
import io.pintle.server.upstream.UpstreamClient;
import io.pintle.server.watch.DirectoryWatch;
import java.nio.file.Files;
import java.security.GeneralSecurityException;
import java.time.Clock;
import java.time.Duration;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.util.component.LifeCycle;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The composition root: builds every collaborator with {@code new}, in dependency order. */
public final class Bootstrap {
    /**
     * Rudder writes several input files in a row; wait for this much silence before reloading. Short on purpose:
     * a reload between two of those writes is harmless (every intermediate state is a valid one, and the next
     * write triggers the next reload), while every millisecond here delays a newly accepted node.
     */
    public static final Duration WATCH_QUIET_PERIOD = Duration.ofMillis(20);

    /**
     * Parked {@code ?wait} requests look at their resource again this often even without a file-system event
     * (events can be dropped when the kernel's queue overflows).
     */
    public static final Duration WAIT_RECHECK = Duration.ofSeconds(5);

    /** Expired shared files are removed this often (relayd's {@code [shared_files.cleanup] frequency}). */
    public static final Duration SHARED_FILES_CLEANUP = Duration.ofMinutes(10);

    /** A relay's long polls on its policy server wait this long each (the server's maximum). */
    public static final Duration RELAY_SYNC_WAIT = Duration.ofSeconds(300);

    /**
     * A temporary upload file older than this at start was left by a process killed mid-upload. A process being
     * replaced (socket activation) may still be writing younger ones.
     */
    public static final Duration UPLOAD_LEFTOVER_AGE = Duration.ofHours(1);

    private static final Logger LOG = LoggerFactory.getLogger(Bootstrap.class);

    private Bootstrap() {}

    /**
     * Loads the first snapshot and assembles a server around it. Reloads re-read the configuration file the
     * configuration came from; built-in defaults (no file) stay as they are.
     *
     * @param config the validated configuration
     * @return the server, not started
     * @throws SnapshotException when an input file is missing or invalid
     * @throws GeneralSecurityException when the TLS material is unusable
     */
    public static PintleServer build(ServerConfig config) throws SnapshotException, GeneralSecurityException {
        return build(config, SystemdHandoff.none());
    }

    /**
     * @param config the validated configuration
     * @param systemd where to notify readiness and which inherited listening socket to use, if any
     * @return the server, not started
     * @throws SnapshotException when an input file is missing or invalid
     * @throws GeneralSecurityException when the TLS material is unusable
     */
    public static PintleServer build(ServerConfig config, SystemdHandoff systemd)
            throws SnapshotException, GeneralSecurityException {
        ConfigSource source = config.source() != null && Files.exists(config.source())
                ? () -> ConfigLoader.load(config.source())
                : () -> config;
        return build(config, source, systemd);
    }

    /**
     * @param config the validated configuration
     * @param source how reloads read the configuration again
     * @return the server, not started
     * @throws SnapshotException when an input file is missing or invalid
     * @throws GeneralSecurityException when the TLS material is unusable
     */
    public static PintleServer build(ServerConfig config, ConfigSource source)
            throws SnapshotException, GeneralSecurityException {
        return build(config, source, SystemdHandoff.none());
    }

    /**
     * @param config the validated configuration
     * @param source how reloads read the configuration again
     * @param systemd where to notify readiness and which inherited listening socket to use, if any
     * @return the server, not started
     * @throws SnapshotException when an input file is missing or invalid
     * @throws GeneralSecurityException when the TLS material is unusable
     */
    public static PintleServer build(ServerConfig config, ConfigSource source, SystemdHandoff systemd)
            throws SnapshotException, GeneralSecurityException {
        // The one scheduler and worker pool: every component below is handed them and makes no thread of its own.
        Threads threads = new Threads();
        try {
            return build(config, source, systemd, threads);
        } catch (SnapshotException | GeneralSecurityException | RuntimeException | Error e) {
            threads.close();
            throw e;
        }
    }

    private static PintleServer build(ServerConfig config, ConfigSource source, SystemdHandoff systemd,
            Threads threads) throws SnapshotException, GeneralSecurityException {
        Clock clock = Clock.systemUTC();
        ServerSnapshot first = new SnapshotLoader(config, clock).load(1);
        SnapshotHolder snapshots = new SnapshotHolder(first);
        ServerTls tls = ServerTls.create(first.credentials(), config.tls().protocols(), config.tls().provider());
        Reloader reloader = new Reloader(source, snapshots, tls, clock, threads.workers());
        CrlFetch crlFetch = new CrlFetch(snapshots, reloader::reload, clock, threads.workers(), threads.scheduler());
        DirectoryWatch directoryWatch = new DirectoryWatch();
        InputWatcher watcher = new InputWatcher(reloader, snapshots, directoryWatch, WATCH_QUIET_PERIOD);
        ServerMetrics metrics = new ServerMetrics(snapshots);
        Readiness readiness = new Readiness();
        DigestCache digests = new DigestCache(config.limits().digestCacheEntries(), DigestCache.defaultThreads(),
                threads.workers());
        TreeScanner scanner = new TreeScanner(digests, config.limits().maxManifestEntries());
        ChangeWaits waits = new ChangeWaits(config.limits().maxWaiters(), config.limits().maxWaitersPerAddress(),
                directoryWatch, WATCH_QUIET_PERIOD, WAIT_RECHECK, threads.workers(), threads.scheduler());
        metrics.trees(waits, digests);
        UpstreamClient upstream = new UpstreamClient();
        SharedFileStore sharedFiles = new SharedFileStore(clock, config.limits().maxSharedFileBytes());
        SharedFilesCleanup cleanup = new SharedFilesCleanup(sharedFiles,
                () -> snapshots.current().config().paths().sharedFiles(), SHARED_FILES_CLEANUP, threads.workers(),
                threads.scheduler());
        RemoteRunner remoteRuns = new RemoteRunner(config.remoteRun().maxParallel(),
                config.remoteRun().maxChannels(), config.remoteRun().reportGrace(),
                config.remoteRun().reconnectGrace(), snapshots::current, metrics::remoteRunEnded, threads.workers(),
                threads.scheduler());
        metrics.orderChannels(remoteRuns.channels(), remoteRuns.policyUpdates());
        ObjectStore objects = new ObjectStore();
        FetchedTrees fetchedTrees = new FetchedTrees(objects, threads.workers());
        PolicyArchives archives = new PolicyArchives(scanner);
        metrics.archives(archives);
        // Bench-only switch (bench/README.md): -Dpintle.bench.delivery=false measures the request path without it.
        Delivery delivery = new Delivery(snapshots::current, fetchedTrees, archives, remoteRuns.channels()::connected,
                clock, threads.scheduler(), !"false".equals(System.getProperty("pintle.bench.delivery")));
        metrics.delivery(delivery, snapshots);
        Freezer freezer = new Freezer(reloader, objects, clock);
        FileCache files = new FileCache(config.limits().fileCacheBytes(), clock);
        metrics.downloads(files);
        UploadTally uploads = new UploadTally();
        metrics.uploads(uploads);
        LoginThrottle logins = new LoginThrottle();
        metrics.loginThrottle(logins, () -> snapshots.current().config().uploads().logins());
        metrics.crlFetch(crlFetch);
        removeUploadLeftovers(config.uploads(), clock);
        // Always built (idle unless the configuration forwards), so that status and metrics have one to read.
        UploadForwarder forwarder = new UploadForwarder(snapshots::current, upstream, clock, Duration.ofSeconds(1),
                Duration.ofMinutes(1));
        metrics.forwarding(forwarder, snapshots);
        Server server = HttpServerFactory.create(config, tls.factory(), snapshots, clock,
                new HttpServerFactory.FileServices(files, scanner, digests, waits, sharedFiles, remoteRuns.channels(),
                        delivery, archives),
                JerseyConfig.create(sharedFiles, upstream, remoteRuns, uploads, logins, delivery, forwarder),
                JerseyConfig.admin(snapshots, reloader, metrics, readiness, remoteRuns, uploads, crlFetch, delivery,
                        freezer, forwarder, clock), metrics, readiness);
        systemd.listener().ifPresent(inherited -> HttpServerFactory.inheritTlsListener(server, inherited));
        try {
            CfengineListener.install(server, config, snapshots, new CfengineDoor(snapshots, metrics, digests, clock,
                    (snapshot, conditions, lines) -> ownRun(remoteRuns, snapshot, conditions, lines), delivery));
        } catch (java.io.IOException e) {
            throw new SnapshotException("[cfengine] key: " + e.getMessage(), e);
        }
        // First of the beans, so stopped after every one below: the components stop their work, then the pools.
        server.addBean(new Managed("threads", () -> { }, threads::close));
        server.addBean(new Managed("reloader", () -> { }, reloader::stop));
        // After the reloader, so stopped before it: a fetch under way never asks a stopped reloader. Always there,
        // idle without [nodes] crl_url, so that a reload can set one.
        server.addBean(new Managed("crl fetch", crlFetch::start, crlFetch::stop));
        server.addBean(new Managed("digests", () -> { }, digests::close));
        // Before its clients (change waits, input watcher): started before them, stopped after them.
        server.addBean(new Managed("directory watch", directoryWatch::start, directoryWatch::close));
        server.addBean(new Managed("change waits", waits::start, waits::close));
        // Parked requests are answered (304; 204 for order polls) as soon as the stop begins: the drain of open
        // connections does not wait on them for the whole stop timeout.
        server.addEventListener(new LifeCycle.Listener() {
            @Override
            public void lifeCycleStopping(LifeCycle event) {
                waits.close();
                remoteRuns.channels().close();
            }
        });
        server.addBean(new Managed("shared files cleanup", cleanup::start, cleanup::stop));
        server.addBean(new Managed("remote runs", remoteRuns::start, remoteRuns::stop));
        // Started before the listeners' requests reach it, stopped (and saved) after they are drained.
        server.addBean(new Managed("delivery", delivery::start, delivery::stop));
        server.addBean(new Managed("fetched trees", () -> { }, fetchedTrees::stop));
        // Runs whatever the configuration says at start: a reload may turn forwarding on or off, read at each round.
        server.addBean(new Managed("upload forwarding", forwarder::start, forwarder::stop));
        if (RelaySyncTargets.wanted(config)) {
            RelaySync relaySync = new RelaySync(snapshots::current, upstream, RELAY_SYNC_WAIT, Duration.ofSeconds(1),
                    Duration.ofMinutes(1));
            server.addBean(new Managed("relay sync", relaySync::start, relaySync::stop));
        }
        if (config.reload().watch()) {
            server.addBean(new Managed("input watcher", watcher::start, watcher::stop));
        }
        PintleServer pintle = new PintleServer(config, snapshots, reloader, metrics, server, systemd.notifier());
        // Who is told of every reload attempt, in this order.
        reloader.addListener(metrics);
        reloader.addListener(new ReloadNotifier(systemd.notifier(), pintle::status));
        if (config.reload().watch()) {
            reloader.addListener(watcher);
        }
        reloader.addListener(crlFetch);
        return pintle;
    }

    /** cf-runagent's {@code EXEC} on the CFEngine listener: this server's agent, as a remote run targeting it. */
    private static Integer ownRun(RemoteRunner remoteRuns, ServerSnapshot snapshot, java.util.List<String> conditions,
            java.util.function.Consumer<String> lines) {
        java.util.concurrent.atomic.AtomicReference<Integer> exit = new java.util.concurrent.atomic.AtomicReference<>();
        remoteRuns.run(snapshot, new RunOrder(AgentCommand.RUN, new Conditions(conditions)),
                new RunPlan(java.util.List.of(snapshot.self()), true, java.util.List.of(), java.util.List.of()), 0,
                event -> {
                    if (RemoteRunEvent.OUTPUT.equals(event.type())) {
                        lines.accept(event.line());
                    } else if (RemoteRunEvent.STATUS.equals(event.type())) {
                        exit.set(event.exitCode());
                        if (event.detail() != null && !RemoteRunEvent.SUCCESS.equals(event.status())) {
                            lines.accept(event.status() + ": " + event.detail());
                        }
                    }
                });
        return exit.get();
    }

    private static void removeUploadLeftovers(ServerConfig.Uploads uploads, Clock clock) {
        if (!uploads.enabled()) {
            return;
        }
        for (java.nio.file.Path directory : uploads.directories()) {
            int removed = UploadStore.removeLeftovers(directory, UPLOAD_LEFTOVER_AGE, clock.instant());
            if (removed > 0) {
                LOG.info("removed {} temporary upload file(s) left in {} by a stopped process", removed, directory);
            }
        }
    }
}
