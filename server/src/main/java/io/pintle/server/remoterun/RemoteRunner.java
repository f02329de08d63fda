package io.pintle.server.remoterun;

import io.pintle.api.Routes;
import io.pintle.api.dto.Problem;
import io.pintle.api.dto.RemoteRunEvent;
import io.pintle.client.ProblemException;
import io.pintle.client.RemoteRunClient;
import io.pintle.server.config.ServerConfig;
import io.pintle.server.nodes.KeyHash;
import io.pintle.server.nodes.Node;
import io.pintle.server.nodes.NodeId;
import io.pintle.server.reload.ServerSnapshot;
import io.pintle.server.threads.Lane;
import io.pintle.server.tls.ServerCredentials;
import java.io.IOException;
import java.net.URI;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Carries out a {@link RunPlan}: this server's agent (when targeted), one call per relay for the nodes below it,
 * and each neighbour targeted itself (a relay too, as relayd runs one) by its order channel or the first other
 * {@code [remote_run] transports} entry. Each call and agent run holds one of {@code [remote_run] max_parallel}
 * permits shared by every run in progress, so that a large run (or many) never starts more than that many agents
 * or connections from this server. Every target ends with exactly one status, whatever fails: an unreachable or
 * silent neighbour, a refusal, a cut answer, a stopping server.
 */
public final class RemoteRunner {
    /**
     * A server sends a keep-alive event after this much silence on a streamed answer, so that the caller can tell
     * a long, quiet agent run from a dead peer.
     */
    public static final Duration KEEPALIVE = Duration.ofSeconds(30);
    /** A neighbour silent for this long (three missed keep-alives) is counted unreachable: the per-hop timeout. */
    public static final Duration HOP_SILENCE = KEEPALIVE.multipliedBy(3);

    private static final Logger LOG = LoggerFactory.getLogger(RemoteRunner.class);

    private final Semaphore permits;
    /** The runs, their calls and agent runs: as many at once as asked (the permits bound the calls). */
    private final Lane workers;
    private final AgentLauncher launcher;
    private final PullChannels channels;
    private final PolicyUpdates policyUpdates;
    private final AtomicReference<Identity> identity = new AtomicReference<>();
    private final Consumer<String> ended;

    /**
     * @param maxParallel agent runs and neighbour calls in progress at once
     * @param maxChannels nodes' order polls parked at once
     * @param reportGrace after the agent's timeout, how long a node has to report an order from its channel
     * @param reconnectGrace how long a node whose order poll ended still counts as connected
     * @param snapshots the live snapshot (for the policy updates sent over order channels)
     * @param ended told each target's status as it is reported (metrics)
     * @param workers the server's worker pool (a run, and each of its calls, blocks on one)
     * @param scheduler the server's scheduler (agent timeouts, order channel timers, policy update scans)
     */
    public RemoteRunner(int maxParallel, int maxChannels, Duration reportGrace, Duration reconnectGrace,
            Supplier<ServerSnapshot> snapshots, Consumer<String> ended, Executor workers,
            ScheduledExecutorService scheduler) {
        this.ended = ended;
        this.permits = new Semaphore(maxParallel, true);
        this.workers = Lane.of("remote runs", Integer.MAX_VALUE, workers);
        // The shared scheduler itself, not timers closed at stop: an agent stopped at stop still gets its SIGKILL
        // after the grace period.
        this.launcher = new AgentLauncher(scheduler);
        this.channels = new PullChannels(maxChannels, reportGrace, reconnectGrace, scheduler);
        this.policyUpdates = new PolicyUpdates(channels, snapshots, workers, scheduler);
    }

    /** Starts sending policy updates over order channels. */
    public void start() {
        policyUpdates.start();
    }

    /** @return the policy updates sent over order channels */
    public PolicyUpdates policyUpdates() {
        return policyUpdates;
    }

    /** @return the nodes' order channels (the pull channel) */
    public PullChannels channels() {
        return channels;
    }

    /** Stops: runs in progress end with an error status, and their agents are stopped. */
    public void stop() {
        policyUpdates.close();
        channels.close();
        workers.shutdownNow();
    }

