package io.pintle.bench.stall;

import io.pintle.bench.harness.DemoConfig;
import io.pintle.bench.sync.Ports;
import io.pintle.client.Pem;
import io.pintle.server.demo.DemoLayout;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.Signature;
import java.util.Base64;
import java.util.HexFormat;
import org.bouncycastle.asn1.x509.SubjectPublicKeyInfo;

/**
 * {@code pintle demo}'s layout, plus what the families need that the demo lacks: a shared folder with one file, a
 * shared-files directory, fixed ports for the TLS and admin listeners. The node calling is the demo's first Linux
 * node (RSA-2048, as the shared-files signature requires); it sends one shared file to the second, once, before
 * the run, so that the shared-files hash check has something to find.
 *
 * @param demo the demo layout underneath
 * @param port the TLS listener's port
 * @param adminPort the admin listener's port ({@code /metrics})
 */
record StallLayout(DemoLayout demo, int port, int adminPort) {
    static final String SHARED_FOLDER_FILE = "stall/agent-file.txt";
    static final String SHARED_FILE_ID = "stall-file";

    /** @return the calling node's id */
    String node() {
        return demo.linux1();
    }

    /** @return its home: {@code agent.cert} and {@code localhost.priv} */
    Path nodeHome() {
        return demo.directory().resolve("nodes").resolve(node());
    }

    /** @return the shared-folder file on disk */
    Path sharedFolderFile() {
        return demo.directory().resolve("shared-folder").resolve(SHARED_FOLDER_FILE);
    }

    /** @return the shared file's {@code target/source/id}: sent by the calling node to the second Linux node */
    String sharedFileUrl() {
        return demo.linux2() + "/" + node() + "/" + SHARED_FILE_ID;
    }

    /** @return what the shared file holds */
    static byte[] sharedFileContent() {
        return "a file one node shares with another, checked by its hash\n".getBytes(StandardCharsets.UTF_8);
    }

    /**
     * @param family a family
     * @return the path (and query, for the hash checks) that the family asks for
     */
    String path(Family family) throws IOException {
        return switch (family) {
            case RULES -> "/policies/" + node() + "/rules/rudder.tar.bz2";
            case COMMON -> "/common/policies-library-linux.tar.bz2";
            case UUID -> "/uuid";
            case SHARED_FOLDER -> "/rudder/relay-api/shared-folder/" + SHARED_FOLDER_FILE;
            case SHARED_FOLDER_HASH -> "/rudder/relay-api/shared-folder/" + SHARED_FOLDER_FILE + "?hash="
                    + sha256(Files.readAllBytes(sharedFolderFile()));
            case MANIFEST -> "/policies/" + node() + "/rules/cfengine-community/?view=manifest";
            case SHARED_FILES_HASH -> "/rudder/relay-api/shared-files/" + sharedFileUrl() + "?hash="
                    + sha256(sharedFileContent());
            case WHOAMI -> "/v1/whoami";
        };
    }

    static StallLayout create(Path directory) throws IOException {
        int port = Ports.free();
        int adminPort = Ports.free();
        DemoLayout demo = DemoLayout.create(directory, port);
        Path dir = demo.directory();
        String config = Files.readString(demo.config());
        config = DemoConfig.withAdminPort(config, adminPort);
        config = DemoConfig.replaceOnce(config, "share = \"share\"",
                "share = \"share\"\nshared_folder = \"shared-folder\"\nshared_files = \"shared-files\"");
        Files.writeString(demo.config(), config);
        Files.createDirectories(dir.resolve("shared-files"));
        StallLayout layout = new StallLayout(demo, port, adminPort);
        Files.createDirectories(layout.sharedFolderFile().getParent());
        Files.writeString(layout.sharedFolderFile(), "# a file Rudder puts in the shared folder for agents\n"
                + "agent_setting=1\n".repeat(64));
        return layout;
    }

    /**
     * @return the body of the shared file's upload ({@code PUT shared-files/...?ttl=}): relayd's
     *     {@code rudder-signature-v1} metadata, signed with the calling node's key, an empty line, the file
     */
    byte[] sharedFileUpload() throws IOException {
        try {
            PrivateKey key = Pem.readPrivateKey(nodeHome().resolve("localhost.priv"));
            PublicKey publicKey = Pem.readCertificates(nodeHome().resolve("agent.cert")).get(0).getPublicKey();
            byte[] content = sharedFileContent();
            Signature signer = Signature.getInstance("SHA256withRSA");
            signer.initSign(key);
            signer.update(content);
            // relayd's short_pubkey: the PKCS#1 RSA public key in base64.
            String pkcs1 = Base64.getEncoder().encodeToString(
                    SubjectPublicKeyInfo.getInstance(publicKey.getEncoded()).parsePublicKey().getEncoded());
            ByteArrayOutputStream body = new ByteArrayOutputStream();
            body.writeBytes(String.join("\n",
                    "header=rudder-signature-v1",
                    "algorithm=sha256",
                    "digest=" + HexFormat.of().formatHex(signer.sign()),
                    "hash_value=" + sha256(content),
                    "short_pubkey=" + pkcs1,
                    "hostname=linux-1.demo.example",
                    "keydate=2026-12-04 00:00:00",
                    "keyid=5741110A",
                    "",
                    "").getBytes(StandardCharsets.UTF_8));
            body.writeBytes(content);
            return body.toByteArray();
        } catch (GeneralSecurityException e) {
            throw new IOException("cannot sign the shared file: " + e.getMessage(), e);
        }
    }

    static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }
}
