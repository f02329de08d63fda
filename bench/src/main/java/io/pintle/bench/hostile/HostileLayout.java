package io.pintle.bench.hostile;

import io.pintle.bench.harness.DemoConfig;
import io.pintle.bench.sync.Ports;
import io.pintle.server.demo.DemoLayout;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;

/**
 * {@code pintle demo}'s layout, plus what the attacks need that the demo lacks: a large file every host may
 * download ({@code /common/big.bin}), a shared-files directory (uploads), fixed ports for the TLS and admin
 * listeners, and the access log off. Every limit is the server's default: the figures are those of a server as
 * shipped.
 *
 * @param demo the demo layout underneath
 * @param port the TLS listener's port
 * @param adminPort the admin listener's port ({@code /metrics})
 */
record HostileLayout(DemoLayout demo, int port, int adminPort) {
    /** Far more than the socket buffers hold: a response to it is still being written when its client leaves. */
    static final int LARGE_BYTES = 8 * 1024 * 1024;
    static final String LARGE_FILE = "/common/big.bin";
    /** What the change waits watch: a /common file, which anyone may ask for. */
    static final String COMMON_FILE = "/common/policies-library-linux.tar.bz2";

    /** @return the victim node: the demo's first Linux node */
    String victim() {
        return demo.linux1();
    }

    /** @return the victim's home: {@code agent.cert} and {@code localhost.priv} */
    Path victimHome() {
        return demo.directory().resolve("nodes").resolve(victim());
    }

    /** @return the small policy file the victim downloads in a loop */
    String victimFile() {
        return "/policies/" + victim() + "/rules/rudder.tar.bz2";
    }

    /** @return the path of an anonymous shared-files upload from the first Linux node to the second */
    String uploadPath(int i) {
        return "/rudder/relay-api/shared-files/" + demo.linux2() + "/" + demo.linux1() + "/hostile-" + i
                + "?ttl=1d";
    }

    static HostileLayout create(Path directory) throws IOException {
        int port = Ports.free();
        int adminPort = Ports.free();
        DemoLayout demo = DemoLayout.create(directory, port);
        Path dir = demo.directory();
        String config = Files.readString(demo.config());
        config = DemoConfig.withAdminPort(config, adminPort);
        config = DemoConfig.replaceOnce(config, "share = \"share\"", "share = \"share\"\nshared_files = \"shared-files\"");
        // The access log's queue drops lines under load by design; nothing here reads it.
        Files.writeString(demo.config(), config + "\n[log]\naccess = false\n");
        Files.createDirectories(dir.resolve("shared-files"));
        byte[] block = new byte[64 * 1024];
        new Random(18).nextBytes(block);
        try (OutputStream out = Files.newOutputStream(dir.resolve("share").resolve(LARGE_FILE.substring(1)))) {
            for (int written = 0; written < LARGE_BYTES; written += block.length) {
                out.write(block);
            }
        }
        return new HostileLayout(demo, port, adminPort);
    }
}