    /**
     * Runs a plan in the background.
     *
     * @param snapshot the snapshot the request was accepted on
     * @param order what to run
     * @param plan where
     * @param hops servers the run has crossed before this one
     * @param sink receives the events
     * @param done called with the summary once every target has its status
     */
    public void start(ServerSnapshot snapshot, RunOrder order, RunPlan plan, int hops, RunSink sink,
            Consumer<Summary> done) {
        workers.execute(() -> done.accept(run(snapshot, order, plan, hops, sink)));
    }

    /**
     * Runs a plan and returns when every target has its status.
     *
     * @param snapshot the snapshot the request was accepted on
     * @param order what to run
     * @param plan where
     * @param hops servers the run has crossed before this one
     * @param sink receives the events
     * @return how many targets there were and how many succeeded
     */
    public Summary run(ServerSnapshot snapshot, RunOrder order, RunPlan plan, int hops, RunSink sink) {
        Counting counting = new Counting(sink, ended);
        for (RunPlan.Unresolved unresolved : plan.unresolved()) {
            counting.accept(RemoteRunEvent.status(unresolved.node().value(), unresolved.status(), null, 0, false,
                    unresolved.detail()));
        }
        List<Runnable> tasks = new ArrayList<>();
        ServerConfig.RemoteRun config = snapshot.config().remoteRun();
        if (plan.local()) {
            if (config.agentSocket() != null) {
                tasks.add(() -> launcher.run(snapshot.self().value(), config.agentSocket(), order, config.timeout(),
                        counting));
            } else {
                List<String> argv = order.argv(config);
                tasks.add(() -> launcher.run(snapshot.self().value(), argv, config.timeout(), counting));
            }
        }
        List<PullChannels.Order> pulled = new ArrayList<>();
        BlockingQueue<PullChannels.Order> active = new LinkedBlockingQueue<>();
        List<RudderRemoteRun.Target> cfServerd = new ArrayList<>();
        // Without an order channel, a node is reached by the first of the other transports listed.
        ServerConfig.Transport push = config.transports().stream()
                .filter(transport -> transport != ServerConfig.Transport.PULL).findFirst().orElse(null);
        Set<NodeId> relays = plan.hops().isEmpty() ? Set.of() : snapshot.nodes().nodes().stream()
                .map(Node::policyServer).collect(Collectors.toUnmodifiableSet());
        for (RunPlan.Hop hop : plan.hops()) {
            NodeId via = hop.via().id();
            List<NodeId> below = hop.nodes().stream().filter(node -> !node.equals(via)).toList();
            if (!below.isEmpty()) {
                // The nodes below a relay go to it, the relay itself apart: relayd forwards only what is below a
                // sub-relay, and runs each neighbour itself, relays included (src/data/node.rs: next_hop is none
                // for a neighbour). A relayd relay asked for its own id runs nothing: it is not in its own list.
                RunPlan.Hop through = new RunPlan.Hop(hop.via(), below);
                tasks.add(() -> call(snapshot, order, through, hops + 1, counting, null));
            }
            if (below.size() == hop.nodes().size()) {
                continue;
            }
            PullChannels.Order given = null;
            if (config.transports().contains(ServerConfig.Transport.PULL)) {
                given = channels.dispatch(via, order, config.timeout(), active::offer);
            }
            if (given != null) {
                pulled.add(given);
            } else if (relays.contains(via) || push == ServerConfig.Transport.PINTLE) {
                // A relay is a server this one calls over HTTPS anyway (for the nodes below it): asked for its own
                // id, a Pintle relay runs its agent. A relayd relay answers without running itself; relayd's way
                // (cf-runagent to its cf-serverd), when listed, then reaches it.
                RunPlan.Hop itself = new RunPlan.Hop(hop.via(), List.of(via));
                RudderRemoteRun relaydsWay = config.transports().contains(ServerConfig.Transport.RUDDER_REMOTE_RUN)
                        ? new RudderRemoteRun(launcher, config.remoteCommand(), config.agentSocket())
                        : null;
                tasks.add(() -> call(snapshot, order, itself, hops + 1, counting, relaydsWay));
            } else if (push == ServerConfig.Transport.RUDDER_REMOTE_RUN) {
                cfServerd.add(new RudderRemoteRun.Target(via, hop.via().hostname()));
            } else {
                counting.accept(RemoteRunEvent.status(via.value(), RemoteRunEvent.UNREACHABLE, null, 0, false,
                        "node " + via + " holds no order channel to this server (it polls "
                                + Routes.RELAY_API_ALIAS + Routes.REMOTE_RUN_ORDERS + " when its pull client runs), "
                                + "and [remote_run] transports has no other way to it"));
            }
        }
        if (!cfServerd.isEmpty()) {
            // relayd's way, one batch for all of them: one permit, as one rudder remote run.
            tasks.add(() -> new RudderRemoteRun(launcher, config.remoteCommand(), config.agentSocket())
                    .run(cfServerd, order, config.timeout(), counting));
        }
        CountDownLatch finished = new CountDownLatch(tasks.size() + (pulled.isEmpty() ? 0 : 1));
        if (!pulled.isEmpty()) {
            // Orders hold no permit: a node's own agent does the work, and the caller waits on all at once.
            try {
                workers.execute(() -> {
                    try {
                        awaitPulled(pulled, active, counting);
                    } finally {
                        finished.countDown();
                    }
                });
            } catch (RuntimeException stopping) {
                finished.countDown();
            }
        }
        int started = 0;
        String missing = "no status was reported for this node";
        try {
            for (Runnable task : tasks) {
                permits.acquire();
                started++;
                try {
                    workers.execute(() -> {
                        try {
                            task.run();
                        } finally {
                            permits.release();
                            finished.countDown();
                        }
                    });
                } catch (RuntimeException rejected) {
                    permits.release();
                    finished.countDown();
                    throw rejected;
                }
            }
            finished.await();
        } catch (InterruptedException | RuntimeException e) {
            // Stopping: targets not yet started (or whose task could not be handed over) end with an error.
            Thread.currentThread().interrupt();
            missing = "the run was interrupted (the server is stopping)";
            LOG.warn("remote run interrupted after {} of {} tasks: {}", started, tasks.size(), e.toString());
        }
        counting.closeMissing(plan.targets(), missing);
        return counting.summary(plan.targets().size());
    }

