package io.pintle.server.testing;

import io.pintle.server.tls.SelfSigned;
import io.pintle.server.uploads.Htpasswd;
import io.pintle.server.uploads.UploadKind;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A Rudder-like server layout in a temporary directory, generated per test run: server identity, node identities,
 * {@code nodeslist.json}, {@code nodescerts.pem}, the networks include, the share tree and a configuration file
 * listening on 127.0.0.1, port 0. No key material is committed; everything is made here with BouncyCastle.
 */
public final class Sandbox {
    /** Where a node's key is pinned. */
    public enum Pinning {
        /**
         * {@code key-hash} in {@code nodeslist.json} only. The sandbox's configuration names {@code nodescerts.pem},
         * so such a node is refused ({@code pins-disagree}), as between Rudder's two renames: use {@link #BOTH} for a
         * known node.
         */
        NODES_LIST,
        /** certificate in {@code nodescerts.pem} (entry in nodeslist.json without key-hash). */
        CERTIFICATES,
        /** both, as Rudder writes a direct child: a known node. */
        BOTH
    }

    private final Path dir;
    private final NodeKeys server;
    private final String role;
    private final Map<String, String> nodesList = new LinkedHashMap<>();
    private final Map<String, X509Certificate> certificates = new LinkedHashMap<>();
    private String networks = "Require ip 127.0.0.0/8 ::1\n";
    /** Rudder's rudder-networks-policy-server-24.conf, or null for none (never the host's /opt/rudder file). */
    private String policyServerNetworks;
    private String listen = "127.0.0.1:0";
    private String uploadsExtra = "";
    private String nodesExtra = "";
    private String generalExtra = "";
    /** No Rudder version files: never the host's /opt/rudder ones. */
    private String adminExtra = "rudder_version_files = []";

    /** The user of both password files, as Rudder's agents send it ({@code DAVUSER}). */
    public static final String UPLOAD_USER = "rudder";
    /** The password of {@code htpasswd-webdav-initial}: Rudder's well-known bootstrap password. */
    public static final String INITIAL_PASSWORD = "rudder";
    /** The password of {@code htpasswd-webdav}. */
    public static final String WEBDAV_PASSWORD = "webdav-test-password";

    private Sandbox(Path dir, NodeKeys server, String role) {
        this.role = role;
        this.dir = dir;
        this.server = server;
    }

    /**
     * @param dir an empty directory
     * @param serverKey server key algorithm
     * @param pkcs1 whether to write an RSA server key as PKCS#1 (Rudder's {@code localhost.priv})
     * @return a sandbox with no node yet
     * @throws IOException on write errors
     */
    public static Sandbox create(Path dir, SelfSigned.KeyType serverKey, boolean pkcs1) throws IOException {
        return create(dir, serverKey, pkcs1, "root", "root");
    }

    /**
     * A relay (or another root) with its own id: its certificate's UID is {@code serverId}.
     *
     * @param dir an empty directory
     * @param serverId the server's node id
     * @param role {@code root}, {@code relay} or {@code node}
     * @return a sandbox with an RSA-2048 PKCS#1 server key and no node yet
     * @throws IOException on write errors
     */
    public static Sandbox create(Path dir, String serverId, String role) throws IOException {
        return create(dir, SelfSigned.KeyType.RSA_2048, true, serverId, role);
    }

    private static Sandbox create(Path dir, SelfSigned.KeyType serverKey, boolean pkcs1, String serverId,
            String role) throws IOException {
        Path absolute = dir.toAbsolutePath();
        Files.createDirectories(absolute.resolve("share/common"));
        Files.createDirectories(absolute.resolve("lib"));
        SelfSigned.Identity identity = SelfSigned.generate(serverKey, serverId);
        NodeKeys server = write(absolute.resolve("server"), serverId, identity.certificate(), identity.keyPair(), pkcs1);
        Files.writeString(absolute.resolve("server/uuid.hive"), serverId + "\n");
        for (UploadKind kind : UploadKind.values()) {
            Files.createDirectories(absolute.resolve(uploadDirectory(kind)));
        }
        Files.writeString(absolute.resolve("server/htpasswd-webdav-initial"),
                Htpasswd.apr1Line(UPLOAD_USER, INITIAL_PASSWORD) + "\n");
        Files.writeString(absolute.resolve("server/htpasswd-webdav"),
                Htpasswd.apr1Line(UPLOAD_USER, WEBDAV_PASSWORD) + "\n");
        Sandbox sandbox = new Sandbox(absolute, server, role);
        sandbox.writeInputs();
        return sandbox;
    }

