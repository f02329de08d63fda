package io.pintle.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.pintle.bench.harness.Pem;
import io.pintle.server.demo.DemoLayout;
import io.pintle.server.nodes.KeyHash;
import io.pintle.server.tls.SelfSigned;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;

/**
 * A Rudder-like registry of many nodes on top of a {@link DemoLayout}, in a temporary directory: the layout's
 * {@code lib/nodeslist.json} and {@code lib/nodescerts.pem} are rewritten with the three demo nodes (so that their
 * certificates still authenticate) followed by the generated ones. Each generated node has its own EC P-256 key pair
 * and a self-signed certificate with subject {@code UID=<uuid>}, as {@code rudder agent check} makes them (with RSA
 * keys there), and a {@code nodeslist.json} entry whose {@code key-hash} pins that key.
 *
 * <p>Nodes are added as Rudder's policy generation does it: both files are written to temporary files in the same
 * directory, then each is renamed into place ({@code ATOMIC_MOVE}), so the server never reads a half-written file.
 * The bytes of every entry are kept in memory, so adding a node rewrites the files without reading them back.
 */
final class LargeRegistry {
    /** The server's node id in the demo layout, the policy server of every generated node. */
    private static final String POLICY_SERVER = DemoLayout.SERVER_ID;
    /** Certificates per generation task: large enough that scheduling costs nothing, small enough to balance. */
    private static final int GENERATION_CHUNK = 500;
    /** Written through a buffer of this size: the files are several megabytes. */
    private static final int WRITE_BUFFER_BYTES = 256 * 1024;
    /** The policy file each added node gets, so that a request for it answers 200 once the node is known. */
    static final String PROBE_FILE = "rules/rudder.tar.bz2";

    private final Path root;
    private final DemoLayout layout;
    private final int generated;
    private final List<byte[]> entries;
    private final List<byte[]> certificates;
    private int added;

    private LargeRegistry(Path root, DemoLayout layout, int generated, List<byte[]> entries,
            List<byte[]> certificates) {
        this.root = root;
        this.layout = layout;
        this.generated = generated;
        this.entries = entries;
        this.certificates = certificates;
    }

    /**
     * Creates a demo layout in a new temporary directory and writes a registry of {@code count} generated nodes
     * plus the three demo nodes into it.
     *
     * @param count generated nodes
     * @param threads threads generating key pairs and certificates
     * @param progress where to report progress
     * @return the registry, its files written
     * @throws IOException on write errors
     * @throws InterruptedException if interrupted while generating
     */
    static LargeRegistry generate(int count, int threads, PrintStream progress)
            throws IOException, InterruptedException {
        Path root = Files.createTempDirectory("pintle-reload-bench-");
        DemoLayout layout = DemoLayout.create(root.resolve("layout"), 0);
        List<byte[]> entries = new ArrayList<>(demoEntries(layout));
        List<byte[]> certificates = new ArrayList<>();
        certificates.add(Files.readAllBytes(layout.directory().resolve("lib/nodescerts.pem")));
        ExecutorService pool = Executors.newFixedThreadPool(threads, task -> {
            Thread thread = new Thread(task, "bench-generate");
            thread.setDaemon(true);
            return thread;
        });
        try {
            List<Future<List<Generated>>> chunks = new ArrayList<>();
            for (int from = 0; from < count; from += GENERATION_CHUNK) {
                int start = from;
                int end = Math.min(count, from + GENERATION_CHUNK);
                chunks.add(pool.submit(() -> generateRange(start, end)));
            }
            int done = 0;
            for (Future<List<Generated>> chunk : chunks) {
                for (Generated node : chunk.get()) {
                    entries.add(node.entry());
                    certificates.add(node.pem());
                }
                done += GENERATION_CHUNK;
                if (done % 5_000 == 0) {
                    progress.printf("  %,d of %,d nodes generated%n", done, count);
                }
            }
        } catch (ExecutionException e) {
            throw new IllegalStateException("certificate generation failed", e.getCause());
        } finally {
            pool.shutdownNow();
        }
        LargeRegistry registry = new LargeRegistry(root, layout, count, entries, certificates);
        registry.publish(registry.writeTemporaries());
        return registry;
    }

    /** @return the demo layout the registry extends (configuration, server key, demo nodes, share) */
    DemoLayout layout() {
        return layout;
    }

    /** @return nodes in {@code nodeslist.json}: the demo's, the generated and the added ones */
    int nodeCount() {
        return entries.size();
    }

    /** @return how many nodes were generated at the start */
    int generatedCount() {
        return generated;
    }

    /** @return {@code lib/nodeslist.json} */
    Path nodesList() {
        return layout.directory().resolve("lib/nodeslist.json");
    }

    /** @return {@code lib/nodescerts.pem} */
    Path certificateBundle() {
        return layout.directory().resolve("lib/nodescerts.pem");
    }

