package io.pintle.server.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.pintle.server.PintleVersion;
import io.pintle.server.testing.Sandbox;
import io.pintle.server.testing.TestServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * relayd's {@code system/status} and {@code system/info} on the admin listener, against what Rudder documents and
 * what relayd answers (Normation/rudder, {@code relay/sources/}):
 *
 * <ul>
 *   <li>the API document: {@code api-doc/paths/system/status.yml} requires {@code data.database.status} and
 *       {@code data.configuration.status} ({@code success} or {@code error}); {@code api-doc/paths/system/info.yml}
 *       requires {@code data.rudder.major-version} ({@code X.Y}) and {@code data.rudder.full-version};
 *   <li>relayd's own answers, which its integration tests compare whole ({@code relayd/tests/api_system_status.rs},
 *       {@code relayd/tests/api_system_info.rs}): the same status, and the info's two versions at the top of
 *       {@code data} ({@code relayd/src/api/system.rs}, {@code Info}), not under {@code rudder}.
 * </ul>
 *
 * No other Rudder client reads them: rudder-agent's commands call only {@code system/reload} on relayd's port
 * ({@code share/commands/relay-reload}); its {@code /system/status} calls go to the webapp's API ({@code
 * share/lib/api_call.sh}), and the webapp's health checks look at the machine, not at relayd.
 */
class SystemApiIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** Every field the API document marks required, as JSON pointers, with the values it allows. */
    private static final Map<String, String> STATUS_REQUIRED = Map.of(
            "/result", "success|error",
            "/action", "getStatus",
            "/data/database/status", "success|error",
            "/data/configuration/status", "success|error");
    private static final Map<String, String> INFO_REQUIRED = Map.of(
            "/result", "success|error",
            "/action", "getSystemInfo",
            "/data/rudder/major-version", "\\d+\\.\\d+",
            "/data/rudder/full-version", "\\d+\\.\\d+\\.\\d+.*");

    @Test
    void statusHasEveryFieldRelaydsApiDocumentRequires(@TempDir Path dir) throws Exception {
        try (TestServer server = TestServer.start(Sandbox.create(dir))) {
            JsonNode status = get(server, "status");

            assertRequired(status, STATUS_REQUIRED);
            assertThat(status.at("/data/database/status").asText()).isEqualTo("success");
            assertThat(status.at("/data/database/details").asText()).startsWith("none: Pintle keeps no database");
            assertThat(status.at("/data/configuration/status").asText()).isEqualTo("success");
        }
    }

    @Test
    void infoHasEveryFieldRelaydsApiDocumentRequiresFromRuddersVersionFile(@TempDir Path dir) throws Exception {
        Path versions = Files.createDirectories(dir.resolve("versions"));
        Files.writeString(versions.resolve("rudder-agent-version"),
                "rudder_version=8.3.2\nmain_version=8.3.2\nrepository_version=8.3\n");
        Sandbox sandbox = Sandbox.create(dir.resolve("server"));
        sandbox.adminConfig("rudder_version_files = [\"" + versions.resolve("rudder-server-version") + "\", \""
                + versions.resolve("rudder-agent-version") + "\"]");
        try (TestServer server = TestServer.start(sandbox)) {
            JsonNode info = get(server, "info");

            assertRequired(info, INFO_REQUIRED);
            assertThat(info.path("data")).isEqualTo(JSON.readTree("{\"major-version\": \"8.3\", "
                    + "\"full-version\": \"8.3.2\", \"rudder\": {\"major-version\": \"8.3\", \"full-version\": "
                    + "\"8.3.2\"}, \"pintle\": {\"full-version\": \"" + PintleVersion.current() + "\"}}"));

            // An upgrade rewrites the file: the next answer has it, without a restart or a reload.
            Files.writeString(versions.resolve("rudder-server-version"), "rudder_version=9.0.1\n");
            assertThat(get(server, "info").at("/data/rudder/full-version").asText()).isEqualTo("9.0.1");
            assertThat(get(server, "info").at("/data/major-version").asText()).isEqualTo("9.0");
        }
    }

    @Test
    void relaydsOwnReferenceAnswersAreOursWithPintlesAdditionsSetAside(@TempDir Path dir) throws Exception {
        Path version = Files.writeString(dir.resolve("rudder-server-version"), "rudder_version=8.3.2\n");
        Sandbox sandbox = Sandbox.create(dir.resolve("server"));
        sandbox.adminConfig("rudder_version_files = [\"" + version + "\"]");
        try (TestServer server = TestServer.start(sandbox)) {
            JsonNode status = get(server, "status");
            ((ObjectNode) status.at("/data/database")).remove("details");
            // relayd/tests/api_system_status.rs, a relayd with a database and a good configuration.
            assertThat(status).isEqualTo(JSON.readTree("{\"data\":{\"database\":{\"status\":\"success\"},"
                    + "\"configuration\":{\"status\":\"success\"}},\"result\":\"success\",\"action\":\"getStatus\"}"));

            JsonNode info = get(server, "info");
            ((ObjectNode) info.path("data")).remove(List.of("rudder", "pintle"));
            // relayd/tests/api_system_info.rs, with the version of this machine in place of its 0.0.0-dev build.
            assertThat(info).isEqualTo(JSON.readTree("{\"data\":{\"major-version\":\"8.3\",\"full-version\":"
                    + "\"8.3.2\"},\"result\":\"success\",\"action\":\"getSystemInfo\"}"));
        }
    }

    @Test
    void withoutAVersionFileNoRudderVersionIsMadeUp(@TempDir Path dir) throws Exception {
        // The sandbox's default: rudder_version_files = [].
        try (TestServer server = TestServer.start(Sandbox.create(dir))) {
            JsonNode info = get(server, "info");

            assertThat(info.path("result").asText()).isEqualTo("success");
            assertThat(info.path("data")).isEqualTo(JSON.readTree(
                    "{\"pintle\": {\"full-version\": \"" + PintleVersion.current() + "\"}}"));
        }
    }

    private static JsonNode get(TestServer server, String name) throws Exception {
        TestServer.AdminResponse response = server.admin("GET", "/rudder/relay-api/1/system/" + name);
        assertThat(response.status()).isEqualTo(200);
        assertThat(response.header("Content-Type")).startsWith("application/json");
        return response.body();
    }

    private static void assertRequired(JsonNode answer, Map<String, String> required) {
        required.forEach((pointer, allowed) -> {
            JsonNode value = answer.at(pointer);
            assertThat(value.isTextual()).as("%s in %s", pointer, answer).isTrue();
            assertThat(value.asText()).as(pointer).matches(allowed);
        });
    }
}
