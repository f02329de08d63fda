package io.pintle.bench.fleet;

import io.pintle.bench.harness.Pem;
import io.pintle.server.nodes.KeyHash;
import io.pintle.server.tls.SelfSigned;
import io.pintle.server.uploads.Htpasswd;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.net.InetSocketAddress;
import java.security.KeyPair;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * The fleet on disk, as Rudder lays it out: a root server directory, one per relay (or per replica of the root),
 * the nodes' keys and certificates, and the agents' node table and schedule.
 *
 * <p>Each server directory holds {@code server/} (uuid.hive, agent.cert, localhost.priv, the WebDAV password files
 * with Rudder's {@code rudder:rudder}), {@code lib/} (nodeslist.json, nodescerts.pem, the networks include),
 * {@code share/}, {@code shared-folder/}, {@code shared-files/} and {@code uploads/}. The root's share has what
 * Rudder's generation writes: {@code share/<node>/rules/} for its own nodes, {@code share/<relay>/share/<node>/rules/}
 * for the relays' nodes and {@code share/<relay>/rules/cfengine-community/...} with each relay's nodeslist.json and
 * nodescerts.pem; a relay's share starts empty and is filled by its sync. Replicas of the root share one input
 * tree (the root's), each with its own configuration.
 */
final class FleetLayout {
    static final String ROOT_ID = "root";
    static final String LIBRARY = "common/policies-library-linux.tar.bz2";
    static final String ARCHIVE = "rules/rudder.tar.bz2";
    static final String RELAY_NODES_LIST = "rules/cfengine-community/rudder-service-relayd/1.0/relay/nodeslist.json";
    static final String RELAY_NODES_CERTIFICATES =
            "rules/cfengine-community/rudder-service-apache/1.0/apache/nodescerts.pem";
    /** Where agents and servers listen: the same port on every address, as 443 on every real machine. */
    private static final int CHUNK = 500;

    private final FleetOptions options;
    private final NodeTree tree;
    private final Path dir;
    private final List<String> nodeIds = new ArrayList<>();
    /** For each node: 0 for the root, r for relay r (1-based). */
    private final int[] serverOf;
    private final List<String> relayIds = new ArrayList<>();
    private final List<String> serverPins = new ArrayList<>();
    private final List<X509Certificate> serverCertificates = new ArrayList<>();
    private PrivateKey[] keys;
    private List<X509Certificate> certificates;
    private int rsaNodes;
    private int scheduledRuns;
    private int scheduledInventories;

    FleetLayout(FleetOptions options) {
        this(options, NodeTree.SMALL);
    }

    /** @param tree what each node's {@code rules/} holds beside its archive, at the first write and every generation */
    FleetLayout(FleetOptions options, NodeTree tree) {
        this.options = options;
        this.tree = tree;
        this.dir = options.work();
        this.serverOf = new int[options.nodes()];
    }

    Path dir() {
        return dir;
    }

    /** @return the root's directory (also the replicas' shared inputs) */
    Path rootDir() {
        return dir.resolve(ROOT_ID);
    }

    Path relayDir(int relay) {
        return dir.resolve("relay-" + relay);
    }

    String relayId(int relay) {
        return relayIds.get(relay - 1);
    }

    /** @return the loopback address the root listens on (HAProxy's when there are replicas) */
    static String rootHost() {
        return "127.0.0.1";
    }

    /** @return relay {@code relay}'s (1-based) loopback address */
    static String relayHost(int relay) {
        return "127.0.0." + (10 + relay);
    }

    /** @return replica {@code replica}'s (1-based) loopback address */
    static String replicaHost(int replica) {
        return "127.0.0." + (100 + replica);
    }

    String nodeId(int node) {
        return nodeIds.get(node);
    }

    int serverOf(int node) {
        return serverOf[node];
    }

    int nodes() {
        return nodeIds.size();
    }

    int rsaNodes() {
        return rsaNodes;
    }

    /** @return the runs in the schedule (all before the duration's end) */
    int scheduledRuns() {
        return scheduledRuns;
    }

    /** @return the inventories in the schedule */
    int scheduledInventories() {
        return scheduledInventories;
    }

    /** @return the pin agents of server {@code server} (0: the root) use */
    String serverPin(int server) {
        return serverPins.get(server);
    }

    Path nodesTable() {
        return dir.resolve("agents/nodes.tsv");
    }

    Path schedule() {
        return dir.resolve("agents/schedule.tsv");
    }

    /**
     * Writes everything. The node keys are made on every core (EC P-256 each, RSA-4096 from a pool of 16 keys, each
     * node with its own certificate: what a handshake costs depends on the key's type, not on who else has it).
     *
     * @param port the port every server listens on
     * @param progress where progress is said
     */
    void write(int port, PrintStream progress) throws IOException, InterruptedException {
        Files.createDirectories(dir.resolve("agents"));
        Files.createDirectories(dir.resolve("nodes"));
        int relays = options.relays();
        for (int relay = 1; relay <= relays; relay++) {
            relayIds.add(UUID.nameUUIDFromBytes(("pintle-fleet-relay-" + relay).getBytes(StandardCharsets.UTF_8))
                    .toString());
        }
        // Servers: the root (or the replicas' shared inputs) and each relay.
        SelfSigned.KeyType serverType = options.serverKey().equals("rsa") ? SelfSigned.KeyType.RSA_4096
                : SelfSigned.KeyType.EC_P256;
        List<SelfSigned.Identity> servers = new ArrayList<>();
        servers.add(SelfSigned.generate(serverType, ROOT_ID));
        for (int relay = 1; relay <= relays; relay++) {
            servers.add(SelfSigned.generate(serverType, relayId(relay)));
        }
        for (int server = 0; server <= relays; server++) {
            Path serverDir = server == 0 ? rootDir() : relayDir(server);
            writeServer(serverDir, server == 0 ? ROOT_ID : relayId(server), servers.get(server));
            serverPins.add(KeyHash.sha256(servers.get(server).certificate().getPublicKey()).toString());
            serverCertificates.add(servers.get(server).certificate());
        }

        // Nodes: the root's share first, the rest round-robin over the relays.
        int rootNodes = (int) Math.round(options.nodes() * options.rootShare());
        for (int node = 0; node < options.nodes(); node++) {
            nodeIds.add(UUID.nameUUIDFromBytes(("pintle-fleet-node-" + node).getBytes(StandardCharsets.UTF_8))
                    .toString());
            serverOf[node] = node < rootNodes || relays == 0 ? 0 : 1 + (node - rootNodes) % relays;
        }
        keys = new PrivateKey[options.nodes()];
        certificates = identities(progress);

        progress.println("writing nodes lists, certificate bundles and policies");
        writeRegistries(certificates, servers);
        byte[] filler = randomBytes(options.policyBytes(), 1);
        NodeTree.Writer files = tree.writer(1);
        for (int node = 0; node < nodes(); node++) {
            writePolicies(node, 1, filler, files);
        }
        Path library = rootDir().resolve("share").resolve(LIBRARY);
        Files.createDirectories(library.getParent());
        Files.write(library, randomBytes(options.libraryBytes(), 2));
        writeNodesTable(port);
        writeSchedule();
    }

    private List<X509Certificate> identities(PrintStream progress) throws InterruptedException, IOException {
        int threads = Runtime.getRuntime().availableProcessors();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        List<X509Certificate> certificates = new ArrayList<>(nodes());
        try {
            int poolSize = 16;
            List<Future<KeyPair>> rsaFutures = new ArrayList<>();
            rsaNodes = (int) Math.round(nodes() * options.rsaShare());
            for (int i = 0; i < Math.min(poolSize, rsaNodes); i++) {
                rsaFutures.add(pool.submit(() -> SelfSigned.keyPair(SelfSigned.KeyType.RSA_4096)));
            }
            List<KeyPair> rsaPool = new ArrayList<>();
            for (Future<KeyPair> future : rsaFutures) {
                rsaPool.add(future.get());
            }
            progress.printf("generating %,d node identities (%,d RSA-4096 from a pool of %d keys, the rest EC P-256)%n",
                    nodes(), rsaNodes, rsaPool.size());
            List<Future<List<X509Certificate>>> chunks = new ArrayList<>();
            for (int from = 0; from < nodes(); from += CHUNK) {
                int start = from;
                int end = Math.min(nodes(), from + CHUNK);
                chunks.add(pool.submit(() -> {
                    List<X509Certificate> made = new ArrayList<>(end - start);
                    for (int node = start; node < end; node++) {
                        made.add(writeIdentity(node, rsaPool));
                    }
                    return made;
                }));
            }
            for (Future<List<X509Certificate>> chunk : chunks) {
                certificates.addAll(chunk.get());
                if (certificates.size() % 10_000 == 0 || certificates.size() == nodes()) {
                    progress.printf("  %,d of %,d node identities%n", certificates.size(), nodes());
                }
            }
        } catch (ExecutionException e) {
            throw new IOException("identity generation failed", e.getCause());
        } finally {
            pool.shutdownNow();
        }
        return certificates;
    }

    /** RSA nodes are spread evenly (every k-th node), so that each server gets its share. */
    private boolean isRsa(int node) {
        if (rsaNodes == 0) {
            return false;
        }
        double step = (double) nodes() / rsaNodes;
        return Math.floor(node / step) != Math.floor((node - 1) / step) || node == 0;
    }

    private X509Certificate writeIdentity(int node, List<KeyPair> rsaPool) throws IOException {
        KeyPair pair = isRsa(node) ? rsaPool.get(node % rsaPool.size()) : SelfSigned.keyPair(SelfSigned.KeyType.EC_P256);
        keys[node] = pair.getPrivate();
        Instant now = Instant.now();
        X509Certificate certificate = SelfSigned.certificate(pair, SelfSigned.subject(nodeId(node)),
                now.minus(Duration.ofMinutes(5)), now.plus(SelfSigned.RUDDER_VALIDITY));
        String key = "-----BEGIN PRIVATE KEY-----\n"
                + Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(pair.getPrivate().getEncoded())
                + "\n-----END PRIVATE KEY-----\n";
        Path file = nodePem(node);
        Files.writeString(file, key + new String(Pem.certificate(certificate), StandardCharsets.US_ASCII));
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        return certificate;
    }

    Path nodePem(int node) {
        return dir.resolve("nodes").resolve(nodeId(node) + ".pem");
    }

    private void writeServer(Path serverDir, String id, SelfSigned.Identity identity) throws IOException {
        for (String sub : List.of("server", "lib", "share", "shared-folder", "shared-files", "uploads/inventories",
                "uploads/inventory-updates", "uploads/reports")) {
            Files.createDirectories(serverDir.resolve(sub));
        }
        Files.writeString(serverDir.resolve("server/uuid.hive"), id + "\n");
        SelfSigned.writeCertificates(serverDir.resolve("server/agent.cert"), identity.certificate());
        SelfSigned.writePrivateKey(serverDir.resolve("server/localhost.priv"), identity.keyPair().getPrivate(), true);
        Files.setPosixFilePermissions(serverDir.resolve("server/localhost.priv"),
                PosixFilePermissions.fromString("rw-------"));
        String user = Htpasswd.apr1Line("rudder", "rudder") + "\n";
        Files.writeString(serverDir.resolve("server/htpasswd-webdav-initial"), user);
        Files.writeString(serverDir.resolve("server/htpasswd-webdav"), user);
        Files.writeString(serverDir.resolve("lib/networks.conf"), "Require ip 127.0.0.0/8\n");
    }

    /** The root's list has every node and relay; each relay's (generated on the root, as Rudder does) its own. */
    private void writeRegistries(List<X509Certificate> certificates, List<SelfSigned.Identity> servers)
            throws IOException {
        int relays = options.relays();
        List<StringBuilder> lists = new ArrayList<>();
        List<StringBuilder> bundles = new ArrayList<>();
        for (int server = 0; server <= relays; server++) {
            lists.add(new StringBuilder("{\n"));
            bundles.add(new StringBuilder());
        }
        for (int relay = 1; relay <= relays; relay++) {
            entry(lists.get(0), relayId(relay), "relay-" + relay + ".fleet.example",
                    KeyHash.sha256(servers.get(relay).certificate().getPublicKey()), ROOT_ID);
            bundles.get(0).append(new String(Pem.certificate(servers.get(relay).certificate()),
                    StandardCharsets.US_ASCII));
        }
        for (int node = 0; node < nodes(); node++) {
            int server = serverOf[node];
            String policyServer = server == 0 ? ROOT_ID : relayId(server);
            KeyHash pin = KeyHash.sha256(certificates.get(node).getPublicKey());
            String hostname = String.format(Locale.ROOT, "node-%06d.fleet.example", node);
            String pem = new String(Pem.certificate(certificates.get(node)), StandardCharsets.US_ASCII);
            entry(lists.get(0), nodeId(node), hostname, pin, policyServer);
            bundles.get(0).append(pem);
            if (server > 0) {
                entry(lists.get(server), nodeId(node), hostname, pin, policyServer);
                bundles.get(server).append(pem);
            }
        }
        for (int server = 0; server <= relays; server++) {
            StringBuilder list = lists.get(server);
            if (list.length() > 2) {
                list.setLength(list.length() - 2); // the last ",\n"
            }
            list.append("\n}\n");
        }
        write(rootDir().resolve("lib/nodeslist.json"), lists.get(0).toString());
        write(rootDir().resolve("lib/nodescerts.pem"), bundles.get(0).toString());
        for (int relay = 1; relay <= relays; relay++) {
            Path relayRules = rootDir().resolve("share").resolve(relayId(relay));
            write(relayRules.resolve(RELAY_NODES_LIST), lists.get(relay).toString());
            write(relayRules.resolve(RELAY_NODES_CERTIFICATES), bundles.get(relay).toString());
            // The relay starts with what its own agent last copied: the same files.
            write(relayDir(relay).resolve("lib/nodeslist.json"), lists.get(relay).toString());
            write(relayDir(relay).resolve("lib/nodescerts.pem"), bundles.get(relay).toString());
        }
    }

    private static void entry(StringBuilder list, String id, String hostname, KeyHash pin, String policyServer) {
        list.append("  \"").append(id).append("\": {\"hostname\": \"").append(hostname).append("\", \"key-hash\": \"")
                .append(pin).append("\", \"policy-server\": \"").append(policyServer).append("\"},\n");
    }

    /** @return the root's and relays' certificates (the keys agents pin) */
    List<X509Certificate> serverCertificates() {
        return List.copyOf(serverCertificates);
    }

    /**
     * @param share the share of the nodes that hold a channel, spread evenly over the servers
     * @return whether node {@code node} is one of them
     */
    static boolean holdsChannel(int node, double share) {
        return share > 0 && Math.floor(node * share) != Math.floor((node + 1) * share);
    }

    /**
     * @param port where every server listens
     * @param channelNodes the nodes that hold a channel, by channel index
     * @return those nodes as order-channel clients, each polling its own server
     */
    io.pintle.bench.channels.PullNodes pullNodes(int port, int[] channelNodes) {
        return new io.pintle.bench.channels.PullNodes() {
            @Override
            public int count() {
                return channelNodes.length;
            }

            @Override
            public String id(int channel) {
                return nodeId(channelNodes[channel]);
            }

            @Override
            public PrivateKey key(int channel) {
                return keys[channelNodes[channel]];
            }

            @Override
            public X509Certificate certificate(int channel) {
                return certificates.get(channelNodes[channel]);
            }

            @Override
            public java.net.InetAddress source(int channel) throws IOException {
                // The address fleetagents gives the same node: 127.1.0.0 + index + 1.
                int address = (127 << 24) + (1 << 16) + channelNodes[channel] + 1;
                return java.net.InetAddress.getByAddress(new byte[] {(byte) (address >>> 24), (byte) (address >>> 16),
                        (byte) (address >>> 8), (byte) address});
            }

            @Override
            public InetSocketAddress server(int channel) {
                int server = serverOf[channelNodes[channel]];
                return new InetSocketAddress(server == 0 ? rootHost() : relayHost(server), port);
            }
        };
    }

    /** @return where the root keeps node {@code node}'s policies */
    Path rootPolicies(int node) {
        Path share = rootDir().resolve("share");
        int server = serverOf[node];
        return (server == 0 ? share : share.resolve(relayId(server)).resolve("share")).resolve(nodeId(node))
                .resolve("rules");
    }

    /** @return where node {@code node}'s own server serves its policy archive from */
    Path servedArchive(int node) {
        int server = serverOf[node];
        return server == 0 ? rootPolicies(node).resolve("rudder.tar.bz2")
                : relayDir(server).resolve("share").resolve(nodeId(node)).resolve(ARCHIVE);
    }

    /**
     * Writes a node's policies for a generation as Rudder does: {@code rules.new} filled, then renamed over
     * {@code rules}. The archive starts with a line naming the node and the generation (so that every node's
     * differs), then {@code filler} (random, incompressible, as a bzip2 archive is); {@code files} writes the rest
     * (the layout's {@link NodeTree}).
     */
    private void writePolicies(int node, int generation, byte[] filler, NodeTree.Writer files) throws IOException {
        Path rules = rootPolicies(node);
        Path next = rules.resolveSibling("rules.new");
        Files.createDirectories(next);
        String head = archiveHead(node, generation);
        byte[] archive = new byte[filler.length];
        byte[] headBytes = head.getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(filler, 0, archive, 0, filler.length);
        System.arraycopy(headBytes, 0, archive, 0, Math.min(headBytes.length, archive.length));
        Files.write(next.resolve("rudder.tar.bz2"), archive);
        files.write(next, nodeId(node));
        if (Files.exists(rules)) {
            Path old = Files.move(rules, rules.resolveSibling("rules.old"), StandardCopyOption.REPLACE_EXISTING);
            Files.move(next, rules);
            deleteTree(old);
        } else {
            Files.move(next, rules);
        }
    }

    /**
     * Writes generation {@code generation} of every node's policies on the root, node after node, as Rudder's
     * generation does (each with {@link #writePolicies}); every archive shares one filler, seeded by the generation.
     */
    void writeGeneration(int generation) throws IOException {
        byte[] filler = randomBytes(options.policyBytes(), generation + 1);
        NodeTree.Writer files = tree.writer(generation);
        for (int node = 0; node < nodes(); node++) {
            writePolicies(node, generation, filler, files);
        }
    }

    /**
     * @return the most entries a relay's share on the root holds while a generation is written: its nodes'
     *     directories, and a tenth more for what Rudder's swap holds beside them ({@code rules.new} and {@code
     *     rules.old} of the node being written) and the relay's own files
     */
    int largestRelayShareEntries() {
        int[] perRelay = new int[options.relays() + 1];
        for (int node = 0; node < nodes(); node++) {
            perRelay[serverOf[node]]++;
        }
        int largest = 0;
        for (int relay = 1; relay < perRelay.length; relay++) {
            largest = Math.max(largest, perRelay[relay]);
        }
        return largest * tree.entriesPerNode() / 10 * 11 + 100;
    }

    /**
     * @return how a served archive starts for {@code generation} (to tell generations apart on a relay): as a bzip2
     *     file does ({@code BZh9}, then the first block's magic), as Rudder's {@code rudder.tar.bz2} does, so that
     *     servers see it as the compressed file it stands for
     */
    String archiveHead(int node, int generation) {
        return "BZh91AY&SY rudder.tar.bz2 of " + nodeId(node) + " generation " + generation + "\n";
    }

    /**
     * @return whether node {@code node}'s own server serves generation {@code generation} of its archive (false
     *     while the file is missing or cannot be read)
     */
    boolean serves(int node, int generation) {
        byte[] expected = archiveHead(node, generation).getBytes(StandardCharsets.US_ASCII);
        try (InputStream in = Files.newInputStream(servedArchive(node))) {
            return Arrays.equals(in.readNBytes(expected.length), expected);
        } catch (IOException e) {
            return false;
        }
    }

    static byte[] randomBytes(int size, long seed) {
        byte[] bytes = new byte[size];
        new Random(seed).nextBytes(bytes);
        return bytes;
    }

    /** index, node id, host, port, PEM file, server pin: what fleetagents reads. */
    private void writeNodesTable(int port) throws IOException {
        try (BufferedWriter out = Files.newBufferedWriter(nodesTable())) {
            for (int node = 0; node < nodes(); node++) {
                int server = serverOf[node];
                String host = server == 0 ? rootHost() : relayHost(server);
                out.write(node + "\t" + nodeId(node) + "\t" + host + "\t" + port + "\t" + nodePem(node) + "\t"
                        + serverPin(server) + "\n");
            }
        }
    }

    /**
     * The agents' timetable, as cf-execd keeps it: a run every interval, started at the interval's boundary plus
     * the node's own splay (fixed per node: CFEngine's splay is a hash of the host name), so every run of an
     * interval starts within its first {@code splay} seconds; an inventory a day at a node's own time of day. Every
     * time is divided by the compression. Times are in ms from the start.
     */
    private void writeSchedule() throws IOException {
        double c = options.compression();
        double interval = options.intervalSeconds() * 1000 / c;
        double splay = options.splaySeconds() * 1000 / c;
        double day = 86_400_000 / c;
        double duration = options.durationSeconds() * 1000.0;
        SplittableRandom random = new SplittableRandom(24);
        List<long[]> entries = new ArrayList<>();
        for (int node = 0; node < nodes(); node++) {
            double offset = random.nextDouble() * splay;
            for (double t = offset; t < duration; t += interval) {
                entries.add(new long[] {Math.round(t), node, 0});
            }
            for (double t = random.nextDouble() * day; t < duration; t += day) {
                entries.add(new long[] {Math.round(t), node, 1});
            }
        }
        entries.sort((a, b) -> Long.compare(a[0], b[0]));
        scheduledRuns = (int) entries.stream().filter(e -> e[2] == 0).count();
        scheduledInventories = entries.size() - scheduledRuns;
        try (BufferedWriter out = Files.newBufferedWriter(schedule())) {
            for (long[] entry : entries) {
                out.write(entry[0] + "\t" + entry[1] + "\t" + (entry[2] == 0 ? "run" : "inventory") + "\n");
            }
        }
    }

    private static void write(Path file, String content) throws IOException {
        Files.createDirectories(file.getParent());
        Path temporary = file.resolveSibling(file.getFileName() + ".new");
        Files.writeString(temporary, content);
        Files.move(temporary, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    static void deleteTree(Path root) throws IOException {
        if (!Files.exists(root)) {
            return;
        }
        try (var walk = Files.walk(root)) {
            for (Path path : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.delete(path);
            }
        }
    }
}
