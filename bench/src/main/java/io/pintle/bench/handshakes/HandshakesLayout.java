package io.pintle.bench.handshakes;

import io.pintle.bench.harness.DemoConfig;
import io.pintle.bench.harness.Pem;
import io.pintle.server.demo.DemoLayout;
import io.pintle.server.nodes.KeyHash;
import io.pintle.server.tls.CertificateAuthority;
import io.pintle.server.tls.SelfSigned;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.KeyPair;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * The files of every row, generated in process with the server's own {@link SelfSigned} and {@link
 * CertificateAuthority}: {@code pintle demo}'s layout, plus
 *
 * <pre>
 * bench/server-&lt;key&gt;.cert, .priv        a server identity per server key type
 * bench/pinned/agent.cert, localhost.priv  node {@link #PINNED_NODE}: self-signed, UID=&lt;id&gt;, key pinned
 *                                          (nodeslist.json key-hash and nodescerts.pem)
 * bench/ca/root.pem                        the CA bundle ([nodes] ca_file): the root only
 * bench/ca/intermediate.pem                what the client sends after its certificate
 * bench/ca/agent-http.cert, agent-http.key node {@link #CHAIN_NODE}: issued by the intermediate, UID=&lt;id&gt;,
 *                                          listed in nodeslist.json without key-hash
 * bench/ca/chain.pem                       leaf then intermediate (for curl and s_client)
 * share/&lt;id&gt;/rules/small.txt             the file each connection GETs, {@link #SMALL_BYTES} bytes
 * </pre>
 *
 * @param demo the demo layout underneath
 * @param clientKey the key type of both clients (and of the two CAs)
 * @param serverKeys each server key type's certificate and key
 * @param pinnedHome the pinned client's agent.cert and localhost.priv
 * @param caDirectory the CA files and the chain client's certificate and key
 */
record HandshakesLayout(DemoLayout demo, SelfSigned.KeyType clientKey, Map<SelfSigned.KeyType, Path[]> serverKeys,
        Path pinnedHome, Path caDirectory) {
    static final String PINNED_NODE = nodeId("pinned");
    static final String CHAIN_NODE = nodeId("ca-chain");
    /** One small policy file: the request is there to prove the node was admitted, not to move bytes. */
    static final int SMALL_BYTES = 1024;
    static final String SMALL_FILE = "rules/small.txt";

    private static String nodeId(String name) {
        return UUID.nameUUIDFromBytes(("pintle-bench-handshakes-" + name).getBytes(StandardCharsets.UTF_8))
                .toString();
    }

    /**
     * @param directory where to write
     * @param clientKey both clients' key type (the CAs' too)
     * @param serverKeyTypes the server key types to make identities for
     * @return the layout
     */
    static HandshakesLayout create(Path directory, SelfSigned.KeyType clientKey,
            List<SelfSigned.KeyType> serverKeyTypes) throws IOException {
        DemoLayout demo = DemoLayout.create(directory, 0);
        Path dir = demo.directory();
        Path bench = Files.createDirectories(dir.resolve("bench"));

        Map<SelfSigned.KeyType, Path[]> servers = new EnumMap<>(SelfSigned.KeyType.class);
        for (SelfSigned.KeyType type : serverKeyTypes) {
            SelfSigned.Identity server = SelfSigned.generate(type, DemoLayout.SERVER_ID);
            Path certificate = bench.resolve("server-" + label(type) + ".cert");
            Path key = bench.resolve("server-" + label(type) + ".priv");
            SelfSigned.writeCertificates(certificate, server.certificate());
            SelfSigned.writePrivateKey(key, server.keyPair().getPrivate(), true);
            servers.put(type, new Path[] {certificate, key});
        }

        Path pinnedHome = Files.createDirectories(bench.resolve("pinned"));
        SelfSigned.Identity pinned = SelfSigned.generate(clientKey, PINNED_NODE);
        SelfSigned.writeCertificates(pinnedHome.resolve("agent.cert"), pinned.certificate());
        SelfSigned.writePrivateKey(pinnedHome.resolve("localhost.priv"), pinned.keyPair().getPrivate(), false);

        Path ca = Files.createDirectories(bench.resolve("ca"));
        CertificateAuthority root = CertificateAuthority.root(clientKey, "Pintle bench root CA", Duration.ofDays(365));
        CertificateAuthority intermediate = root.intermediate(clientKey, "Pintle bench intermediate CA");
        KeyPair leafKeys = SelfSigned.keyPair(clientKey);
        X509Certificate leaf = intermediate.issue(leafKeys.getPublic(),
                CertificateAuthority.subject(CHAIN_NODE, "ca-chain.bench.example"), List.of());
        SelfSigned.writeCertificates(ca.resolve("root.pem"), root.certificate());
        SelfSigned.writeCertificates(ca.resolve("intermediate.pem"), intermediate.certificate());
        SelfSigned.writeCertificates(ca.resolve("agent-http.cert"), leaf);
        SelfSigned.writeCertificates(ca.resolve("chain.pem"), leaf, intermediate.certificate());
        SelfSigned.writePrivateKey(ca.resolve("agent-http.key"), leafKeys.getPrivate(), false);

        register(dir, pinned.certificate());
        for (String id : List.of(PINNED_NODE, CHAIN_NODE)) {
            Path small = dir.resolve("share").resolve(id).resolve(SMALL_FILE);
            Files.createDirectories(small.getParent());
            byte[] bytes = new byte[SMALL_BYTES];
            Arrays.fill(bytes, (byte) 'x');
            bytes[SMALL_BYTES - 1] = '\n';
            Files.write(small, bytes);
        }
        return new HandshakesLayout(demo, clientKey, servers, pinnedHome, ca);
    }

    /** Appends both nodes to nodeslist.json (the pinned one with its key-hash) and the pinned one to nodescerts.pem. */
    private static void register(Path dir, X509Certificate pinned) throws IOException {
        Path list = dir.resolve("lib/nodeslist.json");
        String text = Files.readString(list).strip();
        if (!text.endsWith("}")) {
            throw new IOException(list + " is not a JSON object");
        }
        text = text.substring(0, text.length() - 1).stripTrailing()
                + ",\n  \"" + PINNED_NODE + "\": {\"hostname\": \"pinned.bench.example\", \"key-hash\": \""
                + KeyHash.sha256(pinned.getPublicKey()) + "\", \"policy-server\": \"" + DemoLayout.SERVER_ID + "\"}"
                // Certificate-validation mode needs the node listed, not its key.
                + ",\n  \"" + CHAIN_NODE + "\": {\"hostname\": \"ca-chain.bench.example\", \"policy-server\": \""
                + DemoLayout.SERVER_ID + "\"}\n}\n";
        Files.writeString(list, text);
        Files.write(dir.resolve("lib/nodescerts.pem"), Pem.certificate(pinned), StandardOpenOption.APPEND);
    }

    /** @return a file-name-friendly name of a key type */
    static String label(SelfSigned.KeyType type) {
        return switch (type) {
            case RSA_2048 -> "rsa2048";
            case RSA_4096 -> "rsa4096";
            case EC_P256 -> "ec";
        };
    }

    /** @return a key type as printed */
    static String title(SelfSigned.KeyType type) {
        return switch (type) {
            case RSA_2048 -> "RSA-2048";
            case RSA_4096 -> "RSA-4096";
            case EC_P256 -> "ECDSA P-256";
        };
    }

    /** @return the node the mode's client authenticates as */
    static String node(Mode mode) {
        return mode.chainClient() ? CHAIN_NODE : PINNED_NODE;
    }

    /** @return the path each connection GETs */
    static String path(Mode mode) {
        return "/policies/" + node(mode) + "/" + SMALL_FILE;
    }

    /** @return the client's certificate file: the leaf alone (s_time sends the intermediate from {@link #extraChain}) */
    Path clientCertificate(Mode mode) {
        return mode.chainClient() ? caDirectory.resolve("agent-http.cert") : pinnedHome.resolve("agent.cert");
    }

    /** @return the client's private key */
    Path clientKeyFile(Mode mode) {
        return mode.chainClient() ? caDirectory.resolve("agent-http.key") : pinnedHome.resolve("localhost.priv");
    }

    /**
     * @return what s_time's verify store holds, from which OpenSSL builds the chain it sends: for the CA client the
     *     intermediate alone, so that the chain stops there (it has no root to add); for the pinned client its own
     *     certificate, so that it sends it alone, after the same small amount of chain building
     */
    Path extraChain(Mode mode) {
        return mode.chainClient() ? caDirectory.resolve("intermediate.pem") : pinnedHome.resolve("agent.cert");
    }

    /**
     * The configuration of one server: the demo's, with its own ports, server key and trust mode, the access log
     * off (a line per request would measure stderr; the answers are checked on {@code /metrics}).
     *
     * @return the configuration file written (beside the demo's, where its relative paths hold)
     */
    Path config(Mode mode, SelfSigned.KeyType serverKey, int port, int adminPort) throws IOException {
        String config = Files.readString(demo.config());
        config = DemoConfig.withAdminPort(config, adminPort);
        config = DemoConfig.replaceOnce(config, "listen = \"127.0.0.1:0\"\n[tls]",
                "listen = \"127.0.0.1:" + port + "\"\n[tls]");
        Path[] server = serverKeys.get(serverKey);
        config = DemoConfig.replaceOnce(config, "certificate = \"server/agent.cert\"",
                "certificate = \"" + server[0] + "\"");
        config = DemoConfig.replaceOnce(config, "key = \"server/localhost.priv\"", "key = \"" + server[1] + "\"");
        String nodes = "certificates = [\"lib/nodescerts.pem\"]\nauthentication = " + mode.authentication();
        if (mode.validation()) {
            nodes += "\nca_file = \"" + caDirectory.resolve("root.pem") + "\"\nid_rules = [\"uid\"]";
        }
        config = DemoConfig.replaceOnce(config, "certificates = [\"lib/nodescerts.pem\"]", nodes);
        config += "\n[log]\naccess = false\n";
        Path file = demo.directory().resolve("pintle-" + mode.label() + "-" + label(serverKey) + ".toml");
        Files.writeString(file, config);
        return file;
    }
}
