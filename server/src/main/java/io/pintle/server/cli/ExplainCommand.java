package io.pintle.server.cli;

import io.pintle.server.access.Access;
import io.pintle.server.access.CfengineRoutes;
import io.pintle.server.cfengine.CfengineDoor;
import io.pintle.server.cfengine.CfengineKey;
import java.security.interfaces.RSAPublicKey;
import io.pintle.server.access.Credentials;
import io.pintle.server.access.Route;
import io.pintle.server.access.Rule;
import io.pintle.server.acl.AclEvaluator;
import io.pintle.server.acl.Caller;
import io.pintle.server.acl.Decision;
import io.pintle.server.config.ConfigException;
import io.pintle.server.config.ServerConfig;
import io.pintle.server.nodes.CaTrust;
import io.pintle.server.nodes.CertificateBinding;
import io.pintle.server.nodes.CertificateIndex;
import io.pintle.server.nodes.ClientCertificate;
import io.pintle.server.nodes.IdRule;
import io.pintle.server.nodes.Identification;
import io.pintle.server.nodes.KeyHash;
import io.pintle.server.nodes.Node;
import io.pintle.server.nodes.NodeId;
import io.pintle.server.nodes.NodeRegistry;
import io.pintle.server.nodes.NodeTrust;
import io.pintle.server.nodes.Revocations;
import io.pintle.server.policy.SafePaths;
import io.pintle.server.policy.UnsafePathException;
import io.pintle.server.reload.ServerSnapshot;
import io.pintle.server.reload.SnapshotException;
import io.pintle.server.reload.SnapshotLoader;
import io.pintle.server.uploads.UploadKind;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509CRL;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.regex.Pattern;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code pintle explain}: what the server decides for one client certificate, step by step, against the live
 * configuration and the files it names, loaded as the server loads them. The identification it prints is the
 * server's own call ({@link NodeTrust#identify}) and the path decision the {@link AclEvaluator} method the server
 * uses for that route; the other lines are detail around them and never decide anything on their own.
 */
@Command(name = "explain", mixinStandardHelpOptions = true, usageHelpWidth = 100,
        description = {"Explain how the server decides for a client certificate: trust modes, pinning, CA chain, id "
                + "rules, revocation, deny list, identification, network and, with --path, the route's access rule; "
                + "or, with --cfengine-key, for an agent on the CFEngine listener.",
                "Exit 0 if allowed, " + ExitCodes.EXPLAIN_REFUSED + " if refused, " + ExitCodes.CONFIG_ERROR
                        + " if the configuration or the certificate file cannot be read."})
public final class ExplainCommand implements Callable<Integer> {
    /** An IP literal, so that {@code --address} is never looked up in the DNS. */
    private static final Pattern IP_LITERAL = Pattern.compile("[0-9A-Fa-f:.]+");
    private static final String OK = "ok";
    private static final String REFUSED = "refused";
    private static final String INFO = "-";

    @Mixin
    ConfigOption config = new ConfigOption();

    @Option(names = "--cert", paramLabel = "FILE",
            description = "the client's certificate: PEM (the chain it sends, leaf first) or DER")
    Path certificateFile;

    @Option(names = "--cfengine-key", paramLabel = "FILE",
            description = "instead of --cert, a CFEngine agent's public key (ppkeys/*.pub, as cf-key writes it, or "
                    + "a certificate of it): the decision of the CFEngine listener ([cfengine]); --path is then an "
                    + "absolute path as cf-agent asks for it, --method a command (STAT, OPENDIR, GET, MD5)")
    Path cfengineKey;

    @Option(names = "--path", paramLabel = "PATH",
            description = "a request path on the TLS listener, as sent (/policies/<id>/rules/..., /common/..., "
                    + "/rudder/relay-api/shared-folder/..., /inventories/x, ...)")
    String path;

    @Option(names = "--method", paramLabel = "METHOD", defaultValue = "GET",
            description = "the request method, where a route decides by it (shared-files: GET downloads, HEAD and "
                    + "PUT upload; default: ${DEFAULT-VALUE})")
    String method;