    /**
     * Passes on the output of the orders given over order channels as it comes, and each one's status when it
     * ends (the channel ends it at its deadline at the latest).
     */
    private void awaitPulled(List<PullChannels.Order> pulled, BlockingQueue<PullChannels.Order> active,
            RunSink sink) {
        int open = pulled.size();
        Set<PullChannels.Order> done = new java.util.HashSet<>();
        try {
            while (open > 0) {
                PullChannels.Order order = active.poll(KEEPALIVE.toMillis(), TimeUnit.MILLISECONDS);
                if (order == null || done.contains(order)) {
                    continue;
                }
                order.drain(sink);
                RemoteRunEvent end = order.ended();
                if (end != null) {
                    order.drain(sink);
                    if (order.dropped()) {
                        sink.accept(RemoteRunEvent.output(order.node().value(), "[pintle] some output lines were "
                                + "dropped: more than " + (PullChannels.MAX_BUFFERED_BYTES >> 20) + " MiB waited "
                                + "for the caller to read them"));
                    }
                    sink.accept(end);
                    done.add(order);
                    open--;
                }
            }
        } catch (InterruptedException stopping) {
            Thread.currentThread().interrupt();
            for (PullChannels.Order order : pulled) {
                if (!done.contains(order)) {
                    channels.finish(order, RemoteRunEvent.ERROR, null, false, "the server is stopping");
                    sink.accept(order.ended());
                }
            }
        }
    }

