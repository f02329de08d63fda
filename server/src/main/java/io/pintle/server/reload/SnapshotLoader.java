package io.pintle.server.reload;

import io.pintle.server.acl.AllowedNetworks;
import io.pintle.server.acl.NetworksLoader;
import io.pintle.server.acl.PolicyServerNetworks;
import io.pintle.server.config.ServerConfig;
import io.pintle.server.nodes.ApacheIdRules;
import io.pintle.server.nodes.CaTrust;
import io.pintle.server.nodes.CertificateBinding;
import io.pintle.server.nodes.CertificateIndex;
import io.pintle.server.nodes.CertificatesLoader;
import io.pintle.server.nodes.IdRule;
import io.pintle.server.nodes.KeyHash;
import io.pintle.server.nodes.NodeRegistry;
import io.pintle.server.nodes.NodesList;
import io.pintle.server.nodes.NodeTrust;
import io.pintle.server.nodes.NodesListLoader;
import io.pintle.server.nodes.PolicyServerPinLoader;
import io.pintle.server.nodes.Revocations;
import io.pintle.server.policy.Freeze;
import io.pintle.server.policy.FreezeFile;
import io.pintle.server.policy.ShareTree;
import io.pintle.server.tls.KeyFilePermissions;
import io.pintle.server.tls.ServerCredentials;
import io.pintle.server.uploads.Htpasswd;
import io.pintle.server.uploads.UploadUsers;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Function;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Builds a complete snapshot from the files the configuration names, or fails naming the file. Each input is read
 * once; what status shows of it and its parsed form come from the same bytes. Given the previous snapshot, inputs
 * whose bytes did not change are not parsed again, and the nodes list and certificate bundles reuse the entries
 * and blocks whose bytes did not change.
 */
public final class SnapshotLoader {
    private static final Logger LOG = LoggerFactory.getLogger(SnapshotLoader.class);

    private final ServerConfig config;
    private final Clock clock;
    private final Predicate<Path> writable;

    /**
     * @param config the configuration naming the input files
     * @param clock the clock stamping snapshots
     */
    public SnapshotLoader(ServerConfig config, Clock clock) {
        this(config, clock, Files::isWritable);
    }

    /**
     * @param config the configuration naming the input files
     * @param clock the clock stamping snapshots
     * @param writable whether this process may write into a directory: {@code Files::isWritable} (access(2),
     *     which also sees read-only mounts), or a stand-in for tests, since root passes access(2) whatever the mode
     */
    public SnapshotLoader(ServerConfig config, Clock clock, Predicate<Path> writable) {
        this.config = config;
        this.clock = clock;
        this.writable = writable;
    }

    /**
     * @param config a configuration
     * @return every file a snapshot built from it reads (the configuration file itself when it exists), in a
     *     stable order without duplicates
     */
    public static List<Path> inputFiles(ServerConfig config) {
        Set<Path> files = new LinkedHashSet<>();
        if (config.source() != null && Files.exists(config.source())) {
            files.add(config.source());
        }
        files.add(config.nodes().list());
        files.addAll(config.nodes().certificates());
        if (config.networks().allowedFile() != null) {
            files.add(config.networks().allowedFile());
        }
        Path policyServerFile = config.networks().policyServerFile();
        if (policyServerFile != null && (config.networks().policyServerFileRequired()
                || Files.exists(policyServerFile))) {
            files.add(policyServerFile);
        }
        if (config.nodes().validation()) {
            files.add(config.nodes().caFile());
        }
        files.addAll(config.nodes().crlFiles());
        Path fetched = fetchedCrl(config);
        if (fetched != null && Files.exists(fetched)) {
            files.add(fetched);
        }
        Path denied = config.nodes().deniedKeysFile();
        if (denied != null && (config.nodes().deniedKeysFileRequired() || Files.exists(denied))) {
            files.add(denied);
        }
        Path nodesAuth = config.nodes().nodesAuthFile();
        if (nodesAuth != null && (config.nodes().nodesAuthFileRequired() || Files.exists(nodesAuth))) {
            files.add(nodesAuth);
        }
        files.add(config.tls().certificate());
        files.add(config.tls().key());
        upstreamCertificate(config.upstream()).ifPresent(files::add);
        if (config.uploads().enabled()) {
            files.add(config.uploads().htpasswdInitial());
            files.add(config.uploads().htpasswd());
        }
        return List.copyOf(files);
    }

