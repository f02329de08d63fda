package io.pintle.server.config;

import io.pintle.server.acl.Cidr;
import io.pintle.server.nodes.CaTrust;
import io.pintle.server.nodes.IdRule;
import io.pintle.server.nodes.NodeId;
import io.pintle.server.nodes.NodeTrust;
import io.pintle.server.uploads.LoginThrottle;
import io.pintle.server.uploads.UploadKind;
import io.pintle.server.nodes.ApacheIdRules;
import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;

/**
 * The validated configuration. Every path is absolute.
 *
 * @param source the file it was read from, or null for built-in defaults
 * @param general identity, role and listen address
 * @param tls server certificate, key and protocols
 * @param nodes the node registry inputs
 * @param networks allowed networks inputs
 * @param paths served trees
 * @param admin the local administration listener
 * @param reload how input changes are noticed
 * @param log the access log
 * @param limits overload control: connections, timeouts, worker concurrency
 * @param upstream this server's policy server (relays and nodes), for forwarding and syncing
 * @param remoteRun remote run: what the agent commands are and how runs are passed down the tree
 * @param uploads agents' inventory and report uploads
 * @param webapp the web interface behind {@code /rudder/} on a root (off unless configured)
 * @param cfengine CFEngine's protocol listener (off unless configured)
 * @param delivery what is kept of each node's policy fetches, freezes and built archives
 */
