package io.pintle.server.demo;

import io.pintle.server.nodes.KeyHash;
import io.pintle.server.policy.FileVersion;
import io.pintle.server.tls.SelfSigned;
import io.pintle.server.uploads.Htpasswd;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.stream.Stream;
import java.util.zip.GZIPOutputStream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveOutputStream;
import org.apache.commons.compress.compressors.bzip2.BZip2CompressorOutputStream;

/**
 * Writes a demo server layout. Directory structure (relative to the demo directory):
 *
 * <pre>
 * pintle.toml                    configuration (relative paths)
 * server/agent.cert, localhost.priv, uuid.hive   the server ("root") identity
 * nodes/&lt;id&gt;/agent.cert, localhost.priv      each node's identity, as on the node
 * lib/nodeslist.json, lib/nodescerts.pem, lib/rudder-networks-24.conf
 * share/&lt;id&gt;/rules/...               policies, as Rudder generates them
 * share/common/policies-library-linux.tar.bz2
 * server/htpasswd-webdav-initial, htpasswd-webdav, webdav.password   the uploads' users (rudder:rudder for new
 *                                nodes, rudder:&lt;random&gt; for the rest, as a Rudder server has them)
 * inventories/incoming, inventories/accepted-nodes-updates, reports/incoming   where uploads land (relayd's)
 * samples/                       an inventory and a report to upload
 * downloads/                     where the printed curl commands write
 * </pre>
 *
 * @param directory the demo directory
 * @param serverPin the server key pin agents use
 * @param linux1 first Linux node (RSA key, PKCS#1)
 * @param linux2 second Linux node (EC key, PKCS#8)
 * @param windows the Windows (DSC) node (RSA key)
 */
public record DemoLayout(Path directory, String serverPin, String linux1, String linux2, String windows) {
    /** The server's node id, as on a Rudder root server. */
    public static final String SERVER_ID = "root";
    /**
     * The demo's {@code [limits] max_connections}. A person with curl on loopback needs a handful; 500 keep what
     * they can take (with Conscrypt, three descriptors each, plus the server's reserve: 2,500) within the smallest
     * open-files limit in common use, 4,096 (the JVM raises its soft limit to the hard one), so the demo starts
     * without the warning the production default, sized for a fleet, gives there and on most desktops.
     */
    public static final int MAX_CONNECTIONS = 500;
    /** The user of both password files, as in the agents' {@code rudder.json} ({@code DAVUSER}). */
    public static final String UPLOAD_USER = "rudder";
    /** The password new nodes send their first inventory with: Rudder's well-known bootstrap one. */
    public static final String INITIAL_PASSWORD = "rudder";
    /** Where the password of {@code htpasswd-webdav} is written, relative to the demo directory. */
    public static final String WEBDAV_PASSWORD_FILE = "server/webdav.password";
    /** The date in the sample uploads' names. */
    private static final String SAMPLE_DATE = "2026-12-04T10:00:00+00:00";
    static final String INVENTORIES = "inventories/incoming";
    static final String INVENTORY_UPDATES = "inventories/accepted-nodes-updates";
    static final String REPORTS = "reports/incoming";

    /**
     * A step of the demo: what it shows, the command, and the HTTP status it prints last.
     *
     * @param title what it shows
     * @param command a shell command line starting with {@code curl }
     * @param expectedStatus the status code the command prints on its last line
     */
    public record Step(String title, String command, int expectedStatus) {}

    /** @return the configuration file */
    public Path config() {
        return directory.resolve("pintle.toml");
    }