    @Option(names = "--address", paramLabel = "IP", defaultValue = "127.0.0.1",
            description = "the client's address (default: ${DEFAULT-VALUE})")
    String address;

    @Spec
    CommandSpec spec;

    private PrintWriter out;

    @Override
    public Integer call() {
        out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        InetAddress client;
        List<X509Certificate> chain;
        ServerConfig loaded;
        ServerSnapshot snapshot;
        if ((certificateFile == null) == (cfengineKey == null)) {
            err.println("pintle explain: give either --cert (HTTPS) or --cfengine-key (CFEngine's protocol)");
            return ExitCodes.CONFIG_ERROR;
        }
        if (cfengineKey != null) {
            return cfengine(err);
        }
        try {
            if (!IP_LITERAL.matcher(address).matches()) {
                throw new IOException("--address: '" + address + "' is not an IP address");
            }
            client = InetAddress.getByName(address);
            chain = read(certificateFile);
        } catch (IOException e) {
            err.println("pintle explain: " + e.getMessage());
            return ExitCodes.CONFIG_ERROR;
        }
        try {
            loaded = config.load();
            snapshot = new SnapshotLoader(loaded, Clock.systemUTC()).load(1);
        } catch (ConfigException | SnapshotException e) {
            err.println("pintle explain: configuration error: " + e.getMessage());
            return ExitCodes.CONFIG_ERROR;
        }
        Instant now = Instant.now();
        ClientCertificate presented = ClientCertificate.of(chain);
        NodeTrust trust = snapshot.trust();
        NodeRegistry registry = snapshot.nodes();

        out.printf("configuration %s%n", loaded.source());
        certificates(chain, now);
        line("trust", INFO, modes(trust, snapshot));
        if (trust.pinning()) {
            pinning(snapshot, presented, now);
        }
        if (trust.validation()) {
            validation(snapshot, presented, now);
        }
        denyList(snapshot, presented);

        // The server's own call, on the same inputs: everything above only details it.
        Identification identification = trust.identify(registry, presented, now);
        if (identification instanceof Identification.Authenticated authenticated) {
            line("identity", OK, "node " + authenticated.node() + " (key " + authenticated.key() + ", via "
                    + authenticated.via().text() + ")");
        } else {
            Identification.Anonymous anonymous = (Identification.Anonymous) identification;
            line("identity", REFUSED, anonymous.reason().code() + ": " + anonymous.detail()
                    + (anonymous.verified() != null ? " [chain verified by the CA: '" + anonymous.verified()
                            + "', enough for uploads, /common and shared-files uploads]" : ""));
        }
        Caller caller = new Caller(client, identification);
        AclEvaluator acl = snapshot.acl();
        boolean inNetworks = acl.inAllowedNetworks(caller);
        line("network", inNetworks ? OK : REFUSED, inNetworks
                ? client.getHostAddress() + " is in the allowed networks"
                : "network-not-allowed: " + client.getHostAddress() + " is not in the allowed networks");

        if (path == null) {
            boolean allowed = identification instanceof Identification.Authenticated;
            line("decision", allowed ? OK : REFUSED, allowed ? "the certificate authenticates a node (give --path "
                    + "for a route's decision)" : "the certificate authenticates no node");
            return allowed ? ExitCodes.OK : ExitCodes.EXPLAIN_REFUSED;
        }
        Decision decision = route(snapshot, caller, presented);
        if (decision instanceof Decision.Allow allow) {
            line("decision", OK, "allowed: " + allow.rule());
            return ExitCodes.OK;
        }
        Decision.Deny deny = (Decision.Deny) decision;
        line("decision", REFUSED, deny.reason() + ": " + deny.detail() + (deny.absent() ? " (404)" : ""));
        return ExitCodes.EXPLAIN_REFUSED;
    }

