package io.pintle.server.remoterun;

import io.pintle.api.dto.RemoteRunEvent;
import io.pintle.server.config.ServerConfig;
import io.pintle.server.nodes.NodeId;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * relayd's local-node path: runs the agents of nodes that are not Pintle servers (they have only cf-serverd) with
 * one {@code rudder remote run [-D <conditions>] -- <host1>,<host2>} for all of them, as relayd does, either from an
 * argv prefix ({@link AgentLauncher}'s process mode, when Pintle may use the server's key itself) or through the
 * root agent helper's {@code remote} command ({@code [remote_run] agent_socket}).
 *
 * <p>What the output looks like, from the sources: {@code rudder remote run} (rudder-agent {@code
 * share/commands/remote-run}) runs {@code cf-runagent -H <host>:<port>} once per host, one after the other ({@code
 * xargs -I{} -d,}), and pipes all of it through one awk formatter ({@code share/lib/reports.awk}). cf-runagent
 * (cfengine core {@code cf-runagent/cf-runagent.c}, {@code HailExec}) prefixes each line of a node's output with the
 * address it connected to, not the name it was given: {@code <ip>> -> <line>} (cf-serverd 3.7 and later), {@code
 * <ip>> !! <refusal>} or {@code <ip>> <line>}. The formatter prints report rows with that address in a first column
 * of 15 characters ({@code multihost}), passes other lines through in its info mode, and ends with one summary for
 * the whole batch. cf-runagent logs {@code Failed to connect to host: <name>} and {@code could not resolve
 * '<name>'} with the name it was given.
 *
 * <p>So each line goes to the node it names: {@code <host>> <line>} (the host name, or an address it resolves to)
 * goes to that node without the prefix; a line whose first word is such an address (a formatter row) goes to it
 * whole; the two failure lines go to the host they name, and make its status {@code unreachable}. Every other line
 * (the formatter's header and summary, {@code Start execution with config}, and IPv6 addresses the formatter cut at
 * 15 characters) goes to every node of the batch: nothing is lost, and a batch of one node reads as relayd's
 * output.
 *
 * <p>Statuses: the exit code is the whole batch's (the formatter's: 1 when any host had an error), so each node
 * gets the batch's outcome, {@code success}, {@code failed} with the code, {@code timeout} or {@code error},
 * except a node named by a failure line ({@code unreachable}). {@code update} and {@code inventory} are refused
 * ({@code refused}): cf-serverd runs one command, its {@code cfruncommand} ({@code rudder agent run}), and {@code
 * rudder remote run} has no way to ask for anything else (its options are verbosity, output format, {@code -D},
 * and host selection).
 */
public final class RudderRemoteRun {
    /** relayd's {@code [remote_run] command} and what it appends: Rudder's CLI, {@code remote run}. */
    public static final List<String> DEFAULT_ARGV = ServerConfig.RemoteRun.DEFAULTS.remoteCommand();
    /** A host as the agent helper accepts it: a name or an address that cannot be read as an option. */
    public static final Pattern HOST = Pattern.compile("[A-Za-z0-9][A-Za-z0-9.:_-]*");
    /** Hosts in one invocation at most: the agent helper's bound. A larger set is run in several batches. */
    public static final int MAX_HOSTS = 1000;
    /** Characters of the host list, commas included, in one invocation at most: the agent helper's bound. */
    public static final int MAX_HOSTS_CHARS = 65536;
    /** The longest an invocation may run: the agent helper's bound, and {@code [remote_run] timeout}'s. */
    public static final Duration MAX_TIMEOUT = Duration.ofHours(6);

    private static final Pattern RAW_PREFIX = Pattern.compile("^([^\\s>]+)> (.*)$");
    private static final Pattern FIRST_WORD = Pattern.compile("^(\\S+)\\s");
    // cf-runagent's own log lines, from the start of the line: a node's output always comes after an "address> "
    // prefix, so an agent cannot forge another host's failure.
    private static final Pattern CONNECT_FAILED =
            Pattern.compile("^\\s*(?:error: )?Failed to connect to host: (\\S+)\\s*$");
    private static final Pattern UNRESOLVED = Pattern.compile("^\\s*(?:error: )?.*could not resolve '([^']*)'");
    private static final Pattern IPV4 = Pattern.compile("\\d{1,3}(\\.\\d{1,3}){3}");
    private static final Pattern IPV6 = Pattern.compile("[0-9a-fA-F:.]*:[0-9a-fA-F:.]*");

    /**
     * A node to run and the name {@code rudder remote run} reaches it by.
     *
     * @param node the node id
     * @param hostname its {@code hostname} in {@code nodeslist.json}
     */
    public record Target(NodeId node, String hostname) {
        public Target {
            Objects.requireNonNull(node);
            Objects.requireNonNull(hostname);
        }
    }