    /**
     * Creates the layout. Node ids are fixed, so command lines are the same from one demo to the next.
     *
     * @param directory where to write (created if needed; existing demo files are replaced)
     * @param port the port written to the configuration (0 for any free port)
     * @return the layout
     * @throws IOException on write errors
     */
    public static DemoLayout create(Path directory, int port) throws IOException {
        Path dir = directory.toAbsolutePath().normalize();
        Files.createDirectories(dir);
        String linux1 = nodeId("linux-1");
        String linux2 = nodeId("linux-2");
        String windows = nodeId("windows-1");

        SelfSigned.Identity server = identity(dir.resolve("server"), SERVER_ID, SelfSigned.KeyType.RSA_2048, true);
        Files.writeString(dir.resolve("server/uuid.hive"), SERVER_ID);
        String serverPin = KeyHash.sha256(server.certificate().getPublicKey()).toString();

        Map<String, SelfSigned.Identity> nodes = new TreeMap<>();
        nodes.put(linux1, identity(dir.resolve("nodes/" + linux1), linux1, SelfSigned.KeyType.RSA_2048, true));
        nodes.put(linux2, identity(dir.resolve("nodes/" + linux2), linux2, SelfSigned.KeyType.EC_P256, false));
        nodes.put(windows, identity(dir.resolve("nodes/" + windows), windows, SelfSigned.KeyType.RSA_2048, true));

        Path lib = Files.createDirectories(dir.resolve("lib"));
        StringBuilder nodesList = new StringBuilder("{\n");
        List<X509Certificate> certificates = new ArrayList<>();
        String[] hostnames = {"linux-1.demo.example", "linux-2.demo.example", "windows-1.demo.example"};
        int i = 0;
        for (String id : List.of(linux1, linux2, windows)) {
            SelfSigned.Identity node = nodes.get(id);
            certificates.add(node.certificate());
            nodesList.append(String.format("  \"%s\": {\"hostname\": \"%s\", \"key-hash\": \"%s\", "
                            + "\"policy-server\": \"%s\"}%s%n",
                    id, hostnames[i], KeyHash.sha256(node.certificate().getPublicKey()), SERVER_ID,
                    i < 2 ? "," : ""));
            i++;
        }
        Files.writeString(lib.resolve("nodeslist.json"), nodesList.append("}\n").toString());
        SelfSigned.writeCertificates(lib.resolve("nodescerts.pem"), certificates.toArray(new X509Certificate[0]));
        Files.writeString(lib.resolve("rudder-networks-24.conf"),
                "# Apache include, as Rudder writes it: who may fetch policies\nRequire ip 127.0.0.0/8 ::1\n");

        Path share = dir.resolve("share");
        for (String id : List.of(linux1, linux2)) {
            linuxPolicies(share.resolve(id).resolve("rules"), id, server.certificate(), serverPin);
        }
        windowsPolicies(share.resolve(windows).resolve("rules"), windows, serverPin);
        commonLibrary(share.resolve("common"));
        Files.createDirectories(dir.resolve("downloads"));
        uploads(dir, linux1, nodes.get(linux1));
        // Remote run's agent, for the demo: a stand-in for /opt/rudder/bin/rudder that says what it was asked.
        Path agent = dir.resolve("server/demo-agent.sh");
        Files.writeString(agent, "#!/bin/sh\necho \"rudder (demo stand-in) $*\"\necho \"agent run on "
                + SERVER_ID + ": nothing to do in a demo\"\n");
        agent.toFile().setExecutable(true);
        String program = "\"" + agent + "\"";

        Files.writeString(dir.resolve("pintle.toml"), String.join("\n",
                "# pintle demo configuration; paths are relative to this file",
                "[general]",
                "node_id_file = \"server/uuid.hive\"",
                "role = \"root\"",
                "listen = \"127.0.0.1:" + port + "\"",
                "[tls]",
                "certificate = \"server/agent.cert\"",
                "key = \"server/localhost.priv\"",
                "[nodes]",
                "list = \"lib/nodeslist.json\"",
                "certificates = [\"lib/nodescerts.pem\"]",
                commonSections(),
                "[remote_run]",
                "run = [" + program + ", \"agent\", \"run\", \"-uR\"]",
                "update = [" + program + ", \"agent\", \"update\"]",
                "inventory = [" + program + ", \"agent\", \"inventory\"]",
                "timeout = 30",
                ""));
        return new DemoLayout(dir, serverPin, linux1, linux2, windows);
    }