    /**
     * @param generation the generation number to give the snapshot
     * @return the snapshot, built from scratch
     * @throws SnapshotException naming the file and reason when an input is missing or invalid
     */
    public ServerSnapshot load(long generation) throws SnapshotException {
        return load(generation, null);
    }

    /**
     * @param generation the generation number to give the snapshot
     * @param previous the live snapshot whose unchanged parts may be reused, or null
     * @return the snapshot
     * @throws SnapshotException naming the file and reason when an input is missing or invalid
     */
    public ServerSnapshot load(long generation, ServerSnapshot previous) throws SnapshotException {
        try {
            Map<Path, byte[]> contents = new HashMap<>();
            Map<Path, InputFile> inputs = new LinkedHashMap<>();
            for (Path file : inputFiles(config)) {
                byte[] content;
                try {
                    content = read(file);
                } catch (IOException e) {
                    if (optionalAndGone(file, e)) {
                        continue;
                    }
                    throw e;
                }
                inputs.put(file, secret(config, file) ? InputFile.secret(content) : InputFile.of(content));
                contents.put(file, content);
            }
            Reuse reuse = new Reuse(previous, inputs);

            Path networksFile = config.networks().allowedFile();
            AllowedNetworks networks = NetworksLoader.parse(
                    networksFile == null ? null : new String(contents.get(networksFile), StandardCharsets.UTF_8),
                    networksFile, config.networks().allowed(), "networks.allowed");

            PolicyServerNetworks policyServerNetworks = policyServerNetworks(config.networks(), contents);

            // The two big inputs of a root (every node of the fleet) are parsed side by side.
            Path list = config.nodes().list();
            NodesList previousList = previous != null ? previous.nodesList() : NodesList.EMPTY;
            CompletableFuture<NodesList> nodes = reuse.unchanged(list)
                    ? CompletableFuture.completedFuture(previousList)
                    : CompletableFuture.supplyAsync(() -> parseNodes(contents.get(list), list, previousList));

            Map<Path, CertificateIndex> certificates = new LinkedHashMap<>();
            List<CertificateBinding> bindings = new ArrayList<>();
            for (Path file : config.nodes().certificates()) {
                CertificateIndex before = previous != null
                        ? previous.certificates().getOrDefault(file, CertificateIndex.EMPTY)
                        : CertificateIndex.EMPTY;
                CertificateIndex index = reuse.unchanged(file) && previous.certificates().containsKey(file)
                        ? before
                        : CertificatesLoader.parse(contents.get(file), file, LOG::warn, before);
                certificates.put(file, index);
                bindings.addAll(index.bindings());
            }

            // Checked at every load, not only when the key's bytes change: a chmod changes no byte.
            KeyFilePermissions.check(config.tls().key(), config.tls().allowWorldReadableKey());
            ServerCredentials credentials =
                    reuse.unchanged(config.tls().certificate()) && reuse.unchanged(config.tls().key())
                            ? previous.credentials()
                            : ServerCredentials.load(config.tls().certificate(), config.tls().key());

            KeyHash upstreamPin = upstreamPin(config.upstream(), contents);

            Path share = config.paths().share();
            if (!Files.isDirectory(share)) {
                throw new IOException(share + ": share directory does not exist (paths.share)");
            }
            requireRelaySyncCanWrite();
            NodesList nodesList = join(nodes);
            // With bundles configured, a node is known only when nodeslist.json and a bundle both pin its key
            // (NodeRegistry): a reload between Rudder's two renames then refuses the node in flux.
            NodeRegistry registry = config.nodes().certificates().isEmpty()
                    ? NodeRegistry.of(nodesList.nodes())
                    : NodeRegistry.of(nodesList.nodes(), bindings);
            UploadUsers uploadUsers = uploadUsers(config.uploads(), contents, reuse, writable);
            NodeTrust trust = trust(contents, reuse);
            X509Certificate served = credentials.chain().get(0);
            if (trust.pinning() && trust.validation()
                    && served.getSubjectX500Principal().equals(served.getIssuerX500Principal())) {
                LOG.warn("{}: both trust modes are on but the server certificate is self-signed: agents in "
                        + "certificate-validation mode verify it against {} and will refuse it. Give the server a "
                        + "certificate of its agent key signed by the CA (server.cert and server.key, or [tls] "
                        + "certificate/key), so that pinned and CA agents both accept it", config.tls().certificate(),
                        config.nodes().caFile());
            }
            return new ServerSnapshot(generation, clock.instant(), config, config.general().nodeId(), registry,
                    networks, new ShareTree(share), credentials, upstreamPin, inputs, nodesList, certificates,
                    uploadUsers, policyServerNetworks, trust, freeze(previous));
        } catch (IOException e) {
            throw new SnapshotException(e.getMessage(), e);
        }
    }

