package io.pintle.bench.warmup;

import io.pintle.bench.harness.DemoConfig;
import io.pintle.server.demo.DemoLayout;
import io.pintle.server.tls.SelfSigned;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Random;

/**
 * {@code pintle demo}'s layout with what the warm-up runs need: an RSA-4096 server key (Rudder's agent key, which
 * a root server serves with), a 1 KiB file in the EC node's policies, and that node's certificate and key in one
 * PEM file for {@code ab -E}. The EC node is the client: its ECDSA signature costs ab little, so the generator
 * is not what a handshake waits for.
 *
 * @param demo the demo layout
 * @param config the configuration the server runs with (any free port is written at each start)
 * @param clientPem the EC node's certificate and key
 * @param smallPath the small file's URL path
 */
record WarmupLayout(DemoLayout demo, String config, Path clientPem, String smallPath) {
    static final int SMALL_BYTES = 1024;

    static WarmupLayout create(Path directory) throws IOException {
        DemoLayout demo = DemoLayout.create(directory, 0);
        Path dir = demo.directory();
        SelfSigned.Identity server = SelfSigned.generate(SelfSigned.KeyType.RSA_4096, DemoLayout.SERVER_ID);
        Path serverDir = Files.createDirectories(dir.resolve("server-rsa4096"));
        SelfSigned.writeCertificates(serverDir.resolve("agent.cert"), server.certificate());
        Path key = serverDir.resolve("localhost.priv");
        SelfSigned.writePrivateKey(key, server.keyPair().getPrivate(), true);
        Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("rw-------"));

        String node = demo.linux2();
        Path perf = Files.createDirectories(dir.resolve("share").resolve(node).resolve("perf"));
        byte[] small = new byte[SMALL_BYTES];
        new Random(23).nextBytes(small);
        Files.write(perf.resolve("small.bin"), small);

        Path home = dir.resolve("nodes").resolve(node);
        Path pem = dir.resolve("ab-client.pem");
        Files.writeString(pem, Files.readString(home.resolve("agent.cert")) + Files.readString(
                home.resolve("localhost.priv")));
        Files.setPosixFilePermissions(pem, PosixFilePermissions.fromString("rw-------"));

        String config = Files.readString(demo.config());
        config = DemoConfig.replaceOnce(config, "certificate = \"server/agent.cert\"",
                "certificate = \"server-rsa4096/agent.cert\"");
        config = DemoConfig.replaceOnce(config, "key = \"server/localhost.priv\"",
                "key = \"server-rsa4096/localhost.priv\"");
        // As bench/perf: the access log (on by default) would measure the journal as much as the server.
        config = config + "\n[log]\naccess = false\n";
        return new WarmupLayout(demo, config, pem, "/policies/" + node + "/perf/small.bin");
    }

    /**
     * Writes the configuration for one start, beside the demo's (its relative paths are relative to its file).
     *
     * @param port the TLS port
     * @return the file
     */
    Path configFor(int port) throws IOException {
        Path file = demo.directory().resolve("pintle-warmup.toml");
        Files.writeString(file, DemoConfig.replaceOnce(config, "listen = \"127.0.0.1:0\"\n[tls]",
                "listen = \"127.0.0.1:" + port + "\"\n[tls]"));
        return file;
    }
}
