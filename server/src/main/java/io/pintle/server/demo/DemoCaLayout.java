package io.pintle.server.demo;

import io.pintle.server.nodes.KeyHash;
import io.pintle.server.tls.CertificateAuthority;
import io.pintle.server.tls.SelfSigned;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.bouncycastle.asn1.x509.GeneralName;

/**
 * Writes a demo server layout in certificate-validation mode (Rudder's {@code cert_validation}): an organisation's
 * PKI instead of pinned keys. Directory structure (relative to the demo directory):
 *
 * <pre>
 * pintle.toml                    configuration (relative paths)
 * ca/policy_server_ca.pem        the root CA ([nodes] ca_file), what agents pass to --cacert
 * ca/crl.pem                     the root's CRL: it revokes the revoked node ([nodes] crl_files)
 * lib/denied-keys                keys denied whatever signed them ([nodes] denied_keys_file), empty
 * server/agent-http.cert, agent-http.key, uuid.hive   the server ("root"): issued by the intermediate CA for
 *                                IP:127.0.0.1 and DNS:localhost, written with the intermediate (its chain)
 * nodes/&lt;id&gt;/agent-http.cert, agent-http.key      each node's identity, as on the node (leaf + intermediate)
 * lib/nodeslist.json, lib/rudder-networks-24.conf   the nodes (no key-hash: the CA vouches for keys)
 * share/&lt;id&gt;/rules/..., share/common/...          policies
 * server/htpasswd-webdav-initial, htpasswd-webdav   unused by CA-signed agents, read as on any Rudder server
 * inventories/incoming, ...      where uploads land; samples/ an inventory to upload; downloads/ curl's output
 * </pre>
 *
 * <p>Every key is EC P-256: the demo starts in well under a second.
 *
 * @param directory the demo directory
 * @param uidNode a node whose id is its certificate's subject {@code UID}
 * @param sanNode a node whose id is only in a DNS subject alternative name ({@value #SAN_SUFFIX})
 * @param revokedNode a listed node whose certificate the CRL revokes
 * @param sanNodePin the SAN node's key pin (what the deny list takes)
 */
public record DemoCaLayout(Path directory, String uidNode, String sanNode, String revokedNode, String sanNodePin) {
    /** Where the SAN id rule finds a node id: {@code <id>.nodes.demo.example}. */
    public static final String SAN_SUFFIX = ".nodes.demo.example";
    /** The CA bundle, relative to the demo directory. */
    public static final String CA_FILE = "ca/policy_server_ca.pem";
    /** The CRL, relative to the demo directory. */
    public static final String CRL_FILE = "ca/crl.pem";
    /** The deny list, relative to the demo directory. */
    public static final String DENIED_KEYS_FILE = "lib/denied-keys";
    private static final String CERTIFICATE = "agent-http.cert";
    private static final String KEY = "agent-http.key";
    /** As long as Rudder's agent certificates. */
    private static final Duration CA_VALIDITY = SelfSigned.RUDDER_VALIDITY;

    /** @return the configuration file */
    public Path config() {
        return directory.resolve("pintle.toml");
    }

    /** @return the CA bundle */
    public Path caFile() {
        return directory.resolve(CA_FILE);
    }

    /** @return the CRL file */
    public Path crlFile() {
        return directory.resolve(CRL_FILE);
    }

    /** @return the deny list */
    public Path deniedKeysFile() {
        return directory.resolve(DENIED_KEYS_FILE);
    }