    /**
     * The CFEngine listener's decision for an agent key: who the key is on the snapshot, whether the connection
     * is admitted (allowconnects, trustkeysfrom), and with {@code --path} what the door decides for that path, by
     * the server's own code ({@link CfengineDoor}).
     */
    private Integer cfengine(PrintWriter err) {
        InetAddress client;
        RSAPublicKey key;
        ServerSnapshot snapshot;
        try {
            if (!IP_LITERAL.matcher(address).matches()) {
                throw new IOException("--address: '" + address + "' is not an IP address");
            }
            client = InetAddress.getByName(address);
            key = CfengineKey.readPublic(cfengineKey);
        } catch (IOException e) {
            err.println("pintle explain: " + e.getMessage());
            return ExitCodes.CONFIG_ERROR;
        }
        try {
            ServerConfig loaded = config.load();
            snapshot = new SnapshotLoader(loaded, Clock.systemUTC()).load(1);
            out.printf("configuration %s%n", loaded.source());
        } catch (ConfigException | SnapshotException e) {
            err.println("pintle explain: configuration error: " + e.getMessage());
            return ExitCodes.CONFIG_ERROR;
        }
        line("key", INFO, CfengineKey.md5(key) + " " + CfengineKey.sha(key) + " (pin " + KeyHash.sha256(key) + ")");
        line("listener", snapshot.config().cfengine().enabled() ? OK : INFO, snapshot.config().cfengine().enabled()
                ? "[cfengine] listen = " + snapshot.config().cfengine().listen()
                : "[cfengine] listen is not set: the server does not speak CFEngine's protocol");
        Identification identification = CfengineDoor.identify(snapshot, key);
        boolean known = identification instanceof Identification.Authenticated;
        if (identification instanceof Identification.Authenticated authenticated) {
            line("identity", OK, "node " + authenticated.node() + " (its pinned key)");
        } else {
            Identification.Anonymous anonymous = (Identification.Anonymous) identification;
            line("identity", INFO, anonymous.reason().code() + ": " + anonymous.detail());
        }
        Caller caller = new Caller(client, identification);
        boolean inNetworks = snapshot.acl().inAllowedNetworks(caller);
        if (!inNetworks) {
            line("network", REFUSED, "network-not-allowed: " + client.getHostAddress() + " is not in the allowed "
                    + "networks: the connection is closed at once (allowconnects)");
            line("decision", REFUSED, "network-not-allowed");
            return ExitCodes.EXPLAIN_REFUSED;
        }
        line("network", OK, client.getHostAddress() + " is in the allowed networks" + (known ? ""
                : "; a key no node has is admitted from there (trustkeysfrom), for the shared trees only"));
        if (path == null) {
            line("decision", OK, "connection admitted (give --path for a path's decision)");
            return ExitCodes.OK;
        }
        String command = method.toUpperCase(Locale.ROOT);
        CfengineDoor.Resolution resolution = CfengineDoor.resolve(snapshot, caller, command, path,
                CfengineRoutes.resolve(CfengineRoutes.trees(snapshot.config())));
        if (resolution.real() != null) {
            line("file", INFO, path + " is " + resolution.real());
        }
        if (resolution.allowed()) {
            line("decision", OK, "allowed: " + ((Decision.Allow) resolution.decision()).rule());
            return ExitCodes.OK;
        }
        Decision.Deny deny = (Decision.Deny) resolution.decision();
        line("decision", REFUSED, deny.reason() + ": " + deny.detail() + " (the agent gets cf-serverd's "
                + "\"BAD: Unspecified server refusal\")");
        return ExitCodes.EXPLAIN_REFUSED;
    }

    private void line(String step, String status, String text) {
        out.printf("%-11s %-8s %s%n", step, status, text);
    }