    private final AgentLauncher launcher;
    private final List<String> argv;
    private final Path socket;
    private final Function<String, List<String>> resolver;

    /**
     * @param launcher starts the process or asks the helper
     * @param argv the argv prefix ({@link #DEFAULT_ARGV}), used when {@code socket} is null
     * @param socket the agent helper's socket, or null to start {@code argv} directly
     */
    public RudderRemoteRun(AgentLauncher launcher, List<String> argv, Path socket) {
        this(launcher, argv, socket, RudderRemoteRun::resolve);
    }

    /**
     * @param launcher starts the process or asks the helper
     * @param argv the argv prefix ({@link #DEFAULT_ARGV}), used when {@code socket} is null
     * @param socket the agent helper's socket, or null to start {@code argv} directly
     * @param resolver a host name's addresses, as cf-runagent will print them (DNS, or a stand-in for tests)
     */
    public RudderRemoteRun(AgentLauncher launcher, List<String> argv, Path socket,
            Function<String, List<String>> resolver) {
        this.launcher = Objects.requireNonNull(launcher);
        this.argv = List.copyOf(argv);
        if (this.argv.isEmpty() && socket == null) {
            throw new IllegalArgumentException("rudder remote run needs an argv or the agent helper's socket");
        }
        this.socket = socket;
        this.resolver = Objects.requireNonNull(resolver);
    }

    /**
     * Runs the targets' agents, in as few invocations as the bounds allow (one for up to {@link #MAX_HOSTS} hosts),
     * one after the other, and waits for them. Each target gets exactly one status.
     *
     * @param targets the nodes, each with its host name; a host name shared by several nodes is passed once
     * @param order what to run: only {@link AgentCommand#RUN}; the conditions become {@code -D}
     * @param timeoutPerHost how long one host may take: an invocation gets this times its hosts (the hosts run one
     *     after the other), at most {@link #MAX_TIMEOUT}
     * @param sink receives the output lines, attributed to nodes, then one status per target
     */
    public void run(List<Target> targets, RunOrder order, Duration timeoutPerHost, RunSink sink) {
        Map<NodeId, Target> unique = new LinkedHashMap<>();
        for (Target target : targets) {
            unique.putIfAbsent(target.node(), target);
        }
        if (order.command() != AgentCommand.RUN) {
            for (NodeId node : unique.keySet()) {
                sink.accept(RemoteRunEvent.status(node.value(), RemoteRunEvent.REFUSED, null, 0, false,
                        "'" + order.command() + "' cannot reach a node that is not a Pintle server: rudder remote "
                                + "run asks its cf-serverd for its one command, a full agent run (use 'run', with "
                                + "the condition force_inventory for an inventory)"));
            }
            return;
        }
        Map<String, List<NodeId>> byHost = new LinkedHashMap<>();
        for (Target target : unique.values()) {
            if (!HOST.matcher(target.hostname()).matches() || target.hostname().length() > MAX_HOSTS_CHARS) {
                sink.accept(RemoteRunEvent.status(target.node().value(), RemoteRunEvent.ERROR, null, 0, false,
                        "its hostname '" + target.hostname() + "' cannot be passed to rudder remote run (it must "
                                + "match " + HOST.pattern() + ")"));
                continue;
            }
            if (target.hostname().indexOf(':') >= 0) {
                // rudder remote run passes cf-runagent -H "<host>:5309": an IPv6 literal becomes another address.
                sink.accept(RemoteRunEvent.status(target.node().value(), RemoteRunEvent.REFUSED, null, 0, false,
                        "rudder remote run cannot reach an IPv6 address ('" + target.hostname() + "': it appends "
                                + ":5309 to the host); give the node a host name, or reach it by its order channel"));
                continue;
            }
            byHost.computeIfAbsent(target.hostname(), host -> new ArrayList<>()).add(target.node());
        }
        for (List<String> batch : batches(List.copyOf(byHost.keySet()))) {
            Map<String, List<NodeId>> nodes = new LinkedHashMap<>();
            for (String host : batch) {
                nodes.put(host, byHost.get(host));
            }
            runBatch(nodes, order.conditions(), timeoutPerHost, sink);
        }
    }

