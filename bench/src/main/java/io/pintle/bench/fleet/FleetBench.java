package io.pintle.bench.fleet;

import io.pintle.bench.harness.CommandLine;
import io.pintle.bench.harness.HarnessMain;
import io.pintle.bench.sync.Ports;
import io.pintle.server.config.ServerConfig;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code bench/fleet}: a Rudder fleet on one machine. The root and each relay are Pintle servers in their own JVMs
 * on their own loopback addresses, under socket activation as the package runs them (or, with {@code --replicas},
 * root replicas behind HAProxy in TCP mode with the PROXY protocol v2); fleetagents plays every node's agent on its
 * real schedule; this JVM lays the fleet out, plays the scenario (a generation, restarts, a replica killed), consumes
 * the uploads as relayd would, measures CPU and memory of every process, and writes the report and its plots.
 */
public final class FleetBench {
    private static final PrintStream PROGRESS = System.err;
    /** How long after the schedule's end the agents may take to finish what they started. */
    private static final long DRAIN_SECONDS = 180;

    private final FleetOptions options;
    private final FleetLayout layout;
    private final List<FleetServer> servers = new ArrayList<>();
    private final Map<String, Long> moments = new LinkedHashMap<>();
    private final List<String> notes = new ArrayList<>();
    private final AtomicLong uploadsConsumed = new AtomicLong();
    private final Map<String, Long> uploadsByKind = new LinkedHashMap<>();
    private final Map<String, Long> orders = new java.util.concurrent.ConcurrentHashMap<>();
    private volatile FleetAgents agentsForOrders;
    private io.pintle.bench.channels.PullClients channels;
    private Process haproxy;
    private java.util.concurrent.atomic.AtomicLongArray relaySynced;
    private long generationWritten;

    private final String commandLine;

    private FleetBench(FleetOptions options, String commandLine) {
        this.options = options;
        this.commandLine = commandLine;
        this.layout = new FleetLayout(options);
    }

    public static void main(String[] args) {
        HarnessMain.quietClientLogging();
        System.exit(HarnessMain.run(args, FleetOptions::parse, "fleet benchmark", o -> new FleetBench(o, String.join(" ", args)).run()));
    }

    private int run() throws Exception {
        Instant began = Instant.now();
        Files.createDirectories(options.work());
        int port = Ports.free();
        long layoutStart = System.nanoTime();
        layout.write(port, PROGRESS);
        double layoutSeconds = (System.nanoTime() - layoutStart) / 1e9;
        PROGRESS.printf("layout written in %.0f s%n", layoutSeconds);
        Path binary = FleetAgents.build(layout.dir().resolve("agents"));

        ProcessMeter meter;
        FleetAgents agents = null;
        Thread consumer = null;
        Runtime.getRuntime().addShutdownHook(new Thread(this::stopEverything, "fleet-stop"));
        try {
            long serversStart = System.nanoTime();
            startServers(port);
            double serversSeconds = (System.nanoTime() - serversStart) / 1e9;
            PROGRESS.printf("servers ready (relays synced) in %.0f s%n", serversSeconds);
            notes.add(String.format("Servers started and relays' first sync done in %.0f s (layout: %.0f s).",
                    serversSeconds, layoutSeconds));
            pinSelf();
            if (options.channels() > 0) {
                openChannels(port);
            }
            consumer = new Thread(this::consumeUploads, "uploads-consumer");
            consumer.setDaemon(true);
            consumer.start();

            agents = FleetAgents.start(binary, layout, options, PROGRESS);
            agentsForOrders = agents;
            long primeStart = System.currentTimeMillis();
            long start = agents.awaitStart();
            notes.add(String.format("Prime (every node's two policy GETs, to learn its ETags): %.0f s.",
                    (start - primeStart) / 1000.0));
            meter = new ProcessMeter(start);
            for (FleetServer server : servers) {
                meter.add(server.name, server::jvm);
            }
            FleetAgents finalAgents = agents;
            meter.add("agents", () -> finalAgents.handle().isAlive() ? Optional.of(finalAgents.handle())
                    : Optional.empty());
            meter.add("harness", () -> Optional.of(ProcessHandle.current()));
            if (haproxy != null) {
                Process h = haproxy;
                meter.add("haproxy", () -> h.isAlive() ? Optional.of(h.toHandle()) : Optional.empty());
            }
            meter.start();
            moments.put("start", start);
            play(start);
            if (!agents.waitFor(Math.max(0, options.durationSeconds() - (System.currentTimeMillis() - start) / 1000)
                    + DRAIN_SECONDS)) {
                notes.add("The agents had not finished " + DRAIN_SECONDS + " s after the schedule's end: stopped.");
                agents.close();
            }
            moments.put("end", System.currentTimeMillis());
            meter.close();
            consumer.interrupt();
            consumer.join();
            consumeOnce();
            PROGRESS.println("agents done: " + agents.summary());

            FleetEvents events = FleetEvents.read(agents.events());
            FleetReport report = new FleetReport(options, layout, events, meter.points(), moments, relaySynced,
                    generationWritten, notes, agents.summary(), uploadsByKind, began, commandLine);
            if (options.channels() > 0) {
                notes.add("Order channels: " + orders + " orders received; connection failures: "
                        + channels.failuresSoFar() + ".");
            }
            report.write(options.output());
            PROGRESS.println("report written to " + options.output());
            return 0;
        } finally {
            if (consumer != null) {
                consumer.interrupt();
            }
            if (agents != null) {
                agents.close();
            }
            stopEverything();
        }
    }