    /**
     * @param dir an empty directory
     * @return a sandbox with an RSA-2048 PKCS#1 server key
     * @throws IOException on write errors
     */
    public static Sandbox create(Path dir) throws IOException {
        return create(dir, SelfSigned.KeyType.RSA_2048, true);
    }

    /** @return the sandbox directory */
    public Path dir() {
        return dir;
    }

    /** @return the server identity */
    public NodeKeys server() {
        return server;
    }

    /** @return the pin agents use for this server */
    public String serverPin() {
        return server.pin();
    }

    /**
     * Creates a node with a fresh Rudder-style identity and registers it.
     *
     * @param id node id
     * @param type key type
     * @param pinning where its key is pinned
     * @return its identity files
     * @throws IOException on write errors
     */
    public NodeKeys addNode(String id, SelfSigned.KeyType type, Pinning pinning) throws IOException {
        SelfSigned.Identity identity = SelfSigned.generate(type, id);
        NodeKeys keys = write(dir.resolve("nodes/" + id), id, identity.certificate(), identity.keyPair(),
                type != SelfSigned.KeyType.EC_P256);
        register(id, keys.certificate(), pinning);
        return keys;
    }

    /**
     * Writes an arbitrary identity (expired, no UID...) without registering it.
     *
     * @param name a label
     * @param uid the subject UID, or null for a certificate without UID
     * @param notBefore start of validity
     * @param notAfter end of validity
     * @return its identity files
     * @throws IOException on write errors
     */
    public NodeKeys identity(String name, String uid, Instant notBefore, Instant notAfter) throws IOException {
        return identity(name, SelfSigned.keyPair(SelfSigned.KeyType.EC_P256), uid, notBefore, notAfter);
    }

    /**
     * Writes an identity for a given key pair (for example another node's key under a different UID).
     *
     * @param name a label
     * @param pair the key pair
     * @param uid the subject UID, or null
     * @param notBefore start of validity
     * @param notAfter end of validity
     * @return its identity files
     * @throws IOException on write errors
     */
    public NodeKeys identity(String name, KeyPair pair, String uid, Instant notBefore, Instant notAfter)
            throws IOException {
        X509Certificate certificate = SelfSigned.certificate(pair, SelfSigned.subject(uid), notBefore, notAfter);
        return write(dir.resolve("identities/" + name), name, certificate, pair, false);
    }

    /**
     * @param name a label
     * @param uid the subject UID
     * @return a valid identity, not registered anywhere
     * @throws IOException on write errors
     */
    public NodeKeys unregisteredIdentity(String name, String uid) throws IOException {
        Instant now = Instant.now();
        return identity(name, uid, now.minus(Duration.ofHours(1)), now.plus(Duration.ofDays(1)));
    }

    /**
     * Registers a certificate's key for a node and rewrites the input files.
     *
     * @param id node id
     * @param certificate its certificate
     * @param pinning where to pin it
     * @throws IOException on write errors
     */
    public void register(String id, X509Certificate certificate, Pinning pinning) throws IOException {
        String hash = pinning == Pinning.CERTIFICATES
                ? ""
                : ", \"key-hash\": \"" + io.pintle.server.nodes.KeyHash.sha256(certificate.getPublicKey()) + "\"";
        nodesList.put(id, "{\"hostname\": \"" + id + ".example.org\"" + hash + ", \"policy-server\": \"root\"}");
        if (pinning != Pinning.NODES_LIST) {
            certificates.put(id, certificate);
        }
        writeInputs();
    }

    /**
     * Registers a node's key in {@code nodeslist.json} with its place in the tree (for remote-run routing).
     *
     * @param id node id
     * @param certificate its certificate (its key is pinned as {@code key-hash})
     * @param hostname where it is reached
     * @param policyServer its policy server's id
     * @throws IOException on write errors
     */
    public void register(String id, X509Certificate certificate, String hostname, String policyServer)
            throws IOException {
        nodesList.put(id, "{\"hostname\": \"" + hostname + "\", \"key-hash\": \""
                + io.pintle.server.nodes.KeyHash.sha256(certificate.getPublicKey()) + "\", \"policy-server\": \""
                + policyServer + "\"}");
        writeInputs();
    }