    /**
     * The configuration sections both demos share (networks, share, admin listener, uploads, limits), one line
     * each, joined.
     */
    static String commonSections() {
        return String.join("\n",
                "[networks]",
                "allowed_file = \"lib/rudder-networks-24.conf\"",
                "[paths]",
                "share = \"share\"",
                "state = \"state\"",
                "[admin]",
                "listen = \"127.0.0.1:0\"",
                "[uploads]",
                "inventories = \"" + INVENTORIES + "\"",
                "inventory_updates = \"" + INVENTORY_UPDATES + "\"",
                "reports = \"" + REPORTS + "\"",
                "htpasswd_initial = \"server/htpasswd-webdav-initial\"",
                "htpasswd = \"server/htpasswd-webdav\"",
                "[limits]",
                "max_connections = " + MAX_CONNECTIONS);
    }

    /**
     * The demo's command lines for a server listening on 127.0.0.1:{@code port}.
     *
     * @param port the server's TLS port
     * @param adminPort the server's admin port
     * @return the steps, in order
     * @throws IOException if the Windows archive cannot be read (its ETag is in a command)
     */
    public List<Step> steps(int port, int adminPort) throws IOException {
        String base = "https://127.0.0.1:" + port;
        Path downloads = directory.resolve("downloads");
        String etagFile = downloads.resolve(linux1 + ".etag").toString();
        String zipEtag = FileVersion.of(directory.resolve("share/" + windows + "/rules/dsc/rudder.zip")).etag();
        return List.of(
                new Step("A Linux node downloads its policies, as 'rudder agent update' does (200, ETag saved)",
                        agentCurl(linux1) + " --etag-save " + etagFile + " --etag-compare " + etagFile
                                + " -o " + downloads.resolve(linux1 + "-rudder.tar.bz2") + " "
                                + base + "/policies/" + linux1 + "/rules/rudder.tar.bz2",
                        200),
                new Step("The same command again: unchanged, so 304 and nothing downloaded",
                        agentCurl(linux1) + " --etag-save " + etagFile + " --etag-compare " + etagFile
                                + " -o " + downloads.resolve(linux1 + "-rudder.tar.bz2") + " "
                                + base + "/policies/" + linux1 + "/rules/rudder.tar.bz2",
                        304),
                new Step("One request describes the whole tree: recursive manifest with sha256 and a strong ETag "
                        + "(Pintle extension; saved to " + downloads.resolve(linux1 + "-rules.manifest.json") + ")",
                        agentCurl(linux1) + " -o " + downloads.resolve(linux1 + "-rules.manifest.json") + " '"
                                + base + "/policies/" + linux1 + "/rules/?view=manifest'",
                        200),
                new Step("The same tree, any directory, as one consistent tar.gz (Pintle extension)",
                        agentCurl(linux1) + " -o " + downloads.resolve(linux1 + "-rules.tar.gz") + " '"
                                + base + "/policies/" + linux1 + "/rules/cfengine-community/?view=archive'",
                        200),
                new Step("The policy library every node shares (EC client key this time)",
                        agentCurl(linux2) + " -o " + downloads.resolve("policies-library-linux.tar.bz2") + " "
                                + base + "/common/policies-library-linux.tar.bz2",
                        200),
                new Step("The Windows (DSC) agent checks its zip with If-None-Match: 304, it is current",
                        agentCurl(windows) + " -H '" + "If-None-Match: " + zipEtag + "' -o "
                                + downloads.resolve(windows + "-rudder.zip") + " "
                                + base + "/policies/" + windows + "/rules/dsc/rudder.zip",
                        304),
                new Step("A new node sends its first inventory, as 'rudder agent inventory' does (201; the file is "
                        + "in " + directory.resolve(INVENTORIES) + ", where relayd picks it up)",
                        uploadCurl(INITIAL_PASSWORD, base, "/inventories/",
                                directory.resolve("samples").resolve(inventoryName(linux1))),
                        201),
                new Step("An agent sends its run report, as every run does (201; 204 when sent again)",
                        uploadCurl(Files.readString(directory.resolve(WEBDAV_PASSWORD_FILE)).strip(), base,
                                "/reports/", directory.resolve("samples").resolve(reportName(linux1))),
                        201),
                new Step("A node asks for another node's policies: 403 with the reason (problem+json)",
                        "curl -sS --tlsv1.3 --pinnedpubkey " + serverPin + " --insecure" + identity(linux1)
                                + " -w '\\n%{http_code}\\n' " + base + "/policies/" + linux2
                                + "/rules/rudder.tar.bz2",
                        403),
                new Step("How the server sees a node: /v1/whoami",
                        "curl -sS --tlsv1.3 --pinnedpubkey " + serverPin + " --insecure" + identity(linux2)
                                + " -w '\\n%{http_code}\\n' " + base + "/v1/whoami",
                        200),
                new Step("Reload by hand, relayd-compatible (editing lib/nodeslist.json reloads by itself)",
                        "curl -sS -X POST -w '\\n%{http_code}\\n' http://127.0.0.1:" + adminPort
                                + "/rudder/relay-api/1/system/reload",
                        200),
                new Step("Remote run, as Rudder's webapp asks relayd: the server runs its (stand-in) agent with "
                        + "validated conditions; Pintle's JSON form answers NDJSON with a status per node",
                        "curl -sS -w '%{http_code}\\n' -H 'Content-Type: application/json' -d "
                                + "'{\"command\": \"run\", \"conditions\": [\"demo_class\"]}' http://127.0.0.1:"
                                + adminPort + "/rudder/relay-api/1/remote-run/nodes/" + SERVER_ID,
                        200),
                new Step("A node that accepts no inbound connection holds its order channel, as "
                        + "deploy/node/pintle-run-orders does (a run for it would answer at once; none comes: 204 "
                        + "after 2 s)",
                        agentCurl(linux2) + " '" + base + "/rudder/relay-api/remote-run/orders?wait=2'",
                        204),
                new Step("What is live: snapshot generation, input files and digests, reload history",
                        "curl -sS -w '\\n%{http_code}\\n' http://127.0.0.1:" + adminPort + "/v1/status",
                        200),
                new Step("Who is behind: the served nodes that do not hold the policies served to them now (the "
                        + "Linux node that downloaded its archive above is not among them)",
                        "curl -sS -w '\\n%{http_code}\\n' 'http://127.0.0.1:" + adminPort + "/v1/nodes?behind=true'",
                        200));
    }

