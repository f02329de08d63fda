package io.pintle.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class RudderVersionTest {
    /** The shape of rudder-package's fixture {@code tests/versions/rudder-server-version} (a nightly). */
    private static final String NIGHTLY = """
            rudder_version=8.0.4~git202311160211
            main_version=8.0.4
            release_step=8.0.4
            nightly_tag=git202311160211
            repository_version=8.0-nightly
            git_ref=branches/rudder/8.0
            """;

    @TempDir
    Path dir;

    @Test
    void theRudderVersionLineOfRuddersFileIsRead() {
        assertThat(RudderVersion.parse(NIGHTLY)).contains(new RudderVersion("8.0.4~git202311160211", "8.0"));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "rudder_version=9.0.1                  | 9.0.1       | 9.0",
        "'main_version=1.0\\nrudder_version=8.3.2\\r\\n' | 8.3.2 | 8.3",
        "rudder_version=9.0.0~rc1              | 9.0.0~rc1   | 9.0",
        "rudder_version=10.0                   | 10.0        | 10.0",
    })
    void eachReleaseShapeGivesItsMajorVersion(String content, String full, String major) {
        assertThat(RudderVersion.parse(content.replace("\\n", "\n").replace("\\r", "\r")))
                .contains(new RudderVersion(full, major));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "main_version=8.0.4", "rudder_version=", "rudder_version=eight", "rudder_version=8",
        "rudder_version=8.0 beta", " rudder_version=8.0.4", "rudder_version=8.0.4;id"})
    void aFileWithoutAVersionGivesNone(String content) {
        assertThat(RudderVersion.parse(content)).isEmpty();
    }

    @Test
    void filesAreTriedInOrderAndTheFirstWithAVersionWins() throws Exception {
        Path absent = dir.resolve("rudder-server-version");
        Path empty = Files.writeString(dir.resolve("empty"), "");
        Path agent = Files.writeString(dir.resolve("rudder-agent-version"), "rudder_version=8.3.2\n");
        Path other = Files.writeString(dir.resolve("other"), "rudder_version=7.3.1\n");

        assertThat(RudderVersion.read(List.of(absent, empty, agent, other)))
                .contains(new RudderVersion("8.3.2", "8.3"));
        assertThat(RudderVersion.read(List.of(absent, empty))).isEmpty();
        assertThat(RudderVersion.read(List.of())).isEmpty();
        assertThat(RudderVersion.read(List.of(dir))).as("a directory").isEmpty();
    }

    @Test
    void aFileLargerThanRuddersIsNotOne() throws Exception {
        Path large = Files.writeString(dir.resolve("large"),
                "rudder_version=8.3.2\n" + "x".repeat(RudderVersion.MAX_FILE_BYTES));

        assertThat(RudderVersion.read(List.of(large))).isEqualTo(Optional.empty());
    }
}