    /**
     * Where the TLS listener of the next {@link #config} listens.
     *
     * @param hostAndPort for example {@code 127.0.0.3:44321}
     */
    public void listen(String hostAndPort) {
        this.listen = hostAndPort;
    }

    /**
     * Removes a node from {@code nodeslist.json} and the certificate bundle (atomic replace of both).
     *
     * @param id node id
     * @throws IOException on write errors
     */
    public void remove(String id) throws IOException {
        nodesList.remove(id);
        certificates.remove(id);
        writeInputs();
    }

    /**
     * Replaces {@code nodeslist.json} by arbitrary content, atomically.
     *
     * @param content the new content (for example invalid JSON)
     * @throws IOException on write errors
     */
    public void nodesListContent(String content) throws IOException {
        replace(dir.resolve("lib/nodeslist.json"), content);
    }


    /**
     * Replaces the allowed-networks include.
     *
     * @param apacheLines its content ({@code Require ip ...} lines)
     * @throws IOException on write errors
     */
    public void networks(String apacheLines) throws IOException {
        this.networks = apacheLines;
        writeInputs();
    }

    /**
     * Writes the policy-server networks include ({@code lib/networks-policy-server.conf}, Apache's {@code
     * rudder-networks-policy-server-24.conf}); the next {@link #config} names it in {@code [networks]
     * policy_server_file}. Without it the configuration sets that key to {@code ""}, so that no test reads the
     * host's own file.
     *
     * @param apacheLines its content ({@code Require ...} lines)
     * @throws IOException on write errors
     */
    public void policyServerNetworks(String apacheLines) throws IOException {
        this.policyServerNetworks = apacheLines;
        writeInputs();
    }

    /** @return the policy-server networks include {@link #policyServerNetworks} writes */
    public Path policyServerNetworksFile() {
        return dir.resolve("lib/networks-policy-server.conf");
    }

    /**
     * Writes a file in the share tree.
     *
     * @param relative path below {@code share/}
     * @param content bytes
     * @return the file
     * @throws IOException on write errors
     */
    public Path shareFile(String relative, byte[] content) throws IOException {
        Path file = share().resolve(relative);
        Files.createDirectories(file.getParent());
        Files.write(file, content);
        return file;
    }

    /**
     * Writes a file of reproducible random bytes in the share tree.
     *
     * @param relative path below {@code share/}
     * @param size bytes
     * @param seed random seed
     * @return the content written
     * @throws IOException on write errors
     */
    public byte[] randomShareFile(String relative, int size, long seed) throws IOException {
        byte[] content = new byte[size];
        new java.util.Random(seed).nextBytes(content);
        shareFile(relative, content);
        return content;
    }

    /** @return the share directory */
    public Path share() {
        return dir.resolve("share");
    }

    /** System property naming the {@code [tls] provider} of every test server, when set. */
    public static final String TLS_PROVIDER_PROPERTY = "pintle.it.tls.provider";

    private static String uploadDirectory(UploadKind kind) {
        return "uploads/" + kind.label();
    }

    /**
     * @param kind an upload route
     * @return the directory its uploads land in
     */
    public Path uploads(UploadKind kind) {
        return dir.resolve(uploadDirectory(kind));
    }

    /**
     * @param keys extra keys of the {@code [uploads]} table the next {@link #config} writes ({@code max_bytes = 10})
     */
    public void uploadsConfig(String keys) {
        uploadsExtra = keys;
    }

    /**
     * @param keys extra keys of the {@code [general]} table the next {@link #config} writes ({@code
     *     proxy_protocol_from = ["127.0.0.2"]}, for example)
     */
    public void generalConfig(String keys) {
        generalExtra = keys;
    }

    /**
     * @param keys extra keys of the {@code [admin]} table the next {@link #config} writes ({@code
     *     rudder_version_files = [...]}, for example), in place of the default {@code rudder_version_files = []}
     */
    public void adminConfig(String keys) {
        adminExtra = keys;
    }

    /**
     * @param keys extra keys of the {@code [nodes]} table the next {@link #config} writes ({@code authentication =
     *     ["cert_validation"]}, for example)
     */
    public void nodesConfig(String keys) {
        nodesExtra = keys;
    }

