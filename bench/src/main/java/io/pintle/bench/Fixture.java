package io.pintle.bench;

import io.pintle.api.Routes;
import io.pintle.client.ClientTls;
import io.pintle.server.demo.DemoLayout;
import io.pintle.server.nodes.KeyHash;
import io.pintle.server.tls.SelfSigned;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.util.Comparator;
import java.util.Random;
import java.util.Set;
import java.util.stream.Stream;
import javax.net.ssl.SSLContext;

/**
 * The files and identities the benchmark uses: a {@link DemoLayout} in a temporary directory, plus two files
 * written into the first Linux node's policy tree.
 *
 * @param root the temporary directory, deleted by {@link #delete()}
 * @param layout the demo layout inside it
 * @param small the 1 KiB file
 * @param large the 10 MiB file
 */
record Fixture(Path root, DemoLayout layout, Path small, Path large) {
    /** Size of the small file: a typical small policy file. */
    static final int SMALL_BYTES = 1024;
    /** Size of the large file: the order of a big policy archive. */
    static final int LARGE_BYTES = 10 * 1024 * 1024;
    /** Written in chunks of this size, so the large file never sits in memory whole. */
    private static final int WRITE_CHUNK_BYTES = 64 * 1024;
    /** Fixed seed: the same (incompressible) bytes from one run to the next. */
    private static final long CONTENT_SEED = 0x50696e746c65L;
    /** The policy archive every demo node has; conditional rows poll it. */
    static final String ARCHIVE = "rudder.tar.bz2";

    /**
     * Creates the layout and the two files.
     *
     * @param serverKey the type of the server's key (the demo's is RSA 2048)
     * @return the fixture
     * @throws IOException on write errors
     */
    static Fixture create(SelfSigned.KeyType serverKey) throws IOException {
        Path root = Files.createTempDirectory("pintle-bench-");
        DemoLayout layout = withServerKey(DemoLayout.create(root.resolve("layout"), 0), serverKey);
        Path rules = rules(layout);
        Random random = new Random(CONTENT_SEED);
        Path small = write(rules.resolve("bench-1k.bin"), SMALL_BYTES, random);
        Path large = write(rules.resolve("bench-10m.bin"), LARGE_BYTES, random);
        return new Fixture(root, layout, small, large);
    }

    /** @return the directory served as {@code /policies/<linux1>/rules/} */
    Path rules() {
        return rules(layout);
    }

    /** @return the URL path prefix of that directory, the same on Pintle and on the baseline */
    String rulesPath() {
        return Routes.POLICIES + "/" + layout.linux1() + "/rules";
    }

    /**
     * @param file a file in {@link #rules()}
     * @return its URL path
     */
    String pathOf(Path file) {
        return rulesPath() + "/" + file.getFileName();
    }

    /** @return the URL path of the node's policy archive */
    String archivePath() {
        return rulesPath() + "/" + ARCHIVE;
    }

    /**
     * The demo node's mutual-TLS client context: its certificate and key, and the server's key pin.
     *
     * @return a fresh TLS context
     * @throws IOException if a file cannot be read
     * @throws GeneralSecurityException if the material is unusable
     */
    SSLContext nodeTls() throws IOException, GeneralSecurityException {
        Path home = layout.directory().resolve("nodes").resolve(layout.linux1());
        return ClientTls.context(home.resolve("agent.cert"), home.resolve("localhost.priv"),
                Set.of(layout.serverPin()));
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

    /** Replaces the demo server's key and certificate with a new pair of the given type. */
    private static DemoLayout withServerKey(DemoLayout layout, SelfSigned.KeyType type) throws IOException {
        if (type == SelfSigned.KeyType.RSA_2048) {
            return layout;
        }
        Path server = layout.directory().resolve("server");
        SelfSigned.Identity identity = SelfSigned.generate(type, DemoLayout.SERVER_ID);
        SelfSigned.writeCertificates(server.resolve("agent.cert"), identity.certificate());
        SelfSigned.writePrivateKey(server.resolve("localhost.priv"), identity.keyPair().getPrivate(), false);
        return new DemoLayout(layout.directory(), KeyHash.sha256(identity.certificate().getPublicKey()).toString(),
                layout.linux1(), layout.linux2(), layout.windows());
    }

    private static Path rules(DemoLayout layout) {
        return layout.directory().resolve("share").resolve(layout.linux1()).resolve("rules");
    }

    private static Path write(Path file, int size, Random random) throws IOException {
        byte[] chunk = new byte[WRITE_CHUNK_BYTES];
        try (OutputStream out = Files.newOutputStream(file)) {
            for (int written = 0; written < size; written += chunk.length) {
                random.nextBytes(chunk);
                out.write(chunk, 0, Math.min(chunk.length, size - written));
            }
        }
        return file;
    }
}