    /**
     * A reload keeps the freeze in force (only the freeze API changes it); the first load reads the one a previous
     * process left, and fails the start when it names copies that are gone.
     */
    private Freeze freeze(ServerSnapshot previous) throws IOException {
        if (previous != null) {
            return previous.freeze();
        }
        try {
            return new FreezeFile(config.paths().state()).read();
        } catch (IOException e) {
            throw new IOException("[paths] state: cannot restore the freeze: " + e.getMessage(), e);
        }
    }

    /**
     * Rudder's {@code rudder-networks-policy-server-24.conf}, in the format of the allowed networks file. Its
     * default path may be absent (a root or relay without Rudder's Apache configuration): then nobody is admitted
     * by address. A path set in the configuration must exist.
     */
    private static PolicyServerNetworks policyServerNetworks(ServerConfig.Networks networks,
            Map<Path, byte[]> contents) throws IOException {
        Path file = networks.policyServerFile();
        if (file == null) {
            return PolicyServerNetworks.NONE;
        }
        byte[] content = contents.get(file);
        if (content == null) {
            return PolicyServerNetworks.absent(file);
        }
        return new PolicyServerNetworks(file, true, NetworksLoader.parse(
                new String(content, StandardCharsets.UTF_8), file, List.of(), "networks.policy_server_file"));
    }

    /**
     * @param config a configuration
     * @return where its fetched CRL is kept ({@code [nodes] crl_fetch_file}), or null when it fetches none; absent
     *     until the first good fetch, and then a CRL input like {@code crl_files}
     */
    public static Path fetchedCrl(ServerConfig config) {
        return config.nodes().crlUrl() != null ? config.nodes().crlFetchFile() : null;
    }

    /**
     * The default policy-server networks file or deny list, or the fetched CRL, removed between listing the inputs
     * and reading them.
     */
    private boolean optionalAndGone(Path file, IOException e) {
        boolean optional = file.equals(config.networks().policyServerFile())
                && !config.networks().policyServerFileRequired()
                || file.equals(config.nodes().deniedKeysFile()) && !config.nodes().deniedKeysFileRequired()
                || file.equals(fetchedCrl(config))
                || file.equals(config.nodes().nodesAuthFile()) && !config.nodes().nodesAuthFileRequired();
        return optional && e.getCause() instanceof NoSuchFileException;
    }

    /**
     * The trust modes, the CA bundle (the previous object when its bytes did not change, so that open connections
     * keep their verified chains), the CRLs (the files, then the fetched one once there is one), checked against the
     * bundle, and the deny list.
     */
    private NodeTrust trust(Map<Path, byte[]> contents, Reuse reuse) throws IOException {
        ServerConfig.Nodes nodes = config.nodes();
        CaTrust ca = null;
        if (nodes.validation()) {
            CaTrust before = reuse.previous() != null ? reuse.previous().trust().ca() : null;
            ca = before != null && reuse.unchanged(nodes.caFile()) && before.file().equals(nodes.caFile())
                    && before.maxDepth() == nodes.caMaxDepth()
                    ? before
                    : CaTrust.parse(contents.get(nodes.caFile()), nodes.caFile(), nodes.caMaxDepth());
        }
        List<Revocations.Crl> crls = new ArrayList<>();
        for (Path file : nodes.crlFiles()) {
            crls.addAll(crls(file, contents, reuse, ca));
        }
        Path fetched = fetchedCrl(config);
        if (fetched != null && contents.containsKey(fetched)) {
            crls.addAll(crls(fetched, contents, reuse, ca));
        }
        Path deniedFile = nodes.deniedKeysFile();
        byte[] denied = deniedFile != null ? contents.get(deniedFile) : null;
        Revocations revocations = crls.isEmpty() && denied == null ? Revocations.NONE
                : new Revocations(crls, denied == null ? Set.of() : Revocations.parseDenied(denied, deniedFile),
                        denied == null ? null : deniedFile);
        for (Revocations.Crl crl : crls) {
            if (crl.nextUpdate() != null && clock.instant().isAfter(crl.nextUpdate())) {
                LOG.warn("{}: the CRL of '{}' was due again on {}; its revocations still apply, but newer ones are "
                        + "not known: fetch a fresh one from the CA", crl.file(), crl.issuer(), crl.nextUpdate());
            }
        }
        Path nodesAuth = nodes.nodesAuthFile();
        List<IdRule> idRules = nodesAuth != null && contents.containsKey(nodesAuth)
                ? ApacheIdRules.parse(contents.get(nodesAuth), nodesAuth)
                : nodes.idRules();
        return new NodeTrust(nodes.authentication(), ca, idRules, revocations);
    }