    /**
     * Prepares one more node: generates its identity, writes its certificate and key where a client can use them
     * and a policy file under its share directory, and writes both registry files with it to temporary files. The
     * live files do not change until {@link #publish}.
     *
     * @return the pending update
     * @throws IOException on write errors
     */
    Update addNode() throws IOException {
        added++;
        String id = UUID.nameUUIDFromBytes(("pintle-bench-added-" + added).getBytes(StandardCharsets.UTF_8))
                .toString();
        SelfSigned.Identity identity = SelfSigned.generate(SelfSigned.KeyType.EC_P256, id);
        Path home = root.resolve("added").resolve(id);
        SelfSigned.writeCertificates(home.resolve("agent.cert"), identity.certificate());
        SelfSigned.writePrivateKey(home.resolve("localhost.priv"), identity.keyPair().getPrivate(), false);
        Path probe = layout.directory().resolve("share").resolve(id).resolve(PROBE_FILE);
        Files.createDirectories(probe.getParent());
        Files.writeString(probe, "policies of " + id + "\n");
        entries.add(entry(id, "added-" + added + ".bench.example", identity.certificate()));
        certificates.add(Pem.certificate(identity.certificate()));
        Update update = writeTemporaries();
        return new Update(new AddedNode(id, home.resolve("agent.cert"), home.resolve("localhost.priv"),
                "/policies/" + id + "/" + PROBE_FILE), update.nodesList(), update.certificates());
    }

    /**
     * Renames the update's files into place: the certificate bundle first, then the nodes list, each atomically.
     *
     * @param update a pending update from {@link #addNode()}
     * @throws IOException if a rename fails
     */
    void publish(Update update) throws IOException {
        Files.move(update.certificates(), certificateBundle(), StandardCopyOption.ATOMIC_MOVE,
                StandardCopyOption.REPLACE_EXISTING);
        Files.move(update.nodesList(), nodesList(), StandardCopyOption.ATOMIC_MOVE,
                StandardCopyOption.REPLACE_EXISTING);
    }

    /**
     * Deletes the temporary directory.
     *
     * @throws IOException if a file cannot be deleted
     */
    void delete() throws IOException {
        try (Stream<Path> walk = Files.walk(root)) {
            for (Path path : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(path);
            }
        }
    }

    /**
     * A node added by {@link #addNode()}.
     *
     * @param id its node id
     * @param certificate its certificate, PEM
     * @param key its private key, PEM
     * @param probePath the URL path of its policy file: 403 until a reload makes the node known, then 200
     */
    record AddedNode(String id, Path certificate, Path key, String probePath) {}

    /**
     * Registry files written but not yet renamed into place.
     *
     * @param node the node they add, or null for the initial registry
     * @param nodesList the new {@code nodeslist.json}, a temporary file next to it
     * @param certificates the new {@code nodescerts.pem}, a temporary file next to it
     */
    record Update(AddedNode node, Path nodesList, Path certificates) {}

    private Update writeTemporaries() throws IOException {
        Path list = temporary(nodesList());
        try (OutputStream out = new BufferedOutputStream(Files.newOutputStream(list), WRITE_BUFFER_BYTES)) {
            out.write("{\n".getBytes(StandardCharsets.US_ASCII));
            for (int i = 0; i < entries.size(); i++) {
                out.write(entries.get(i));
                out.write((i + 1 < entries.size() ? ",\n" : "\n").getBytes(StandardCharsets.US_ASCII));
            }
            out.write("}\n".getBytes(StandardCharsets.US_ASCII));
        }
        Path bundle = temporary(certificateBundle());
        try (OutputStream out = new BufferedOutputStream(Files.newOutputStream(bundle), WRITE_BUFFER_BYTES)) {
            for (byte[] pem : certificates) {
                out.write(pem);
            }
        }
        return new Update(null, list, bundle);
    }

    /** A temporary file in the same directory as {@code file}, so that the rename is atomic. */
    private static Path temporary(Path file) throws IOException {
        return Files.createTempFile(file.getParent(), "." + file.getFileName() + ".", ".tmp");
    }

    /** The demo's three entries, as written by {@link DemoLayout}, one line each. */
    private static List<byte[]> demoEntries(DemoLayout layout) throws IOException {
        ObjectMapper json = new ObjectMapper();
        JsonNode demo = json.readTree(layout.directory().resolve("lib/nodeslist.json").toFile());
        List<byte[]> entries = new ArrayList<>();
        for (Map.Entry<String, JsonNode> node : demo.properties()) {
            entries.add(("  " + json.writeValueAsString(node.getKey()) + ": " + json.writeValueAsString(node.getValue()))
                    .getBytes(StandardCharsets.UTF_8));
        }
        return entries;
    }

    /** Generates nodes {@code from} (inclusive) to {@code to} (exclusive); ids and host names depend on i only. */
    private static List<Generated> generateRange(int from, int to) {
        List<Generated> nodes = new ArrayList<>(to - from);
        for (int i = from; i < to; i++) {
            String id = UUID.nameUUIDFromBytes(("pintle-bench-node-" + i).getBytes(StandardCharsets.UTF_8))
                    .toString();
            X509Certificate certificate = SelfSigned.generate(SelfSigned.KeyType.EC_P256, id).certificate();
            String hostname = String.format(Locale.ROOT, "node-%05d.bench.example", i);
            nodes.add(new Generated(entry(id, hostname, certificate), Pem.certificate(certificate)));
        }
        return nodes;
    }

    /** One {@code nodeslist.json} line, in the layout Rudder writes (and {@link DemoLayout} copies). */
    private static byte[] entry(String id, String hostname, X509Certificate certificate) {
        return String.format(Locale.ROOT,
                        "  \"%s\": {\"hostname\": \"%s\", \"key-hash\": \"%s\", \"policy-server\": \"%s\"}",
                        id, hostname, KeyHash.sha256(certificate.getPublicKey()), POLICY_SERVER)
                .getBytes(StandardCharsets.US_ASCII);
    }

    /** A generated node's {@code nodeslist.json} line and certificate, PEM. */
    private record Generated(byte[] entry, byte[] pem) {}
}