    /**
     * One call to a neighbour: its events are passed on; targets it did not report get a status from the failure.
     *
     * @param relaydsWay for a call that asks a neighbour to run itself: how to reach it when relayd answers (which
     *     never runs the machine it is on), or null to report it refused
     */
    private void call(ServerSnapshot snapshot, RunOrder order, RunPlan.Hop hop, int hops, Counting sink,
            RudderRemoteRun relaydsWay) {
        long start = System.nanoTime();
        Node via = hop.via();
        Set<String> expected = hop.nodes().stream().map(NodeId::value).collect(Collectors.toUnmodifiableSet());
        Set<String> reported = ConcurrentHashMap.newKeySet();
        String failure;
        String status;
        Map<String, List<NodeId>> hosts = new java.util.LinkedHashMap<>();
        for (NodeId node : hop.nodes()) {
            snapshot.nodes().node(node).ifPresent(entry ->
                    hosts.computeIfAbsent(entry.hostname(), h -> new ArrayList<>()).add(node));
        }
        Set<String> withOutput = ConcurrentHashMap.newKeySet();
        boolean relaydAnswered = false;
        RudderRemoteRun.Attribution attribution = null;
        ServerConfig.RemoteRun config = snapshot.config().remoteRun();
        boolean single = hop.nodes().size() == 1 && hop.nodes().get(0).equals(via.id());
        try {
            Set<String> pins = pins(snapshot, via.id());
            // The unversioned path, the one Rudder's Apache (and Pintle's TLS listener) serves: the callee may be
            // a relayd relay behind Apache, which denies relayd's versioned /rudder/relay-api/1/.
            String path = Routes.RELAY_API_ALIAS + (single
                    ? Routes.REMOTE_RUN_NODE.replace("{id}", via.id().value())
                    : Routes.REMOTE_RUN_NODES);
            URI url = URI.create("https://" + ServerConfig.Listen.authorityHost(via.hostname()) + ":" + config.port() + path);
            List<String> nodes = single ? null : hop.nodes().stream().map(NodeId::value).toList();
            Consumer<RemoteRunEvent> events = event -> {
                // A neighbour reports on the nodes it was asked about, and only once each.
                if (event.node() != null && expected.contains(event.node())
                        && (RemoteRunEvent.OUTPUT.equals(event.type())
                                || (RemoteRunEvent.STATUS.equals(event.type()) && reported.add(event.node())))) {
                    sink.accept(event);
                }
            };
            Map<String, String> headers = Map.of(Routes.REMOTE_RUN_HOPS_HEADER, Integer.toString(hops));
            if (order.command() == AgentCommand.RUN) {
                // relayd's own form, which a relayd relay behind Apache takes as well as a Pintle (which answers
                // events, statuses included); relayd answers its text, "host> line", with no status.
                // relayd's text is rudder remote run's output: attributed as RudderRemoteRun attributes its own.
                attribution = new RudderRemoteRun.Attribution(hosts, RudderRemoteRun::resolve);
                RudderRemoteRun.Attribution lines = attribution;
                relaydAnswered = !client(snapshot.credentials(), config).runForm(url, pins,
                        order.conditions().joined(), nodes, headers, events, line -> {
                            RudderRemoteRun.Attribution.Line attributed = lines.attribute(line);
                            for (NodeId node : attributed.nodes()) {
                                withOutput.add(node.value());
                                sink.accept(RemoteRunEvent.output(node.value(), attributed.text()));
                            }
                        });
            } else {
                client(snapshot.credentials(), config).run(url, pins, order.request(nodes), headers, events);
            }
            failure = relaydAnswered ? "no output for this node came back from " + via.id() + " (a relayd relay, "
                    + "which reports no status)" : "no status for this node came back from " + via.id();
            status = RemoteRunEvent.ERROR;
        } catch (ProblemException e) {
            Problem problem = e.problem();
            failure = via.id() + " (" + via.hostname() + ") refused the run: " + problem.status()
                    + (problem.reason() != null ? " " + problem.reason() : "")
                    + (problem.detail() != null ? ": " + problem.detail() : "");
            status = problem.status() >= 500 ? RemoteRunEvent.UNREACHABLE : RemoteRunEvent.REFUSED;
        } catch (IOException e) {
            failure = via.id() + " (" + via.hostname() + ") could not be reached: " + e;
            status = RemoteRunEvent.UNREACHABLE;
        } catch (GeneralSecurityException | RuntimeException e) {
            failure = "calling " + via.id() + " (" + via.hostname() + ") failed: " + e;
            status = RemoteRunEvent.ERROR;
        }
        long duration = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        if (single && relaydAnswered && !reported.contains(via.id().value())) {
            // relayd answered for its own id: its node list does not hold the relay it runs on, so it ran nothing
            // (src/api/remote_run.rs: no neighbour, no sub-relay, an empty answer).
            if (relaydsWay != null) {
                relaydsWay.run(List.of(new RudderRemoteRun.Target(via.id(), via.hostname())), order,
                        config.timeout(), sink);
            } else {
                sink.accept(RemoteRunEvent.status(via.id().value(), RemoteRunEvent.REFUSED, null, duration, false,
                        via.id() + " runs relayd, which does not run the agent of its own machine when asked for its "
                                + "own id; relayd reaches a relay's agent through its cf-serverd: add \""
                                + ServerConfig.Transport.RUDDER_REMOTE_RUN.key() + "\" to [remote_run] transports"));
            }
            return;
        }
        Map<String, String> unreachable = relaydAnswered ? attribution.unreachable() : Map.of();
        for (NodeId node : hop.nodes()) {
            String host = snapshot.nodes().node(node).map(Node::hostname).orElse(null);
            if (host != null && unreachable.containsKey(host) && reported.add(node.value())) {
                sink.accept(RemoteRunEvent.status(node.value(), RemoteRunEvent.UNREACHABLE, null, duration, false,
                        via.id() + " (a relayd relay) could not reach it: " + unreachable.get(host).strip()));
                continue;
            }
            if (relaydAnswered && withOutput.contains(node.value()) && reported.add(node.value())) {
                // relayd's answer has the agent's output, never its outcome: not counted as a success.
                sink.accept(RemoteRunEvent.status(node.value(), RemoteRunEvent.UNKNOWN, null, duration, false,
                        "reported by " + via.id() + ", a relayd relay: its answer carries the agent's output, not "
                                + "its exit status (read the output)"));
                continue;
            }
            if (reported.add(node.value())) {
                LOG.warn("remote run: {}: {}", node, failure);
                sink.accept(RemoteRunEvent.status(node.value(), status, null, duration, false, failure));
            }
        }
    }