    /**
     * A CRL file's lists: the previous snapshot's when the file's bytes and the CA bundle they were verified against
     * are the same (a CA's list can hold thousands of entries, and most reloads are for the node list), else parsed
     * and verified.
     */
    private static List<Revocations.Crl> crls(Path file, Map<Path, byte[]> contents, Reuse reuse, CaTrust ca)
            throws IOException {
        ServerSnapshot previous = reuse.previous();
        if (previous != null && reuse.unchanged(file) && previous.trust().ca() == ca) {
            List<Revocations.Crl> kept = new ArrayList<>();
            for (Revocations.Crl crl : previous.trust().revocations().crls()) {
                if (crl.file().equals(file)) {
                    kept.add(crl);
                }
            }
            if (!kept.isEmpty()) {
                return kept;
            }
        }
        return Revocations.parseCrls(contents.get(file), file, ca);
    }

    /** The server's key and the password files: kept as their digest only, never their bytes. */
    private static boolean secret(ServerConfig config, Path file) {
        return file.equals(config.tls().key()) || config.uploads().enabled()
                && (file.equals(config.uploads().htpasswd()) || file.equals(config.uploads().htpasswdInitial()));
    }

    private static UploadUsers uploadUsers(ServerConfig.Uploads uploads, Map<Path, byte[]> contents, Reuse reuse,
            Predicate<Path> writable) throws IOException {
        if (!uploads.enabled()) {
            return UploadUsers.NONE;
        }
        for (Path directory : uploads.directories()) {
            if (!Files.isDirectory(directory)) {
                throw new IOException(directory + ": upload directory does not exist (create it, or set [uploads] "
                        + "enabled = false on a server that takes no inventories or reports)");
            }
            if (!writable.test(directory)) {
                throw new IOException(directory + ": upload directory is not writable by this process (uploads "
                        + "would all fail); give it write access, or set [uploads] enabled = false");
            }
        }
        Htpasswd initial = htpasswd(uploads.htpasswdInitial(), contents, reuse, UploadUsers::initial);
        Htpasswd webdav = htpasswd(uploads.htpasswd(), contents, reuse, UploadUsers::webdav);
        return new UploadUsers(initial, webdav);
    }

    private static Htpasswd htpasswd(Path file, Map<Path, byte[]> contents, Reuse reuse,
            Function<UploadUsers, Htpasswd> previous) throws IOException {
        if (reuse.unchanged(file)) {
            Htpasswd before = previous.apply(reuse.previous().uploadUsers());
            if (before != Htpasswd.EMPTY) {
                return before;
            }
        }
        return Htpasswd.parse(contents.get(file), file);
    }

