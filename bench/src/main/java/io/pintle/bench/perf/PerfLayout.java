package io.pintle.bench.perf;

import io.pintle.server.demo.DemoLayout;
import io.pintle.server.nodes.KeyHash;
import io.pintle.server.tls.SelfSigned;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.EnumMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Random;
import java.util.Set;

/**
 * The files every server serves and the keys they use, on top of {@code pintle demo}'s layout: a Rudder-like agent
 * with an RSA-4096 key (Rudder's agent key), registered in {@code nodeslist.json} and {@code nodescerts.pem} like
 * the demo's nodes; server keys of the three types the handshake rows compare; a small file, a 100 MB file and the
 * two archives of an agent update.
 *
 * @param demo the demo layout underneath (its EC node {@link DemoLayout#linux2()} opens the idle connections)
 * @param agent the RSA-4096 node's id
 * @param serverKeys each server key type's certificate and key
 * @param pins the pins of all three server keys (the clients accept any of them)
 */
record PerfLayout(DemoLayout demo, String agent, Map<ServerKey, ServerKey.Files> serverKeys, Set<String> pins) {
    /** The small file of the keep-alive and handshake rows: about a generated Rudder flag or JSON file. */
    static final int SMALL_BYTES = 1024;
    /** The large file of the throughput row. */
    static final long LARGE_BYTES = 100L * 1000 * 1000;
    static final String AGENT_ID = "perf-agent-rsa4096";
    /**
     * A node with an RSA-2048 key (Rudder's agent key on older installs), registered like the agent: the client
     * certificate of bench/perf's second method for new connections ({@code ab -f TLS1.3 -E}, issue 39).
     */
    static final String RSA2048_ID = "perf-node-rsa2048";
    private static final long SEED = 0x70657266L;

    /** @return the layout's directory */
    Path directory() {
        return demo.directory();
    }

    /** @return the directory served as {@code /policies/} (and {@code common/} in it as {@code /common/}) */
    Path share() {
        return demo.directory().resolve("share");
    }

    /** @return the RSA-4096 agent's home (agent.cert, localhost.priv) */
    Path agentHome() {
        return demo.directory().resolve("nodes").resolve(agent);
    }

    /** @return the RSA-2048 node's home (agent.cert, localhost.priv) */
    Path rsa2048Home() {
        return demo.directory().resolve("nodes").resolve(RSA2048_ID);
    }

    /** @return the EC node's home, for the idle connections */
    Path ecNodeHome() {
        return demo.directory().resolve("nodes").resolve(demo.linux2());
    }

    /** @return the directory holding only the large file (cf-agent copies it recursively) */
    Path largeDirectory() {
        return share().resolve(agent).resolve("perf-large");
    }

    /** @param node a node id @return its small file's URL path */
    static String smallPath(String node) {
        return "/policies/" + node + "/perf/small.bin";
    }

    /** @return the large file's URL path */
    String largePath() {
        return "/policies/" + agent + "/perf-large/large.bin";
    }

    /** @return the agent's policies archive, as {@code rudder agent update} asks for it */
    String rulesPath() {
        return "/policies/" + agent + "/rules/rudder.tar.bz2";
    }

    /** @return the shared policy library archive, as {@code rudder agent update} asks for it */
    static String commonPath() {
        return "/common/policies-library-linux.tar.bz2";
    }

