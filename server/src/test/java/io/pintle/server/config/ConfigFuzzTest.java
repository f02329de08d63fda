package io.pintle.server.config;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

/**
 * Fuzzes {@link ConfigLoader} with TOML written to a file. Only {@link ConfigException} may come out, and a
 * configuration that loads is valid and the same as the text parsed directly. Seeds:
 * {@code ConfigFuzzTestInputs/loadGivesValidConfigOrConfigException/}.
 */
class ConfigFuzzTest {
    @TempDir
    static Path dir;

    static Path file;

    @BeforeAll
    static void nodeId() throws IOException {
        Files.writeString(dir.resolve("uuid.hive"), "root\n");
        file = dir.resolve("pintle.toml");
    }

    @FuzzTest(maxDuration = "2m")
    void loadGivesValidConfigOrConfigException(byte[] input) throws IOException {
        String text = new String(input, StandardCharsets.UTF_8);
        // A node_id_file naming a device would read forever; that is the operator's own file, not a parser bug.
        if (text.contains("/dev") || text.contains("/proc") || text.contains("/sys")) {
            return;
        }
        Files.write(file, input);
        ServerConfig config;
        try {
            config = ConfigLoader.load(file);
        } catch (ConfigException e) {
            assertThat(e.getMessage()).startsWith(file.toString());
            return;
        }
        assertThat(config.source()).isEqualTo(file);
        assertThat(config.general().nodeId()).isNotNull();
        assertThat(config.tls().protocols()).isNotEmpty().isSubsetOf(List.of("TLSv1.3", "TLSv1.2"));
        for (Path path : List.of(config.tls().certificate(), config.tls().key(), config.nodes().list(),
                config.paths().share())) {
            assertThat(path).isAbsolute().isEqualTo(path.normalize());
        }
        assertThat(config.general().listen().port()).isBetween(0, 65535);
        assertThat(config.admin().listen().port()).isBetween(0, 65535);
        assertThat(InetAddress.getByName(config.admin().listen().host()).isLoopbackAddress()).isTrue();
        try {
            assertThat(ConfigLoader.parse(text, file)).isEqualTo(config);
        } catch (ConfigException e) {
            throw new AssertionError("loads from the file but not from its text: " + e.getMessage(), e);
        }
    }
}
