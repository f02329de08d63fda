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
import io.pintle.server.nodes.IdRule;
import io.pintle.server.nodes.KeyHash;
import io.pintle.server.nodes.NodeId;
import io.pintle.server.nodes.NodeTrust;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
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
 * Parses the TOML configuration into {@link ServerConfig}'s sections. What the file leaves out is the section's
 * default ({@code DEFAULTS} or {@code defaults(...)} on each section record, Rudder's paths, documented in {@code
 * deploy/pintle.example.toml}); each section then checks itself ({@code validate}).
 */
public final class ConfigLoader {
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
        // Read as a tree first, so that a value of the wrong type can be quoted as the operator wrote it. An empty
        // file is an empty table: every section absent.
        JsonNode tree = TOML.createObjectNode();
        if (!text.isBlank()) {
            try {
                tree = TOML.readTree(text);
            } catch (JacksonException e) {
                throw new ConfigException(source + ": invalid TOML" + TomlMessages.at(e) + ": "
                        + TomlMessages.syntax(e.getOriginalMessage()));
            }
        }
        RawConfig raw;
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

        /**
         * Each section: its defaults where the file is silent (an absent section is its defaults), then its own
         * checks. Parsing (types, syntax, keys that exclude each other) stays here; ranges are the section's.
         */
        ServerConfig validate(RawConfig raw) throws ConfigException {
            ServerConfig.General general = general(raw.general());
            List<NodeTrust.Mode> authentication = raw.nodes() != null && raw.nodes().authentication() != null
                    ? authentication(raw.nodes().authentication())
                    : ServerConfig.Nodes.DEFAULTS.authentication();
            ServerConfig.Tls tls = tls(raw.tls(), authentication);
            tls.validate(source);
            ServerConfig.Nodes nodes = raw.nodes() != null ? nodes(raw.nodes(), authentication)
                    : ServerConfig.Nodes.DEFAULTS;
            nodes.validate(source);
            ServerConfig.Networks networks = networks(raw.networks(), general.role());
            ServerConfig.Paths paths = raw.paths() != null ? paths(raw.paths()) : ServerConfig.Paths.DEFAULTS;
            ServerConfig.Admin admin = raw.admin() != null ? admin(raw.admin()) : ServerConfig.Admin.DEFAULTS;
            admin.validate(source);
            ServerConfig.Reload reload = raw.reload() != null && raw.reload().watch() != null
                    ? new ServerConfig.Reload(raw.reload().watch())
                    : ServerConfig.Reload.DEFAULTS;
            ServerConfig.Log log = raw.log() != null ? log(raw.log()) : ServerConfig.Log.DEFAULTS;
            ServerConfig.Limits limits = raw.limits() != null ? limits(raw.limits()) : ServerConfig.Limits.DEFAULTS;
            limits.validate(source);
            ServerConfig.Upstream upstream = raw.upstream() != null ? upstream(raw.upstream(), tls)
                    : ServerConfig.Upstream.defaults(tls);
            upstream.validate(source);
            ServerConfig.RemoteRun remoteRun = raw.remoteRun() != null ? remoteRun(raw.remoteRun(), limits)
                    : ServerConfig.RemoteRun.defaults(limits);
            remoteRun.validate(source, limits);
            ServerConfig.Uploads uploads = raw.uploads() != null ? uploads(raw.uploads(), general.role())
                    : ServerConfig.Uploads.defaults(general.role());
            uploads.validate(source);
            ServerConfig.Webapp webapp = raw.webapp() != null ? webapp(raw.webapp()) : ServerConfig.Webapp.DEFAULTS;
            webapp.validate(source);
            ServerConfig.Cfengine cfengine = raw.cfengine() != null ? cfengine(raw.cfengine(), tls)
                    : ServerConfig.Cfengine.defaults(tls);
            cfengine.validate(source);
            ServerConfig.Delivery delivery = raw.delivery() != null ? delivery(raw.delivery())
                    : ServerConfig.Delivery.DEFAULTS;
            delivery.validate(source);
            return new ServerConfig(source, general, tls, nodes, networks, paths, admin, reload, log, limits, upstream,
                    remoteRun, uploads, webapp, cfengine, delivery);
        }