    /** Reads every certificate of a PEM file, or one DER certificate: the JDK's factory takes both. */
    private static List<X509Certificate> read(Path file) throws IOException {
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            throw new IOException("--cert: " + file + ": no such file", e);
        }
        List<X509Certificate> chain = new ArrayList<>();
        try {
            for (var certificate : CertificateFactory.getInstance("X.509")
                    .generateCertificates(new ByteArrayInputStream(bytes))) {
                chain.add((X509Certificate) certificate);
            }
        } catch (CertificateException | RuntimeException e) {
            throw new IOException("--cert: " + file + ": not a PEM or DER certificate: " + e.getMessage(), e);
        }
        if (chain.isEmpty()) {
            throw new IOException("--cert: " + file + ": no certificate found");
        }
        return chain;
    }

    private void certificates(List<X509Certificate> chain, Instant now) {
        for (int i = 0; i < chain.size(); i++) {
            X509Certificate certificate = chain.get(i);
            Instant from = certificate.getNotBefore().toInstant();
            Instant to = certificate.getNotAfter().toInstant();
            String validity = now.isBefore(from) ? "not valid yet"
                    : now.isAfter(to) ? "expired" : "valid";
            String code = now.isBefore(from) ? "certificate-not-yet-valid: "
                    : now.isAfter(to) ? "certificate-expired: " : "";
            line("cert[" + i + "]", validity.equals("valid") ? OK : REFUSED, code + "subject '" + name(certificate)
                    + "', issuer '" + certificate.getIssuerX500Principal().getName() + "', serial "
                    + certificate.getSerialNumber().toString(16) + ", " + validity + " " + from + " .. " + to
                    + ", key " + KeyHash.sha256(certificate.getPublicKey())
                    + (certificate.getBasicConstraints() >= 0 ? ", CA" : ""));
        }
    }

    private static String modes(NodeTrust trust, ServerSnapshot snapshot) {
        StringBuilder text = new StringBuilder("[nodes] authentication: cert_pinning ")
                .append(trust.pinning() ? "on" : "off").append(", cert_validation ")
                .append(trust.validation() ? "on" : "off");
        if (trust.validation()) {
            text.append(" (ca_file ").append(trust.ca().file()).append(", ca_max_depth ").append(trust.ca().maxDepth())
                    .append(", id_rules ").append(trust.idRules().stream().map(IdRule::text).toList());
            Path nodesAuth = snapshot.config().nodes().nodesAuthFile();
            if (nodesAuth != null && snapshot.inputs().containsKey(nodesAuth)) {
                text.append(" read from ").append(nodesAuth);
            }
            text.append(')');
        }
        return text.toString();
    }

    private void pinning(ServerSnapshot snapshot, ClientCertificate presented, Instant now) {
        NodeRegistry registry = snapshot.nodes();
        NodeId uid = null;
        if (presented.uidProblem() != null) {
            line("pin.uid", REFUSED, "invalid-uid: " + presented.uidProblem());
        } else if (presented.uid() == null) {
            line("pin.uid", REFUSED, "certificate-without-uid: the subject has no UID attribute");
        } else {
            try {
                uid = new NodeId(presented.uid());
                line("pin.uid", OK, uid.toString());
            } catch (IllegalArgumentException e) {
                line("pin.uid", REFUSED, "invalid-uid: " + e.getMessage());
            }
        }
        if (uid != null) {
            Node entry = registry.node(uid).orElse(null);
            line("pin.list", INFO, entry == null ? "nodeslist.json does not list " + uid
                    : "nodeslist.json lists " + uid + ", key-hash " + entry.keyHash().map(KeyHash::toString)
                            .orElse("(none: the bundles pin its key)"));
            if (!registry.certificatesConfigured()) {
                line("pin.certs", INFO, "no certificate bundle configured ([nodes] certificates): nodeslist.json's "
                        + "key-hash is the only pin");
            }
            for (Path bundle : snapshot.config().nodes().certificates()) {
                CertificateIndex index = snapshot.certificates().get(bundle);
                Set<String> keys = new TreeSet<>();
                if (index != null) {
                    for (CertificateBinding binding : index.bindings()) {
                        if (binding.node().equals(uid)) {
                            keys.add(binding.key().toString());
                        }
                    }
                }
                line("pin.certs", INFO, bundle + " pins " + (keys.isEmpty() ? "no key" : String.join(", ", keys))
                        + " for " + uid);
            }
        }
        Set<NodeId> owners = new TreeSet<>(registry.owners(presented.sha256()));
        owners.addAll(registry.owners(presented.sha512()));
        line("pin.key", INFO, "key " + presented.sha256() + " is pinned for " + (owners.isEmpty() ? "no node"
                : owners.stream().map(NodeId::toString).toList()));
        outcome("pinning", registry.identifyClient(presented, now));
    }

    private void outcome(String step, Identification identification) {
        if (identification instanceof Identification.Authenticated authenticated) {
            line(step, OK, "node " + authenticated.node());
        } else {
            Identification.Anonymous anonymous = (Identification.Anonymous) identification;
            line(step, REFUSED, anonymous.reason().code() + ": " + anonymous.detail());
        }
    }

    private void validation(ServerSnapshot snapshot, ClientCertificate presented, Instant now) {
        NodeTrust trust = snapshot.trust();
        CaTrust ca = trust.ca();
        CaTrust.Verdict verdict = ca.verify(presented.chain(), now);
        List<X509Certificate> path;
        if (verdict instanceof CaTrust.Valid valid) {
            path = valid.path();
            List<String> names = new ArrayList<>();
            for (X509Certificate certificate : path) {
                names.add("'" + name(certificate) + "'");
            }
            line("ca.chain", OK, String.join(" signed by ", names) + " signed by root '" + name(valid.root())
                    + "' of " + ca.file() + "; depth " + valid.depth() + " (ca_max_depth " + ca.maxDepth()
                    + "); valid together " + valid.notBefore() + " .. " + valid.notAfter());
        } else {
            CaTrust.Invalid invalid = (CaTrust.Invalid) verdict;
            path = presented.chain();
            line("ca.chain", REFUSED, invalid.reason().code() + ": " + invalid.detail());
        }
        // The server stops at a refused chain; what follows is shown all the same, for the next fix.
        boolean reached = verdict instanceof CaTrust.Valid;
        String aside = reached ? "" : " (not reached: the chain is refused)";
        String id = null;
        for (IdRule rule : trust.idRules()) {
            if (id != null) {
                line("ca.idrule", INFO, rule.text() + ": not tried");
                continue;
            }
            IdRule.Outcome outcome = rule.read(presented);
            if (outcome.id() != null) {
                id = outcome.id();
                line("ca.idrule", reached ? OK : INFO, rule.text() + ": reads '" + id + "'" + aside);
            } else {
                line("ca.idrule", INFO, rule.text() + ": " + outcome.problem());
            }
        }
        if (id == null) {
            line("ca.idrule", reached ? REFUSED : INFO, "no-node-id: no id rule ([nodes] id_rules) finds a node id"
                    + aside);
        }
        revocation(trust.revocations(), path, reached);
        if (id != null) {
            NodeId node;
            try {
                node = new NodeId(id);
            } catch (IllegalArgumentException e) {
                line("ca.listed", reached ? REFUSED : INFO, "invalid-uid: '" + id + "' is not a node id: "
                        + e.getMessage() + aside);
                return;
            }
            boolean listed = snapshot.nodes().node(node).isPresent();
            line("ca.listed", !reached ? INFO : listed ? OK : REFUSED, (listed ? "nodeslist.json lists " + node
                    : "node-not-listed: nodeslist.json does not list " + node) + aside);
        }
    }

    private void revocation(Revocations revocations, List<X509Certificate> path, boolean verified) {
        if (revocations.crls().isEmpty()) {
            line("ca.crl", INFO, "no CRL ([nodes] crl_files, or crl_url once fetched)");
            return;
        }
        int other = 0;
        boolean listed = false;
        for (Revocations.Crl crl : revocations.crls()) {
            X509CRL list = crl.crl();
            List<String> revoked = new ArrayList<>();
            boolean covers = false;
            for (X509Certificate certificate : path) {
                if (certificate.getIssuerX500Principal().equals(list.getIssuerX500Principal())) {
                    covers = true;
                    if (list.getRevokedCertificate(certificate) != null) {
                        revoked.add("'" + name(certificate) + "' (serial " + certificate.getSerialNumber()
                                .toString(16) + ")");
                    }
                }
            }
            if (!covers) {
                other++;
                continue;
            }
            listed |= !revoked.isEmpty();
            Instant next = crl.nextUpdate();
            String text = "CRL of '" + crl.issuer() + "' (" + crl.file() + "), issued " + crl.thisUpdate()
                    + ", next " + (next == null ? "not said" : next + (Instant.now().isAfter(next) ? " (overdue)"
                            : "")) + ", " + crl.entries() + " entr" + (crl.entries() == 1 ? "y" : "ies") + ": ";
            line("ca.crl", revoked.isEmpty() ? OK : REFUSED, revoked.isEmpty() ? text + "lists no certificate of "
                    + "the path" : "revoked: " + text + "lists " + String.join(", ", revoked));
        }
        if (other > 0) {
            line("ca.crl", INFO, other + " other CRL(s) cover no certificate of the path");
        }
        if (verified && !listed) {
            // The server's own lookup, should it see what the lines above do not.
            String why = revocations.revoked(path);
            if (why != null) {
                line("ca.crl", REFUSED, "revoked: " + why);
            }
        }
    }

    private void denyList(ServerSnapshot snapshot, ClientCertificate presented) {
        Revocations revocations = snapshot.trust().revocations();
        String denied = revocations.deniedKey(presented);
        if (denied != null) {
            line("deny", REFUSED, "revoked: " + denied);
            return;
        }
        Path file = revocations.deniedFile();
        Path configured = snapshot.config().nodes().deniedKeysFile();
        line("deny", OK, "key " + presented.sha256() + " is not denied (" + (file != null ? file + ", "
                + revocations.denied().size() + " key(s)" : configured != null ? configured + " absent"
                        : "no [nodes] denied_keys_file") + ")");
    }

    /**
     * The route's decision: the server's route table finds the route, and {@link Access#decide} decides it, as
     * for the server's own requests.
     */
    private Decision route(ServerSnapshot snapshot, Caller caller, ClientCertificate presented) {
        int query = path.indexOf('?');
        String raw = query >= 0 ? path.substring(0, query) : path;
        Route route = Route.of(false, raw);
        String below = route.rule() == Rule.WEBAPP ? canonical(raw) : route.below(raw);
        String verb = method.toUpperCase(Locale.ROOT);
        line("route", INFO, verb + " " + raw + ": " + route.name().toLowerCase(Locale.ROOT).replace('_', '-'));
        if (route.rule().upload() != null) {
            uploadNote(snapshot, route.rule().upload());
        }
        Decision decision = Access.decide(route.rule(), verb, below, snapshot, caller, presented.certificate(),
                Credentials.NONE);
        if (decision instanceof Decision.Deny deny && deny.absent()) {
            return decision;
        }
        switch (route.rule()) {
            case POLICIES -> file(snapshot.nodeRoot(Access.owner(below)),
                    below.substring(below.indexOf('/') + 1));
            case COMMON -> file(snapshot.share().commonRoot(), below);
            case SHARED_FOLDER -> file(snapshot.config().paths().sharedFolder(), below);
            default -> { }
        }
        return decision;
    }

    /** The path as Apache matches it: decoded, dot segments resolved; null when it cannot be read so. */
    private static String canonical(String raw) {
        try {
            return new URI(raw).normalize().getPath();
        } catch (URISyntaxException e) {
            return null;
        }
    }

    private void uploadNote(ServerSnapshot snapshot, UploadKind kind) {
        ServerConfig.Uploads uploads = snapshot.config().uploads();
        if (uploads.enabled() && snapshot.trust().pinning()) {
            line("upload", INFO, "with cert_pinning on, uploads also accept HTTP Basic credentials of "
                    + uploads.users(kind) + " (the agent's DAVUSER/DAVPASSWORD); explain sends none");
        }
    }

    /** Whether the path names a file or directory under the root, resolved as the server does, never read. */
    private void file(Path root, String relative) {
        try {
            Path real = SafePaths.resolve(root, relative);
            line("file", OK, real + (Files.isDirectory(real) ? " (directory)" : "") + " exists");
        } catch (UnsafePathException e) {
            line("file", REFUSED, "path-rejected: " + e.getMessage());
        } catch (NoSuchFileException e) {
            line("file", INFO, "no such file under " + root + " (404 once access is allowed)");
        } catch (IOException e) {
            line("file", INFO, root + ": " + e.getMessage());
        }
    }

    private static String name(X509Certificate certificate) {
        return certificate.getSubjectX500Principal().getName();
    }
}