    /**
     * Creates the layout. Node ids are fixed, so command lines are the same from one demo to the next; keys and
     * certificates are new each time.
     *
     * @param directory where to write (created if needed; existing demo files are replaced)
     * @param port the port written to the configuration (0 for any free port)
     * @return the layout
     * @throws IOException on write errors
     */
    public static DemoCaLayout create(Path directory, int port) throws IOException {
        Path dir = directory.toAbsolutePath().normalize();
        Files.createDirectories(dir);
        String uidNode = DemoLayout.nodeId("ca-uid-1");
        String sanNode = DemoLayout.nodeId("ca-san-1");
        String revokedNode = DemoLayout.nodeId("ca-revoked-1");

        CertificateAuthority root = CertificateAuthority.root(SelfSigned.KeyType.EC_P256, "Pintle Demo Root CA",
                CA_VALIDITY);
        CertificateAuthority intermediate = root.intermediate(SelfSigned.KeyType.EC_P256, "Pintle Demo Nodes CA");
        SelfSigned.writeCertificates(dir.resolve(CA_FILE), root.certificate());

        // The server's certificate: what agents verify, by the CA and by the address they connect to.
        X509Certificate server = issue(intermediate, dir.resolve("server"), DemoLayout.SERVER_ID, "localhost",
                List.of(CertificateAuthority.ip("127.0.0.1"), CertificateAuthority.dns("localhost")));
        Files.writeString(dir.resolve("server/uuid.hive"), DemoLayout.SERVER_ID);
        String serverPin = KeyHash.sha256(server.getPublicKey()).toString();

        issue(intermediate, dir.resolve("nodes/" + uidNode), uidNode, "uid-1.demo.example", List.of());
        X509Certificate san = issue(intermediate, dir.resolve("nodes/" + sanNode), null, "san-1.demo.example",
                List.of(CertificateAuthority.dns(sanNode + SAN_SUFFIX)));
        // Issued by the root itself: a CRL is verified against a CA of the bundle, and the bundle is the root.
        X509Certificate revoked = issue(root, dir.resolve("nodes/" + revokedNode), revokedNode,
                "revoked-1.demo.example", List.of());
        CertificateAuthority.writeCrls(dir.resolve(CRL_FILE), root.crl(List.of(revoked.getSerialNumber())));
        Path lib = Files.createDirectories(dir.resolve("lib"));
        Files.writeString(dir.resolve(DENIED_KEYS_FILE),
                "# One key pin per line (sha256//..., as 'rudder agent info' shows it): refused whatever signed it.\n");

        Files.writeString(lib.resolve("nodeslist.json"), String.format("{%n"
                        + "  \"%s\": {\"hostname\": \"uid-1.demo.example\", \"policy-server\": \"%s\"},%n"
                        + "  \"%s\": {\"hostname\": \"san-1.demo.example\", \"policy-server\": \"%s\"},%n"
                        + "  \"%s\": {\"hostname\": \"revoked-1.demo.example\", \"policy-server\": \"%s\"}%n}%n",
                uidNode, DemoLayout.SERVER_ID, sanNode, DemoLayout.SERVER_ID, revokedNode, DemoLayout.SERVER_ID));
        Files.writeString(lib.resolve("rudder-networks-24.conf"),
                "# Apache include, as Rudder writes it: who may fetch policies\nRequire ip 127.0.0.0/8 ::1\n");

        Path share = dir.resolve("share");
        for (String id : List.of(uidNode, sanNode, revokedNode)) {
            DemoLayout.linuxPolicies(share.resolve(id).resolve("rules"), id, server, serverPin);
        }
        DemoLayout.commonLibrary(share.resolve("common"));
        Files.createDirectories(dir.resolve("downloads"));
        DemoLayout.uploadUsers(dir);
        Path samples = Files.createDirectories(dir.resolve("samples"));
        Files.writeString(samples.resolve(inventoryName(uidNode)), "<?xml version=\"1.0\" encoding=\"UTF-8\" ?>\n"
                + "<REQUEST><DEVICEID>" + uidNode + "</DEVICEID><QUERY>INVENTORY</QUERY>"
                + "<!-- pintle demo sample --></REQUEST>\n");

        Files.writeString(dir.resolve("pintle.toml"), String.join("\n",
                "# pintle demo --ca configuration; paths are relative to this file",
                "[general]",
                "node_id_file = \"server/uuid.hive\"",
                "role = \"root\"",
                "listen = \"127.0.0.1:" + port + "\"",
                "[tls]",
                "certificate = \"server/" + CERTIFICATE + "\"",
                "key = \"server/" + KEY + "\"",
                "[nodes]",
                "list = \"lib/nodeslist.json\"",
                "certificates = []",
                "authentication = [\"cert_validation\"]",
                "ca_file = \"" + CA_FILE + "\"",
                "ca_max_depth = 5",
                "id_rules = [\"uid\", \"san-dns:{id}" + SAN_SUFFIX + "\"]",
                "crl_files = [\"" + CRL_FILE + "\"]",
                "denied_keys_file = \"" + DENIED_KEYS_FILE + "\"",
                DemoLayout.commonSections(),
                ""));
        return new DemoCaLayout(dir, uidNode, sanNode, revokedNode, KeyHash.sha256(san.getPublicKey()).toString());
    }

