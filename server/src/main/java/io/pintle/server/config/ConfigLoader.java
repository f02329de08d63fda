package io.pintle.server.config;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.cfg.CoercionAction;
import com.fasterxml.jackson.databind.cfg.CoercionInputShape;
import com.fasterxml.jackson.databind.type.LogicalType;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import com.fasterxml.jackson.dataformat.toml.TomlMapper;
import io.pintle.server.acl.Cidr;
import io.pintle.server.nodes.ApacheIdRules;
import io.pintle.server.nodes.CaTrust;
import io.pintle.server.nodes.IdRule;
import io.pintle.server.nodes.KeyHash;
import io.pintle.server.nodes.NodeId;
import io.pintle.server.nodes.NodeTrust;
import io.pintle.server.uploads.LoginThrottle;
import java.io.IOException;
import java.net.InetAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Parses and validates the TOML configuration. Defaults are Rudder's paths (see {@code deploy/pintle.example.toml}).
 */
public final class ConfigLoader {
    /**
     * Default {@code [networks] policy_server_file}: Apache's list of who may ask a root or a relay for a remote run
     * without a client certificate ({@code Require local}, {@code Require ip <policy server>}).
     */
    public static final String DEFAULT_POLICY_SERVER_NETWORKS_FILE =
            "/opt/rudder/etc/rudder-networks-policy-server-24.conf";
    /** Where Rudder keeps the server's node id. */
    public static final String DEFAULT_NODE_ID_FILE = "/opt/rudder/etc/uuid.hive";
    /** The agent certificate: agents pin its key, so it is the default server certificate. */
    public static final String DEFAULT_CERTIFICATE = "/opt/rudder/etc/ssl/agent.cert";
    /** The agent key (PKCS#1 PEM since Rudder 7). */
    public static final String DEFAULT_KEY = "/var/rudder/cfengine-community/ppkeys/localhost.priv";
    /** The CA-signed agent certificate of certificate-validation mode, Apache's server certificate in that mode. */
    public static final String VALIDATION_CERTIFICATE = "/opt/rudder/etc/ssl/agent-http.cert";
    /** Key of {@link #VALIDATION_CERTIFICATE}. */
    public static final String VALIDATION_KEY = "/opt/rudder/etc/ssl/agent-http.key";
    /**
     * The largest {@code [nodes] ca_max_depth}: the TLS layer takes chains of at most ten certificates, and the
     * client's own is one of them.
     */
    public static final int MAX_CA_DEPTH = 9;
    /** A dedicated HTTPS certificate, preferred by Rudder's Apache when present (Rudder #27584). */
    public static final String DEDICATED_CERTIFICATE = "/opt/rudder/etc/ssl/server.cert";
    /** Key of {@link #DEDICATED_CERTIFICATE}. */
    public static final String DEDICATED_KEY = "/opt/rudder/etc/ssl/server.key";

    /**
     * Open connections on the TLS listener. A Rudder agent holds one for a few seconds per run, so this covers
     * tens of thousands of nodes with the usual splay; each idle TLS connection costs tens of kilobytes.
     */
    public static final int DEFAULT_MAX_CONNECTIONS = 10_000;
    /** An agent makes a couple of requests per run, then goes quiet for minutes: no use keeping its connection. */
    public static final int DEFAULT_IDLE_TIMEOUT_SECONDS = 30;
    /**
     * A TLS handshake and a request header take milliseconds on any link, but under a herd beyond the CPU's capacity
     * handshakes queue behind each other: at 10 s, 237 of 2,000 agents arriving in 10 s on 2 cores were closed
     * before their first request (bench/perf); at 60 s none. nginx's client_header_timeout and
     * ssl_handshake_timeout are 60 s too.
     */
    public static final int DEFAULT_HEADER_TIMEOUT_SECONDS = 60;
    /** Far below any real link (a 2 MB archive in half an hour), far above a client that trickles to hold a worker. */
    public static final long DEFAULT_MIN_RESPONSE_BYTES_PER_SECOND = 1024;
    /** Past this, a waiting agent is better told to come back later than kept waiting. */
    public static final int DEFAULT_QUEUE_TIMEOUT_SECONDS = 30;
    /** Puppet's advice for its equivalent (max-retry-delay) is minutes; agents retry on their own next run anyway. */
    public static final int DEFAULT_RETRY_AFTER_SECONDS = 60;
    /** Refused clients come back spread over [30, 90] seconds by default. */
    public static final int DEFAULT_RETRY_AFTER_JITTER_SECONDS = 30;
    /**
     * Default {@code [uploads] max_bytes}: 64 MiB. Real uploads are far smaller (a gzipped inventory is a few
     * hundred KB to a few MB, a gzipped run log less), so this only stops a runaway or hostile body, and the uploads
     * pool's 20 concurrent bodies can hold at most 1.25 GiB of disk at once. Apache's own default
     * ({@code LimitRequestBody}, 1 GiB since 2.4.54) is 16 times larger.
     */
    public static final long DEFAULT_MAX_UPLOAD_BYTES = 64L * 1024 * 1024;
    /**
     * Default {@code [uploads] max_failures_per_address}, per {@link #DEFAULT_FAILURE_WINDOW_SECONDS}: 20 guesses a
     * minute instead of the 146 a second one address got unthrottled, while the nodes behind one NAT address with
     * a wrong password (one failure per node and 5-minute run) trip it only past about a hundred of them.
     */
    public static final int DEFAULT_MAX_FAILURES_PER_ADDRESS = 20;
    /** Default {@code [uploads] failure_window}, in seconds. */
    public static final int DEFAULT_FAILURE_WINDOW_SECONDS = 60;
    /** Default {@code [limits] max_shared_file_bytes}: relayd's {@code [shared_files] max_body_size}. */
    public static final long DEFAULT_MAX_SHARED_FILE_BYTES = 50L * 1024 * 1024;
    /** Default {@code [upstream] certificate}: the policy server's certificate, as Rudder keeps it. */
    public static final String DEFAULT_UPSTREAM_CERTIFICATE = "/var/rudder/lib/ssl/policy_server.pem";
    /** Default {@code [upstream] nodes_list}: where Rudder generates a relay's {@code nodeslist.json}. */
    public static final String DEFAULT_UPSTREAM_NODES_LIST =
            "rules/cfengine-community/rudder-service-relayd/1.0/relay/nodeslist.json";
    /** Default {@code [upstream] nodes_certificates}: where Rudder generates a relay's {@code nodescerts.pem}. */
    public static final String DEFAULT_UPSTREAM_NODES_CERTIFICATES =
            "rules/cfengine-community/rudder-service-apache/1.0/apache/nodescerts.pem";
    /** Default {@code [limits] max_waiters}: requests parked by {@code ?wait} at once. */
    public static final int DEFAULT_MAX_WAITERS = 10_000;
    /** Default {@code [limits] digest_cache_entries}: file digests kept (about 200 bytes each). */
    public static final int DEFAULT_DIGEST_CACHE_ENTRIES = 500_000;
    /**
     * Default {@code [limits] file_cache_bytes}: what downloads of small files found (their version and bytes),
     * checked by one stat per request.
     */
    public static final long DEFAULT_FILE_CACHE_BYTES = 32L * 1024 * 1024;
    /** Default {@code [limits] max_manifest_entries}: the largest tree a manifest or archive describes. */
    public static final int DEFAULT_MAX_MANIFEST_ENTRIES = 200_000;
    /**
     * Concurrent file downloads. With the 200 platform threads of Java 17 (no virtual threads), this plus {@link
     * #DEFAULT_API_POOL} leaves threads for the admin listener and Jetty's own selectors.
     */
    public static final ServerConfig.Pool DEFAULT_FILES_POOL = new ServerConfig.Pool(100, 1000, 25);
    /** Concurrent small answers ({@code /uuid}, {@code /v1/whoami}, unknown routes). */
    public static final ServerConfig.Pool DEFAULT_API_POOL = new ServerConfig.Pool(50, 500, 12);
    /** Concurrent uploads (relayd's shared-files {@code PUT}). */
    public static final ServerConfig.Pool DEFAULT_UPLOADS_POOL = new ServerConfig.Pool(20, 200, 5);
    /**
     * Requests proxied to the webapp at once ({@code [webapp] proxy}). A browser loads a page's scripts and styles
     * in parallel (dozens of streams over HTTP/2), so one address may take half of them: the class is apart from
     * downloads, and a greedy or slow client only slows the web interface, never all of it.
     */
    public static final ServerConfig.Pool DEFAULT_WEBAPP_POOL = new ServerConfig.Pool(64, 512, 32);
    /** Rudder's webapp: its Jetty listens on 127.0.0.1:8080 (rudder-jetty-base), behind Apache's ProxyPass. */
    public static final String RUDDER_WEBAPP_URL = "http://127.0.0.1:8080";
    /** Default {@code [webapp] connect_timeout} (seconds): the webapp is on this machine; a connect is instant. */
    public static final int DEFAULT_WEBAPP_CONNECT_TIMEOUT_SECONDS = 10;
    /**
     * Default {@code [webapp] timeout} (seconds): Rudder's vhost sets {@code ProxyTimeout 300}, which its comment says
     * applies to the webapp proxy too.
     */
    public static final int DEFAULT_WEBAPP_TIMEOUT_SECONDS = 300;
    /**
     * Default {@code [limits] min_request_bytes_per_second}: an upload slower than this over a check period (10 s)
     * is dropped with a 408.
     */
    public static final long DEFAULT_MIN_REQUEST_BYTES_PER_SECOND = 1024;
    /** Default {@code [limits] max_waiters_per_address}: parked {@code ?wait} requests from one client address. */
    public static final int DEFAULT_MAX_WAITERS_PER_ADDRESS = 100;

