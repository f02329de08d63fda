package io.pintle.server.config;

import io.pintle.server.acl.Cidr;
import io.pintle.server.nodes.CaTrust;
import io.pintle.server.nodes.IdRule;
import io.pintle.server.nodes.NodeId;
import io.pintle.server.nodes.NodeTrust;
import io.pintle.server.uploads.LoginThrottle;
import io.pintle.server.uploads.UploadKind;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

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
 */
public record ServerConfig(
        Path source, General general, Tls tls, Nodes nodes, Networks networks, Paths paths, Admin admin,
        Reload reload, Log log, Limits limits, Upstream upstream, RemoteRun remoteRun, Uploads uploads,
        Webapp webapp) {
    public ServerConfig {
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
     */
    public record Uploads(boolean enabled, Path inventories, Path inventoryUpdates, Path reports,
            Path htpasswdInitial, Path htpasswd, long maxBytes, LoginThrottle.Limits logins) {
        public Uploads {
            Objects.requireNonNull(logins);
            Objects.requireNonNull(inventories);
            Objects.requireNonNull(inventoryUpdates);
            Objects.requireNonNull(reports);
            Objects.requireNonNull(htpasswdInitial);
            Objects.requireNonNull(htpasswd);
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
        public Webapp {
            Objects.requireNonNull(connectTimeout);
            Objects.requireNonNull(timeout);
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
     * @param policyUpdates whether and how fast nodes holding an order channel are told to update when their
     *     policies change
     * @param remoteCommand argv of relayd's {@code rudder remote run} for nodes reached through cf-serverd
     *     ({@code -D a,b}, {@code --} and the host list are appended); the agent helper runs its own when
     *     {@code agentSocket} is set
     */
    public record RemoteRun(boolean enabled, int port, List<String> run, List<String> update, List<String> inventory,
            Duration timeout, Duration connectTimeout, int maxParallel, Path agentSocket, List<Transport> transports,
            int maxChannels, Duration reportGrace, PolicyUpdates policyUpdates, List<String> remoteCommand) {
        public RemoteRun {
            remoteCommand = List.copyOf(remoteCommand);
            run = List.copyOf(run);
            update = List.copyOf(update);
            inventory = List.copyOf(inventory);
            transports = List.copyOf(transports);
            Objects.requireNonNull(timeout);
            Objects.requireNonNull(connectTimeout);
            Objects.requireNonNull(reportGrace);
            Objects.requireNonNull(policyUpdates);
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
     */
    public record PolicyUpdates(boolean enabled, int rate, Duration splay) {
        public PolicyUpdates {
            Objects.requireNonNull(splay);
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
     */
    public record Upstream(URI url, Path certificate, String keyHash, Path clientCertificate, Path clientKey,
            boolean sync, String nodesList, String nodesCertificates) {
        public Upstream {
            Objects.requireNonNull(certificate);
            Objects.requireNonNull(clientCertificate);
            Objects.requireNonNull(clientKey);
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
        public Tls {
            protocols = List.copyOf(protocols);
            Objects.requireNonNull(provider);
        }

        /**
         * @param certificate PEM certificate (chain) the server presents
         * @param key its PEM private key
         * @param protocols enabled TLS protocols
         */
        public Tls(Path certificate, Path key, List<String> protocols) {
            this(certificate, key, protocols, false, TlsProvider.DEFAULT);
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

        /** The provider used when the configuration names none. */
        public static final TlsProvider DEFAULT = AUTO;

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
        /** The default {@code crl_refresh_seconds}: a CA publishes a CRL a day or more often, rarely each hour. */
        public static final Duration DEFAULT_CRL_REFRESH = Duration.ofHours(1);
        /** The shortest {@code crl_refresh_seconds}: more often only loads the CA's server. */
        public static final Duration MIN_CRL_REFRESH = Duration.ofSeconds(60);

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
                    deniedKeysFileRequired, null, Path.of(DEFAULT_CRL_FETCH_FILE), DEFAULT_CRL_REFRESH);
        }

        /**
         * Pinning only, the default deny list, no CRL: Rudder's default mode.
         *
         * @param list {@code nodeslist.json}
         * @param certificates PEM bundles of node certificates
         */
        public Nodes(Path list, List<Path> certificates) {
            this(list, certificates, List.of(NodeTrust.Mode.CERT_PINNING), Path.of(DEFAULT_CA_FILE),
                    CaTrust.DEFAULT_MAX_DEPTH, List.of(IdRule.UID), List.of(), Path.of(DEFAULT_DENIED_KEYS_FILE), false,
                    null, Path.of(DEFAULT_CRL_FETCH_FILE), DEFAULT_CRL_REFRESH, null, false);
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

    /** Rudder's CA bundle of certificate-validation mode ({@code POLICY_SERVER_CERT_CA}). */
    public static final String DEFAULT_CA_FILE = "/var/rudder/lib/ssl/policy_server_ca.pem";
    /** Default {@code [nodes] denied_keys_file}: absent means nothing is denied. */
    public static final String DEFAULT_DENIED_KEYS_FILE = "/etc/pintle/denied-keys";
    /** Default {@code [nodes] crl_fetch_file}: in the unit's {@code StateDirectory}, which only Pintle writes. */
    public static final String DEFAULT_CRL_FETCH_FILE = "/var/lib/pintle/fetched.crl";

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
        public Networks {
            allowed = List.copyOf(allowed);
            if (policyServerFileRequired && policyServerFile == null) {
                throw new IllegalArgumentException("a required policy-server networks file has a path");
            }
        }
    }

    /**
     * @param share Rudder's share directory ({@code /var/rudder/share})
     * @param sharedFolder Rudder's global shared folder, served under relayd's {@code shared-folder/}
     * @param sharedFiles node-to-node shared files ({@code {sharedFiles}/{target}/files/{source}/{fileId}})
     */
    public record Paths(Path share, Path sharedFolder, Path sharedFiles) {
        public Paths {
            Objects.requireNonNull(share);
            Objects.requireNonNull(sharedFolder);
            Objects.requireNonNull(sharedFiles);
        }
    }

    /**
     * @param listen the plain-HTTP loopback listener for health, metrics and {@code system/*}
     * @param rudderVersionFiles where {@code system/info} reads the Rudder version this machine runs, tried in
     *     order (read on each call, so that a Rudder upgrade shows without a restart); empty to answer none
     */
    public record Admin(Listen listen, List<Path> rudderVersionFiles) {
        /**
         * Where Rudder's packages write their version: rudder-server's on a root, then rudder-agent's, which every
         * Rudder machine has (a relay's package requires the agent of its own version).
         */
        public static final List<String> DEFAULT_RUDDER_VERSION_FILES = List.of(
                "/opt/rudder/share/versions/rudder-server-version",
                "/opt/rudder/share/versions/rudder-agent-version");

        public Admin {
            Objects.requireNonNull(listen);
            rudderVersionFiles = List.copyOf(rudderVersionFiles);
        }
    }

    /**
     * @param watch whether changes to input files trigger a reload by themselves (file watch); SIGHUP,
     *     {@code pintle reload} and the reload API work either way
     */
    public record Reload(boolean watch) {}

    /**
     * @param access whether each request gets an access log line (logger {@code io.pintle.access}); takes effect
     *     on reload
     * @param accessFormat the line format
     */
    public record Log(boolean access, AccessFormat accessFormat) {
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
     * @param idleTimeout a connection with no traffic for this long is closed
     * @param headerTimeout a new connection must finish its TLS handshake and send the headers of its first
     *     request within this time, or it is closed (slow-loris protection)
     * @param minResponseBytesPerSecond a client that keeps a response waiting while reading slower than this is
     *     disconnected; 0 turns the check off
     * @param minRequestBytesPerSecond a client that sends a request body slower than this (over each check
     *     period) gets a 408 and its upload is dropped; 0 turns the check off
     * @param queueTimeout how long a request may wait for a worker of its class before it gets a 503
     * @param retryAfter the {@code Retry-After} a 503 carries, on average
     * @param retryAfterJitter how far each {@code Retry-After} is drawn from {@code retryAfter}, either way, so
     *     that refused clients do not come back together
     * @param maxWaiters requests parked by {@code ?wait} at once; past it, 503 with {@code Retry-After}
     * @param maxWaitersPerAddress requests parked by {@code ?wait} at once from one client address (IPv6: one
     *     /64); past it, 503 with {@code Retry-After}
     * @param digestCacheEntries file digests kept for manifests
     * @param fileCacheBytes memory for the download cache ({@link io.pintle.server.policy.FileCache}); 0 = off
     * @param maxManifestEntries the largest tree (entries) a manifest or archive describes
     * @param maxSharedFileBytes the largest shared-files upload (metadata and file); larger: 413
     * @param files file downloads ({@code /policies/...}, {@code /common/...})
     * @param api every other node-facing route (small JSON and text answers)
     * @param uploads request bodies (relayd's shared-files {@code PUT})
     * @param webapp requests proxied to the webapp ({@code [webapp] proxy})
     */
    public record Limits(int maxConnections, Duration idleTimeout, Duration headerTimeout,
            long minResponseBytesPerSecond, long minRequestBytesPerSecond, Duration queueTimeout,
            Duration retryAfter, Duration retryAfterJitter, int maxWaiters, int maxWaitersPerAddress,
            int digestCacheEntries, long fileCacheBytes, int maxManifestEntries, long maxSharedFileBytes,
            Pool files, Pool api, Pool uploads, Pool webapp) {
        public Limits {
            Objects.requireNonNull(idleTimeout);
            Objects.requireNonNull(headerTimeout);
            Objects.requireNonNull(queueTimeout);
            Objects.requireNonNull(retryAfter);
            Objects.requireNonNull(retryAfterJitter);
            Objects.requireNonNull(files);
            Objects.requireNonNull(api);
            Objects.requireNonNull(uploads);
            Objects.requireNonNull(webapp);
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
    public record Pool(int concurrency, int queue, int perAddress) {}
}