    /**
     * Lists a node in {@code nodeslist.json} with no key pinned anywhere: how certificate-validation mode knows a
     * node (its CA-signed certificate is verified, not pinned).
     *
     * @param id node id
     * @throws IOException on write errors
     */
    public void listNode(String id) throws IOException {
        nodesList.put(id, "{\"hostname\": \"" + id + ".example.org\", \"policy-server\": \"root\"}");
        certificates.remove(id);
        writeInputs();
    }

    /**
     * Writes the configuration file.
     *
     * @param extraToml extra TOML appended at the end of its section (keys of {@code [tls]}, for example
     *     {@code protocols = [...]}), or empty
     * @return the configuration file
     * @throws IOException on write errors
     */
    public Path config(String extraToml) throws IOException {
        Path file = dir.resolve("pintle.toml");
        Files.writeString(file, String.join("\n",
                "[general]",
                "node_id_file = \"server/uuid.hive\"",
                "role = \"" + role + "\"",
                "listen = \"" + listen + "\"" + (generalExtra.isEmpty() ? "" : "\n" + generalExtra),
                "[nodes]",
                "list = \"lib/nodeslist.json\"",
                "certificates = [\"lib/nodescerts.pem\"]",
                nodesExtra,
                "[networks]",
                "allowed_file = \"lib/networks.conf\"",
                "policy_server_file = \"" + (policyServerNetworks != null ? "lib/networks-policy-server.conf" : "")
                        + "\"",
                "[paths]",
                "share = \"share\"",
                "shared_folder = \"shared-folder\"",
                "shared_files = \"shared-files\"",
                "state = \"state\"",
                "[uploads]",
                "inventories = \"" + uploadDirectory(UploadKind.INVENTORIES) + "\"",
                "inventory_updates = \"" + uploadDirectory(UploadKind.INVENTORY_UPDATES) + "\"",
                "reports = \"" + uploadDirectory(UploadKind.REPORTS) + "\"",
                "htpasswd_initial = \"server/htpasswd-webdav-initial\"",
                "htpasswd = \"server/htpasswd-webdav\"",
                uploadsExtra,
                "[admin]",
                "listen = \"127.0.0.1:0\"",
                adminExtra,
                "[tls]",
                "certificate = \"server/agent.cert\"",
                "key = \"server/localhost.priv\"",
                providerLine(extraToml),
                extraToml,
                ""), StandardCharsets.UTF_8);
        return file;
    }

    /**
     * The {@code [tls] provider} the whole suite runs with when the system property {@value #TLS_PROVIDER_PROPERTY}
     * names one (the build runs the integration tests once per provider), unless the test sets its own.
     */
    private static String providerLine(String extraToml) {
        String provider = System.getProperty(TLS_PROVIDER_PROPERTY, "");
        return provider.isEmpty() || extraToml.contains("provider") ? "" : "provider = \"" + provider + "\"";
    }

    /** Writes every input as Rudder does: to a temporary file, then renamed over the old one. */
    private void writeInputs() throws IOException {
        StringBuilder json = new StringBuilder("{\n");
        int i = 0;
        for (Map.Entry<String, String> entry : nodesList.entrySet()) {
            json.append("  \"").append(entry.getKey()).append("\": ").append(entry.getValue())
                    .append(++i < nodesList.size() ? ",\n" : "\n");
        }
        SelfSigned.writeCertificates(dir.resolve("lib/nodescerts.pem"),
                certificates.values().toArray(new X509Certificate[0]));
        replace(dir.resolve("lib/nodeslist.json"), json.append("}\n").toString());
        replace(dir.resolve("lib/networks.conf"), networks);
        if (policyServerNetworks != null) {
            replace(policyServerNetworksFile(), policyServerNetworks);
        }
    }

    private static void replace(Path file, String content) throws IOException {
        Path temporary = file.resolveSibling(file.getFileName() + ".new");
        Files.writeString(temporary, content);
        Files.move(temporary, file, java.nio.file.StandardCopyOption.ATOMIC_MOVE,
                java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    }

    private static NodeKeys write(Path home, String name, X509Certificate certificate, KeyPair pair, boolean pkcs1)
            throws IOException {
        Files.createDirectories(home);
        Path cert = home.resolve("agent.cert");
        Path key = home.resolve("localhost.priv");
        SelfSigned.writeCertificates(cert, certificate);
        SelfSigned.writePrivateKey(key, pair.getPrivate(), pkcs1);
        return new NodeKeys(name, cert, key, certificate, pair);
    }
}