        private ServerConfig.General general(RawGeneral raw) throws ConfigException {
            if (raw == null) {
                return new ServerConfig.General(nodeIdFrom(ServerConfig.General.DEFAULT_NODE_ID_FILE),
                        ServerConfig.General.DEFAULT_ROLE, ServerConfig.General.DEFAULT_LISTEN, List.of());
            }
            if (raw.nodeId() != null && raw.nodeIdFile() != null) {
                throw new ConfigException(source + ": set 'general.node_id' or 'general.node_id_file', not both");
            }
            NodeId nodeId;
            if (raw.nodeId() != null) {
                try {
                    nodeId = new NodeId(raw.nodeId());
                } catch (IllegalArgumentException e) {
                    throw new ConfigException(source + ": 'general.node_id': " + e.getMessage());
                }
            } else {
                nodeId = nodeIdFrom(path("general.node_id_file", raw.nodeIdFile(),
                        ServerConfig.General.DEFAULT_NODE_ID_FILE));
            }
            return new ServerConfig.General(nodeId,
                    raw.role() != null ? role(raw.role()) : ServerConfig.General.DEFAULT_ROLE,
                    raw.listen() != null ? listen("general.listen", raw.listen())
                            : ServerConfig.General.DEFAULT_LISTEN,
                    raw.proxyProtocolFrom() != null ? proxyProtocolFrom(raw.proxyProtocolFrom()) : List.of());
        }