    /** Splits the hosts into invocations of at most {@link #MAX_HOSTS} hosts and {@link #MAX_HOSTS_CHARS}. */
    static List<List<String>> batches(List<String> hosts) {
        List<List<String>> batches = new ArrayList<>();
        List<String> current = new ArrayList<>();
        int length = 0;
        for (String host : hosts) {
            int added = current.isEmpty() ? host.length() : host.length() + 1;
            if (!current.isEmpty() && (current.size() == MAX_HOSTS || length + added > MAX_HOSTS_CHARS)) {
                batches.add(List.copyOf(current));
                current.clear();
                length = 0;
                added = host.length();
            }
            current.add(host);
            length += added;
        }
        if (!current.isEmpty()) {
            batches.add(List.copyOf(current));
        }
        return batches;
    }

    private void runBatch(Map<String, List<NodeId>> nodes, Conditions conditions, Duration timeoutPerHost,
            RunSink sink) {
        List<String> hosts = List.copyOf(nodes.keySet());
        Duration timeout = timeoutPerHost.multipliedBy(hosts.size());
        if (timeout.compareTo(MAX_TIMEOUT) > 0) {
            timeout = MAX_TIMEOUT;
        }
        Attribution attribution = new Attribution(nodes, resolver);
        BatchSink batch = new BatchSink(attribution, sink);
        String label = "rudder remote run (" + hosts.size() + " host(s))";
        try {
            if (socket != null) {
                launcher.runRemote(label, socket, hosts, conditions, timeout, batch);
            } else {
                List<String> command = new ArrayList<>(argv);
                if (!conditions.isEmpty()) {
                    command.add("-D");
                    command.add(conditions.joined());
                }
                command.add("--");
                command.add(String.join(",", hosts));
                launcher.run(label, command, timeout, batch);
            }
        } finally {
            statuses(nodes, batch.status(), attribution, timeout, sink);
        }
    }

    /** One status per node of the batch, from the invocation's, refined by the failure lines. */
    private static void statuses(Map<String, List<NodeId>> nodes, RemoteRunEvent status, Attribution attribution,
            Duration timeout, RunSink sink) {
        int count = nodes.size();
        long duration = status != null && status.durationMs() != null ? status.durationMs() : 0;
        for (Map.Entry<String, List<NodeId>> entry : nodes.entrySet()) {
            String unreachable = attribution.unreachable().get(entry.getKey());
            for (NodeId node : entry.getValue()) {
                RemoteRunEvent event;
                if (unreachable != null) {
                    event = RemoteRunEvent.status(node.value(), RemoteRunEvent.UNREACHABLE, null, duration, false,
                            "rudder remote run: " + unreachable.strip());
                } else if (status == null) {
                    event = RemoteRunEvent.status(node.value(), RemoteRunEvent.ERROR, null, duration, false,
                            "rudder remote run ended without a status");
                } else if (RemoteRunEvent.SUCCESS.equals(status.status())) {
                    event = RemoteRunEvent.status(node.value(), RemoteRunEvent.SUCCESS, 0, duration, false, null);
                } else if (RemoteRunEvent.FAILED.equals(status.status())) {
                    event = RemoteRunEvent.status(node.value(), RemoteRunEvent.FAILED, status.exitCode(), duration,
                            false, "rudder remote run exited with code " + status.exitCode() + " for its batch of "
                                    + count + " host(s): the code is the whole batch's (1 when any of them reported "
                                    + "an error)");
                } else if (RemoteRunEvent.TIMEOUT.equals(status.status())) {
                    event = RemoteRunEvent.status(node.value(), RemoteRunEvent.TIMEOUT, null, duration, true,
                            "rudder remote run was stopped after " + timeout.toSeconds() + " s (its batch of " + count
                                    + " host(s), which run one after the other)");
                } else {
                    event = RemoteRunEvent.status(node.value(), status.status(), status.exitCode(), duration,
                            Boolean.TRUE.equals(status.timedOut()), "rudder remote run: " + status.detail());
                }
                sink.accept(event);
            }
        }
    }

    /** Hands each output line on to its nodes; keeps the invocation's status for {@link #statuses}. */
    private static final class BatchSink implements RunSink {
        private final Attribution attribution;
        private final RunSink sink;
        private volatile RemoteRunEvent status;

        BatchSink(Attribution attribution, RunSink sink) {
            this.attribution = attribution;
            this.sink = sink;
        }

        @Override
        public void accept(RemoteRunEvent event) {
            if (RemoteRunEvent.STATUS.equals(event.type())) {
                status = event;
                return;
            }
            if (RemoteRunEvent.OUTPUT.equals(event.type())) {
                Attribution.Line line = attribution.attribute(event.line());
                for (NodeId node : line.nodes()) {
                    sink.accept(RemoteRunEvent.output(node.value(), line.text()));
                }
            }
        }

        RemoteRunEvent status() {
            return status;
        }
    }