    /**
     * The callee's keys: as the node list pins it ({@code key-hash}) and as relayd pins it, by its certificate in
     * the node certificates; either is accepted.
     */
    private static Set<String> pins(ServerSnapshot snapshot, NodeId node) throws GeneralSecurityException {
        Node entry = snapshot.nodes().node(node).orElseThrow();
        Set<String> pins = new java.util.LinkedHashSet<>();
        if (entry.keyHash().isPresent() && entry.keyHash().get().algorithm().equals("sha256")) {
            pins.add(entry.keyHash().get().toString());
        }
        for (KeyHash key : snapshot.nodes().pinsOf(node)) {
            if (key.algorithm().equals("sha256")) {
                pins.add(key.toString());
            }
        }
        if (pins.isEmpty()) {
            throw new GeneralSecurityException("no sha256 key pin for " + node + " (neither in nodeslist.json nor "
                    + "in a node certificate): its key cannot be checked");
        }
        return pins;
    }


    /** One client per identity: rebuilt when the server's certificate or the timeouts change (a reload). */
    private RemoteRunClient client(ServerCredentials credentials, ServerConfig.RemoteRun config)
            throws GeneralSecurityException {
        Identity current = identity.get();
        if (current != null && current.credentials().equals(credentials)
                && current.connectTimeout().equals(config.connectTimeout())) {
            return current.client();
        }
        RemoteRunClient client = new RemoteRunClient(credentials.chain(), credentials.key(), config.connectTimeout(),
                HOP_SILENCE);
        identity.set(new Identity(credentials, config.connectTimeout(), client));
        return client;
    }

    private record Identity(ServerCredentials credentials, Duration connectTimeout, RemoteRunClient client) {}

    /**
     * @param nodes targets
     * @param succeeded targets whose agent exited with 0
     */
    public record Summary(int nodes, int succeeded) {}

    /** Passes events on, counting statuses, and gives a status to targets that never got one. */
    private static final class Counting implements RunSink {
        private final RunSink sink;
        private final Set<String> reported = ConcurrentHashMap.newKeySet();
        private final AtomicInteger succeeded = new AtomicInteger();
        private final Consumer<String> ended;

        Counting(RunSink sink, Consumer<String> ended) {
            this.sink = sink;
            this.ended = ended;
        }

        @Override
        public void accept(RemoteRunEvent event) {
            if (RemoteRunEvent.STATUS.equals(event.type())) {
                if (!reported.add(event.node())) {
                    return;
                }
                if (RemoteRunEvent.SUCCESS.equals(event.status())) {
                    succeeded.incrementAndGet();
                }
                ended.accept(event.status());
            }
            sink.accept(event);
        }

        void closeMissing(List<NodeId> targets, String detail) {
            for (NodeId target : targets) {
                if (!reported.contains(target.value())) {
                    accept(RemoteRunEvent.status(target.value(), RemoteRunEvent.ERROR, null, 0, false, detail));
                }
            }
        }

        Summary summary(int nodes) {
            return new Summary(nodes, succeeded.get());
        }
    }
}
