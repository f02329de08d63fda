package io.pintle.server.remoterun;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pintle.server.config.ServerConfig;
import io.pintle.server.problem.PintleException;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class ConditionsTest {
    private static final ServerConfig.RemoteRun CONFIG = new ServerConfig.RemoteRun(true, 443,
            ServerConfig.RemoteRun.DEFAULTS.run(), ServerConfig.RemoteRun.DEFAULTS.update(),
            ServerConfig.RemoteRun.DEFAULTS.inventory(), Duration.ofMinutes(5), Duration.ofSeconds(10), 32, null,
            ServerConfig.RemoteRun.DEFAULTS.transports(), 7500, Duration.ofSeconds(30), Duration.ofSeconds(10),
            new ServerConfig.PolicyUpdates(true, 100, Duration.ZERO, Duration.ofSeconds(5)),
            RudderRemoteRun.DEFAULT_ARGV);

    @ParameterizedTest
    @ValueSource(strings = {"a", "A9", "class_2", "9lives", "force_inventory"})
    void relaydsConditionsAreAccepted(String condition) {
        assertThat(Conditions.parse(condition).values()).containsExactly(condition);
    }

    @ParameterizedTest
    @ValueSource(strings = {"_a", "a-b", "a b", "a;reboot", "$(id)", "a,", ",a", "a,,b", "é", "a.b", "-D"})
    void anythingElseIsRefused(String conditions) {
        assertThatThrownBy(() -> Conditions.parse(conditions)).isInstanceOfSatisfying(
                PintleException.InvalidRequest.class, e -> assertThat(e.reason()).isEqualTo("invalid-condition"));
    }

    @Test
    void atMost1024CharactersInAllCommasIncluded() {
        String exactly = "a".repeat(500) + "," + "b".repeat(523);
        assertThat(Conditions.parse(exactly).joined()).hasSize(1024);
        assertThatThrownBy(() -> Conditions.parse(exactly + "c")).isInstanceOf(PintleException.InvalidRequest.class);
        // The same limit for a JSON list, whose commas are counted as joined.
        assertThatThrownBy(() -> new Conditions(List.of("a".repeat(600), "b".repeat(424))))
                .isInstanceOf(PintleException.InvalidRequest.class);
    }

    @Test
    void duplicatesAreDroppedAndOrderKept() {
        assertThat(Conditions.parse("b,a,b").joined()).isEqualTo("b,a");
        assertThat(Conditions.parse("").isEmpty()).isTrue();
        assertThat(Conditions.parse(null).isEmpty()).isTrue();
    }

    @Test
    void eachCommandMapsToItsArgvWithConditionsAppendedAsOneDashDArgument() {
        assertThat(RunOrder.of("run", List.of("a", "b"), null).argv(CONFIG))
                .containsExactly("/opt/rudder/bin/rudder", "agent", "run", "-uR", "-D", "a,b");
        assertThat(RunOrder.of("update", null, "trace").argv(CONFIG))
                .containsExactly("/opt/rudder/bin/rudder", "agent", "update", "-D", "trace");
        assertThat(RunOrder.of("inventory", List.of(), null).argv(CONFIG))
                .containsExactly("/opt/rudder/bin/rudder", "agent", "inventory");
    }

    @ParameterizedTest
    @ValueSource(strings = {"shell", "RUN", "run ", "agent run", ""})
    void unknownCommandsAreRefused(String command) {
        assertThatThrownBy(() -> RunOrder.of(command, null, null)).isInstanceOfSatisfying(
                PintleException.InvalidRequest.class, e -> assertThat(e.reason()).isEqualTo("unknown-command"));
        assertThatThrownBy(() -> RunOrder.of(null, null, null)).isInstanceOf(PintleException.InvalidRequest.class);
    }

    @Test
    void verbosityIsOneOfCfServerdsRoles() {
        assertThatThrownBy(() -> RunOrder.of("run", null, "verbose")).isInstanceOfSatisfying(
                PintleException.InvalidRequest.class, e -> assertThat(e.reason()).isEqualTo("invalid-verbosity"));
    }
}