    /**
     * Upload directories, password files as {@code htpasswd -m} writes them, and an inventory and a report to send.
     */
    private static void uploads(Path dir, String node, SelfSigned.Identity identity) throws IOException {
        uploadUsers(dir);
        Path samples = Files.createDirectories(dir.resolve("samples"));
        gzip(samples.resolve(inventoryName(node)), "<?xml version=\"1.0\" encoding=\"UTF-8\" ?>\n<REQUEST><DEVICEID>"
                + node + "</DEVICEID><QUERY>INVENTORY</QUERY><!-- pintle demo sample --></REQUEST>\n");
        // Signed with the node's agent key, as report.sh signs it: the server checks it against nodescerts.pem.
        String runLog = "R: @@Common@@result_success@@hasPolicyServer-root@@common-root@@0@@common@@StartRun@@"
                + SAMPLE_DATE + "##" + node + "@#Start execution (pintle demo sample)\n";
        try {
            gzip(samples.resolve(reportName(node)), SignedRunLog.sign(runLog, identity.certificate(),
                    identity.keyPair().getPrivate()));
        } catch (java.security.GeneralSecurityException e) {
            throw new IOException(e.getMessage(), e);
        }
    }

    /** Upload directories and password files as {@code htpasswd -m} writes them (inputs of every demo). */
    static void uploadUsers(Path dir) throws IOException {
        for (String upload : List.of(INVENTORIES, INVENTORY_UPDATES, REPORTS)) {
            Files.createDirectories(dir.resolve(upload));
        }
        Files.writeString(dir.resolve("server/htpasswd-webdav-initial"),
                Htpasswd.apr1Line(UPLOAD_USER, INITIAL_PASSWORD) + "\n");
        byte[] secret = new byte[12];
        new SecureRandom().nextBytes(secret);
        String password = HexFormat.of().formatHex(secret);
        Files.writeString(dir.resolve("server/htpasswd-webdav"), Htpasswd.apr1Line(UPLOAD_USER, password) + "\n");
        Files.writeString(dir.resolve(WEBDAV_PASSWORD_FILE), password + "\n");
    }