    /** Rudder's agent command line (rudder-agent); cf-serverd's {@code cfruncommand} is its {@code agent run -uR}. */
    public static final String RUDDER_COMMAND = "/opt/rudder/bin/rudder";
    /** Default {@code [remote_run] run}: what cf-serverd ran for a remote run (policy update, then run, raw output). */
    public static final List<String> DEFAULT_REMOTE_RUN_RUN = List.of(RUDDER_COMMAND, "agent", "run", "-uR");
    /** Default {@code [remote_run] update}: the policy update alone. */
    public static final List<String> DEFAULT_REMOTE_RUN_UPDATE = List.of(RUDDER_COMMAND, "agent", "update");
    /** Default {@code [remote_run] inventory}: make and send an inventory now. */
    public static final List<String> DEFAULT_REMOTE_RUN_INVENTORY = List.of(RUDDER_COMMAND, "agent", "inventory");
    /** Default {@code [remote_run] port}: the HTTPS port every Rudder server and node listens on. */
    public static final int DEFAULT_REMOTE_RUN_PORT = 443;
    /** Default {@code [remote_run] timeout} (seconds): cf-runagent's {@code -t 300} and Apache's ProxyTimeout 300. */
    public static final int DEFAULT_REMOTE_RUN_TIMEOUT_SECONDS = 300;
    /** Default {@code [remote_run] connect_timeout} (seconds): a node that does not accept in 10 s is unreachable. */
    public static final int DEFAULT_REMOTE_RUN_CONNECT_TIMEOUT_SECONDS = 10;
    /**
     * Default {@code [remote_run] report_grace} (seconds): after the agent's timeout, how long a node that runs an
     * order from its order channel has to send the rest of its output and its exit status (the node stops its agent
     * at the timeout; what is left is a short upload).
     */
    public static final int DEFAULT_REMOTE_RUN_REPORT_GRACE_SECONDS = 30;
    /**
     * Default {@code [remote_run] max_parallel}: Rudder's trigger hook starts at most 100 nodes at once; a third of
     * it keeps a relay's threads and a fleet's sudden load bounded.
     */
    public static final int DEFAULT_REMOTE_RUN_MAX_PARALLEL = 32;
    /** relayd's command for nodes reached through their cf-serverd ({@code [remote_run] command}). */
    public static final List<String> DEFAULT_REMOTE_RUN_REMOTE_COMMAND =
            List.of("/opt/rudder/bin/rudder", "remote", "run");
    /**
     * Nodes reached by their order channel when they hold one, else as relayd reaches them (cf-runagent to their
     * cf-serverd): a Rudder node runs no Pintle.
     */
    public static final List<ServerConfig.Transport> DEFAULT_REMOTE_RUN_TRANSPORTS =
            List.of(ServerConfig.Transport.PULL, ServerConfig.Transport.RUDDER_REMOTE_RUN);
    /** 100 update orders a second: 20,000 nodes in under 4 minutes, within the agents' own 5-minute cycle. */
    public static final int DEFAULT_POLICY_UPDATE_RATE = 100;
    /** Nodes changed together are spread over 10 s even when there are few of them. */
    public static final int DEFAULT_POLICY_UPDATE_SPLAY_SECONDS = 10;

    private static final Set<String> PROTOCOLS = Set.of("TLSv1.3", "TLSv1.2");

    private static final TomlMapper TOML = TomlMapper.builder()
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
            // node_id = 12345 is a mistake to report, not a string to invent.
            .disable(MapperFeature.ALLOW_COERCION_OF_SCALARS)
            // max_manifest_entries = 1.5 is a mistake to report, not 1.
            .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
            // node_id = 12345 again: ALLOW_COERCION_OF_SCALARS leaves numbers read as strings.
            .withCoercionConfig(LogicalType.Textual, strings -> strings
                    .setCoercion(CoercionInputShape.Integer, CoercionAction.Fail)
                    .setCoercion(CoercionInputShape.Float, CoercionAction.Fail)
                    .setCoercion(CoercionInputShape.Boolean, CoercionAction.Fail))
            .build();

    private ConfigLoader() {}