    /** Which nodes a line of {@code rudder remote run}'s output is about (see the class comment). */
    static final class Attribution {
        private final Map<String, List<NodeId>> byHost;
        /** Host names (lower case) and the canonical form of their addresses, to their host names. */
        private final Map<String, Set<String>> byName = new LinkedHashMap<>();
        private final Map<String, Set<String>> byAddress = new LinkedHashMap<>();
        private final List<NodeId> everyone;
        private final Map<String, String> unreachable = new LinkedHashMap<>();

        /**
         * @param byHost the batch's host names and their nodes
         * @param resolver a host name's addresses
         */
        Attribution(Map<String, List<NodeId>> byHost, Function<String, List<String>> resolver) {
            this.byHost = byHost;
            List<NodeId> all = new ArrayList<>();
            for (Map.Entry<String, List<NodeId>> entry : byHost.entrySet()) {
                String host = entry.getKey();
                all.addAll(entry.getValue());
                byName.computeIfAbsent(host.toLowerCase(Locale.ROOT), k -> new LinkedHashSet<>()).add(host);
                String literal = canonicalAddress(host);
                List<String> addresses = literal != null ? List.of(literal) : resolver.apply(host);
                for (String address : addresses) {
                    String canonical = canonicalAddress(address);
                    if (canonical != null) {
                        byAddress.computeIfAbsent(canonical, k -> new LinkedHashSet<>()).add(host);
                    }
                }
            }
            everyone = List.copyOf(all);
        }

        /**
         * A line and the nodes it goes to.
         *
         * @param text the line as handed on
         * @param nodes its nodes
         */
        record Line(String text, List<NodeId> nodes) {}

        Line attribute(String line) {
            Matcher raw = RAW_PREFIX.matcher(line);
            if (raw.matches()) {
                Set<String> hosts = named(raw.group(1));
                if (!hosts.isEmpty()) {
                    return new Line(raw.group(2), nodes(hosts));
                }
            }
            for (Pattern marker : new Pattern[] {CONNECT_FAILED, UNRESOLVED}) {
                Matcher failed = marker.matcher(line);
                if (failed.find()) {
                    Set<String> hosts = named(failed.group(1));
                    if (!hosts.isEmpty()) {
                        synchronized (unreachable) {
                            hosts.forEach(host -> unreachable.putIfAbsent(host, line));
                        }
                        return new Line(line, nodes(hosts));
                    }
                }
            }
            Matcher first = FIRST_WORD.matcher(line);
            if (first.find()) {
                // Only an address: a formatter row starts with one, and a word of its header or summary must not
                // be taken for a host that happens to be called so.
                String canonical = canonicalAddress(first.group(1));
                Set<String> hosts = canonical != null ? byAddress.getOrDefault(canonical, Set.of()) : Set.of();
                if (!hosts.isEmpty()) {
                    return new Line(line, nodes(hosts));
                }
            }
            return new Line(line, everyone);
        }

        /** @return the batch's hosts the word names, by their name or an address */
        private Set<String> named(String word) {
            Set<String> hosts = new LinkedHashSet<>(byName.getOrDefault(word.toLowerCase(Locale.ROOT), Set.of()));
            String canonical = canonicalAddress(word);
            if (canonical != null) {
                hosts.addAll(byAddress.getOrDefault(canonical, Set.of()));
            }
            return hosts;
        }

        private List<NodeId> nodes(Set<String> hosts) {
            List<NodeId> nodes = new ArrayList<>();
            for (String host : hosts) {
                nodes.addAll(byHost.get(host));
            }
            return nodes;
        }

        /** @return the hosts named by a failure line, with that line */
        Map<String, String> unreachable() {
            synchronized (unreachable) {
                return Map.copyOf(unreachable);
            }
        }
    }

    /**
     * @param text a word
     * @return the JDK's form of the IP address it is, or null when it is not an IP literal (never looked up)
     */
    static String canonicalAddress(String text) {
        if (IPV4.matcher(text).matches()) {
            for (String octet : text.split("\\.")) {
                if (Integer.parseInt(octet) > 255) {
                    // Not a literal: the JDK would look it up as a name.
                    return null;
                }
            }
        } else if (!IPV6.matcher(text).matches()) {
            return null;
        }
        try {
            // A valid dotted quad, or a text with ':', is parsed as a literal: no name service is asked.
            return InetAddress.getByName(text).getHostAddress();
        } catch (UnknownHostException | SecurityException e) {
            return null;
        }
    }

    /** cf-runagent resolves the name as the system does; so does this, once per batch. */
    static List<String> resolve(String host) {
        try {
            return Arrays.stream(InetAddress.getAllByName(host)).map(InetAddress::getHostAddress).toList();
        } catch (UnknownHostException | SecurityException e) {
            return List.of();
        }
    }
}