    static PerfLayout create(Path directory) throws IOException {
        DemoLayout demo = DemoLayout.create(directory, 0);
        Path dir = demo.directory();
        // Rudder's agent key: RSA-4096, PKCS#1, with UID=<node id> in the subject; and an RSA-2048 node made alike.
        addNode(dir, AGENT_ID, SelfSigned.KeyType.RSA_4096, "perf-agent.demo.example");
        addNode(dir, RSA2048_ID, SelfSigned.KeyType.RSA_2048, "perf-node-rsa2048.demo.example");

        Map<ServerKey, ServerKey.Files> keys = new EnumMap<>(ServerKey.class);
        Set<String> pins = new LinkedHashSet<>();
        // The demo's server key is RSA-2048; the other two are generated the same way.
        keys.put(ServerKey.RSA_2048, new ServerKey.Files(dir.resolve("server/agent.cert"),
                dir.resolve("server/localhost.priv")));
        pins.add(demo.serverPin());
        for (ServerKey type : new ServerKey[] {ServerKey.RSA_4096, ServerKey.ECDSA}) {
            SelfSigned.Identity server = SelfSigned.generate(type.keyType(), DemoLayout.SERVER_ID);
            Path serverDir = Files.createDirectories(dir.resolve("server-" + type.label()));
            ServerKey.Files files = new ServerKey.Files(serverDir.resolve("agent.cert"),
                    serverDir.resolve("localhost.priv"));
            SelfSigned.writeCertificates(files.certificate(), server.certificate());
            writeKey(files.key(), server.keyPair().getPrivate(), type != ServerKey.ECDSA);
            keys.put(type, files);
            pins.add(KeyHash.sha256(server.certificate().getPublicKey()).toString());
        }

        Random random = new Random(SEED);
        for (String node : new String[] {AGENT_ID, demo.linux2(), RSA2048_ID}) {
            Path perf = Files.createDirectories(dir.resolve("share").resolve(node).resolve("perf"));
            byte[] small = new byte[SMALL_BYTES];
            random.nextBytes(small);
            Files.write(perf.resolve("small.bin"), small);
        }
        Path large = Files.createDirectories(dir.resolve("share").resolve(AGENT_ID).resolve("perf-large"));
        try (OutputStream out = Files.newOutputStream(large.resolve("large.bin"))) {
            byte[] block = new byte[1 << 20];
            for (long written = 0; written < LARGE_BYTES; written += block.length) {
                random.nextBytes(block);
                out.write(block, 0, (int) Math.min(block.length, LARGE_BYTES - written));
            }
        }
        // The agent's policies: the demo's first Linux node's archive, under the agent's id.
        Path rules = Files.createDirectories(dir.resolve("share").resolve(AGENT_ID).resolve("rules"));
        Files.copy(dir.resolve("share").resolve(demo.linux1()).resolve("rules/rudder.tar.bz2"),
                rules.resolve("rudder.tar.bz2"));
        return new PerfLayout(demo, AGENT_ID, Map.copyOf(keys), Set.copyOf(pins));
    }

    /**
     * A node as Rudder registers one: its certificate and key (PKCS#1 for RSA) in {@code nodes/<id>/}, its key hash
     * in {@code nodeslist.json}, its certificate in {@code nodescerts.pem}.
     */
    private static void addNode(Path dir, String id, SelfSigned.KeyType type, String hostname) throws IOException {
        SelfSigned.Identity node = SelfSigned.generate(type, id);
        Path home = Files.createDirectories(dir.resolve("nodes").resolve(id));
        SelfSigned.writeCertificates(home.resolve("agent.cert"), node.certificate());
        writeKey(home.resolve("localhost.priv"), node.keyPair().getPrivate(), type != SelfSigned.KeyType.EC_P256);
        Path nodesList = dir.resolve("lib/nodeslist.json");
        String list = Files.readString(nodesList).stripTrailing();
        if (!list.endsWith("}")) {
            throw new IOException("unexpected " + nodesList);
        }
        Files.writeString(nodesList, list.substring(0, list.length() - 1).stripTrailing() + ",\n  \"" + id
                + "\": {\"hostname\": \"" + hostname + "\", \"key-hash\": \""
                + KeyHash.sha256(node.certificate().getPublicKey()) + "\", \"policy-server\": \""
                + DemoLayout.SERVER_ID + "\"}\n}\n");
        Path certs = dir.resolve("lib/nodescerts.pem");
        Path pem = Files.createTempFile(dir, "node", ".pem");
        SelfSigned.writeCertificates(pem, node.certificate());
        Files.writeString(certs, Files.readString(pem), StandardOpenOption.APPEND);
        Files.delete(pem);
    }

    private static void writeKey(Path file, java.security.PrivateKey key, boolean pkcs1) throws IOException {
        SelfSigned.writePrivateKey(file, key, pkcs1);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
    }
}