    private static void gzip(Path file, String content) throws IOException {
        gzip(file, content.getBytes(StandardCharsets.UTF_8));
    }

    private static void gzip(Path file, byte[] content) throws IOException {
        try (OutputStream out = new GZIPOutputStream(Files.newOutputStream(file))) {
            out.write(content);
        }
    }

    private static String inventoryName(String node) {
        return node + "_" + SAMPLE_DATE + ".ocs.gz";
    }

    private static String reportName(String node) {
        return SAMPLE_DATE + "@" + node + ".log.gz";
    }

    /**
     * An upload as rudder-client sends it without {@code -c}: Basic auth, no client certificate, the file's name
     * appended to the route by curl's {@code --upload-file}.
     */
    private String uploadCurl(String password, String base, String route, Path file) {
        return "curl -sS --tlsv1.3 --location --fail --connect-timeout 10 --noproxy '*' --pinnedpubkey " + serverPin
                + " --insecure --user " + UPLOAD_USER + ":" + password + " -w '%{http_code}\\n' -o /dev/null "
                + base + route + " --upload-file " + file;
    }

    /** The curl flags Rudder's {@code rudder-client} uses (rudder-agent {@code bin/rudder-client}). */
    private String agentCurl(String node) {
        return "curl -sS --tlsv1.3 --location --fail --connect-timeout 10 --noproxy '*' --pinnedpubkey " + serverPin
                + " --insecure" + identity(node) + " -w '%{http_code}\\n'";
    }

    private String identity(String node) {
        Path home = directory.resolve("nodes").resolve(node);
        return " --cert " + home.resolve("agent.cert") + " --key " + home.resolve("localhost.priv");
    }

    static String nodeId(String name) {
        return UUID.nameUUIDFromBytes(("pintle-demo-" + name).getBytes(StandardCharsets.UTF_8)).toString();
    }

    private static SelfSigned.Identity identity(Path home, String id, SelfSigned.KeyType type, boolean pkcs1)
            throws IOException {
        SelfSigned.Identity identity = SelfSigned.generate(type, id);
        Files.createDirectories(home);
        SelfSigned.writeCertificates(home.resolve("agent.cert"), identity.certificate());
        SelfSigned.writePrivateKey(home.resolve("localhost.priv"), identity.keyPair().getPrivate(), pkcs1);
        return identity;
    }