    /**
     * Once the layout is written (on every core), this JVM (the order channels, the uploads consumer, the relay
     * watch) moves to the agents' CPUs, so that what the servers get is not shared with it.
     */
    private void pinSelf() throws IOException, InterruptedException {
        CommandLine.pinThisJvm(options.agentCpus());
    }

    /** Stops what this run started (also from the shutdown hook, when the run is stopped by a signal). */
    private synchronized void stopEverything() {
        FleetAgents agents = agentsForOrders;
        if (agents != null) {
            agents.close();
        }
        if (channels != null) {
            channels.close();
            channels = null;
        }
        for (FleetServer server : servers) {
            server.close();
        }
        servers.clear();
        if (haproxy != null) {
            haproxy.destroy();
            try {
                haproxy.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            haproxy = null;
        }
    }

    /**
     * Every node opens its order channel to its own server (what deploy/node/pintle-run-orders holds), 64
     * handshakes at a time; an "update" order makes the node's agent update its policies at once.
     */
    private void openChannels(int port) throws Exception {
        int[] channelNodes = java.util.stream.IntStream.range(0, layout.nodes())
                .filter(node -> FleetLayout.holdsChannel(node, options.channels())).toArray();
        io.pintle.bench.channels.PullClients.Listener listener = new io.pintle.bench.channels.PullClients.Listener() {
            @Override
            public void order(int channel, String command, long nanos) {
                orders.merge(command, 1L, Long::sum);
                FleetAgents agents = agentsForOrders;
                if (command.equals("update") && agents != null) {
                    agents.update(channelNodes[channel]);
                }
            }

            @Override
            public void reported(int node, long nanos) {
                // The order's output was taken (204): nothing to record.
            }
        };
        channels = new io.pintle.bench.channels.PullClients(layout.pullNodes(port, channelNodes),
                layout.serverCertificates(), true,
                listener);
        channels.start();
        long begin = System.nanoTime();
        channels.open(channelNodes.length, 64);
        long deadline = begin + Duration.ofMinutes(10).toNanos();
        while (channels.parked() < channelNodes.length && System.nanoTime() < deadline) {
            Thread.sleep(500);
        }
        notes.add(String.format("Order channels: %,d of %,d parked after %.0f s (a share of %s of the nodes, "
                + "spread evenly; 64 handshakes at a time, from this JVM); failures: %s.", channels.parked(),
                channelNodes.length, (System.nanoTime() - begin) / 1e9, FleetReport.fmt(options.channels()),
                channels.failuresSoFar()));
    }

    private void startServers(int port) throws IOException, InterruptedException {
        if (options.replicas() > 0) {
            for (int replica = 1; replica <= options.replicas(); replica++) {
                PROGRESS.println("starting replica-" + replica);
                servers.add(FleetServer.start("replica-" + replica, layout.dir().resolve("replica-" + replica),
                        layout.rootDir(), FleetLayout.replicaHost(replica), port, "root",
                        "proxy_protocol_from = [\"127.0.0.2\"]", "", false, options));
            }
            startHaproxy(port);
            return;
        }
        PROGRESS.println("starting the root");
        servers.add(startRoot(layout, port, options));
        for (int relay = 1; relay <= options.relays(); relay++) {
            PROGRESS.println("starting relay-" + relay);
            servers.add(startRelay(layout, relay, port, options));
        }
        // The relays' first sync: every node's archive present on its relay.
        long deadline = System.nanoTime() + Duration.ofMinutes(20).toNanos();
        for (int node = 0; node < layout.nodes(); node++) {
            while (!Files.exists(layout.servedArchive(node))) {
                if (System.nanoTime() > deadline) {
                    throw new IOException("relays not synced after 20 min: " + layout.servedArchive(node)
                            + " missing");
                }
                Thread.sleep(200);
            }
        }
    }

    /**
     * Starts the root under socket activation, with {@code options}' JVM options; returns once it is ready. Its
     * {@code max_manifest_entries} is the default unless a relay's share is larger ({@link #rootLimits}).
     */
    static FleetServer startRoot(FleetLayout layout, int port, FleetOptions options)
            throws IOException, InterruptedException {
        return FleetServer.start("root", layout.rootDir(), layout.rootDir(), FleetLayout.rootHost(), port, "root", "",
                rootLimits(layout), true, options);
    }

    /**
     * @return the root's {@code [limits]} table: empty, or {@code max_manifest_entries} raised to hold the largest
     *     relay's share, as an operator of such a relay must (docs/SCALING.md, "Large relays"); a larger tree's
     *     views are refused, and its relay never syncs
     */
    static String rootLimits(FleetLayout layout) {
        int entries = layout.largestRelayShareEntries();
        return entries <= ServerConfig.Limits.DEFAULTS.maxManifestEntries() ? ""
                : "[limits]\nmax_manifest_entries = " + entries + "\n";
    }

    /**
     * Starts relay {@code relay} (1-based) under socket activation, its upstream the root, with {@code options}'
     * JVM options; returns once it is ready (its sync goes on).
     */
    static FleetServer startRelay(FleetLayout layout, int relay, int port, FleetOptions options)
            throws IOException, InterruptedException {
        return FleetServer.start("relay-" + relay, layout.relayDir(relay), layout.relayDir(relay),
                FleetLayout.relayHost(relay), port, "relay", "",
                "[upstream]\nurl = \"https://" + FleetLayout.rootHost() + ":" + port + "\"\nkey_hash = \""
                        + layout.serverPin(0) + "\"\n", true, options);
    }

    private void startHaproxy(int port) throws IOException, InterruptedException {
        List<String> lines = new ArrayList<>(List.of(
                "global",
                // HAProxy reserves two descriptors per connection: within the 20,000 open files allowed here.
                "  maxconn 9000",
                "defaults",
                "  mode tcp",
                "  timeout connect 5s",
                "  timeout client 120s",
                "  timeout server 120s",
                "  retries 3",
                "  option redispatch",
                "frontend agents",
                "  bind " + FleetLayout.rootHost() + ":" + port,
                "  default_backend pintle",
                "backend pintle",
                "  balance leastconn"));
        for (int replica = 1; replica <= options.replicas(); replica++) {
            lines.add("  server replica-" + replica + " " + FleetLayout.replicaHost(replica) + ":" + port
                    + " send-proxy-v2 source 127.0.0.2 check inter 1s fall 2 rise 2");
        }
        Path config = Files.writeString(layout.dir().resolve("haproxy.cfg"), String.join("\n", lines) + "\n");
        List<String> command = new ArrayList<>(CommandLine.taskset(options.serverCpus()));
        command.addAll(List.of("haproxy", "-db", "-f", config.toString()));
        haproxy = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(layout.dir().resolve("haproxy.log").toFile()).start();
        Thread.sleep(1000);
        if (!haproxy.isAlive()) {
            throw new IOException("haproxy did not start: " + Files.readString(layout.dir().resolve("haproxy.log")));
        }
        moments.put("haproxy", System.currentTimeMillis());
    }

    /** The scenario's events, in order, at their time from the start. */
    private void play(long start) throws Exception {
        List<Object[]> events = new ArrayList<>();
        if (options.generationAt() > 0) {
            events.add(new Object[] {options.generationAt(), "generation"});
        }
        if (options.relayRestartAt() > 0 && options.relays() > 0) {
            events.add(new Object[] {options.relayRestartAt(), "relay restart"});
        }
        if (options.rootRestartAt() > 0 && options.replicas() == 0) {
            events.add(new Object[] {options.rootRestartAt(), "root restart"});
        }
        if (options.killAt() > 0 && options.replicas() > 0) {
            events.add(new Object[] {options.killAt(), "replica kill"});
        }
        events.sort((a, b) -> Integer.compare((int) a[0], (int) b[0]));
        for (Object[] event : events) {
            long at = start + (int) event[0] * 1000L;
            long wait = at - System.currentTimeMillis();
            if (wait > 0) {
                Thread.sleep(wait);
            }
            String what = (String) event[1];
            PROGRESS.printf("t=%.0f s: %s%n", (System.currentTimeMillis() - start) / 1000.0, what);
            switch (what) {
                case "generation" -> generation();
                case "relay restart" -> {
                    moments.put("relay-1 restart", System.currentTimeMillis());
                    long ms = servers.get(1).restart();
                    notes.add("relay-1 restarted (SIGTERM under socket activation): ready again after " + ms
                            + " ms.");
                }
                case "root restart" -> {
                    moments.put("root restart", System.currentTimeMillis());
                    long ms = servers.get(0).restart();
                    notes.add("The root restarted (SIGTERM under socket activation): ready again after " + ms
                            + " ms.");
                }
                case "replica kill" -> {
                    moments.put("replica-1 killed", System.currentTimeMillis());
                    servers.get(0).kill();
                    Thread.sleep(10_000);
                    long again = System.currentTimeMillis();
                    moments.put("replica-1 started", again);
                    servers.get(0).startAgain(options);
                    notes.add(String.format("replica-1 killed (SIGKILL), started again 10 s later, ready after "
                            + "%.1f s more.", (System.currentTimeMillis() - again) / 1000.0));
                }
                default -> throw new IllegalStateException(what);
            }
        }
    }

    /**
     * A new generation of every node's policies on the root, written as Rudder's does (rules.new, then renames),
     * then followed on each relay until every node's archive there is the new one.
     */
    private void generation() throws IOException {
        long begin = System.currentTimeMillis();
        moments.put("generation", begin);
        layout.writeGeneration(2);
        generationWritten = System.currentTimeMillis();
        moments.put("generation written", generationWritten);
        notes.add(String.format("Generation written on the root (%,d nodes' rules/, rules.new then renames) in %.1f s.",
                layout.nodes(), (generationWritten - begin) / 1000.0));
        relaySynced = new java.util.concurrent.atomic.AtomicLongArray(options.relays() + 1);
        Thread watcher = new Thread(() -> watchRelays(begin), "relay-sync-watch");
        watcher.setDaemon(true);
        watcher.start();
    }

    /** Looks every second at which relay-side archives are the new generation, until all are or 15 min pass. */
    private void watchRelays(long begin) {
        List<List<Integer>> pending = new ArrayList<>();
        for (int relay = 0; relay <= options.relays(); relay++) {
            pending.add(new ArrayList<>());
        }
        for (int node = 0; node < layout.nodes(); node++) {
            if (layout.serverOf(node) > 0) {
                pending.get(layout.serverOf(node)).add(node);
            }
        }
        long deadline = begin + 15 * 60_000L;
        while (System.currentTimeMillis() < deadline) {
            boolean all = true;
            for (int relay = 1; relay <= options.relays(); relay++) {
                List<Integer> left = pending.get(relay);
                left.removeIf(node -> layout.serves(node, 2));
                if (left.isEmpty() && relaySynced.get(relay) == 0) {
                    relaySynced.set(relay, System.currentTimeMillis());
                }
                all &= left.isEmpty();
            }
            if (all) {
                return;
            }
            try {
                Thread.sleep(1000);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    /** What relayd does with uploads: takes every complete file (never Pintle's hidden temporary ones) away. */
    private void consumeUploads() {
        while (!Thread.currentThread().isInterrupted()) {
            consumeOnce();
            try {
                Thread.sleep(2000);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private void consumeOnce() {
        {
            List<Path> dirs = new ArrayList<>();
            for (FleetServer server : servers) {
                for (String kind : List.of("inventories", "inventory-updates", "reports")) {
                    dirs.add(server.dir().resolve("uploads").resolve(kind));
                }
            }
            for (Path dir : dirs) {
                String kind = dir.getFileName().toString();
                try (DirectoryStream<Path> files = Files.newDirectoryStream(dir)) {
                    for (Path file : files) {
                        if (!file.getFileName().toString().startsWith(".")) {
                            Files.deleteIfExists(file);
                            uploadsConsumed.incrementAndGet();
                            synchronized (uploadsByKind) {
                                uploadsByKind.merge(kind, 1L, Long::sum);
                            }
                        }
                    }
                } catch (IOException e) {
                    // A server directory not there yet (a replica) or a file taken meanwhile: next round.
                }
            }
        }
    }
}
