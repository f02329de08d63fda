package io.pintle.bench.forwarding;

import io.pintle.server.nodes.KeyHash;
import io.pintle.server.tls.SelfSigned;
import io.pintle.server.uploads.Htpasswd;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.zip.GZIPOutputStream;
import org.bouncycastle.cms.CMSException;
import org.bouncycastle.cms.CMSProcessableByteArray;
import org.bouncycastle.cms.CMSSignedDataGenerator;
import org.bouncycastle.cms.jcajce.JcaSimpleSignerInfoGeneratorBuilder;
import org.bouncycastle.operator.OperatorCreationException;

/**
 * Writes bench/forwarding's two server directories and its reports:
 *
 * <ul>
 *   <li>{@code root/} and {@code relay/}: an RSA-2048 server key and self-signed {@code UID=<id>} certificate
 *       each ({@code root}, {@code relay-1}), {@code lib/nodeslist.json} and {@code lib/nodescerts.pem}, the WebDAV
 *       htpasswd files ({@code rudder:}{@value #PASSWORD}). The root lists {@code relay-1} and every node below it,
 *       with all their certificates (Rudder's root holds every node's key); the relay lists its nodes.</li>
 *   <li>{@code nodes} nodes {@code node-<i>}, RSA-2048 as Rudder's agents, and {@code reports/}: per node
 *       {@code reportsPerNode} reports {@code <date>@node-<i>.log.gz}, each a run log of {@code lines} lines signed
 *       as {@code report.sh} signs it ({@code openssl smime -sign -text -nocerts}, SHA-256, then gzip).</li>
 * </ul>
 *
 * <p>Usage: {@code ForwardingFixture <dir> <nodes> <reportsPerNode> <lines>}; prints the two servers' key pins.
 */
public final class ForwardingFixture {
    static final String PASSWORD = "bench-webdav";
    private static final DateTimeFormatter ISO =
            DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ssxxx").withZone(ZoneOffset.UTC);
    private static final String[] OUTCOMES = {"result_success", "result_success", "result_success", "result_repaired",
        "result_na", "log_info", "audit_compliant"};
    private static final String[] COMPONENTS = {"File content", "Package present", "Service started",
        "Check configuration", "Permissions", "Variable definition", "Command execution", "Enforce user"};