    /**
     * The demo's command lines for a server listening on 127.0.0.1:{@code port}. Each is rudder-client's own curl
     * in certificate-validation mode, so a refusal prints curl's error ({@code --fail}) and its status; the
     * {@code /v1/whoami} lines show the server's reasons.
     *
     * @param port the server's TLS port
     * @return the steps, in order
     */
    public List<DemoLayout.Step> steps(int port) {
        String base = "https://127.0.0.1:" + port;
        Path downloads = directory.resolve("downloads");
        String archive = "/rules/rudder.tar.bz2";
        List<DemoLayout.Step> steps = new ArrayList<>();
        steps.add(new DemoLayout.Step("Node " + uidNode + " (its id in the certificate's subject UID) downloads its "
                + "policies, as 'rudder agent update' does in certificate-validation mode",
                agentCurl(uidNode) + " -w '%{http_code}\\n' -o " + downloads.resolve(uidNode + "-rudder.tar.bz2") + " "
                        + base + "/policies/" + uidNode + archive,
                200));
        steps.add(new DemoLayout.Step("Node " + sanNode + " (its id only in the DNS SAN " + sanNode + SAN_SUFFIX
                + ") downloads its policies",
                agentCurl(sanNode) + " -w '%{http_code}\\n' -o " + downloads.resolve(sanNode + "-rudder.tar.bz2") + " "
                        + base + "/policies/" + sanNode + archive,
                200));
        steps.add(new DemoLayout.Step("A node asks for another node's policies: refused (curl prints its error)",
                agentCurl(uidNode) + " -w '%{http_code}\\n' -o /dev/null " + base + "/policies/" + sanNode + archive,
                403));
        steps.add(new DemoLayout.Step("The revoked node (its serial is in " + crlFile() + "): refused, reason "
                + "'revoked'",
                agentCurl(revokedNode) + " -w '%{http_code}\\n' -o /dev/null " + base + "/policies/" + revokedNode
                        + archive,
                403));
        steps.add(new DemoLayout.Step("The policy library every node shares: a CA-signed certificate opens /common",
                agentCurl(sanNode) + " -w '%{http_code}\\n' -o " + downloads.resolve("policies-library-linux.tar.bz2")
                        + " " + base + "/common/policies-library-linux.tar.bz2",
                200));
        steps.add(new DemoLayout.Step("/common without a certificate: refused in certificate-validation mode, as "
                + "Rudder's vhost does",
                curl() + " -w '%{http_code}\\n' -o /dev/null " + base + "/common/policies-library-linux.tar.bz2",
                403));
        steps.add(new DemoLayout.Step("A node sends its inventory with its certificate and no Basic credentials "
                + "(201; 204 when sent again; the file is in " + directory.resolve(DemoLayout.INVENTORIES) + ")",
                agentCurl(uidNode) + " -w '%{http_code}\\n' -o /dev/null " + base + "/inventories/ --upload-file "
                        + directory.resolve("samples").resolve(inventoryName(uidNode)),
                201));
        steps.add(new DemoLayout.Step("How the server sees the SAN node: the node id read in its DNS SAN, "
                + "authenticated_by the trust mode that vouched (its access log lines end with auth=cert_validation)",
                agentCurl(sanNode) + " -w '\\n%{http_code}\\n' " + base + "/v1/whoami",
                200));
        steps.add(new DemoLayout.Step("How the server sees the revoked node: why it is refused",
                agentCurl(revokedNode) + " -w '\\n%{http_code}\\n' " + base + "/v1/whoami",
                200));
        return List.copyOf(steps);
    }

    /** rudder-client's curl in certificate-validation mode (rudder-agent {@code bin/rudder-client}), no identity. */
    private String curl() {
        return "curl --tlsv1.3 --location --fail --connect-timeout 10 --noproxy '*' --cacert " + caFile()
                + " --silent --show-error";
    }

    /** rudder-client's curl in certificate-validation mode, with the node's {@code agent-http} pair. */
    private String agentCurl(String node) {
        Path home = directory.resolve("nodes").resolve(node);
        return curl() + " --cert " + home.resolve(CERTIFICATE) + " --key " + home.resolve(KEY);
    }

    private static String inventoryName(String node) {
        return "uid-1.demo.example-" + node + ".ocs";
    }

    /**
     * Issues an EC identity and writes it as the agent keeps it in certificate-validation mode: {@code
     * agent-http.cert} (the certificate, then the CAs below the root, which the agent sends with it) and {@code
     * agent-http.key}.
     */
    private static X509Certificate issue(CertificateAuthority issuer, Path home, String uid, String commonName,
            List<GeneralName> sans) throws IOException {
        KeyPair keys = SelfSigned.keyPair(SelfSigned.KeyType.EC_P256);
        X509Certificate certificate = issuer.issue(keys.getPublic(), CertificateAuthority.subject(uid, commonName),
                sans);
        List<X509Certificate> chain = new ArrayList<>();
        chain.add(certificate);
        // The issuer's chain ends with the root, which the other side already has in its CA file.
        chain.addAll(issuer.chain().subList(0, issuer.chain().size() - 1));
        Files.createDirectories(home);
        SelfSigned.writeCertificates(home.resolve(CERTIFICATE), chain.toArray(new X509Certificate[0]));
        SelfSigned.writePrivateKey(home.resolve(KEY), keys.getPrivate(), false);
        return certificate;
    }
}