    /**
     * A relay that syncs from its policy server writes into the share, next to the shared folder and next to the
     * inputs it copies; where it may not (Rudder keeps {@code /var/rudder/share} {@code root} 2755, and a hardened
     * unit mounts it read-only), every round would fail, in the logs only. Checked at every load: a chmod changes
     * no byte of any input.
     */
    private void requireRelaySyncCanWrite() throws IOException {
        if (!RelaySyncTargets.wanted(config)) {
            return;
        }
        List<String> refused = new ArrayList<>();
        for (RelaySyncTargets.Target target : RelaySyncTargets.of(config)) {
            // A missing directory is created by the sync (client-lib creates a synced tree's parents): then it
            // is the nearest existing one that must be writable.
            Path directory = target.directory();
            Path existing = directory;
            while (!Files.isDirectory(existing) && existing.getParent() != null) {
                existing = existing.getParent();
            }
            if (writable.test(existing)) {
                continue;
            }
            String where = directory.equals(target.synced()) ? "in " + directory
                    : "next to " + target.synced() + ", in " + directory;
            refused.add(target.key() + ": the sync writes " + where + (existing.equals(directory) ? ", which"
                    : ", which does not exist yet; " + existing + ", where it would be created,")
                    + " is not writable by this process" + modes(existing));
        }
        if (!refused.isEmpty()) {
            throw new IOException("relay sync ([upstream] sync = true) cannot write where it must: "
                    + String.join("; ", refused) + ". Set [upstream] sync = false to serve what Rudder's own relay "
                    + "synchronisation writes there, or point the synced trees at a directory this user owns, such "
                    + "as the unit's state directory /var/lib/pintle: [paths] share = \"/var/lib/pintle/share\", "
                    + "shared_folder = \"/var/lib/pintle/shared-folder\", [nodes] list = "
                    + "\"/var/lib/pintle/nodeslist.json\", certificates = [\"/var/lib/pintle/nodescerts.pem\"]");
        }
    }

    /**
     * The policy server's certificate is an input only when its key is not given directly: a root (no url) never
     * reads it, and {@code key_hash} takes precedence.
     */
    private static Optional<Path> upstreamCertificate(ServerConfig.Upstream upstream) {
        return upstream.configured() && upstream.keyHash() == null
                ? Optional.of(upstream.certificate())
                : Optional.empty();
    }

    private static KeyHash upstreamPin(ServerConfig.Upstream upstream, Map<Path, byte[]> contents)
            throws IOException {
        if (!upstream.configured()) {
            return null;
        }
        if (upstream.keyHash() != null) {
            // The configuration loader checked its form already.
            return KeyHash.parse(upstream.keyHash()).orElseThrow();
        }
        return PolicyServerPinLoader.parse(contents.get(upstream.certificate()), upstream.certificate());
    }

    private static NodesList parseNodes(byte[] content, Path file, NodesList previous) {
        try {
            return NodesListLoader.parse(content, file, previous);
        } catch (IOException e) {
            throw new CompletionException(e);
        }
    }

    private static NodesList join(CompletableFuture<NodesList> nodes) throws IOException {
        try {
            return nodes.join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof IOException io) {
                throw io;
            }
            throw e;
        }
    }

    private static byte[] read(Path file) throws IOException {
        try {
            return InputFile.read(file);
        } catch (NoSuchFileException e) {
            throw new IOException(file + ": no such file", e);
        } catch (AccessDeniedException e) {
            throw new IOException(file + ": cannot read: permission denied" + modes(file) + ". Do not change its "
                    + "mode: Rudder's agent sets it back (0600 root for the server key and the networks file) within "
                    + "minutes. Run Pintle with the capability to read files whatever their mode, "
                    + "CAP_DAC_READ_SEARCH, as its systemd unit does (AmbientCapabilities=), or as root", e);
        } catch (IOException e) {
            throw new IOException(file + ": cannot read: " + e.getMessage(), e);
        }
    }

    /** @return the file's mode and owners against this process's user, for an operator; empty when unknown */
    private static String modes(Path file) {
        try {
            PosixFileAttributes attributes = Files.readAttributes(file, PosixFileAttributes.class);
            Object uid = Files.getAttribute(Path.of("/proc/self"), "unix:uid");
            return " (" + PosixFilePermissions.toString(attributes.permissions()) + " "
                    + attributes.owner().getName() + ":" + attributes.group().getName() + "; Pintle runs as uid "
                    + uid + ")";
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            return "";
        }
    }

    /** Which inputs are byte-identical to the previous snapshot's. */
    private record Reuse(ServerSnapshot previous, Map<Path, InputFile> inputs) {
        boolean unchanged(Path file) {
            return previous != null && inputs.get(file).sameContent(previous.inputs().get(file));
        }
    }
}