    private ForwardingFixture() {}

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]).toAbsolutePath();
        int nodes = Integer.parseInt(args[1]);
        int perNode = Integer.parseInt(args[2]);
        int lines = Integer.parseInt(args[3]);

        SelfSigned.Identity root = server(dir.resolve("root"), "root");
        SelfSigned.Identity relay = server(dir.resolve("relay"), "relay-1");
        ExecutorService pool = Executors.newFixedThreadPool(Runtime.getRuntime().availableProcessors());
        List<Future<SelfSigned.Identity>> made = new ArrayList<>();
        for (int i = 0; i < nodes; i++) {
            String id = "node-" + i;
            made.add(pool.submit(() -> SelfSigned.generate(SelfSigned.KeyType.RSA_2048, id)));
        }
        List<SelfSigned.Identity> identities = new ArrayList<>();
        for (Future<SelfSigned.Identity> f : made) {
            identities.add(f.get());
        }

        StringBuilder rootList = new StringBuilder("{\n  \"relay-1\": " + entry("relay-1", relay, "root"));
        StringBuilder relayList = new StringBuilder("{\n  \"relay-1\": " + entry("relay-1", relay, "root"));
        List<X509Certificate> certificates = new ArrayList<>();
        for (int i = 0; i < nodes; i++) {
            String line = ",\n  \"node-" + i + "\": " + entry("node-" + i, identities.get(i), "relay-1");
            rootList.append(line);
            relayList.append(line);
            certificates.add(identities.get(i).certificate());
        }
        Files.writeString(dir.resolve("root/lib/nodeslist.json"), rootList.append("\n}\n"));
        Files.writeString(dir.resolve("relay/lib/nodeslist.json"), relayList.append("\n}\n"));
        List<X509Certificate> rootCertificates = new ArrayList<>(certificates);
        rootCertificates.add(0, relay.certificate());
        SelfSigned.writeCertificates(dir.resolve("root/lib/nodescerts.pem"),
                rootCertificates.toArray(new X509Certificate[0]));
        SelfSigned.writeCertificates(dir.resolve("relay/lib/nodescerts.pem"),
                certificates.toArray(new X509Certificate[0]));

        Path reports = Files.createDirectories(dir.resolve("reports"));
        Instant start = Instant.parse("2026-12-06T10:00:00Z");
        List<Future<Long>> sizes = new ArrayList<>();
        for (int i = 0; i < nodes; i++) {
            int node = i;
            sizes.add(pool.submit(() -> {
                long bytes = 0;
                SelfSigned.Identity identity = identities.get(node);
                Random random = new Random(node);
                List<UUID> directives = new ArrayList<>();
                for (int d = 0; d < 40; d++) {
                    directives.add(new UUID(random.nextLong(), random.nextLong()));
                }
                for (int r = 0; r < perNode; r++) {
                    Instant at = start.plus(5L * r, ChronoUnit.MINUTES).plusSeconds(node % 300);
                    String id = "node-" + node;
                    byte[] signed = sign(runLog(id, at, lines, directives, random), identity.certificate(),
                            identity.keyPair().getPrivate());
                    byte[] gz = gzip(signed);
                    Files.write(reports.resolve(ISO.format(at) + "@" + id + ".log.gz"), gz);
                    bytes += gz.length;
                }
                return bytes;
            }));
        }
        long total = 0;
        for (Future<Long> f : sizes) {
            total += f.get();
        }
        pool.shutdown();
        System.out.println("root_pin=" + KeyHash.sha256(root.certificate().getPublicKey()));
        System.out.println("relay_pin=" + KeyHash.sha256(relay.certificate().getPublicKey()));
        System.out.println("reports=" + (long) nodes * perNode);
        System.out.println("mean_report_bytes=" + total / ((long) nodes * perNode));
    }

    private static String entry(String id, SelfSigned.Identity identity, String policyServer) {
        return "{\"hostname\": \"" + id + ".example.org\", \"key-hash\": \""
                + KeyHash.sha256(identity.certificate().getPublicKey()) + "\", \"policy-server\": \"" + policyServer
                + "\"}";
    }

    private static SelfSigned.Identity server(Path dir, String id) throws IOException {
        Files.createDirectories(dir.resolve("server"));
        Files.createDirectories(dir.resolve("lib"));
        Files.createDirectories(dir.resolve("share"));
        SelfSigned.Identity identity = SelfSigned.generate(SelfSigned.KeyType.RSA_2048, id);
        SelfSigned.writeCertificates(dir.resolve("server/agent.cert"), identity.certificate());
        SelfSigned.writePrivateKey(dir.resolve("server/localhost.priv"), identity.keyPair().getPrivate(), true);
        Files.writeString(dir.resolve("server/uuid.hive"), id + "\n");
        Files.writeString(dir.resolve("server/htpasswd-webdav"), Htpasswd.apr1Line("rudder", PASSWORD) + "\n");
        Files.writeString(dir.resolve("server/htpasswd-webdav-initial"), Htpasswd.apr1Line("rudder", "rudder") + "\n");
        Files.writeString(dir.resolve("lib/networks.conf"), "Require ip 127.0.0.0/8 ::1\n");
        return identity;
    }

    /** A run log as the agent writes it: Rudder's {@code R: @@...} report lines, one per component. */
    static String runLog(String node, Instant at, int lines, List<UUID> directives, Random random) {
        String date = DateTimeFormatter.ofPattern("uuuu-MM-dd HH:mm:ssxxx").withZone(ZoneOffset.UTC).format(at);
        String config = "20261206-" + HexFormat.of().toHexDigits(random.nextInt());
        StringBuilder out = new StringBuilder(lines * 200);
        out.append("R: @@Common@@log_info@@hasPolicyServer-root@@common-root@@0@@common@@StartRun@@").append(date)
                .append("##").append(node).append("@#Start execution with config [").append(config).append("]\n");
        for (int i = 1; i < lines - 1; i++) {
            UUID rule = directives.get(random.nextInt(directives.size()));
            UUID directive = directives.get(random.nextInt(directives.size()));
            String component = COMPONENTS[random.nextInt(COMPONENTS.length)];
            out.append("R: @@").append(component.replace(' ', '_')).append("@@")
                    .append(OUTCOMES[random.nextInt(OUTCOMES.length)]).append("@@").append(rule).append("@@")
                    .append(directive).append("@@").append(random.nextInt(100)).append("@@").append(component)
                    .append("@@/etc/app/conf-").append(Integer.toHexString(random.nextInt())).append(".d@@")
                    .append(date).append("##").append(node).append("@#").append(component)
                    .append(" was correct (sha256 ")
                    .append(HexFormat.of().formatHex(longBytes(random.nextLong()))).append(")\n");
        }
        out.append("R: @@Common@@log_info@@hasPolicyServer-root@@common-root@@0@@common@@EndRun@@").append(date)
                .append("##").append(node).append("@#End execution with config [").append(config).append("]\n");
        return out.toString();
    }

    private static byte[] longBytes(long v) {
        byte[] b = new byte[8];
        for (int i = 0; i < 8; i++) {
            b[i] = (byte) (v >>> (8 * i));
        }
        return b;
    }

    /**
     * What {@code openssl smime -sign -text -nocerts -md sha256} writes (the server's own demo report does the
     * same, {@code io.pintle.server.demo.SignedRunLog}, which is not public): a {@code multipart/signed} message
     * whose first part is the log as {@code text/plain} with CRLF line ends, the second a detached CMS signature.
     */
    static byte[] sign(String runLog, X509Certificate certificate, PrivateKey key) throws GeneralSecurityException {
        String text = "Content-Type: text/plain\r\n\r\n" + runLog.replace("\n", "\r\n");
        byte[] signed = text.getBytes(StandardCharsets.UTF_8);
        byte[] signature;
        try {
            CMSSignedDataGenerator generator = new CMSSignedDataGenerator();
            generator.addSignerInfoGenerator(new JcaSimpleSignerInfoGeneratorBuilder().build("SHA256withRSA", key,
                    certificate));
            signature = generator.generate(new CMSProcessableByteArray(signed), false).getEncoded();
        } catch (OperatorCreationException | CMSException | IOException e) {
            throw new GeneralSecurityException("cannot sign a report: " + e.getMessage(), e);
        }
        byte[] random = new byte[16];
        new SecureRandom().nextBytes(random);
        String boundary = "----" + HexFormat.of().withUpperCase().formatHex(random);
        ByteArrayOutputStream out = new ByteArrayOutputStream(signed.length + signature.length * 2 + 512);
        out.writeBytes(("MIME-Version: 1.0\r\nContent-Type: multipart/signed; protocol=\"application/x-pkcs7-signature\"; "
                + "micalg=\"sha-256\"; boundary=\"" + boundary + "\"\r\n\r\nThis is an S/MIME signed message\r\n\r\n--"
                + boundary + "\r\n").getBytes(StandardCharsets.US_ASCII));
        out.writeBytes(signed);
        out.writeBytes(("\r\n--" + boundary + "\r\nContent-Type: application/x-pkcs7-signature; name=\"smime.p7s\"\r\n"
                + "Content-Transfer-Encoding: base64\r\nContent-Disposition: attachment; filename=\"smime.p7s\"\r\n\r\n"
                + Base64.getMimeEncoder(64, "\r\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(signature)
                + "\r\n\r\n--" + boundary + "--\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        return out.toByteArray();
    }

    private static byte[] gzip(byte[] data) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream(data.length / 4);
        try (GZIPOutputStream gz = new GZIPOutputStream(out)) {
            gz.write(data);
        }
        return out.toByteArray();
    }
}
