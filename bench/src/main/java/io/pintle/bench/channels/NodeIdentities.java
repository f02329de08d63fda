package io.pintle.bench.channels;

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
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * The generated nodes: an EC P-256 key pair and a self-signed {@code UID=<uuid>} certificate each, made in process
 * (BouncyCastle, as the server's tests do), kept in memory for the load generator and registered in the demo
 * layout: appended to {@code lib/nodeslist.json} (policy server: the demo server) and {@code lib/nodescerts.pem},
 * each with a {@code share/<id>/rules/rudder.tar.bz2}.
 */
final class NodeIdentities {
    /** Identities per generation task. */
    private static final int CHUNK = 500;
    static final String ARCHIVE = "rules/rudder.tar.bz2";

    private final List<String> ids;
    private final List<PrivateKey> keys;
    private final List<X509Certificate> certificates;

    private NodeIdentities(List<String> ids, List<PrivateKey> keys, List<X509Certificate> certificates) {
        this.ids = List.copyOf(ids);
        this.keys = List.copyOf(keys);
        this.certificates = List.copyOf(certificates);
    }

    int count() {
        return ids.size();
    }

    /** @return these nodes, every one's channel going to {@code server} */
    PullNodes on(java.net.InetSocketAddress server) {
        return new PullNodes() {
            @Override
            public int count() {
                return NodeIdentities.this.count();
            }

            @Override
            public String id(int node) {
                return NodeIdentities.this.id(node);
            }

            @Override
            public PrivateKey key(int node) {
                return NodeIdentities.this.key(node);
            }

            @Override
            public X509Certificate certificate(int node) {
                return NodeIdentities.this.certificate(node);
            }

            @Override
            public java.net.InetSocketAddress server(int node) {
                return server;
            }
        };
    }

    String id(int node) {
        return ids.get(node);
    }

    PrivateKey key(int node) {
        return keys.get(node);
    }

    X509Certificate certificate(int node) {
        return certificates.get(node);
    }

    /**
     * @param count nodes to generate
     * @param threads generating threads
     * @param progress where progress is said
     * @return the identities
     */
    static NodeIdentities generate(int count, int threads, PrintStream progress)
            throws InterruptedException {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        List<String> ids = new ArrayList<>(count);
        List<PrivateKey> keys = new ArrayList<>(count);
        List<X509Certificate> certificates = new ArrayList<>(count);
        try {
            List<Future<List<SelfSigned.Identity>>> chunks = new ArrayList<>();
            for (int from = 0; from < count; from += CHUNK) {
                int start = from;
                int end = Math.min(count, from + CHUNK);
                chunks.add(pool.submit(() -> {
                    List<SelfSigned.Identity> made = new ArrayList<>(end - start);
                    for (int i = start; i < end; i++) {
                        made.add(SelfSigned.generate(SelfSigned.KeyType.EC_P256, nodeId(i)));
                    }
                    return made;
                }));
            }
            int i = 0;
            for (Future<List<SelfSigned.Identity>> chunk : chunks) {
                for (SelfSigned.Identity identity : chunk.get()) {
                    ids.add(nodeId(i++));
                    keys.add(identity.keyPair().getPrivate());
                    certificates.add(identity.certificate());
                }
                if (i % 5_000 == 0 || i == count) {
                    progress.printf("  %,d of %,d node identities generated%n", i, count);
                }
            }
        } catch (ExecutionException e) {
            throw new IllegalStateException("identity generation failed", e.getCause());
        } finally {
            pool.shutdownNow();
        }
        return new NodeIdentities(ids, keys, certificates);
    }

    private static String nodeId(int i) {
        return UUID.nameUUIDFromBytes(("pintle-bench-channel-" + i).getBytes(StandardCharsets.UTF_8)).toString();
    }

    /**
     * Appends the nodes to the layout's registry (the demo's own entries kept first) and gives each its policy
     * archive.
     *
     * @param layout the demo layout
     */
    void register(DemoLayout layout) throws IOException {
        Path dir = layout.directory();
        Path list = dir.resolve("lib/nodeslist.json");
        String demo = Files.readString(list).strip();
        // The demo writes one JSON object; its closing brace is replaced by the generated entries.
        if (!demo.endsWith("}")) {
            throw new IOException(list + " is not a JSON object");
        }
        try (OutputStream out = new BufferedOutputStream(Files.newOutputStream(list), 1 << 18)) {
            out.write(demo.substring(0, demo.length() - 1).stripTrailing().getBytes(StandardCharsets.UTF_8));
            for (int i = 0; i < count(); i++) {
                out.write(String.format(Locale.ROOT,
                        ",\n  \"%s\": {\"hostname\": \"channel-%05d.bench.example\", \"key-hash\": \"%s\", "
                                + "\"policy-server\": \"%s\"}",
                        id(i), i, KeyHash.sha256(certificate(i).getPublicKey()), DemoLayout.SERVER_ID)
                        .getBytes(StandardCharsets.US_ASCII));
            }
            out.write("\n}\n".getBytes(StandardCharsets.US_ASCII));
        }
        try (OutputStream out = new BufferedOutputStream(Files.newOutputStream(dir.resolve("lib/nodescerts.pem"),
                java.nio.file.StandardOpenOption.APPEND), 1 << 18)) {
            for (X509Certificate certificate : certificates) {
                out.write(Pem.certificate(certificate));
            }
        }
        for (int i = 0; i < count(); i++) {
            writeArchive(layout, i, "policies of " + id(i) + ", generation 1\n");
        }
    }

    /**
     * Writes a node's policy archive (its content only has to change between generations).
     *
     * @param layout the layout
     * @param node the node's index
     * @param content the archive's bytes, as text
     */
    void writeArchive(DemoLayout layout, int node, String content) throws IOException {
        Path archive = layout.directory().resolve("share").resolve(id(node)).resolve(ARCHIVE);
        Files.createDirectories(archive.getParent());
        Files.writeString(archive, content);
    }
}