    /**
     * Reads, parses and validates a configuration file.
     *
     * @param file the TOML file
     * @return the configuration
     * @throws ConfigException naming the file and key
     */
    public static ServerConfig load(Path file) throws ConfigException {
        Path absolute = file.toAbsolutePath().normalize();
        String text;
        try {
            text = Files.readString(absolute, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            throw new ConfigException(absolute + ": no such file");
        } catch (IOException e) {
            throw new ConfigException(absolute + ": cannot read: " + e.getMessage(), e);
        }
        return parse(text, absolute);
    }

    /**
     * Parses and validates configuration text.
     *
     * @param text TOML
     * @param source the file the text came from; relative paths are resolved against its directory
     * @return the configuration
     * @throws ConfigException naming the file and key
     */
    public static ServerConfig parse(String text, Path source) throws ConfigException {
        RawConfig raw = null;
        if (!text.isBlank()) {
            // Read as a tree first, so that a value of the wrong type can be quoted as the operator wrote it.
            JsonNode tree;
            try {
                tree = TOML.readTree(text);
            } catch (JacksonException e) {
                throw new ConfigException(source + ": invalid TOML" + TomlMessages.at(e) + ": "
                        + TomlMessages.syntax(e.getOriginalMessage()));
            }
            try {
                raw = TOML.treeToValue(tree, RawConfig.class);
            } catch (UnrecognizedPropertyException e) {
                throw new ConfigException(source + ": unknown key '" + keyPath(e) + "'");
            } catch (JsonMappingException e) {
                throw new ConfigException(source + ": '" + keyPath(e) + "': expected "
                        + TomlMessages.expected(RawConfig.class, e.getPath()) + ", not "
                        + TomlMessages.found(tree, e.getPath()));
            } catch (JacksonException e) {
                throw new ConfigException(source + ": invalid TOML: " + TomlMessages.syntax(e.getOriginalMessage()));
            }
        }
        if (raw == null) {
            raw = new RawConfig(null, null, null, null, null, null, null, null, null, null, null, null, null);
        }
        return new Validator(source).validate(raw);
    }

    private static String keyPath(JsonMappingException e) {
        return e.getPath().stream()
                .map(ref -> ref.getFieldName() != null ? ref.getFieldName() : "[" + ref.getIndex() + "]")
                .collect(Collectors.joining("."))
                .replace(".[", "[");
    }

    private static final class Validator {
        private final Path source;
        private final Path base;

        Validator(Path source) {
            this.source = source;
            this.base = source.getParent() != null ? source.getParent() : Path.of("").toAbsolutePath();
        }

        ServerConfig validate(RawConfig raw) throws ConfigException {
            RawGeneral general = raw.general() != null ? raw.general() : new RawGeneral(null, null, null, null, null);
            RawTls tls = raw.tls() != null ? raw.tls() : new RawTls(null, null, null, null, null);
            RawNodes nodes = raw.nodes() != null ? raw.nodes() : new RawNodes(null, null, null, null, null, null, null, null, null, null, null, null);
            RawNetworks networks = raw.networks() != null ? raw.networks() : new RawNetworks(null, null, null);
            RawPaths paths = raw.paths() != null ? raw.paths() : new RawPaths(null, null, null);
            RawAdmin admin = raw.admin() != null ? raw.admin() : new RawAdmin(null, null);
            RawReload reload = raw.reload() != null ? raw.reload() : new RawReload(null);
            RawLog log = raw.log() != null ? raw.log() : new RawLog(null, null);
            RawLimits limits = raw.limits() != null
                    ? raw.limits()
                    : new RawLimits(null, null, null, null, null, null, null, null, null, null, null, null, null,
                            null, null, null, null, null);

            ServerConfig.General validGeneral = new ServerConfig.General(
                    nodeId(general),
                    role(general.role()),
                    listen("general.listen", general.listen() != null ? general.listen() : "0.0.0.0:443"),
                    proxyProtocolFrom(general.proxyProtocolFrom()));

            List<NodeTrust.Mode> authentication = authentication(nodes.authentication());
            // Only in certificate validation alone: with pinning on too, pinned agents still check the agent key.
            boolean validation = authentication.equals(List.of(NodeTrust.Mode.CERT_VALIDATION));
            Path certificate;
            Path key;
            if (tls.certificate() == null && tls.key() == null && Files.exists(Path.of(DEDICATED_CERTIFICATE))
                    && Files.exists(Path.of(DEDICATED_KEY))) {
                certificate = Path.of(DEDICATED_CERTIFICATE);
                key = Path.of(DEDICATED_KEY);
            } else if ((tls.certificate() == null) != (tls.key() == null)) {
                throw new ConfigException(source + ": 'tls.certificate' and 'tls.key' must be set together");
            } else {
                // Apache's choice in Rudder's vhost: the CA-signed agent-http pair in certificate-validation mode
                // (its agents verify the server against the CA), the agent's own pair otherwise (they pin it). Both
                // modes at once: the agent's pair, which pinned agents check; CA agents need server.cert then.
                certificate = path("tls.certificate", tls.certificate(),
                        validation ? VALIDATION_CERTIFICATE : DEFAULT_CERTIFICATE);
                key = path("tls.key", tls.key(), validation ? VALIDATION_KEY : DEFAULT_KEY);
            }
            List<String> protocols = tls.protocols() != null ? tls.protocols() : List.of("TLSv1.3");
            if (protocols.isEmpty()) {
                throw new ConfigException(source + ": 'tls.protocols' must name at least one protocol");
            }
            for (String protocol : protocols) {
                if (!PROTOCOLS.contains(protocol)) {
                    throw new ConfigException(source + ": 'tls.protocols': unsupported protocol '" + protocol
                            + "' (supported: TLSv1.3, TLSv1.2)");
                }
            }

            ServerConfig.TlsProvider provider = ServerConfig.TlsProvider.DEFAULT;
            if (tls.provider() != null) {
                provider = Arrays.stream(ServerConfig.TlsProvider.values())
                        .filter(candidate -> candidate.text().equals(tls.provider()))
                        .findFirst()
                        .orElseThrow(() -> new ConfigException(source + ": 'tls.provider': unknown provider '"
                                + tls.provider() + "' (known: auto, jdk, conscrypt)"));
            }

            List<String> certificateFiles = nodes.certificates() != null
                    ? nodes.certificates()
                    : List.of("/var/rudder/lib/ssl/nodescerts.pem");
            List<Path> certificatePaths = new ArrayList<>();
            for (int i = 0; i < certificateFiles.size(); i++) {
                certificatePaths.add(path("nodes.certificates[" + i + "]", certificateFiles.get(i), null));
            }

            String allowedFile = networks.allowedFile() != null
                    ? networks.allowedFile()
                    : "/opt/rudder/etc/rudder-networks-24.conf";

            ServerConfig.Listen adminListen =
                    listen("admin.listen", admin.listen() != null ? admin.listen() : "127.0.0.1:5310");
            if (!isLoopback(adminListen.host())) {
                throw new ConfigException(source + ": 'admin.listen' must be a loopback address (it is plain HTTP "
                        + "without authentication), not '" + adminListen.host() + "'");
            }

            ServerConfig.Limits validLimits = limits(limits);
            return new ServerConfig(
                    source,
                    validGeneral,
                    new ServerConfig.Tls(certificate, key, protocols,
                            tls.allowWorldReadableKey() != null && tls.allowWorldReadableKey(), provider),
                    nodes(nodes, certificatePaths, authentication),
                    networks(networks, allowedFile, validGeneral.role()),
                    new ServerConfig.Paths(path("paths.share", paths.share(), "/var/rudder/share"),
                            path("paths.shared_folder", paths.sharedFolder(),
                                    "/var/rudder/configuration-repository/shared-files"),
                            path("paths.shared_files", paths.sharedFiles(), "/var/rudder/shared-files")),
                    new ServerConfig.Admin(adminListen, rudderVersionFiles(admin.rudderVersionFiles())),
                    new ServerConfig.Reload(reload.watch() == null || reload.watch()),
                    new ServerConfig.Log(log.access() == null || log.access(), accessFormat(log.accessFormat())),
                    validLimits,
                    upstream(raw.upstream() != null ? raw.upstream() : new RawUpstream(null, null, null, null, null, null, null, null),
                            certificate, key),
                    remoteRun(raw.remoteRun() != null ? raw.remoteRun()
                            : new RawRemoteRun(null, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null),
                            validLimits.maxConnections()),
                    uploads(raw.uploads() != null ? raw.uploads()
                            : new RawUploads(null, null, null, null, null, null, null, null, null), validGeneral.role()),
                    webapp(raw.webapp() != null ? raw.webapp() : new RawWebapp(null, null, null)));
        }

        /** {@code admin.rudder_version_files}: paths, each resolved as any other; an empty list answers none. */
        private List<Path> rudderVersionFiles(List<String> value) throws ConfigException {
            List<String> files = value != null ? value : ServerConfig.Admin.DEFAULT_RUDDER_VERSION_FILES;
            List<Path> paths = new ArrayList<>();
            for (int i = 0; i < files.size(); i++) {
                paths.add(path("admin.rudder_version_files[" + i + "]", files.get(i), null));
            }
            return paths;
        }

        private ServerConfig.Networks networks(RawNetworks raw, String allowedFile, ServerConfig.Role role)
                throws ConfigException {
            Path allowed = allowedFile.isEmpty() ? null : path("networks.allowed_file", allowedFile, null);
            List<String> extra = raw.allowed() != null ? raw.allowed() : List.of();
            String policyServerFile = raw.policyServerFile();
            if (role == ServerConfig.Role.NODE) {
                // A node has no Apache: its remote run is its policy server's key only (AclEvaluator.remoteRun).
                if (policyServerFile != null && !policyServerFile.isEmpty()) {
                    throw new ConfigException(source + ": 'networks.policy_server_file' applies to a root or a relay "
                            + "(who may ask it for a remote run without a certificate); a node only accepts its "
                            + "policy server's key. Remove it, or set it to \"\"");
                }
                return new ServerConfig.Networks(allowed, extra, null, false);
            }
            if (policyServerFile == null) {
                return new ServerConfig.Networks(allowed, extra, Path.of(DEFAULT_POLICY_SERVER_NETWORKS_FILE), false);
            }
            if (policyServerFile.isEmpty()) {
                return new ServerConfig.Networks(allowed, extra, null, false);
            }
            return new ServerConfig.Networks(allowed, extra,
                    path("networks.policy_server_file", policyServerFile, null), true);
        }

        private List<NodeTrust.Mode> authentication(List<String> raw) throws ConfigException {
            if (raw == null) {
                return List.of(NodeTrust.Mode.CERT_PINNING);
            }
            if (raw.isEmpty()) {
                throw new ConfigException(source + ": 'nodes.authentication' must name at least one mode "
                        + "(cert_pinning, cert_validation)");
            }
            Set<NodeTrust.Mode> modes = new java.util.TreeSet<>();
            for (String text : raw) {
                NodeTrust.Mode mode = Arrays.stream(NodeTrust.Mode.values())
                        .filter(candidate -> candidate.text().equals(text))
                        .findFirst()
                        .orElseThrow(() -> new ConfigException(source + ": 'nodes.authentication': unknown mode '"
                                + text + "' (known: cert_pinning, cert_validation, Rudder's names)"));
                modes.add(mode);
            }
            return List.copyOf(modes);
        }

        private ServerConfig.Nodes nodes(RawNodes raw, List<Path> certificates, List<NodeTrust.Mode> authentication)
                throws ConfigException {
            int depth = raw.caMaxDepth() != null ? raw.caMaxDepth() : CaTrust.DEFAULT_MAX_DEPTH;
            if (depth < 1 || depth > MAX_CA_DEPTH) {
                throw new ConfigException(source + ": 'nodes.ca_max_depth' must be between 1 (node certificates "
                        + "signed by a root of the bundle) and " + MAX_CA_DEPTH + ", not " + depth);
            }
            List<IdRule> rules = new ArrayList<>();
            List<String> rawRules = raw.idRules() != null ? raw.idRules() : List.of("uid");
            if (rawRules.isEmpty()) {
                throw new ConfigException(source + ": 'nodes.id_rules' must hold at least one rule (uid, "
                        + "san-dns:<template>, san-uri:<template>)");
            }
            for (int i = 0; i < rawRules.size(); i++) {
                try {
                    rules.add(IdRule.parse(rawRules.get(i)));
                } catch (IllegalArgumentException e) {
                    throw new ConfigException(source + ": 'nodes.id_rules[" + i + "]': " + e.getMessage());
                }
            }
            List<Path> crls = new ArrayList<>();
            List<String> rawCrls = raw.crlFiles() != null ? raw.crlFiles() : List.of();
            for (int i = 0; i < rawCrls.size(); i++) {
                crls.add(path("nodes.crl_files[" + i + "]", rawCrls.get(i), null));
            }
            Path denied;
            boolean deniedRequired;
            if (raw.deniedKeysFile() == null) {
                denied = Path.of(ServerConfig.DEFAULT_DENIED_KEYS_FILE);
                deniedRequired = false;
            } else if (raw.deniedKeysFile().isEmpty()) {
                denied = null;
                deniedRequired = false;
            } else {
                denied = path("nodes.denied_keys_file", raw.deniedKeysFile(), null);
                deniedRequired = true;
            }
            URI crlUrl = crlUrl(raw.crlUrl(), authentication);
            Path fetchFile = path("nodes.crl_fetch_file", raw.crlFetchFile(), ServerConfig.DEFAULT_CRL_FETCH_FILE);
            if (crlUrl != null && crls.contains(fetchFile)) {
                throw new ConfigException(source + ": 'nodes.crl_fetch_file' (" + fetchFile + ") is also in "
                        + "'nodes.crl_files': the fetch replaces that file; name another one, or remove it from "
                        + "crl_files");
            }
            Duration refresh = seconds("nodes.crl_refresh_seconds", raw.crlRefreshSeconds(),
                    (int) ServerConfig.Nodes.DEFAULT_CRL_REFRESH.toSeconds(),
                    (int) ServerConfig.Nodes.MIN_CRL_REFRESH.toSeconds());
            // Rudder's Apache include for ids in SANs: read in place, unless the rules are written here.
            Path nodesAuth = null;
            boolean nodesAuthRequired = false;
            if (raw.nodesAuthFile() != null && !raw.nodesAuthFile().isEmpty()) {
                if (raw.idRules() != null) {
                    throw new ConfigException(source + ": 'nodes.nodes_auth_file' and 'nodes.id_rules' both say where "
                            + "the node id is: keep one");
                }
                nodesAuth = path("nodes.nodes_auth_file", raw.nodesAuthFile(), null);
                nodesAuthRequired = true;
            } else if (raw.nodesAuthFile() == null && raw.idRules() == null
                    && authentication.contains(NodeTrust.Mode.CERT_VALIDATION)) {
                nodesAuth = Path.of(ApacheIdRules.RUDDER_FILE);
            }
            if (!crls.isEmpty() && !authentication.contains(NodeTrust.Mode.CERT_VALIDATION)) {
                throw new ConfigException(source + ": 'nodes.crl_files' revoke CA-signed certificates and apply to "
                        + "certificate validation only: add \"cert_validation\" to 'nodes.authentication', or, to "
                        + "refuse a pinned agent key, list its sha256//... pin in 'nodes.denied_keys_file'");
            }
            return new ServerConfig.Nodes(path("nodes.list", raw.list(), "/var/rudder/lib/relay/nodeslist.json"),
                    certificates, authentication, path("nodes.ca_file", raw.caFile(), ServerConfig.DEFAULT_CA_FILE),
                    depth, rules, crls, denied, deniedRequired, crlUrl, fetchFile, refresh, nodesAuth,
                    nodesAuthRequired);
        }

        /**
         * {@code [nodes] crl_url}: an http or https URL, without user or fragment (it is shown in the status and
         * the logs), and only with certificate validation, whose CA bundle verifies what is fetched.
         */
        private URI crlUrl(String raw, List<NodeTrust.Mode> authentication) throws ConfigException {
            if (raw == null || raw.isEmpty()) {
                return null;
            }
            String hint = "'nodes.crl_url' must be the http:// or https:// URL of the CA's CRL (PEM or DER), not '"
                    + raw + "'";
            URI url;
            try {
                url = new URI(raw);
            } catch (URISyntaxException e) {
                throw new ConfigException(source + ": " + hint + ": " + e.getReason());
            }
            String scheme = url.getScheme() == null ? "" : url.getScheme().toLowerCase(Locale.ROOT);
            if (!scheme.equals("http") && !scheme.equals("https") || url.getHost() == null) {
                throw new ConfigException(source + ": " + hint);
            }
            if (url.getRawUserInfo() != null || url.getRawFragment() != null) {
                throw new ConfigException(source + ": " + hint + " (no user:password@ or #fragment: the URL is shown "
                        + "in /v1/status and the logs)");
            }
            if (!authentication.contains(NodeTrust.Mode.CERT_VALIDATION)) {
                throw new ConfigException(source + ": 'nodes.crl_url' applies to certificate validation: add "
                        + "\"cert_validation\" to 'nodes.authentication' (a fetched CRL is verified against "
                        + "'nodes.ca_file', and only revokes CA-signed certificates), or remove crl_url");
            }
            return url;
        }

        private ServerConfig.Uploads uploads(RawUploads raw, ServerConfig.Role role) throws ConfigException {
            boolean enabled = raw.enabled() != null ? raw.enabled() : role != ServerConfig.Role.NODE;
            long maxBytes = raw.maxBytes() != null ? positive("uploads.max_bytes", raw.maxBytes())
                    : DEFAULT_MAX_UPLOAD_BYTES;
            return new ServerConfig.Uploads(enabled,
                    path("uploads.inventories", raw.inventories(), "/var/rudder/inventories/incoming"),
                    path("uploads.inventory_updates", raw.inventoryUpdates(),
                            "/var/rudder/inventories/accepted-nodes-updates"),
                    path("uploads.reports", raw.reports(), "/var/rudder/reports/incoming"),
                    path("uploads.htpasswd_initial", raw.htpasswdInitial(), "/opt/rudder/etc/htpasswd-webdav-initial"),
                    path("uploads.htpasswd", raw.htpasswd(), "/opt/rudder/etc/htpasswd-webdav"),
                    maxBytes,
                    new LoginThrottle.Limits(atLeast("uploads.max_failures_per_address", raw.maxFailuresPerAddress(),
                            DEFAULT_MAX_FAILURES_PER_ADDRESS, 0), seconds("uploads.failure_window", raw.failureWindow(),
                                    DEFAULT_FAILURE_WINDOW_SECONDS, 1)));
        }

        private ServerConfig.Webapp webapp(RawWebapp raw) throws ConfigException {
            URI proxy = null;
            if (raw.proxy() != null && !raw.proxy().isEmpty()) {
                String hint = "'webapp.proxy' must be the webapp's base URL, http://HOST[:PORT] (Rudder's is "
                        + RUDDER_WEBAPP_URL + "), not '" + raw.proxy() + "'";
                try {
                    proxy = new URI(raw.proxy());
                } catch (URISyntaxException e) {
                    throw new ConfigException(source + ": " + hint + ": " + e.getReason());
                }
                if (!"http".equalsIgnoreCase(proxy.getScheme()) || proxy.getHost() == null) {
                    throw new ConfigException(source + ": " + hint + " (plain HTTP: the webapp listens on this "
                            + "machine's loopback, and Pintle terminates TLS)");
                }
                if (proxy.getRawUserInfo() != null || proxy.getRawQuery() != null || proxy.getRawFragment() != null
                        || !(proxy.getRawPath() == null || proxy.getRawPath().isEmpty()
                                || proxy.getRawPath().equals("/"))) {
                    throw new ConfigException(source + ": " + hint + " (no path, query or user: /rudder/... is "
                            + "passed on as it came)");
                }
                proxy = URI.create("http://" + proxy.getRawAuthority());
            }
            return new ServerConfig.Webapp(proxy,
                    seconds("webapp.connect_timeout", raw.connectTimeoutSeconds(),
                            DEFAULT_WEBAPP_CONNECT_TIMEOUT_SECONDS, 1),
                    seconds("webapp.timeout", raw.timeoutSeconds(), DEFAULT_WEBAPP_TIMEOUT_SECONDS, 1));
        }

        private ServerConfig.RemoteRun remoteRun(RawRemoteRun raw, int maxConnections) throws ConfigException {
            int port = raw.port() != null ? raw.port() : DEFAULT_REMOTE_RUN_PORT;
            if (port < 1 || port > 65535) {
                throw new ConfigException(source + ": 'remote_run.port': " + port + " is not a TCP port (1-65535)");
            }
            int maxParallel = raw.maxParallel() != null ? raw.maxParallel() : DEFAULT_REMOTE_RUN_MAX_PARALLEL;
            if (maxParallel < 1 || maxParallel > 1024) {
                throw new ConfigException(source + ": 'remote_run.max_parallel' must be between 1 and 1024, not "
                        + maxParallel);
            }
            Duration timeout = seconds("remote_run.timeout", raw.timeoutSeconds(),
                    DEFAULT_REMOTE_RUN_TIMEOUT_SECONDS, 1);
            if (timeout.compareTo(Duration.ofHours(6)) > 0) {
                throw new ConfigException(source + ": 'remote_run.timeout' must be at most 21600 (6 hours)");
            }
            Duration connect = seconds("remote_run.connect_timeout", raw.connectTimeoutSeconds(),
                    DEFAULT_REMOTE_RUN_CONNECT_TIMEOUT_SECONDS, 1);
            Duration reportGrace = seconds("remote_run.report_grace", raw.reportGraceSeconds(),
                    DEFAULT_REMOTE_RUN_REPORT_GRACE_SECONDS, 1);
            if (reportGrace.compareTo(Duration.ofHours(1)) > 0) {
                throw new ConfigException(source + ": 'remote_run.report_grace' must be at most 3600 seconds");
            }
            return new ServerConfig.RemoteRun(raw.enabled() == null || raw.enabled(), port,
                    argv("remote_run.run", raw.run(), DEFAULT_REMOTE_RUN_RUN),
                    argv("remote_run.update", raw.update(), DEFAULT_REMOTE_RUN_UPDATE),
                    argv("remote_run.inventory", raw.inventory(), DEFAULT_REMOTE_RUN_INVENTORY),
                    timeout, connect, maxParallel, agentSocket(raw.agentSocket()), transports(raw.transports()),
                    maxChannels(raw.maxChannels(), maxConnections), reportGrace, policyUpdates(raw),
                    argv("remote_run.remote_command", raw.remoteCommand(), DEFAULT_REMOTE_RUN_REMOTE_COMMAND));
        }

        private ServerConfig.PolicyUpdates policyUpdates(RawRemoteRun raw) throws ConfigException {
            int rate = raw.policyUpdateRate() != null ? raw.policyUpdateRate() : DEFAULT_POLICY_UPDATE_RATE;
            if (rate < 1 || rate > 100_000) {
                throw new ConfigException(source + ": 'remote_run.policy_update_rate' must be between 1 and 100000 "
                        + "orders a second, not " + rate);
            }
            Duration splay = seconds("remote_run.policy_update_splay", raw.policyUpdateSplaySeconds(),
                    DEFAULT_POLICY_UPDATE_SPLAY_SECONDS, 0);
            if (splay.compareTo(Duration.ofHours(1)) > 0) {
                throw new ConfigException(source + ": 'remote_run.policy_update_splay' must be at most 3600 seconds");
            }
            return new ServerConfig.PolicyUpdates(raw.policyUpdates() == null || raw.policyUpdates(), rate, splay);
        }

        /** {@code remote_run.transports}: a non-empty list of known transports, each once. */
        private List<ServerConfig.Transport> transports(List<String> value) throws ConfigException {
            if (value == null) {
                return DEFAULT_REMOTE_RUN_TRANSPORTS;
            }
            List<ServerConfig.Transport> transports = new ArrayList<>();
            for (String name : value) {
                ServerConfig.Transport transport = null;
                for (ServerConfig.Transport known : ServerConfig.Transport.values()) {
                    if (known.key().equals(name)) {
                        transport = known;
                    }
                }
                if (transport == null || transports.contains(transport)) {
                    throw new ConfigException(source + ": 'remote_run.transports': " + (transport == null
                            ? "unknown transport '" + name + "'" : "'" + name + "' twice") + "; each of "
                            + Arrays.stream(ServerConfig.Transport.values()).map(t -> '"' + t.key() + '"')
                                    .toList() + " at most once, in the order to try them");
                }
                transports.add(transport);
            }
            if (transports.isEmpty()) {
                throw new ConfigException(source + ": 'remote_run.transports' must name at least one transport");
            }
            return List.copyOf(transports);
        }

        /**
         * {@code remote_run.max_channels}: polls hold connections, so at most {@code [limits] max_connections} less
         * room for the nodes' downloads and uploads; by default three quarters of it.
         */
        private int maxChannels(Integer value, int maxConnections) throws ConfigException {
            int channels = value != null ? value : maxConnections / 4 * 3;
            int most = maxConnections - Math.max(1, maxConnections / 10);
            if (channels < 0 || channels > most) {
                throw new ConfigException(source + ": 'remote_run.max_channels' must be between 0 and " + most
                        + " ([limits] max_connections = " + maxConnections + " less a tenth, left to downloads and "
                        + "uploads), not " + channels + "; raise [limits] max_connections for more");
            }
            return channels;
        }

        /** {@code remote_run.agent_socket}: empty or absent for none. */
        private Path agentSocket(String value) throws ConfigException {
            if (value == null || value.isEmpty()) {
                return null;
            }
            Path socket = path("remote_run.agent_socket", value, null);
            if (socket.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8).length > 107) {
                throw new ConfigException(source + ": 'remote_run.agent_socket': " + socket + " is longer than a Unix "
                        + "socket path may be (107 bytes)");
            }
            return socket;
        }

        /** An argv list: an absolute program, then fixed arguments; never a shell line. */
        private List<String> argv(String key, List<String> value, List<String> fallback) throws ConfigException {
            List<String> argv = value != null ? value : fallback;
            if (argv.isEmpty()) {
                throw new ConfigException(source + ": '" + key + "' must name a program (an argv list such as "
                        + "[\"/opt/rudder/bin/rudder\", \"agent\", \"run\", \"-uR\"])");
            }
            for (String argument : argv) {
                if (argument == null || argument.indexOf('\0') >= 0) {
                    throw new ConfigException(source + ": '" + key + "' contains a null or NUL argument");
                }
            }
            String program = argv.get(0);
            if (!Path.of(program).isAbsolute() && !program.matches("^[A-Za-z]:\\\\.*")) {
                throw new ConfigException(source + ": '" + key + "': the program must be an absolute path (no search "
                        + "in PATH), not '" + program + "'");
            }
            return List.copyOf(argv);
        }

        private ServerConfig.Upstream upstream(RawUpstream raw, Path tlsCertificate, Path tlsKey)
                throws ConfigException {
            URI url = null;
            if (raw.url() != null) {
                try {
                    url = new URI(raw.url());
                } catch (URISyntaxException e) {
                    throw new ConfigException(source + ": 'upstream.url' is not a URL: " + e.getMessage());
                }
                if (!"https".equals(url.getScheme()) || url.getHost() == null
                        || (url.getPath() != null && !url.getPath().isEmpty() && !url.getPath().equals("/"))
                        || url.getQuery() != null) {
                    throw new ConfigException(source + ": 'upstream.url' must be https://host[:port] (the policy "
                            + "server's base URL), not '" + raw.url() + "'");
                }
            }
            if (raw.keyHash() != null && KeyHash.parse(raw.keyHash()).isEmpty()) {
                throw new ConfigException(source + ": 'upstream.key_hash' must be sha256//<base64> (as curl's "
                        + "--pinnedpubkey), not '" + raw.keyHash() + "'");
            }
            if ((raw.clientCertificate() == null) != (raw.clientKey() == null)) {
                throw new ConfigException(source + ": 'upstream.client_certificate' and 'upstream.client_key' must "
                        + "be set together");
            }
            return new ServerConfig.Upstream(url,
                    path("upstream.certificate", raw.certificate(), DEFAULT_UPSTREAM_CERTIFICATE), raw.keyHash(),
                    raw.clientCertificate() != null ? path("upstream.client_certificate", raw.clientCertificate(), null)
                            : tlsCertificate,
                    raw.clientKey() != null ? path("upstream.client_key", raw.clientKey(), null) : tlsKey,
                    raw.sync() == null || raw.sync(),
                    relative("upstream.nodes_list", raw.nodesList(), DEFAULT_UPSTREAM_NODES_LIST),
                    relative("upstream.nodes_certificates", raw.nodesCertificates(),
                            DEFAULT_UPSTREAM_NODES_CERTIFICATES));
        }

        /** A path below the relay's own {@code /policies/<id>/}: relative, no {@code .} or {@code ..}. */
        private String relative(String key, String value, String fallback) throws ConfigException {
            String text = value != null ? value : fallback;
            if (text.isEmpty()) {
                return text;
            }
            for (String segment : text.split("/", -1)) {
                if (segment.isEmpty() || segment.equals(".") || segment.equals("..")) {
                    throw new ConfigException(source + ": '" + key + "' must be a relative path below the relay's "
                            + "/policies/<id>/ (no empty, '.' or '..' segment), not '" + text + "'");
                }
            }
            return text;
        }

        private ServerConfig.Limits limits(RawLimits raw) throws ConfigException {
            Duration retryAfter = seconds("limits.retry_after_seconds", raw.retryAfterSeconds(),
                    DEFAULT_RETRY_AFTER_SECONDS, 1);
            Duration jitter = seconds("limits.retry_after_jitter_seconds", raw.retryAfterJitterSeconds(),
                    DEFAULT_RETRY_AFTER_JITTER_SECONDS, 0);
            if (jitter.compareTo(retryAfter) >= 0) {
                throw new ConfigException(source + ": 'limits.retry_after_jitter_seconds' must be less than "
                        + "'limits.retry_after_seconds' (a Retry-After is at least 1 second)");
            }
            long minRate = raw.minResponseBytesPerSecond() != null
                    ? raw.minResponseBytesPerSecond()
                    : DEFAULT_MIN_RESPONSE_BYTES_PER_SECOND;
            if (minRate < 0) {
                throw new ConfigException(source + ": 'limits.min_response_bytes_per_second' must be 0 (off) or more");
            }
            long minRequestRate = raw.minRequestBytesPerSecond() != null
                    ? raw.minRequestBytesPerSecond()
                    : DEFAULT_MIN_REQUEST_BYTES_PER_SECOND;
            if (minRequestRate < 0) {
                throw new ConfigException(source + ": 'limits.min_request_bytes_per_second' must be 0 (off) or more");
            }
            return new ServerConfig.Limits(
                    atLeast("limits.max_connections", raw.maxConnections(), DEFAULT_MAX_CONNECTIONS, 1),
                    seconds("limits.idle_timeout_seconds", raw.idleTimeoutSeconds(), DEFAULT_IDLE_TIMEOUT_SECONDS, 1),
                    seconds("limits.header_timeout_seconds", raw.headerTimeoutSeconds(),
                            DEFAULT_HEADER_TIMEOUT_SECONDS, 1),
                    minRate,
                    minRequestRate,
                    seconds("limits.queue_timeout_seconds", raw.queueTimeoutSeconds(),
                            DEFAULT_QUEUE_TIMEOUT_SECONDS, 1),
                    retryAfter,
                    jitter,
                    atLeast("limits.max_waiters", raw.maxWaiters(), DEFAULT_MAX_WAITERS, 0),
                    atLeast("limits.max_waiters_per_address", raw.maxWaitersPerAddress(),
                            DEFAULT_MAX_WAITERS_PER_ADDRESS, 1),
                    atLeast("limits.digest_cache_entries", raw.digestCacheEntries(), DEFAULT_DIGEST_CACHE_ENTRIES, 1),
                    fileCacheBytes(raw.fileCacheBytes()),
                    atLeast("limits.max_manifest_entries", raw.maxManifestEntries(), DEFAULT_MAX_MANIFEST_ENTRIES, 1),
                    raw.maxSharedFileBytes() != null ? positive("limits.max_shared_file_bytes", raw.maxSharedFileBytes())
                            : DEFAULT_MAX_SHARED_FILE_BYTES,
                    pool("limits.files", raw.files(), DEFAULT_FILES_POOL),
                    pool("limits.api", raw.api(), DEFAULT_API_POOL),
                    pool("limits.uploads", raw.uploads(), DEFAULT_UPLOADS_POOL),
                    pool("limits.webapp", raw.webapp(), DEFAULT_WEBAPP_POOL));
        }

        private long fileCacheBytes(Long raw) throws ConfigException {
            if (raw == null) {
                return DEFAULT_FILE_CACHE_BYTES;
            }
            if (raw < 0) {
                throw new ConfigException(source + ": 'limits.file_cache_bytes' must be 0 (off) or more");
            }
            return raw;
        }

        private ServerConfig.Pool pool(String key, RawPool raw, ServerConfig.Pool fallback) throws ConfigException {
            if (raw == null) {
                return fallback;
            }
            int concurrency = atLeast(key + ".concurrency", raw.concurrency(), fallback.concurrency(), 1);
            // Unset: a quarter of the workers, so that a handful of hosts never takes the class.
            int perAddress = atLeast(key + ".per_address", raw.perAddress(), Math.max(1, concurrency / 4), 1);
            return new ServerConfig.Pool(concurrency, atLeast(key + ".queue", raw.queue(), fallback.queue(), 0),
                    perAddress);
        }

        private Duration seconds(String key, Integer value, int fallback, int minimum) throws ConfigException {
            return Duration.ofSeconds(atLeast(key, value, fallback, minimum));
        }

        private long positive(String key, long value) throws ConfigException {
            if (value < 1) {
                throw new ConfigException(source + ": '" + key + "' must be at least 1");
            }
            return value;
        }

        private int atLeast(String key, Integer value, int fallback, int minimum) throws ConfigException {
            int actual = value != null ? value : fallback;
            if (actual < minimum) {
                throw new ConfigException(source + ": '" + key + "' must be at least " + minimum + ", not " + actual);
            }
            return actual;
        }

        private ServerConfig.AccessFormat accessFormat(String text) throws ConfigException {
            if (text == null) {
                return ServerConfig.AccessFormat.COMMON;
            }
            for (ServerConfig.AccessFormat format : ServerConfig.AccessFormat.values()) {
                if (format.text().equals(text)) {
                    return format;
                }
            }
            throw new ConfigException(source + ": 'log.access_format': expected common or json, not '" + text + "'");
        }

        private List<Cidr> proxyProtocolFrom(List<String> raw) throws ConfigException {
            if (raw == null) {
                return List.of();
            }
            List<Cidr> networks = new ArrayList<>();
            for (int i = 0; i < raw.size(); i++) {
                String text = raw.get(i);
                if (text == null || text.isBlank()) {
                    throw new ConfigException(source + ": 'general.proxy_protocol_from[" + i + "]' is empty: "
                            + "expected an IPv4 or IPv6 address or network (\"10.0.0.5\", \"10.0.0.0/24\", "
                            + "\"2001:db8::/64\")");
                }
                try {
                    networks.add(Cidr.parse(text.strip()));
                } catch (IllegalArgumentException e) {
                    throw new ConfigException(source + ": 'general.proxy_protocol_from[" + i + "]': '" + text
                            + "' is not an IPv4 or IPv6 address or network (\"10.0.0.5\", \"10.0.0.0/24\", "
                            + "\"2001:db8::/64\"; no host names)");
                }
            }
            return networks;
        }

        private NodeId nodeId(RawGeneral general) throws ConfigException {
            if (general.nodeId() != null && general.nodeIdFile() != null) {
                throw new ConfigException(source + ": set 'general.node_id' or 'general.node_id_file', not both");
            }
            if (general.nodeId() != null) {
                try {
                    return new NodeId(general.nodeId());
                } catch (IllegalArgumentException e) {
                    throw new ConfigException(source + ": 'general.node_id': " + e.getMessage());
                }
            }
            Path file = path("general.node_id_file", general.nodeIdFile(), DEFAULT_NODE_ID_FILE);
            try {
                return new NodeId(Files.readString(file, StandardCharsets.UTF_8).strip());
            } catch (NoSuchFileException e) {
                throw new ConfigException(source + ": 'general.node_id_file': " + file
                        + ": no such file (set 'general.node_id' or 'general.node_id_file')");
            } catch (IOException e) {
                throw new ConfigException(source + ": 'general.node_id_file': " + file + ": " + e.getMessage(), e);
            } catch (IllegalArgumentException e) {
                throw new ConfigException(source + ": 'general.node_id_file': " + file + ": " + e.getMessage());
            }
        }

        private ServerConfig.Role role(String text) throws ConfigException {
            if (text == null) {
                return ServerConfig.Role.ROOT;
            }
            try {
                return ServerConfig.Role.valueOf(text.toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new ConfigException(source + ": 'general.role': expected root, relay or node, not '" + text + "'");
            }
        }

        private ServerConfig.Listen listen(String key, String text) throws ConfigException {
            int colon = text.lastIndexOf(':');
            if (colon <= 0) {
                throw new ConfigException(source + ": '" + key + "': expected HOST:PORT, not '" + text + "'");
            }
            String host = text.substring(0, colon);
            if (host.startsWith("[") && host.endsWith("]")) {
                host = host.substring(1, host.length() - 1);
            } else if (host.contains(":")) {
                throw new ConfigException(source + ": '" + key + "': write IPv6 addresses as [ADDRESS]:PORT");
            }
            int port;
            try {
                port = Integer.parseInt(text.substring(colon + 1));
            } catch (NumberFormatException e) {
                throw new ConfigException(source + ": '" + key + "': invalid port in '" + text + "'");
            }
            if (port < 0 || port > 65535) {
                throw new ConfigException(source + ": '" + key + "': port " + port + " out of range");
            }
            return new ServerConfig.Listen(host, port);
        }

        private Path path(String key, String value, String fallback) throws ConfigException {
            String text = value != null ? value : fallback;
            if (text == null || text.isEmpty()) {
                throw new ConfigException(source + ": '" + key + "' must not be empty");
            }
            if (text.indexOf('\0') >= 0) {
                throw new ConfigException(source + ": '" + key + "' contains a NUL character");
            }
            return base.resolve(text).toAbsolutePath().normalize();
        }

        private static boolean isLoopback(String host) {
            try {
                return InetAddress.getByName(host).isLoopbackAddress();
            } catch (UnknownHostException e) {
                return false;
            }
        }
    }

    record RawConfig(
            RawGeneral general,
            RawTls tls,
            RawNodes nodes,
            RawNetworks networks,
            RawPaths paths,
            RawAdmin admin,
            RawReload reload,
            RawLog log,
            RawLimits limits,
            RawUpstream upstream,
            @JsonProperty("remote_run") RawRemoteRun remoteRun,
            RawUploads uploads,
            RawWebapp webapp) {}

    record RawUploads(
            @JsonProperty("enabled") Boolean enabled,
            @JsonProperty("inventories") String inventories,
            @JsonProperty("inventory_updates") String inventoryUpdates,
            @JsonProperty("reports") String reports,
            @JsonProperty("htpasswd_initial") String htpasswdInitial,
            @JsonProperty("htpasswd") String htpasswd,
            @JsonProperty("max_bytes") Long maxBytes,
            @JsonProperty("max_failures_per_address") Integer maxFailuresPerAddress,
            @JsonProperty("failure_window") Integer failureWindow) {}

    record RawWebapp(
            @JsonProperty("proxy") String proxy,
            @JsonProperty("connect_timeout") Integer connectTimeoutSeconds,
            @JsonProperty("timeout") Integer timeoutSeconds) {}

    record RawRemoteRun(
            @JsonProperty("enabled") Boolean enabled,
            @JsonProperty("port") Integer port,
            @JsonProperty("run") List<String> run,
            @JsonProperty("update") List<String> update,
            @JsonProperty("inventory") List<String> inventory,
            @JsonProperty("timeout") Integer timeoutSeconds,
            @JsonProperty("connect_timeout") Integer connectTimeoutSeconds,
            @JsonProperty("max_parallel") Integer maxParallel,
            @JsonProperty("agent_socket") String agentSocket,
            @JsonProperty("transports") List<String> transports,
            @JsonProperty("max_channels") Integer maxChannels,
            @JsonProperty("report_grace") Integer reportGraceSeconds,
            @JsonProperty("policy_updates") Boolean policyUpdates,
            @JsonProperty("policy_update_rate") Integer policyUpdateRate,
            @JsonProperty("policy_update_splay") Integer policyUpdateSplaySeconds,
            @JsonProperty("remote_command") List<String> remoteCommand) {}

    record RawUpstream(
            @JsonProperty("url") String url,
            @JsonProperty("certificate") String certificate,
            @JsonProperty("key_hash") String keyHash,
            @JsonProperty("client_certificate") String clientCertificate,
            @JsonProperty("client_key") String clientKey,
            @JsonProperty("sync") Boolean sync,
            @JsonProperty("nodes_list") String nodesList,
            @JsonProperty("nodes_certificates") String nodesCertificates) {}

    record RawGeneral(
            @JsonProperty("node_id") String nodeId,
            @JsonProperty("node_id_file") String nodeIdFile,
            @JsonProperty("role") String role,
            @JsonProperty("listen") String listen,
            @JsonProperty("proxy_protocol_from") List<String> proxyProtocolFrom) {}

    record RawTls(
            @JsonProperty("certificate") String certificate,
            @JsonProperty("key") String key,
            @JsonProperty("protocols") List<String> protocols,
            @JsonProperty("allow_world_readable_key") Boolean allowWorldReadableKey,
            @JsonProperty("provider") String provider) {}

    record RawNodes(@JsonProperty("list") String list, @JsonProperty("certificates") List<String> certificates,
            @JsonProperty("authentication") List<String> authentication, @JsonProperty("ca_file") String caFile,
            @JsonProperty("ca_max_depth") Integer caMaxDepth, @JsonProperty("id_rules") List<String> idRules,
            @JsonProperty("crl_files") List<String> crlFiles,
            @JsonProperty("denied_keys_file") String deniedKeysFile, @JsonProperty("crl_url") String crlUrl,
            @JsonProperty("crl_fetch_file") String crlFetchFile,
            @JsonProperty("crl_refresh_seconds") Integer crlRefreshSeconds,
            @JsonProperty("nodes_auth_file") String nodesAuthFile) {}

    record RawNetworks(
            @JsonProperty("allowed_file") String allowedFile, @JsonProperty("allowed") List<String> allowed,
            @JsonProperty("policy_server_file") String policyServerFile) {}

    record RawPaths(
            @JsonProperty("share") String share,
            @JsonProperty("shared_folder") String sharedFolder,
            @JsonProperty("shared_files") String sharedFiles) {}

    record RawAdmin(
            @JsonProperty("listen") String listen,
            @JsonProperty("rudder_version_files") List<String> rudderVersionFiles) {}

    record RawReload(@JsonProperty("watch") Boolean watch) {}

    record RawLog(@JsonProperty("access") Boolean access, @JsonProperty("access_format") String accessFormat) {}

    record RawLimits(
            @JsonProperty("max_connections") Integer maxConnections,
            @JsonProperty("idle_timeout_seconds") Integer idleTimeoutSeconds,
            @JsonProperty("header_timeout_seconds") Integer headerTimeoutSeconds,
            @JsonProperty("min_response_bytes_per_second") Long minResponseBytesPerSecond,
            @JsonProperty("min_request_bytes_per_second") Long minRequestBytesPerSecond,
            @JsonProperty("queue_timeout_seconds") Integer queueTimeoutSeconds,
            @JsonProperty("retry_after_seconds") Integer retryAfterSeconds,
            @JsonProperty("retry_after_jitter_seconds") Integer retryAfterJitterSeconds,
            @JsonProperty("max_waiters") Integer maxWaiters,
            @JsonProperty("max_waiters_per_address") Integer maxWaitersPerAddress,
            @JsonProperty("digest_cache_entries") Integer digestCacheEntries,
            @JsonProperty("file_cache_bytes") Long fileCacheBytes,
            @JsonProperty("max_manifest_entries") Integer maxManifestEntries,
            @JsonProperty("max_shared_file_bytes") Long maxSharedFileBytes,
            @JsonProperty("files") RawPool files,
            @JsonProperty("api") RawPool api,
            @JsonProperty("uploads") RawPool uploads,
            @JsonProperty("webapp") RawPool webapp) {}

    record RawPool(@JsonProperty("concurrency") Integer concurrency, @JsonProperty("queue") Integer queue,
            @JsonProperty("per_address") Integer perAddress) {}
}