        private NodeId nodeIdFrom(Path file) throws ConfigException {
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

        private ServerConfig.Tls tls(RawTls raw, List<NodeTrust.Mode> authentication) throws ConfigException {
            ServerConfig.Tls defaults = tlsDefaults(authentication);
            if (raw == null) {
                return defaults;
            }
            if ((raw.certificate() == null) != (raw.key() == null)) {
                throw new ConfigException(source + ": 'tls.certificate' and 'tls.key' must be set together");
            }
            ServerConfig.TlsProvider provider = defaults.provider();
            if (raw.provider() != null) {
                provider = Arrays.stream(ServerConfig.TlsProvider.values())
                        .filter(candidate -> candidate.text().equals(raw.provider()))
                        .findFirst()
                        .orElseThrow(() -> new ConfigException(source + ": 'tls.provider': unknown provider '"
                                + raw.provider() + "' (known: auto, jdk, conscrypt)"));
            }
            return new ServerConfig.Tls(path("tls.certificate", raw.certificate(), defaults.certificate()),
                    path("tls.key", raw.key(), defaults.key()), or(raw.protocols(), defaults.protocols()),
                    or(raw.allowWorldReadableKey(), defaults.allowWorldReadableKey()), provider);
        }

        /**
         * Apache's choice in Rudder's vhost: a dedicated pair when it exists; else the CA-signed agent-http pair in
         * certificate-validation mode (its agents verify the server against the CA), the agent's own pair otherwise
         * (they pin it). Both modes at once: the agent's pair, which pinned agents check; CA agents need
         * server.cert then.
         */
        private static ServerConfig.Tls tlsDefaults(List<NodeTrust.Mode> authentication) {
            ServerConfig.Tls defaults = ServerConfig.Tls.DEFAULTS;
            if (Files.exists(ServerConfig.Tls.DEDICATED_CERTIFICATE) && Files.exists(ServerConfig.Tls.DEDICATED_KEY)) {
                return new ServerConfig.Tls(ServerConfig.Tls.DEDICATED_CERTIFICATE, ServerConfig.Tls.DEDICATED_KEY,
                        defaults.protocols(), defaults.allowWorldReadableKey(), defaults.provider());
            }
            // Only in certificate validation alone: with pinning on too, pinned agents still check the agent key.
            if (authentication.equals(List.of(NodeTrust.Mode.CERT_VALIDATION))) {
                return new ServerConfig.Tls(ServerConfig.Tls.VALIDATION_CERTIFICATE, ServerConfig.Tls.VALIDATION_KEY,
                        defaults.protocols(), defaults.allowWorldReadableKey(), defaults.provider());
            }
            return defaults;
        }

        private ServerConfig.Paths paths(RawPaths raw) throws ConfigException {
            ServerConfig.Paths defaults = ServerConfig.Paths.DEFAULTS;
            return new ServerConfig.Paths(path("paths.share", raw.share(), defaults.share()),
                    path("paths.shared_folder", raw.sharedFolder(), defaults.sharedFolder()),
                    path("paths.shared_files", raw.sharedFiles(), defaults.sharedFiles()),
                    path("paths.state", raw.state(), defaults.state()));
        }

        private ServerConfig.Delivery delivery(RawDelivery raw) throws ConfigException {
            ServerConfig.Delivery defaults = ServerConfig.Delivery.DEFAULTS;
            Path backup = raw.rudderBackup() == null ? defaults.rudderBackup()
                    : raw.rudderBackup().isEmpty() ? null : path("delivery.rudder_backup", raw.rudderBackup());
            return new ServerConfig.Delivery(seconds(raw.silentAfterSeconds(), defaults.silentAfter()), backup,
                    or(raw.buildArchives(), defaults.buildArchives()),
                    seconds(raw.sampleSeconds(), defaults.sampleEvery()));
        }

        private ServerConfig.Admin admin(RawAdmin raw) throws ConfigException {
            ServerConfig.Admin defaults = ServerConfig.Admin.DEFAULTS;
            return new ServerConfig.Admin(
                    raw.listen() != null ? listen("admin.listen", raw.listen()) : defaults.listen(),
                    raw.rudderVersionFiles() != null ? paths("admin.rudder_version_files", raw.rudderVersionFiles())
                            : defaults.rudderVersionFiles());
        }

        private ServerConfig.Log log(RawLog raw) throws ConfigException {
            ServerConfig.Log defaults = ServerConfig.Log.DEFAULTS;
            return new ServerConfig.Log(or(raw.access(), defaults.access()),
                    raw.accessFormat() != null ? accessFormat(raw.accessFormat()) : defaults.accessFormat());
        }

        private ServerConfig.Networks networks(RawNetworks raw, ServerConfig.Role role) throws ConfigException {
            ServerConfig.Networks defaults = ServerConfig.Networks.defaults(role);
            if (raw == null) {
                return defaults;
            }
            Path allowed = raw.allowedFile() == null ? defaults.allowedFile()
                    : raw.allowedFile().isEmpty() ? null : path("networks.allowed_file", raw.allowedFile());
            List<String> extra = or(raw.allowed(), defaults.allowed());
            String policyServerFile = raw.policyServerFile();
            if (role == ServerConfig.Role.NODE && policyServerFile != null && !policyServerFile.isEmpty()) {
                // A node has no Apache: its remote run is its policy server's key only (AclEvaluator.remoteRun).
                throw new ConfigException(source + ": 'networks.policy_server_file' applies to a root or a relay "
                        + "(who may ask it for a remote run without a certificate); a node only accepts its "
                        + "policy server's key. Remove it, or set it to \"\"");
            }
            if (policyServerFile == null) {
                return new ServerConfig.Networks(allowed, extra, defaults.policyServerFile(), false);
            }
            if (policyServerFile.isEmpty()) {
                return new ServerConfig.Networks(allowed, extra, null, false);
            }
            return new ServerConfig.Networks(allowed, extra, path("networks.policy_server_file", policyServerFile),
                    true);
        }

        private List<NodeTrust.Mode> authentication(List<String> raw) throws ConfigException {
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

        private ServerConfig.Nodes nodes(RawNodes raw, List<NodeTrust.Mode> authentication) throws ConfigException {
            ServerConfig.Nodes defaults = ServerConfig.Nodes.DEFAULTS;
            List<Path> certificates = raw.certificates() != null ? paths("nodes.certificates", raw.certificates())
                    : defaults.certificates();
            List<IdRule> rules = defaults.idRules();
            if (raw.idRules() != null) {
                if (raw.idRules().isEmpty()) {
                    throw new ConfigException(source + ": 'nodes.id_rules' must hold at least one rule (uid, "
                            + "san-dns:<template>, san-uri:<template>)");
                }
                rules = new ArrayList<>();
                for (int i = 0; i < raw.idRules().size(); i++) {
                    try {
                        rules.add(IdRule.parse(raw.idRules().get(i)));
                    } catch (IllegalArgumentException e) {
                        throw new ConfigException(source + ": 'nodes.id_rules[" + i + "]': " + e.getMessage());
                    }
                }
            }
            List<Path> crls = raw.crlFiles() != null ? paths("nodes.crl_files", raw.crlFiles()) : defaults.crlFiles();
            // Unset: the default file, which may be absent; "": none; a file named here must exist.
            Path denied = defaults.deniedKeysFile();
            boolean deniedRequired = false;
            if (raw.deniedKeysFile() != null) {
                denied = raw.deniedKeysFile().isEmpty() ? null : path("nodes.denied_keys_file", raw.deniedKeysFile());
                deniedRequired = denied != null;
            }
            Duration refresh = raw.crlRefreshSeconds() != null
                    ? ServerConfig.Nodes.crlRefresh(source, raw.crlRefreshSeconds())
                    : defaults.crlRefresh();
            // Rudder's Apache include for ids in SANs: read in place, unless the rules are written here.
            Path nodesAuth = null;
            boolean nodesAuthRequired = false;
            if (raw.nodesAuthFile() != null && !raw.nodesAuthFile().isEmpty()) {
                if (raw.idRules() != null) {
                    throw new ConfigException(source + ": 'nodes.nodes_auth_file' and 'nodes.id_rules' both say where "
                            + "the node id is: keep one");
                }
                nodesAuth = path("nodes.nodes_auth_file", raw.nodesAuthFile());
                nodesAuthRequired = true;
            } else if (raw.nodesAuthFile() == null && raw.idRules() == null
                    && authentication.contains(NodeTrust.Mode.CERT_VALIDATION)) {
                nodesAuth = ServerConfig.Nodes.VALIDATION_NODES_AUTH_FILE;
            }
            return new ServerConfig.Nodes(path("nodes.list", raw.list(), defaults.list()), certificates,
                    authentication, path("nodes.ca_file", raw.caFile(), defaults.caFile()),
                    or(raw.caMaxDepth(), defaults.caMaxDepth()), rules, crls, denied, deniedRequired,
                    crlUrl(raw.crlUrl()), path("nodes.crl_fetch_file", raw.crlFetchFile(), defaults.crlFetchFile()),
                    refresh, nodesAuth, nodesAuthRequired);
        }

        /**
         * {@code [nodes] crl_url}: an http or https URL, without user or fragment (it is shown in the status and
         * the logs); empty or absent for none.
         */
        private URI crlUrl(String raw) throws ConfigException {
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
            return url;
        }

        private ServerConfig.Uploads uploads(RawUploads raw, ServerConfig.Role role) throws ConfigException {
            ServerConfig.Uploads defaults = ServerConfig.Uploads.defaults(role);
            return new ServerConfig.Uploads(or(raw.enabled(), defaults.enabled()),
                    path("uploads.inventories", raw.inventories(), defaults.inventories()),
                    path("uploads.inventory_updates", raw.inventoryUpdates(), defaults.inventoryUpdates()),
                    path("uploads.reports", raw.reports(), defaults.reports()),
                    path("uploads.htpasswd_initial", raw.htpasswdInitial(), defaults.htpasswdInitial()),
                    path("uploads.htpasswd", raw.htpasswd(), defaults.htpasswd()),
                    or(raw.maxBytes(), defaults.maxBytes()),
                    ServerConfig.Uploads.logins(source,
                            or(raw.maxFailuresPerAddress(), defaults.logins().maxFailures()),
                            or(raw.failureWindow(), (int) defaults.logins().window().toSeconds())),
                    or(raw.verifySignatures(), defaults.verifySignatures()));
        }

        private ServerConfig.Webapp webapp(RawWebapp raw) throws ConfigException {
            ServerConfig.Webapp defaults = ServerConfig.Webapp.DEFAULTS;
            URI proxy = defaults.proxy();
            if (raw.proxy() != null && !raw.proxy().isEmpty()) {
                String hint = "'webapp.proxy' must be the webapp's base URL, http://HOST[:PORT] (Rudder's is "
                        + ServerConfig.Webapp.RUDDER_URL + "), not '" + raw.proxy() + "'";
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
            return new ServerConfig.Webapp(proxy, seconds(raw.connectTimeoutSeconds(), defaults.connectTimeout()),
                    seconds(raw.timeoutSeconds(), defaults.timeout()));
        }

        private ServerConfig.Cfengine cfengine(RawCfengine raw, ServerConfig.Tls tls) throws ConfigException {
            ServerConfig.Cfengine defaults = ServerConfig.Cfengine.defaults(tls);
            ServerConfig.Listen listen = raw.listen() == null || raw.listen().isEmpty() ? null
                    : listen("cfengine.listen", raw.listen());
            return new ServerConfig.Cfengine(listen, path("cfengine.key", raw.key(), defaults.key()),
                    path("cfengine.masterfiles", raw.masterfiles(), defaults.masterfiles()),
                    path("cfengine.ncf_common", raw.ncfCommon(), defaults.ncfCommon()),
                    path("cfengine.ncf_local", raw.ncfLocal(), defaults.ncfLocal()),
                    or(raw.protocols(), defaults.protocols()), or(raw.maxConnections(), defaults.maxConnections()),
                    or(raw.maxConnectionsPerAddress(), defaults.maxConnectionsPerAddress()),
                    seconds(raw.idleTimeoutSeconds(), defaults.idleTimeout()),
                    or(raw.denyBadClocks(), defaults.denyBadClocks()));
        }

        private ServerConfig.RemoteRun remoteRun(RawRemoteRun raw, ServerConfig.Limits limits)
                throws ConfigException {
            ServerConfig.RemoteRun defaults = ServerConfig.RemoteRun.defaults(limits);
            ServerConfig.PolicyUpdates updates = defaults.policyUpdates();
            return new ServerConfig.RemoteRun(or(raw.enabled(), defaults.enabled()), or(raw.port(), defaults.port()),
                    or(raw.run(), defaults.run()), or(raw.update(), defaults.update()),
                    or(raw.inventory(), defaults.inventory()), seconds(raw.timeoutSeconds(), defaults.timeout()),
                    seconds(raw.connectTimeoutSeconds(), defaults.connectTimeout()),
                    or(raw.maxParallel(), defaults.maxParallel()), agentSocket(raw.agentSocket()),
                    raw.transports() != null ? transports(raw.transports()) : defaults.transports(),
                    or(raw.maxChannels(), defaults.maxChannels()),
                    seconds(raw.reportGraceSeconds(), defaults.reportGrace()),
                    seconds(raw.reconnectGraceSeconds(), defaults.reconnectGrace()),
                    new ServerConfig.PolicyUpdates(or(raw.policyUpdates(), updates.enabled()),
                            or(raw.policyUpdateRate(), updates.rate()),
                            seconds(raw.policyUpdateSplaySeconds(), updates.splay()),
                            seconds(raw.policyUpdateScanSeconds(), updates.scan())),
                    or(raw.remoteCommand(), defaults.remoteCommand()));
        }

        /** {@code remote_run.transports}: known transports, each once. */
        private List<ServerConfig.Transport> transports(List<String> value) throws ConfigException {
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
            return transports;
        }

        /** {@code remote_run.agent_socket}: empty or absent for none. */
        private Path agentSocket(String value) throws ConfigException {
            return value == null || value.isEmpty() ? null : path("remote_run.agent_socket", value);
        }

        private ServerConfig.Upstream upstream(RawUpstream raw, ServerConfig.Tls tls) throws ConfigException {
            ServerConfig.Upstream defaults = ServerConfig.Upstream.defaults(tls);
            URI url = defaults.url();
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
                    path("upstream.certificate", raw.certificate(), defaults.certificate()),
                    or(raw.keyHash(), defaults.keyHash()),
                    path("upstream.client_certificate", raw.clientCertificate(), defaults.clientCertificate()),
                    path("upstream.client_key", raw.clientKey(), defaults.clientKey()),
                    or(raw.sync(), defaults.sync()),
                    or(raw.nodesList(), defaults.nodesList()),
                    or(raw.nodesCertificates(), defaults.nodesCertificates()),
                    or(raw.forward(), defaults.forward()),
                    raw.forwardCredentials() == null ? defaults.forwardCredentials()
                            : raw.forwardCredentials().isEmpty() ? null
                            : path("upstream.forward_credentials", raw.forwardCredentials()),
                    or(raw.forwardInFlight(), defaults.forwardInFlight()));
        }

        private ServerConfig.Limits limits(RawLimits raw) {
            ServerConfig.Limits defaults = ServerConfig.Limits.DEFAULTS;
            return new ServerConfig.Limits(
                    or(raw.maxConnections(), defaults.maxConnections()),
                    or(raw.acceptQueue(), defaults.acceptQueue()),
                    seconds(raw.idleTimeoutSeconds(), defaults.idleTimeout()),
                    seconds(raw.headerTimeoutSeconds(), defaults.headerTimeout()),
                    or(raw.minResponseBytesPerSecond(), defaults.minResponseBytesPerSecond()),
                    or(raw.minRequestBytesPerSecond(), defaults.minRequestBytesPerSecond()),
                    seconds(raw.rateCheckSeconds(), defaults.rateCheck()),
                    seconds(raw.queueTimeoutSeconds(), defaults.queueTimeout()),
                    seconds(raw.retryAfterSeconds(), defaults.retryAfter()),
                    seconds(raw.retryAfterJitterSeconds(), defaults.retryAfterJitter()),
                    or(raw.maxWaiters(), defaults.maxWaiters()),
                    or(raw.maxWaitersPerAddress(), defaults.maxWaitersPerAddress()),
                    // 0 is "the default", as absent: a negative value is refused by validate.
                    raw.maxRequestsPerNode() == null || raw.maxRequestsPerNode() == 0
                            ? defaults.maxRequestsPerNode() : raw.maxRequestsPerNode(),
                    or(raw.digestCacheEntries(), defaults.digestCacheEntries()),
                    or(raw.fileCacheBytes(), defaults.fileCacheBytes()),
                    or(raw.maxManifestEntries(), defaults.maxManifestEntries()),
                    or(raw.maxSharedFileBytes(), defaults.maxSharedFileBytes()),
                    pool(raw.files(), defaults.files()),
                    pool(raw.api(), defaults.api()),
                    pool(raw.uploads(), defaults.uploads()),
                    pool(raw.webapp(), defaults.webapp()));
        }

        /**
         * A class's pool: its defaults when absent; an unset {@code per_address} is the same share of the {@code
         * concurrency} set as the class's default is of its default (a quarter; the webapp's half).
         */
        private static ServerConfig.Pool pool(RawPool raw, ServerConfig.Pool defaults) {
            if (raw == null) {
                return defaults;
            }
            int concurrency = or(raw.concurrency(), defaults.concurrency());
            int share = Math.max(1, defaults.concurrency() / defaults.perAddress());
            return new ServerConfig.Pool(concurrency, or(raw.queue(), defaults.queue()),
                    raw.perAddress() != null ? raw.perAddress() : Math.max(1, concurrency / share));
        }

        /** The value the file gives, else the section's default. */
        private static <T> T or(T value, T fallback) {
            return value != null ? value : fallback;
        }

        private static Duration seconds(Integer value, Duration fallback) {
            return value != null ? Duration.ofSeconds(value) : fallback;
        }

        private ServerConfig.AccessFormat accessFormat(String text) throws ConfigException {
            for (ServerConfig.AccessFormat format : ServerConfig.AccessFormat.values()) {
                if (format.text().equals(text)) {
                    return format;
                }
            }
            throw new ConfigException(source + ": 'log.access_format': expected common or json, not '" + text + "'");
        }

        private List<Cidr> proxyProtocolFrom(List<String> raw) throws ConfigException {
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

        private ServerConfig.Role role(String text) throws ConfigException {
            try {
                return ServerConfig.Role.valueOf(text.toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new ConfigException(source + ": 'general.role': expected root, relay or node, not '" + text
                        + "'");
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

        /** A path the file gives, resolved against its directory, else the section's default. */
        private Path path(String key, String value, Path fallback) throws ConfigException {
            return value != null ? path(key, value) : fallback;
        }

        /** A path the file gives, resolved against its directory. */
        private Path path(String key, String text) throws ConfigException {
            if (text.isEmpty()) {
                throw new ConfigException(source + ": '" + key + "' must not be empty");
            }
            if (text.indexOf('\0') >= 0) {
                throw new ConfigException(source + ": '" + key + "' contains a NUL character");
            }
            return base.resolve(text).toAbsolutePath().normalize();
        }

        /** A list of paths the file gives, each named by its index. */
        private List<Path> paths(String key, List<String> texts) throws ConfigException {
            List<Path> paths = new ArrayList<>();
            for (int i = 0; i < texts.size(); i++) {
                paths.add(path(key + "[" + i + "]", texts.get(i)));
            }
            return paths;
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
            RawWebapp webapp,
            RawCfengine cfengine,
            RawDelivery delivery) {}

    record RawCfengine(
            @JsonProperty("listen") String listen,
            @JsonProperty("key") String key,
            @JsonProperty("masterfiles") String masterfiles,
            @JsonProperty("ncf_common") String ncfCommon,
            @JsonProperty("ncf_local") String ncfLocal,
            @JsonProperty("protocols") List<String> protocols,
            @JsonProperty("max_connections") Integer maxConnections,
            @JsonProperty("max_connections_per_address") Integer maxConnectionsPerAddress,
            @JsonProperty("idle_timeout") Integer idleTimeoutSeconds,
            @JsonProperty("deny_bad_clocks") Boolean denyBadClocks) {}

    record RawUploads(
            @JsonProperty("enabled") Boolean enabled,
            @JsonProperty("inventories") String inventories,
            @JsonProperty("inventory_updates") String inventoryUpdates,
            @JsonProperty("reports") String reports,
            @JsonProperty("htpasswd_initial") String htpasswdInitial,
            @JsonProperty("htpasswd") String htpasswd,
            @JsonProperty("max_bytes") Long maxBytes,
            @JsonProperty("max_failures_per_address") Integer maxFailuresPerAddress,
            @JsonProperty("failure_window") Integer failureWindow,
            @JsonProperty("verify_signatures") Boolean verifySignatures) {}

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
            @JsonProperty("reconnect_grace") Integer reconnectGraceSeconds,
            @JsonProperty("policy_updates") Boolean policyUpdates,
            @JsonProperty("policy_update_rate") Integer policyUpdateRate,
            @JsonProperty("policy_update_splay") Integer policyUpdateSplaySeconds,
            @JsonProperty("policy_update_scan") Integer policyUpdateScanSeconds,
            @JsonProperty("remote_command") List<String> remoteCommand) {}

    record RawUpstream(
            @JsonProperty("url") String url,
            @JsonProperty("certificate") String certificate,
            @JsonProperty("key_hash") String keyHash,
            @JsonProperty("client_certificate") String clientCertificate,
            @JsonProperty("client_key") String clientKey,
            @JsonProperty("sync") Boolean sync,
            @JsonProperty("nodes_list") String nodesList,
            @JsonProperty("nodes_certificates") String nodesCertificates,
            @JsonProperty("forward") Boolean forward,
            @JsonProperty("forward_credentials") String forwardCredentials,
            @JsonProperty("forward_in_flight") Integer forwardInFlight) {}

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
            @JsonProperty("shared_files") String sharedFiles,
            @JsonProperty("state") String state) {}

    record RawDelivery(
            @JsonProperty("silent_after_seconds") Integer silentAfterSeconds,
            @JsonProperty("rudder_backup") String rudderBackup,
            @JsonProperty("build_archives") Boolean buildArchives,
            @JsonProperty("sample_seconds") Integer sampleSeconds) {}

    record RawAdmin(
            @JsonProperty("listen") String listen,
            @JsonProperty("rudder_version_files") List<String> rudderVersionFiles) {}

    record RawReload(@JsonProperty("watch") Boolean watch) {}

    record RawLog(@JsonProperty("access") Boolean access, @JsonProperty("access_format") String accessFormat) {}

    record RawLimits(
            @JsonProperty("max_connections") Integer maxConnections,
            @JsonProperty("accept_queue") Integer acceptQueue,
            @JsonProperty("idle_timeout_seconds") Integer idleTimeoutSeconds,
            @JsonProperty("header_timeout_seconds") Integer headerTimeoutSeconds,
            @JsonProperty("min_response_bytes_per_second") Long minResponseBytesPerSecond,
            @JsonProperty("min_request_bytes_per_second") Long minRequestBytesPerSecond,
            @JsonProperty("rate_check_seconds") Integer rateCheckSeconds,
            @JsonProperty("queue_timeout_seconds") Integer queueTimeoutSeconds,
            @JsonProperty("retry_after_seconds") Integer retryAfterSeconds,
            @JsonProperty("retry_after_jitter_seconds") Integer retryAfterJitterSeconds,
            @JsonProperty("max_waiters") Integer maxWaiters,
            @JsonProperty("max_waiters_per_address") Integer maxWaitersPerAddress,
            @JsonProperty("max_requests_per_node") Integer maxRequestsPerNode,
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