public record ServerConfig(
        Path source, General general, Tls tls, Nodes nodes, Networks networks, Paths paths, Admin admin,
        Reload reload, Log log, Limits limits, Upstream upstream, RemoteRun remoteRun, Uploads uploads,
        Webapp webapp, Cfengine cfengine, Delivery delivery) {
    public ServerConfig {
        Objects.requireNonNull(delivery);
        Objects.requireNonNull(general);
        Objects.requireNonNull(tls);
        Objects.requireNonNull(nodes);
        Objects.requireNonNull(networks);
        Objects.requireNonNull(paths);
        Objects.requireNonNull(admin);
        Objects.requireNonNull(reload);
        Objects.requireNonNull(log);
        Objects.requireNonNull(limits);
        Objects.requireNonNull(upstream);
        Objects.requireNonNull(remoteRun);
        Objects.requireNonNull(uploads);
        Objects.requireNonNull(webapp);
        Objects.requireNonNull(cfengine);
    }

    /**
     * CFEngine's protocol ({@code [cfengine]}): the listener that takes port 5309 from {@code cf-serverd}, for
     * agents that fetch their policies with {@code copy_from} (every agent not in HTTPS-only mode). Off unless
     * {@code listen} is set. What it serves and to whom is Rudder's {@code cf-serverd.st}, decided from the live
     * snapshot (see {@code io.pintle.server.cfengine}). Read at start.
     *
     * @param listen where it listens ({@code "0.0.0.0:5309"}), or null when off
     * @param key the server's RSA private key (PEM), whose public key agents hold as {@code root-MD5=...pub} since
     *     they bootstrapped: Rudder's agent key, the one {@code [tls] key} names by default
     * @param masterfiles the initial policies every new node bootstraps from ({@code ${sys.masterdir}})
     * @param ncfCommon ncf's common tree ({@code g.rudder_ncf_origin_common})
     * @param ncfLocal ncf's local tree ({@code g.rudder_ncf_origin_local}); its {@code 50_techniques} is refused
     * @param protocols TLS versions ({@code allowtlsversion => "1.2"}: TLS 1.2 and 1.3)
     * @param maxConnections connections open at once ({@code maxconnections}); more are closed at once
     * @param maxConnectionsPerAddress connections open at once from one address
     * @param idleTimeout how long a connection may stay silent, between requests or within one (cf-serverd's is
     *     20 times its 30 s connect timeout)
     * @param denyBadClocks refuse a {@code STAT} from an agent whose clock is more than an hour off
     *     ({@code denybadclocks}, on in Rudder)
     */
    public record Cfengine(Listen listen, Path key, Path masterfiles, Path ncfCommon, Path ncfLocal,
            List<String> protocols, int maxConnections, int maxConnectionsPerAddress, Duration idleTimeout,
            boolean denyBadClocks) {
        /** CFEngine's port in Rudder ({@code COMMUNITYPORT}). */
        public static final int RUDDER_PORT = 5309;
        /** Rudder's {@code ${sys.masterdir}}. */
        public static final Path MASTERFILES = Path.of("/var/rudder/cfengine-community/masterfiles");
        /** Rudder's ncf common tree. */
        public static final Path NCF_COMMON = Path.of("/usr/share/ncf/tree");
        /** Rudder's ncf local tree. */
        public static final Path NCF_LOCAL = Path.of("/var/rudder/configuration-repository/ncf");

        /**
         * @param tls the configuration's TLS section, whose key is the default
         * @return off, with Rudder's paths and cf-serverd's limits
         */
        public static Cfengine defaults(Tls tls) {
            return new Cfengine(null, tls.key(), MASTERFILES, NCF_COMMON, NCF_LOCAL, List.of("TLSv1.3", "TLSv1.2"),
                    10_000, 256, Duration.ofSeconds(600), true);
        }

        public Cfengine {
            Objects.requireNonNull(key);
            Objects.requireNonNull(masterfiles);
            Objects.requireNonNull(ncfCommon);
            Objects.requireNonNull(ncfLocal);
            protocols = List.copyOf(protocols);
            Objects.requireNonNull(idleTimeout);
        }

        /**
         * @param source the configuration file
         * @throws ConfigException naming the key out of range
         */
        void validate(Path source) throws ConfigException {
            if (protocols.isEmpty()) {
                throw new ConfigException(source + ": 'cfengine.protocols' must name at least one protocol");
            }
            for (String protocol : protocols) {
                if (!Tls.SUPPORTED_PROTOCOLS.contains(protocol)) {
                    throw new ConfigException(source + ": 'cfengine.protocols': '" + protocol + "' is not one of "
                            + "TLSv1.3, TLSv1.2 (CFEngine agents need TLS 1.2 at least; the classic protocol is "
                            + "never served)");
                }
            }
            ConfigException.requireAtLeast(source, "cfengine.max_connections", maxConnections, 1);
            ConfigException.requireAtLeast(source, "cfengine.max_connections_per_address", maxConnectionsPerAddress,
                    1);
            ConfigException.requireAtLeast(source, "cfengine.idle_timeout", idleTimeout.toSeconds(), 1);
        }

        /** @return whether the listener is on */
        public boolean enabled() {
            return listen != null;
        }
    }

    /**
     * Agents' uploads ({@code [uploads]}), as Rudder's Apache takes them by WebDAV {@code PUT}: each route's
     * directory (relayd watches them) and the password files of HTTP Basic auth.
     *
     * @param enabled whether the three routes take uploads (default: on a root or relay, not on a node)
     * @param inventories {@code PUT /inventories/}: new nodes' inventories
     * @param inventoryUpdates {@code PUT /inventory-updates/}: accepted nodes' inventories
     * @param reports {@code PUT /reports/}: run reports
     * @param htpasswdInitial the users of {@code /inventories/} (Rudder's {@code htpasswd-webdav-initial})
     * @param htpasswd the users of the two others (Rudder's {@code htpasswd-webdav})
     * @param maxBytes the largest body taken (413 past it)
     * @param logins failed logins allowed per client address and window ({@code max_failures_per_address},
     *     {@code failure_window}), past which its uploads are refused with 429 until the window ends
     * @param verifySignatures whether a report must be named for a known node and signed by its pinned key, and an
     *     inventory update's {@code .sign} must verify against its inventory, before either is kept (default on)
     */
    public record Uploads(boolean enabled, Path inventories, Path inventoryUpdates, Path reports,
            Path htpasswdInitial, Path htpasswd, long maxBytes, LoginThrottle.Limits logins,
            boolean verifySignatures) {
        /** The same with signatures verified (the default). */
        public Uploads(boolean enabled, Path inventories, Path inventoryUpdates, Path reports, Path htpasswdInitial,
                Path htpasswd, long maxBytes, LoginThrottle.Limits logins) {
            this(enabled, inventories, inventoryUpdates, reports, htpasswdInitial, htpasswd, maxBytes, logins, true);
        }

        public Uploads {
            Objects.requireNonNull(logins);
            Objects.requireNonNull(inventories);
            Objects.requireNonNull(inventoryUpdates);
            Objects.requireNonNull(reports);
            Objects.requireNonNull(htpasswdInitial);
            Objects.requireNonNull(htpasswd);
        }

        /**
         * Default {@code max_bytes}: 64 MiB. Real uploads are far smaller (a gzipped inventory is a few hundred KB to
         * a few MB, a gzipped run log less), so this only stops a runaway or hostile body, and the uploads pool's 20
         * concurrent bodies can hold at most 1.25 GiB of disk at once. Apache's own default ({@code
         * LimitRequestBody}, 1 GiB since 2.4.54) is 16 times larger.
         */
        public static final long DEFAULT_MAX_BYTES = 64L * 1024 * 1024;
        /**
         * Default {@code max_failures_per_address} per {@code failure_window}: 20 guesses a minute instead of the 146
         * a second one address got unthrottled, while the nodes behind one NAT address with a wrong password (one
         * failure per node and 5-minute run) trip it only past about a hundred of them.
         */
        public static final LoginThrottle.Limits DEFAULT_LOGINS = new LoginThrottle.Limits(20, Duration.ofSeconds(60));

        /**
         * @param role the server's role
         * @return the defaults: Rudder's directories and password files, on unless the server is a node
         */
        public static Uploads defaults(Role role) {
            return new Uploads(role != Role.NODE, Path.of("/var/rudder/inventories/incoming"),
                    Path.of("/var/rudder/inventories/accepted-nodes-updates"), Path.of("/var/rudder/reports/incoming"),
                    Path.of("/opt/rudder/etc/htpasswd-webdav-initial"), Path.of("/opt/rudder/etc/htpasswd-webdav"),
                    DEFAULT_MAX_BYTES, DEFAULT_LOGINS);
        }

        /**
         * The login throttle, checked before it is built (it refuses a negative count or a window under a second).
         *
         * @param source the configuration file
         * @param maxFailures {@code max_failures_per_address}
         * @param windowSeconds {@code failure_window}
         * @return the throttle's limits
         * @throws ConfigException naming the key out of range
         */
        static LoginThrottle.Limits logins(Path source, int maxFailures, int windowSeconds) throws ConfigException {
            ConfigException.requireAtLeast(source, "uploads.max_failures_per_address", maxFailures, 0);
            ConfigException.requireAtLeast(source, "uploads.failure_window", windowSeconds, 1);
            return new LoginThrottle.Limits(maxFailures, Duration.ofSeconds(windowSeconds));
        }

        /**
         * @param source the configuration file
         * @throws ConfigException naming the key out of range
         */
        void validate(Path source) throws ConfigException {
            if (maxBytes < 1) {
                throw new ConfigException(source + ": 'uploads.max_bytes' must be at least 1");
            }
        }

        /**
         * @param kind an upload route
         * @return the directory its uploads land in
         */
        public Path directory(UploadKind kind) {
            return switch (kind) {
                case INVENTORIES -> inventories;
                case INVENTORY_UPDATES -> inventoryUpdates;
                case REPORTS -> reports;
            };
        }

        /** @return the three upload directories, in {@link UploadKind}'s order */
        public List<Path> directories() {
            return List.of(inventories, inventoryUpdates, reports);
        }

        /**
         * @param kind an upload route
         * @return the password file it checks: {@code htpasswd_initial} for new nodes' inventories, else
         *     {@code htpasswd}
         */
        public Path users(UploadKind kind) {
            return kind == UploadKind.INVENTORIES ? htpasswdInitial : htpasswd;
        }
    }

    /**
     * The web interface and REST API of a root ({@code [webapp]}): Rudder's single vhost proxies {@code /rudder/}
     * (but not {@code /rudder/relay-api/}) to the webapp's Jetty, so that one server holds port 443. Read at start.
     *
     * @param proxy the webapp's base URL ({@code http://host[:port]}), or null when {@code /rudder/} is not
     *     proxied (404, as any unknown path)
     * @param connectTimeout how long a connection to the webapp may take
     * @param timeout how long the webapp may stay silent (no byte of the answer) before the request gets a 504
     */
    public record Webapp(URI proxy, Duration connectTimeout, Duration timeout) {
        /** Rudder's webapp: its Jetty listens on 127.0.0.1:8080 (rudder-jetty-base), behind Apache's ProxyPass. */
        public static final String RUDDER_URL = "http://127.0.0.1:8080";

        /**
         * Not proxied; the webapp is on this machine, so a connect is instant (10 s is generous); Rudder's vhost
         * sets {@code ProxyTimeout 300}, which its comment says applies to the webapp proxy too.
         */
        public static final Webapp DEFAULTS = new Webapp(null, Duration.ofSeconds(10), Duration.ofSeconds(300));

        public Webapp {
            Objects.requireNonNull(connectTimeout);
            Objects.requireNonNull(timeout);
        }

        /**
         * @param source the configuration file
         * @throws ConfigException naming the key out of range
         */
        void validate(Path source) throws ConfigException {
            ConfigException.requireAtLeast(source, "webapp.connect_timeout", connectTimeout.toSeconds(), 1);
            ConfigException.requireAtLeast(source, "webapp.timeout", timeout.toSeconds(), 1);
        }

        /** @return whether {@code /rudder/} is proxied */
        public boolean enabled() {
            return proxy != null;
        }
    }

    /**
     * Remote run ({@code [remote_run]}): the fixed commands, as argv lists (conditions are appended as {@code -D
     * a,b}; nothing else ever is), and how runs travel down the tree.
     *
     * @param enabled whether this server accepts remote runs at all
     * @param port where every other server's Pintle listens (the same on every machine, like Rudder's 443)
     * @param run argv of {@code run}
     * @param update argv of {@code update}
     * @param inventory argv of {@code inventory}
     * @param timeout how long the agent may run before it is stopped (cf-runagent's {@code -t 300})
     * @param connectTimeout how long a connection to the next server may take
     * @param maxParallel calls to other servers and local agent runs in progress at once, over all requests; takes
     *     effect at start
     * @param agentSocket when set, this machine's agent is not started by Pintle but asked for through this Unix
     *     socket (pintle-agent.socket, whose helper runs it as root); {@code run}, {@code update} and {@code
     *     inventory} then do not apply. Null: Pintle starts the argv itself
     * @param transports how a neighbour that is a node (no node below it) is reached, tried in this order
     * @param maxChannels nodes' order polls parked at once (the pull channel); takes effect at start
     * @param reportGrace after {@code timeout}, how long a node running an order from its channel has to report
     * @param reconnectGrace how long a node whose order poll ended still counts as connected, an order for it
     *     waiting that long for its next poll; takes effect at start
     * @param policyUpdates whether and how fast nodes holding an order channel are told to update when their
     *     policies change
     * @param remoteCommand argv of relayd's {@code rudder remote run} for nodes reached through cf-serverd
     *     ({@code -D a,b}, {@code --} and the host list are appended); the agent helper runs its own when
     *     {@code agentSocket} is set
     */
    public record RemoteRun(boolean enabled, int port, List<String> run, List<String> update, List<String> inventory,
            Duration timeout, Duration connectTimeout, int maxParallel, Path agentSocket, List<Transport> transports,
            int maxChannels, Duration reportGrace, Duration reconnectGrace, PolicyUpdates policyUpdates,
            List<String> remoteCommand) {
        public RemoteRun {
            remoteCommand = List.copyOf(remoteCommand);
            run = List.copyOf(run);
            update = List.copyOf(update);
            inventory = List.copyOf(inventory);
            transports = List.copyOf(transports);
            Objects.requireNonNull(timeout);
            Objects.requireNonNull(connectTimeout);
            Objects.requireNonNull(reportGrace);
            Objects.requireNonNull(reconnectGrace);
            Objects.requireNonNull(policyUpdates);
        }

        /**
         * Rudder's agent command line (rudder-agent); cf-serverd's {@code cfruncommand} is its {@code agent run -uR}.
         */
        public static final String RUDDER_COMMAND = "/opt/rudder/bin/rudder";

        /**
         * The defaults with {@link Limits#DEFAULTS}. The commands are what cf-serverd ran (policy
         * update, then run, raw output), the update alone, an inventory now, and relayd's command for nodes reached
         * through their cf-serverd. Port 443: every Rudder server and node listens there. Timeout 300 s:
         * cf-runagent's {@code -t 300} and Apache's ProxyTimeout 300. A node that does not accept a connection in
         * 10 s is unreachable. 32 calls at once: Rudder's trigger hook starts at most 100 nodes at once; a third of
         * it keeps a relay's threads and a fleet's sudden load bounded. Nodes are reached by their order channel
         * when they hold one, else as relayd reaches them (a Rudder node runs no Pintle). After its timeout, a node
         * running an order from its channel has 30 s to send the rest of its output (it stops its agent at the
         * timeout; what is left is a short upload). A node whose poll ended counts as connected for 10 s more: the
         * moment between two polls.
         */
        public static final RemoteRun DEFAULTS = defaults(Limits.DEFAULTS);

        /**
         * @param limits the server's limits
         * @return {@link #DEFAULTS}, with {@code max_channels} three quarters of {@code limits}' connections
         */
        public static RemoteRun defaults(Limits limits) {
            return new RemoteRun(true, 443, List.of(RUDDER_COMMAND, "agent", "run", "-uR"),
                    List.of(RUDDER_COMMAND, "agent", "update"), List.of(RUDDER_COMMAND, "agent", "inventory"),
                    Duration.ofSeconds(300), Duration.ofSeconds(10), 32, null,
                    List.of(Transport.PULL, Transport.RUDDER_REMOTE_RUN), limits.maxConnections() / 4 * 3,
                    Duration.ofSeconds(30), Duration.ofSeconds(10), PolicyUpdates.DEFAULTS,
                    List.of(RUDDER_COMMAND, "remote", "run"));
        }

        /**
         * @param source the configuration file
         * @param limits the server's limits: order polls hold connections
         * @throws ConfigException naming the key out of range
         */
        void validate(Path source, Limits limits) throws ConfigException {
            if (port < 1 || port > 65535) {
                throw new ConfigException(source + ": 'remote_run.port': " + port + " is not a TCP port (1-65535)");
            }
            if (maxParallel < 1 || maxParallel > 1024) {
                throw new ConfigException(source + ": 'remote_run.max_parallel' must be between 1 and 1024, not "
                        + maxParallel);
            }
            ConfigException.requireAtLeast(source, "remote_run.timeout", timeout.toSeconds(), 1);
            if (timeout.compareTo(Duration.ofHours(6)) > 0) {
                throw new ConfigException(source + ": 'remote_run.timeout' must be at most 21600 (6 hours)");
            }
            ConfigException.requireAtLeast(source, "remote_run.connect_timeout", connectTimeout.toSeconds(), 1);
            ConfigException.requireSeconds(source, "remote_run.report_grace", reportGrace, 1, 3600);
            ConfigException.requireSeconds(source, "remote_run.reconnect_grace", reconnectGrace, 1, 600);
            validateArgv(source, "remote_run.run", run);
            validateArgv(source, "remote_run.update", update);
            validateArgv(source, "remote_run.inventory", inventory);
            if (agentSocket != null
                    && agentSocket.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8).length > 107) {
                throw new ConfigException(source + ": 'remote_run.agent_socket': " + agentSocket + " is longer than a "
                        + "Unix socket path may be (107 bytes)");
            }
            if (transports.isEmpty()) {
                throw new ConfigException(source + ": 'remote_run.transports' must name at least one transport");
            }
            // Polls hold connections: at most max_connections less room for the nodes' downloads and uploads.
            int most = limits.maxConnections() - Math.max(1, limits.maxConnections() / 10);
            if (maxChannels < 0 || maxChannels > most) {
                throw new ConfigException(source + ": 'remote_run.max_channels' must be between 0 and " + most
                        + " ([limits] max_connections = " + limits.maxConnections() + " less a tenth, left to "
                        + "downloads and uploads), not " + maxChannels + "; raise [limits] max_connections for more");
            }
            policyUpdates.validate(source);
            validateArgv(source, "remote_run.remote_command", remoteCommand);
        }

        /** An argv list: an absolute program, then fixed arguments; never a shell line. */
        private static void validateArgv(Path source, String key, List<String> argv) throws ConfigException {
            if (argv.isEmpty()) {
                throw new ConfigException(source + ": '" + key + "' must name a program (an argv list such as "
                        + "[\"/opt/rudder/bin/rudder\", \"agent\", \"run\", \"-uR\"])");
            }
            for (String argument : argv) {
                if (argument.indexOf('\0') >= 0) {
                    throw new ConfigException(source + ": '" + key + "' contains a null or NUL argument");
                }
            }
            String program = argv.get(0);
            if (!Path.of(program).isAbsolute() && !program.matches("^[A-Za-z]:\\\\.*")) {
                throw new ConfigException(source + ": '" + key + "': the program must be an absolute path (no search "
                        + "in PATH), not '" + program + "'");
            }
        }
    }

    /**
     * "New policy, now" ({@code [remote_run] policy_updates...}): a node that holds an order channel is sent an
     * {@code update} order when its policy archive changes, instead of waiting for its next run.
     *
     * @param enabled whether changes are watched and orders sent
     * @param rate orders released per second at most, over all nodes
     * @param splay each changed node is released at a random moment within this window after the change is seen
     *     (and never faster than {@code rate})
     * @param scan how often the archives of the nodes holding a channel are looked at; takes effect at start
     */
    public record PolicyUpdates(boolean enabled, int rate, Duration splay, Duration scan) {
        /**
         * On; 100 update orders a second: 20,000 nodes in under 4 minutes, within the agents' own 5-minute cycle;
         * nodes changed together are spread over 10 s even when there are few of them; archives looked at every 5 s
         * (a stat each).
         */
        public static final PolicyUpdates DEFAULTS = new PolicyUpdates(true, 100, Duration.ofSeconds(10),
                Duration.ofSeconds(5));

        public PolicyUpdates {
            Objects.requireNonNull(splay);
            Objects.requireNonNull(scan);
        }

        void validate(Path source) throws ConfigException {
            if (rate < 1 || rate > 100_000) {
                throw new ConfigException(source + ": 'remote_run.policy_update_rate' must be between 1 and 100000 "
                        + "orders a second, not " + rate);
            }
            ConfigException.requireSeconds(source, "remote_run.policy_update_splay", splay, 0, 3600);
            ConfigException.requireSeconds(source, "remote_run.policy_update_scan", scan, 1, 600);
        }
    }

    /** How a run reaches a neighbour that is a node ({@code [remote_run] transports}). */
    public enum Transport {
        /** Its order channel, when it holds one (the node polls; no inbound port). */
        PULL("pull"),
        /** A call to its own Pintle listener, as to a relay. */
        PINTLE("pintle"),
        /** relayd's way: {@code rudder remote run -- host1,host2} (cf-runagent to its cf-serverd), batched. */
        RUDDER_REMOTE_RUN("rudder-remote-run");

        private final String key;

        Transport(String key) {
            this.key = key;
        }

        /** @return its name in the configuration */
        public String key() {
            return key;
        }
    }

    /**
     * This server's own policy server, as a client sees it: where it is, how its key is pinned, and the
     * certificate and key this server presents to it (by default its own {@code [tls]} pair, as relayd does with
     * the agent key). Unset on root.
     *
     * @param url the policy server's base URL ({@code https://host[:port]}), or null when there is none (root)
     * @param certificate its certificate, whose public key is pinned (Rudder's {@code policy_server.pem}); used
     *     when {@code keyHash} is null
     * @param keyHash its key pin ({@code sha256//...}), or null to take it from {@code certificate}
     * @param clientCertificate what this server presents
     * @param clientKey the key of {@code clientCertificate}
     * @param sync on a relay, whether to keep its share, {@code common/} and the shared folder in step with the
     *     policy server (over HTTPS, with change waits)
     * @param nodesList on a relay, where its {@code nodeslist.json} is below its own {@code /policies/<id>/} on
     *     the policy server (copied to {@code [nodes] list}); empty to leave it to the agent
     * @param nodesCertificates likewise for its nodes' certificates (copied to the first {@code [nodes]
     *     certificates} file); empty to leave it to the agent
     * @param forward on a relay, whether the uploads it takes are forwarded to the policy server (relayd's
     *     {@code output = "upstream"}); off where relayd still runs beside Pintle and forwards them
     * @param forwardCredentials the agent's {@code rudder.json}, whose {@code DAVUSER}/{@code DAVPASSWORD} are sent
     *     as HTTP Basic with forwarded uploads (what an Apache/relayd policy server checks; a Pintle one takes the
     *     relay's certificate); null to send none
     * @param forwardInFlight uploads forwarded at once, at least 1
     */
    public record Upstream(URI url, Path certificate, String keyHash, Path clientCertificate, Path clientKey,
            boolean sync, String nodesList, String nodesCertificates, boolean forward, Path forwardCredentials,
            int forwardInFlight) {
        /** Default {@code forward_in_flight}: a few uploads under way hide the round trip without a herd. */
        public static final int DEFAULT_FORWARD_IN_FLIGHT = 4;
        /** Where Rudder's agent keeps its {@code rudder.json} (rudder-agent's {@code share/lib/common.sh}). */
        public static final Path RUDDER_JSON = Path.of("/var/rudder/cfengine-community/inputs/rudder.json");

        public Upstream {
            Objects.requireNonNull(certificate);
            Objects.requireNonNull(clientCertificate);
            Objects.requireNonNull(clientKey);
        }

        /** The same without upload forwarding settings: forwarding on, with the defaults. */
        public Upstream(URI url, Path certificate, String keyHash, Path clientCertificate, Path clientKey,
                boolean sync, String nodesList, String nodesCertificates) {
            this(url, certificate, keyHash, clientCertificate, clientKey, sync, nodesList, nodesCertificates, true,
                    RUDDER_JSON, DEFAULT_FORWARD_IN_FLIGHT);
        }

        /**
         * @param tls the server's own certificate and key
         * @return the defaults: no policy server (root); its certificate where Rudder keeps it; {@code tls}'s pair
         *     presented to it; sync on, with the relay's {@code nodeslist.json} and {@code nodescerts.pem} where
         *     Rudder generates them
         */
        public static Upstream defaults(Tls tls) {
            return new Upstream(null, Path.of("/var/rudder/lib/ssl/policy_server.pem"), null, tls.certificate(),
                    tls.key(), true, "rules/cfengine-community/rudder-service-relayd/1.0/relay/nodeslist.json",
                    "rules/cfengine-community/rudder-service-apache/1.0/apache/nodescerts.pem");
        }

        /**
         * @param source the configuration file
         * @throws ConfigException naming the key out of range
         */
        void validate(Path source) throws ConfigException {
            ConfigException.requireAtLeast(source, "upstream.forward_in_flight", forwardInFlight, 1);
            validateRelative(source, "upstream.nodes_list", nodesList);
            validateRelative(source, "upstream.nodes_certificates", nodesCertificates);
        }

        /** A path below the relay's own {@code /policies/<id>/}: relative, no {@code .} or {@code ..}; or empty. */
        private static void validateRelative(Path source, String key, String text) throws ConfigException {
            if (text.isEmpty()) {
                return;
            }
            for (String segment : text.split("/", -1)) {
                if (segment.isEmpty() || segment.equals(".") || segment.equals("..")) {
                    throw new ConfigException(source + ": '" + key + "' must be a relative path below the relay's "
                            + "/policies/<id>/ (no empty, '.' or '..' segment), not '" + text + "'");
                }
            }
        }

        /** @return whether a policy server is configured */
        public boolean configured() {
            return url != null;
        }
    }

    /** The server's place in the Rudder tree. */
    public enum Role {
        ROOT,
        RELAY,
        NODE;

        /** @return the configuration spelling */
        public String text() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /**
     * A listen address.
     *
     * @param host an IP literal or host name ({@code 0.0.0.0} for all IPv4 addresses)
     * @param port a TCP port; 0 picks a free one
     */
    public record Listen(String host, int port) {
        @Override
        public String toString() {
            return authorityHost(host) + ":" + port;
        }

        /**
         * @param host a host name or IP literal, an IPv6 one bracketed or not
         * @return the host as a URI authority writes it: IPv6 literals in brackets
         */
        public static String authorityHost(String host) {
            return host.contains(":") && !host.startsWith("[") ? "[" + host + "]" : host;
        }
    }

    /**
     * @param nodeId this server's node id
     * @param role root, relay or node
     * @param listen the node-facing TLS listener
     * @param proxyProtocolFrom the addresses (load balancers) whose connections to the TLS listener must start with
     *     a PROXY protocol header (HAProxy's {@code send-proxy-v2}, or v1), whose source address then stands for the
     *     connection's; from every other address no header is accepted. Empty: off. Bound at start
     */
    public record General(NodeId nodeId, Role role, Listen listen, List<Cidr> proxyProtocolFrom) {
        /** Default {@code node_id_file}: where Rudder keeps the server's node id. */
        public static final Path DEFAULT_NODE_ID_FILE = Path.of("/opt/rudder/etc/uuid.hive");
        /** Default {@code role}. */
        public static final Role DEFAULT_ROLE = Role.ROOT;
        /** Default {@code listen}: Rudder's HTTPS port on every IPv4 address. */
        public static final Listen DEFAULT_LISTEN = new Listen("0.0.0.0", 443);

        public General {
            proxyProtocolFrom = List.copyOf(proxyProtocolFrom);
        }

        /**
         * Without the PROXY protocol.
         *
         * @param nodeId this server's node id
         * @param role root, relay or node
         * @param listen the node-facing TLS listener
         */
        public General(NodeId nodeId, Role role, Listen listen) {
            this(nodeId, role, listen, List.of());
        }
    }

    /**
     * @param certificate PEM certificate (chain) the server presents
     * @param key its PEM private key (PKCS#1, SEC1 or PKCS#8; RSA or EC)
     * @param protocols enabled TLS protocols ({@code TLSv1.3}, optionally {@code TLSv1.2})
     * @param allowWorldReadableKey serve even when every user of the machine can read the key file (refused by
     *     default)
     * @param provider the TLS implementation of the node-facing listener
     */
    public record Tls(Path certificate, Path key, List<String> protocols, boolean allowWorldReadableKey,
            TlsProvider provider) {
        /**
         * The agent's own certificate and key (agents pin the server's key; the key is PKCS#1 PEM since Rudder 7),
         * TLS 1.3 only as Rudder's Apache, the key kept private, {@link TlsProvider#AUTO}.
         */
        public static final Tls DEFAULTS = new Tls(Path.of("/opt/rudder/etc/ssl/agent.cert"),
                Path.of("/var/rudder/cfengine-community/ppkeys/localhost.priv"), List.of("TLSv1.3"), false,
                TlsProvider.AUTO);
        /**
         * The CA-signed agent certificate of certificate-validation mode, Apache's server certificate in that mode,
         * and the default in it.
         */
        public static final Path VALIDATION_CERTIFICATE = Path.of("/opt/rudder/etc/ssl/agent-http.cert");
        /** Key of {@link #VALIDATION_CERTIFICATE}. */
        public static final Path VALIDATION_KEY = Path.of("/opt/rudder/etc/ssl/agent-http.key");
        /** A dedicated HTTPS certificate, the default when it and its key exist (Rudder #27584). */
        public static final Path DEDICATED_CERTIFICATE = Path.of("/opt/rudder/etc/ssl/server.cert");
        /** Key of {@link #DEDICATED_CERTIFICATE}. */
        public static final Path DEDICATED_KEY = Path.of("/opt/rudder/etc/ssl/server.key");
        /** The protocols {@code protocols} may name. */
        public static final Set<String> SUPPORTED_PROTOCOLS = Set.of("TLSv1.3", "TLSv1.2");

        public Tls {
            protocols = List.copyOf(protocols);
            Objects.requireNonNull(provider);
        }

        /**
         * @param source the configuration file
         * @throws ConfigException naming the key out of range
         */
        void validate(Path source) throws ConfigException {
            if (protocols.isEmpty()) {
                throw new ConfigException(source + ": 'tls.protocols' must name at least one protocol");
            }
            for (String protocol : protocols) {
                if (!SUPPORTED_PROTOCOLS.contains(protocol)) {
                    throw new ConfigException(source + ": 'tls.protocols': unsupported protocol '" + protocol
                            + "' (supported: TLSv1.3, TLSv1.2)");
                }
            }
        }

        /**
         * @param certificate PEM certificate (chain) the server presents
         * @param key its PEM private key
         * @param protocols enabled TLS protocols
         */
        public Tls(Path certificate, Path key, List<String> protocols) {
            this(certificate, key, protocols, DEFAULTS.allowWorldReadableKey(), DEFAULTS.provider());
        }
    }

    /** The TLS implementation behind the node-facing listener ({@code [tls] provider}). */
    public enum TlsProvider {
        /** Conscrypt where its native library loads on this machine, else the JDK's (with a warning). */
        AUTO,
        /** The JDK's own (SunJSSE): pure Java, nothing native. */
        JDK,
        /** Conscrypt: Google's BoringSSL behind the same JSSE API, from its bundled native library. */
        CONSCRYPT;

        /** @return the name the configuration uses */
        public String text() {
            return name().toLowerCase(Locale.ROOT);
        }

        @Override
        public String toString() {
            return text();
        }
    }

    /**
     * @param list {@code nodeslist.json}
     * @param certificates PEM bundles of node certificates
     * @param authentication Rudder's trust modes on: {@code cert_pinning}, {@code cert_validation}, or both during a
     *     migration
     * @param caFile the CA bundle of {@code cert_validation} (Rudder's {@code policy_server_ca.pem})
     * @param caMaxDepth the most CA certificates above a node's, root included (Apache's {@code SSLVerifyDepth})
     * @param idRules where {@code cert_validation} reads the node id, tried in order
     * @param crlFiles certificate revocation lists (PEM or DER), reload inputs
     * @param deniedKeysFile the deny list of key pins, or null for none
     * @param deniedKeysFileRequired whether it was configured explicitly, so that its absence is an error (the
     *     default file may be absent: nothing denied)
     * @param crlUrl where a CRL is fetched from ({@code http} or {@code https}), or null for no fetch
     * @param crlFetchFile where the last good fetched CRL is kept; a CRL input once it exists
     * @param crlRefresh how often it is fetched: at least {@link #MIN_CRL_REFRESH} from a configuration file (the
     *     loader refuses less); any positive duration here, so that a test can fetch every second
     * @param nodesAuthFile Rudder's {@code rudder-apache-nodes-auth.conf}, whose conditions replace {@code idRules}
     *     when it exists ({@link io.pintle.server.nodes.ApacheIdRules}), or null when {@code id_rules} is set or
     *     the file is not read
     * @param nodesAuthFileRequired whether it was configured explicitly, so that its absence is an error
     */
    public record Nodes(Path list, List<Path> certificates, List<NodeTrust.Mode> authentication, Path caFile,
            int caMaxDepth, List<IdRule> idRules, List<Path> crlFiles, Path deniedKeysFile,
            boolean deniedKeysFileRequired, URI crlUrl, Path crlFetchFile, Duration crlRefresh, Path nodesAuthFile,
            boolean nodesAuthFileRequired) {
        /** The shortest {@code crl_refresh_seconds}: more often only loads the CA's server. */
        public static final Duration MIN_CRL_REFRESH = Duration.ofSeconds(60);
        /**
         * The largest {@code ca_max_depth}: the TLS layer takes chains of at most ten certificates, and the client's
         * own is one of them.
         */
        public static final int MAX_CA_DEPTH = 9;
        /**
         * Rudder's inputs and its default mode, pinning only: the relay's {@code nodeslist.json} and
         * {@code nodescerts.pem}; Rudder's CA bundle of certificate-validation mode ({@code POLICY_SERVER_CERT_CA}),
         * Apache's {@code SSLVerifyDepth}, the id in the subject's UID; no CRL; the deny list in {@code /etc/pintle},
         * which may be absent (nothing denied); the fetched CRL in the unit's {@code StateDirectory}, which only
         * Pintle writes, fetched each hour (a CA publishes a CRL a day or more often, rarely each hour), though
         * {@code crl_url} is unset.
         */
        public static final Nodes DEFAULTS = new Nodes(Path.of("/var/rudder/lib/relay/nodeslist.json"),
                List.of(Path.of("/var/rudder/lib/ssl/nodescerts.pem")), List.of(NodeTrust.Mode.CERT_PINNING),
                Path.of("/var/rudder/lib/ssl/policy_server_ca.pem"), CaTrust.DEFAULT_MAX_DEPTH, List.of(IdRule.UID),
                List.of(), Path.of("/etc/pintle/denied-keys"), false, null, Path.of("/var/lib/pintle/fetched.crl"),
                Duration.ofHours(1), null, false);
        /**
         * The default {@code nodes_auth_file} with {@code cert_validation} and no {@code id_rules}: Rudder's Apache
         * include for ids in SANs, read when it exists.
         */
        public static final Path VALIDATION_NODES_AUTH_FILE = Path.of(ApacheIdRules.RUDDER_FILE);

        public Nodes {
            certificates = List.copyOf(certificates);
            authentication = List.copyOf(authentication);
            idRules = List.copyOf(idRules);
            crlFiles = List.copyOf(crlFiles);
            Objects.requireNonNull(caFile);
            Objects.requireNonNull(crlFetchFile);
            Objects.requireNonNull(crlRefresh);
            if (authentication.isEmpty() || idRules.isEmpty()) {
                throw new IllegalArgumentException("at least one trust mode and one id rule");
            }
            if (crlRefresh.isNegative() || crlRefresh.isZero()) {
                throw new IllegalArgumentException("a CRL refresh period is positive");
            }
            if (nodesAuthFileRequired && nodesAuthFile == null) {
                throw new IllegalArgumentException("a required nodes-auth file has a path");
            }
        }

        /**
         * Id rules only from {@code idRules}.
         *
         * @param list {@code nodeslist.json}
         * @param certificates PEM bundles of node certificates
         * @param authentication the trust modes
         * @param caFile the CA bundle
         * @param caMaxDepth the deepest chain
         * @param idRules where the node id is read
         * @param crlFiles CRL files
         * @param deniedKeysFile the deny list, or null
         * @param deniedKeysFileRequired whether its absence is an error
         * @param crlUrl where a CRL is fetched from, or null
         * @param crlFetchFile where the fetched CRL is kept
         * @param crlRefresh how often it is fetched
         */
        public Nodes(Path list, List<Path> certificates, List<NodeTrust.Mode> authentication, Path caFile,
                int caMaxDepth, List<IdRule> idRules, List<Path> crlFiles, Path deniedKeysFile,
                boolean deniedKeysFileRequired, URI crlUrl, Path crlFetchFile, Duration crlRefresh) {
            this(list, certificates, authentication, caFile, caMaxDepth, idRules, crlFiles, deniedKeysFile,
                    deniedKeysFileRequired, crlUrl, crlFetchFile, crlRefresh, null, false);
        }

        /**
         * No CRL fetch.
         *
         * @param list {@code nodeslist.json}
         * @param certificates PEM bundles of node certificates
         * @param authentication the trust modes
         * @param caFile the CA bundle
         * @param caMaxDepth the deepest chain
         * @param idRules where the node id is read
         * @param crlFiles CRL files
         * @param deniedKeysFile the deny list, or null
         * @param deniedKeysFileRequired whether its absence is an error
         */
        public Nodes(Path list, List<Path> certificates, List<NodeTrust.Mode> authentication, Path caFile,
                int caMaxDepth, List<IdRule> idRules, List<Path> crlFiles, Path deniedKeysFile,
                boolean deniedKeysFileRequired) {
            this(list, certificates, authentication, caFile, caMaxDepth, idRules, crlFiles, deniedKeysFile,
                    deniedKeysFileRequired, null, DEFAULTS.crlFetchFile(), DEFAULTS.crlRefresh());
        }

        /**
         * Pinning only, the default deny list, no CRL: Rudder's default mode.
         *
         * @param list {@code nodeslist.json}
         * @param certificates PEM bundles of node certificates
         */
        public Nodes(Path list, List<Path> certificates) {
            this(list, certificates, DEFAULTS.authentication(), DEFAULTS.caFile(), DEFAULTS.caMaxDepth(),
                    DEFAULTS.idRules(), DEFAULTS.crlFiles(), DEFAULTS.deniedKeysFile(), false, null,
                    DEFAULTS.crlFetchFile(), DEFAULTS.crlRefresh(), null, false);
        }

        /**
         * {@code crl_refresh_seconds}, checked before the section is built (it refuses a period that is not
         * positive).
         *
         * @param source the configuration file
         * @param seconds the period
         * @return the period
         * @throws ConfigException when it is shorter than {@link #MIN_CRL_REFRESH}
         */
        static Duration crlRefresh(Path source, int seconds) throws ConfigException {
            ConfigException.requireAtLeast(source, "nodes.crl_refresh_seconds", seconds, MIN_CRL_REFRESH.toSeconds());
            return Duration.ofSeconds(seconds);
        }

        /**
         * @param source the configuration file
         * @throws ConfigException naming the key out of range, or keys that do not go together
         */
        void validate(Path source) throws ConfigException {
            if (caMaxDepth < 1 || caMaxDepth > MAX_CA_DEPTH) {
                throw new ConfigException(source + ": 'nodes.ca_max_depth' must be between 1 (node certificates "
                        + "signed by a root of the bundle) and " + MAX_CA_DEPTH + ", not " + caMaxDepth);
            }
            if (crlUrl != null && !validation()) {
                throw new ConfigException(source + ": 'nodes.crl_url' applies to certificate validation: add "
                        + "\"cert_validation\" to 'nodes.authentication' (a fetched CRL is verified against "
                        + "'nodes.ca_file', and only revokes CA-signed certificates), or remove crl_url");
            }
            if (crlUrl != null && crlFiles.contains(crlFetchFile)) {
                throw new ConfigException(source + ": 'nodes.crl_fetch_file' (" + crlFetchFile + ") is also in "
                        + "'nodes.crl_files': the fetch replaces that file; name another one, or remove it from "
                        + "crl_files");
            }
            if (!crlFiles.isEmpty() && !validation()) {
                throw new ConfigException(source + ": 'nodes.crl_files' revoke CA-signed certificates and apply to "
                        + "certificate validation only: add \"cert_validation\" to 'nodes.authentication', or, to "
                        + "refuse a pinned agent key, list its sha256//... pin in 'nodes.denied_keys_file'");
            }
        }

        /** @return whether certificate-validation mode is on */
        public boolean validation() {
            return authentication.contains(NodeTrust.Mode.CERT_VALIDATION);
        }

        /** @return whether key pinning is on */
        public boolean pinning() {
            return authentication.contains(NodeTrust.Mode.CERT_PINNING);
        }
    }

    /**
     * @param allowedFile Apache {@code Require} include, or null for none
     * @param allowed extra networks (CIDR)
     * @param policyServerFile Apache's {@code rudder-networks-policy-server-24.conf}: who may ask for a remote run
     *     without a client certificate (root and relay only); null for none (always null on a node)
     * @param policyServerFileRequired whether {@code policyServerFile} was configured explicitly, so that its
     *     absence is an error; the default file may be absent (then nobody is admitted by it)
     */
    public record Networks(Path allowedFile, List<String> allowed, Path policyServerFile,
            boolean policyServerFileRequired) {
        /** Default {@code allowed_file}: Rudder's Apache include of who may fetch policies. */
        public static final Path DEFAULT_ALLOWED_FILE = Path.of("/opt/rudder/etc/rudder-networks-24.conf");
        /**
         * Default {@code policy_server_file} on a root or relay: Apache's list of who may ask for a remote run
         * without a client certificate ({@code Require local}, {@code Require ip <policy server>}).
         */
        public static final Path DEFAULT_POLICY_SERVER_FILE =
                Path.of("/opt/rudder/etc/rudder-networks-policy-server-24.conf");

        public Networks {
            allowed = List.copyOf(allowed);
            if (policyServerFileRequired && policyServerFile == null) {
                throw new IllegalArgumentException("a required policy-server networks file has a path");
            }
        }

        /**
         * @param role the server's role
         * @return the defaults: Rudder's include, no extra network, and on a root or relay Rudder's policy-server
         *     include, which may be absent (a node has none: only its policy server's key may ask it for a run)
         */
        public static Networks defaults(Role role) {
            return new Networks(DEFAULT_ALLOWED_FILE, List.of(),
                    role == Role.NODE ? null : DEFAULT_POLICY_SERVER_FILE, false);
        }
    }

    /**
     * @param share Rudder's share directory ({@code /var/rudder/share})
     * @param sharedFolder Rudder's global shared folder, served under relayd's {@code shared-folder/}
     * @param sharedFiles node-to-node shared files ({@code {sharedFiles}/{target}/files/{source}/{fileId}})
     * @param state Pintle's own state (the unit's {@code StateDirectory}): per-node delivery state, freezes, built
     *     archives; private to the service
     */
    public record Paths(Path share, Path sharedFolder, Path sharedFiles, Path state) {
        /** Rudder's, and the unit's state directory. */
        public static final Paths DEFAULTS = new Paths(Path.of("/var/rudder/share"),
                Path.of("/var/rudder/configuration-repository/shared-files"), Path.of("/var/rudder/shared-files"),
                Path.of("/var/lib/pintle"));

        public Paths {
            Objects.requireNonNull(share);
            Objects.requireNonNull(sharedFolder);
            Objects.requireNonNull(sharedFiles);
            Objects.requireNonNull(state);
        }
    }

    /**
     * Policy delivery ({@code [delivery]}): what the server keeps of what each node fetched, and how it steers it.
     *
     * @param silentAfter a node that sent no request for this long counts as silent ({@code silent_after_seconds})
     * @param rudderBackup where Rudder's webapp keeps each node's previous generation ({@code rudder.dir.backup}:
     *     {@code <backup>/<node path>/rules}), read by a rollback; null when Rudder's backup is off
     * @param buildArchives build {@code rules/rudder.tar.bz2} from the tree when Rudder's hook has not (yet)
     * @param sampleEvery how often the share of nodes on the current version is sampled and the delivery state
     *     saved ({@code sample_seconds}; read at start)
     */
    public record Delivery(Duration silentAfter, Path rudderBackup, boolean buildArchives, Duration sampleEvery) {
        /** Rudder's backup directory, an hour of silence, archives built, a sample every 10 s. */
        public static final Delivery DEFAULTS = new Delivery(Duration.ofHours(1),
                Path.of("/var/rudder/share/backup"), true, Duration.ofSeconds(10));

        public Delivery {
            Objects.requireNonNull(silentAfter);
            Objects.requireNonNull(sampleEvery);
        }

        void validate(Path source) throws ConfigException {
            if (silentAfter.compareTo(Duration.ofMinutes(1)) < 0 || silentAfter.compareTo(Duration.ofDays(30)) > 0) {
                throw new ConfigException(source + ": 'delivery.silent_after_seconds' must be between 60 and 2592000 "
                        + "(30 days), got " + silentAfter.toSeconds());
            }
            if (sampleEvery.compareTo(Duration.ofSeconds(1)) < 0 || sampleEvery.compareTo(Duration.ofMinutes(10)) > 0) {
                throw new ConfigException(source + ": 'delivery.sample_seconds' must be between 1 and 600, got "
                        + sampleEvery.toSeconds());
            }
        }
    }

    /**
     * @param listen the plain-HTTP loopback listener for health, metrics and {@code system/*}
     * @param rudderVersionFiles where {@code system/info} reads the Rudder version this machine runs, tried in
     *     order (read on each call, so that a Rudder upgrade shows without a restart); empty to answer none
     */
    public record Admin(Listen listen, List<Path> rudderVersionFiles) {
        /**
         * Port 5310 on loopback; where Rudder's packages write their version: rudder-server's on a root, then
         * rudder-agent's, which every Rudder machine has (a relay's package requires the agent of its own version).
         */
        public static final Admin DEFAULTS = new Admin(new Listen("127.0.0.1", 5310), List.of(
                Path.of("/opt/rudder/share/versions/rudder-server-version"),
                Path.of("/opt/rudder/share/versions/rudder-agent-version")));

        public Admin {
            Objects.requireNonNull(listen);
            rudderVersionFiles = List.copyOf(rudderVersionFiles);
        }

        /**
         * @param source the configuration file
         * @throws ConfigException when the listener is not on loopback
         */
        void validate(Path source) throws ConfigException {
            if (!isLoopback(listen.host())) {
                throw new ConfigException(source + ": 'admin.listen' must be a loopback address (it is plain HTTP "
                        + "without authentication), not '" + listen.host() + "'");
            }
        }

        private static boolean isLoopback(String host) {
            try {
                return InetAddress.getByName(host).isLoopbackAddress();
            } catch (UnknownHostException e) {
                return false;
            }
        }
    }

    /**
     * @param watch whether changes to input files trigger a reload by themselves (file watch); SIGHUP,
     *     {@code pintle reload} and the reload API work either way
     */
    public record Reload(boolean watch) {
        /** Watched. */
        public static final Reload DEFAULTS = new Reload(true);
    }

    /**
     * @param access whether each request gets an access log line (logger {@code io.pintle.access}); takes effect
     *     on reload
     * @param accessFormat the line format
     */
    public record Log(boolean access, AccessFormat accessFormat) {
        /** An access log line per request, in Apache's common format. */
        public static final Log DEFAULTS = new Log(true, AccessFormat.COMMON);

        public Log {
            Objects.requireNonNull(accessFormat);
        }
    }

    /** Access log line formats. */
    public enum AccessFormat {
        /** Apache's common log format, then duration and decision. */
        COMMON,
        /** One JSON object per line. */
        JSON;

        /** @return the configuration spelling */
        public String text() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /**
     * Overload control of the node-facing TLS listener (the admin listener is not limited, so that it stays
     * reachable when the TLS listener is saturated).
     *
     * @param maxConnections open connections; past it, new ones wait in the kernel's accept backlog
     * @param acceptQueue the accept queue (listen backlog) of the TLS listener when the server binds it itself (the
     *     kernel caps it at {@code net.core.somaxconn}); 0 leaves the JDK's (50). Bound at start
     * @param idleTimeout a connection with no traffic for this long is closed
     * @param headerTimeout a new connection must finish its TLS handshake and send the headers of its first
     *     request within this time, or it is closed (slow-loris protection)
     * @param minResponseBytesPerSecond a client that keeps a response waiting while reading slower than this is
     *     disconnected; 0 turns the check off
     * @param minRequestBytesPerSecond a client that sends a request body slower than this (over each check
     *     period) gets a 408 and its upload is dropped; 0 turns the check off
     * @param rateCheck the check period of both floors above: how long a client's rate is measured over before it
     *     is judged (a write pending at least this long, a request body's bytes over each period); read at start
     * @param queueTimeout how long a request may wait for a worker of its class before it gets a 503
     * @param retryAfter the {@code Retry-After} a 503 carries, on average
     * @param retryAfterJitter how far each {@code Retry-After} is drawn from {@code retryAfter}, either way, so
     *     that refused clients do not come back together
     * @param maxWaiters requests parked by {@code ?wait} at once; past it, 503 with {@code Retry-After}
     * @param maxWaitersPerAddress requests parked by {@code ?wait} at once from one client address (IPv6: one
     *     /64); past it, 503 with {@code Retry-After}
     * @param maxRequestsPerNode downloads by an authenticated node and uploads named for a node, in flight at once
     *     per node id, whatever its address; past it, 503 {@code node-busy} with {@code Retry-After}
     * @param digestCacheEntries file digests kept for manifests
     * @param fileCacheBytes memory for the download cache ({@link io.pintle.server.policy.FileCache}); 0 = off
     * @param maxManifestEntries the largest tree (entries) a manifest or archive describes
     * @param maxSharedFileBytes the largest shared-files upload (metadata and file); larger: 413
     * @param files file downloads ({@code /policies/...}, {@code /common/...})
     * @param api every other node-facing route (small JSON and text answers)
     * @param uploads request bodies (relayd's shared-files {@code PUT})
     * @param webapp requests proxied to the webapp ({@code [webapp] proxy})
     */
    public record Limits(int maxConnections, int acceptQueue, Duration idleTimeout, Duration headerTimeout,
            long minResponseBytesPerSecond, long minRequestBytesPerSecond, Duration rateCheck, Duration queueTimeout,
            Duration retryAfter, Duration retryAfterJitter, int maxWaiters, int maxWaitersPerAddress,
            int maxRequestsPerNode, int digestCacheEntries, long fileCacheBytes, int maxManifestEntries, long maxSharedFileBytes,
            Pool files, Pool api, Pool uploads, Pool webapp) {
        public Limits {
            Objects.requireNonNull(idleTimeout);
            Objects.requireNonNull(headerTimeout);
            Objects.requireNonNull(rateCheck);
            Objects.requireNonNull(queueTimeout);
            Objects.requireNonNull(retryAfter);
            Objects.requireNonNull(retryAfterJitter);
            Objects.requireNonNull(files);
            Objects.requireNonNull(api);
            Objects.requireNonNull(uploads);
            Objects.requireNonNull(webapp);
        }

        /** The defaults, each with its reason. */
        public static final Limits DEFAULTS = new Limits(
                // max_connections: a Rudder agent holds one for a few seconds per run, so this covers tens of
                // thousands of nodes with the usual splay; each idle TLS connection costs tens of kilobytes.
                10_000,
                // accept_queue: the socket unit's Backlog= when systemd binds the listener. Jetty's default (0)
                // leaves the JDK's 50: a herd of agents connecting faster than the handshakes complete overflows
                // it, and the kernel drops their SYNs, which curl's TCP retries one second later, then three
                // (docs/BENCHMARKS.md). nginx asks for 511.
                4096,
                // idle_timeout_seconds: an agent makes a couple of requests per run, then goes quiet for minutes.
                Duration.ofSeconds(30),
                // header_timeout_seconds: a handshake and a request header take milliseconds on any link, but under
                // a herd beyond the CPU's capacity handshakes queue behind each other: at 10 s, 237 of 2,000 agents
                // arriving in 10 s on 2 cores were closed before their first request (bench/perf); at 60 s none.
                // nginx's client_header_timeout and ssl_handshake_timeout are 60 s too.
                Duration.ofSeconds(60),
                // min_response_bytes_per_second: far below any real link (a 2 MB archive in half an hour), far
                // above a client that trickles to hold a worker.
                1024,
                // min_request_bytes_per_second: an upload slower than this over a check period (10 s) gets a 408.
                1024,
                // rate_check_seconds: long enough to average out TCP's bursts.
                Duration.ofSeconds(10),
                // queue_timeout_seconds: past this, a waiting agent is better told to come back later.
                Duration.ofSeconds(30),
                // retry_after_seconds: Puppet's advice for its equivalent (max-retry-delay) is minutes; agents
                // retry on their own next run anyway. With the jitter, refused clients come back over [30, 90] s.
                Duration.ofSeconds(60),
                Duration.ofSeconds(30),
                // max_waiters, max_waiters_per_address: requests parked by ?wait at once, in all and per address.
                10_000,
                100,
                // max_requests_per_node: a Rudder agent runs one request at a time (a policy update copies file by
                // file; an inventory, its signature and a report go one after the other); Pintle's own sync client
                // (client-lib DirectorySync) downloads 8 at once. 16 is twice that, for a retry over a connection
                // the server has not yet seen closed, and still stops one node, or one stolen certificate, from
                // taking a class's workers. The bound is per node id: nodes behind one NAT address each have theirs.
                16,
                // digest_cache_entries: about 200 bytes each.
                500_000,
                // file_cache_bytes: what downloads of small files found, checked by one stat per request.
                32L * 1024 * 1024,
                // max_manifest_entries.
                200_000,
                // max_shared_file_bytes: relayd's [shared_files] max_body_size.
                50L * 1024 * 1024,
                // files, api: with the 200 platform threads of Java 17 (no virtual threads), these leave threads
                // for the admin listener and Jetty's own selectors.
                new Pool(100, 1000, 25),
                new Pool(50, 500, 12),
                // uploads: request bodies.
                new Pool(20, 200, 5),
                // webapp: a browser loads a page's scripts and styles in parallel (dozens of streams over HTTP/2),
                // so one address may take half of them: the class is apart from downloads, and a greedy or slow
                // client only slows the web interface, never all of it.
                new Pool(64, 512, 32));

        /**
         * @param source the configuration file
         * @throws ConfigException naming the key out of range
         */
        void validate(Path source) throws ConfigException {
            ConfigException.requireAtLeast(source, "limits.retry_after_seconds", retryAfter.toSeconds(), 1);
            ConfigException.requireAtLeast(source, "limits.retry_after_jitter_seconds", retryAfterJitter.toSeconds(),
                    0);
            if (retryAfterJitter.compareTo(retryAfter) >= 0) {
                throw new ConfigException(source + ": 'limits.retry_after_jitter_seconds' must be less than "
                        + "'limits.retry_after_seconds' (a Retry-After is at least 1 second)");
            }
            if (minResponseBytesPerSecond < 0) {
                throw new ConfigException(source + ": 'limits.min_response_bytes_per_second' must be 0 (off) or more");
            }
            if (minRequestBytesPerSecond < 0) {
                throw new ConfigException(source + ": 'limits.min_request_bytes_per_second' must be 0 (off) or more");
            }
            ConfigException.requireSeconds(source, "limits.rate_check_seconds", rateCheck, 1, 600);
            ConfigException.requireAtLeast(source, "limits.max_connections", maxConnections, 1);
            ConfigException.requireAtLeast(source, "limits.accept_queue", acceptQueue, 0);
            ConfigException.requireAtLeast(source, "limits.idle_timeout_seconds", idleTimeout.toSeconds(), 1);
            ConfigException.requireAtLeast(source, "limits.header_timeout_seconds", headerTimeout.toSeconds(), 1);
            ConfigException.requireAtLeast(source, "limits.queue_timeout_seconds", queueTimeout.toSeconds(), 1);
            ConfigException.requireAtLeast(source, "limits.max_waiters", maxWaiters, 0);
            ConfigException.requireAtLeast(source, "limits.max_waiters_per_address", maxWaitersPerAddress, 1);
            ConfigException.requireAtLeast(source, "limits.max_requests_per_node", maxRequestsPerNode, 1);
            ConfigException.requireAtLeast(source, "limits.digest_cache_entries", digestCacheEntries, 1);
            if (fileCacheBytes < 0) {
                throw new ConfigException(source + ": 'limits.file_cache_bytes' must be 0 (off) or more");
            }
            ConfigException.requireAtLeast(source, "limits.max_manifest_entries", maxManifestEntries, 1);
            if (maxSharedFileBytes < 1) {
                throw new ConfigException(source + ": 'limits.max_shared_file_bytes' must be at least 1");
            }
            files.validate(source, "limits.files");
            api.validate(source, "limits.api");
            uploads.validate(source, "limits.uploads");
            webapp.validate(source, "limits.webapp");
        }
    }

    /**
     * The workers of one class of requests.
     *
     * @param concurrency requests of the class handled at once
     * @param queue requests that may wait for one of those; past it, a request gets a 503 at once
     * @param perAddress requests of the class one client address (IPv6: one /64) may have running or waiting at
     *     once; past it, that client gets a 503 at once, so that a few hosts never take the whole class
     */
    public record Pool(int concurrency, int queue, int perAddress) {
        void validate(Path source, String key) throws ConfigException {
            ConfigException.requireAtLeast(source, key + ".concurrency", concurrency, 1);
            ConfigException.requireAtLeast(source, key + ".per_address", perAddress, 1);
            ConfigException.requireAtLeast(source, key + ".queue", queue, 0);
        }
    }
}