    static void linuxPolicies(Path rules, String id, X509Certificate server, String serverPin)
            throws IOException {
        Path tree = Files.createDirectories(rules.resolve("cfengine-community"));
        Files.writeString(tree.resolve("promises.cf"), "# Policies of node " + id + ", generated by pintle demo\n"
                + "bundle common rudder_demo {\n  vars:\n    \"node_id\" string => \"" + id + "\";\n}\n");
        Files.writeString(tree.resolve("rudder-promises-generated"), System.currentTimeMillis() + "\n");
        Files.writeString(tree.resolve("rudder.json"), "{\n  \"POLICY_SERVER_KEY_HASH\": \"" + serverPin
                + "\",\n  \"POLICY_SERVER_HTTPS_ONLY\": \"true\",\n  \"HTTPS_POLICY_DISTRIBUTION_PORT\": \"443\"\n}\n");
        Path certs = Files.createDirectories(tree.resolve("certs"));
        SelfSigned.writeCertificates(certs.resolve("root.pem"), server);
        Path link = certs.resolve("policy-server.pem");
        Files.deleteIfExists(link);
        // As Rudder does when the policy server is root: a relative symlink inside the node's tree.
        Files.createSymbolicLink(link, Path.of("root.pem"));
        try (OutputStream out = Files.newOutputStream(rules.resolve("rudder.tar.bz2"))) {
            tarBz2(out, Map.of("policies_next", tree));
        }
    }

    private static void windowsPolicies(Path rules, String id, String serverPin) throws IOException {
        Path dsc = Files.createDirectories(rules.resolve("dsc"));
        try (ZipOutputStream zip = new ZipOutputStream(Files.newOutputStream(dsc.resolve("rudder.zip")))) {
            zip.putNextEntry(new ZipEntry("rudder.json"));
            zip.write(("{\"POLICY_SERVER_KEY_HASH\": \"" + serverPin + "\"}\n").getBytes(StandardCharsets.UTF_8));
            zip.closeEntry();
            zip.putNextEntry(new ZipEntry("policies/rudder.ps1"));
            zip.write(("# DSC policies of node " + id + ", generated by pintle demo\n")
                    .getBytes(StandardCharsets.UTF_8));
            zip.closeEntry();
        }
    }

    static void commonLibrary(Path common) throws IOException {
        Path ncf = Files.createDirectories(common.resolve(".ncf-source"));
        Path generic = Files.createDirectories(ncf.resolve("common/30_generic_methods"));
        Files.writeString(generic.resolve("file_present.cf"), "# ncf generic method (demo)\n");
        Path local = Files.createDirectories(ncf.resolve("local"));
        Files.writeString(local.resolve("ncf_hash_file"), "demo\n");
        try (OutputStream out = Files.newOutputStream(common.resolve("policies-library-linux.tar.bz2"))) {
            tarBz2(out, Map.of("ncf", ncf));
        }
        deleteTree(ncf);
    }

    /** Writes a tar.bz2 whose entries are each tree's files under the given prefix, mode 0600 as Rudder's. */
    private static void tarBz2(OutputStream out, Map<String, Path> trees) throws IOException {
        try (TarArchiveOutputStream tar = new TarArchiveOutputStream(new BZip2CompressorOutputStream(out))) {
            tar.setLongFileMode(TarArchiveOutputStream.LONGFILE_POSIX);
            for (Map.Entry<String, Path> tree : new TreeMap<>(trees).entrySet()) {
                List<Path> files;
                try (Stream<Path> walk = Files.walk(tree.getValue())) {
                    files = walk.filter(Files::isRegularFile).sorted().toList();
                }
                for (Path file : files) {
                    String name = tree.getKey() + "/" + tree.getValue().relativize(file).toString().replace('\\', '/');
                    TarArchiveEntry entry = new TarArchiveEntry(name);
                    entry.setSize(Files.size(file));
                    entry.setMode(0100600);
                    tar.putArchiveEntry(entry);
                    Files.copy(file, tar);
                    tar.closeArchiveEntry();
                }
            }
        }
    }

    private static void deleteTree(Path root) throws IOException {
        try (Stream<Path> walk = Files.walk(root)) {
            for (Path path : walk.sorted((a, b) -> b.compareTo(a)).toList()) {
                Files.delete(path);
            }
        }
    }
}
