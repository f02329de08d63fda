package io.pintle.server.nodes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class NodeIdTest {

    @ParameterizedTest
    @ValueSource(strings = {"root", "a", "0e2d8f4c-5b7a-4f5e-9a59-3c4d5e6f7a8b", "node_1", "A-Z"})
    void rudderIdsAreAccepted(String id) {
        assertThat(new NodeId(id).value()).isEqualTo(id);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "bad id", "a/b", "..", "é", "a.b", "a\u0000"})
    void otherTextIsRefusedNamingThePattern(String id) {
        assertThatThrownBy(() -> new NodeId(id))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(NodeId.PATTERN.pattern());
    }

    @Test
    void sixtyFiveCharactersAreTooMany() {
        assertThat(new NodeId("a".repeat(64)).value()).hasSize(64);
        assertThatThrownBy(() -> new NodeId("a".repeat(65))).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void theCheckAgreesWithThePatternOnRandomText() {
        Random random = new Random(11);
        String alphabet = "aZ09-_./ é\u0000";
        for (int i = 0; i < 20_000; i++) {
            StringBuilder text = new StringBuilder();
            int length = random.nextInt(70);
            for (int j = 0; j < length; j++) {
                text.append(alphabet.charAt(random.nextInt(alphabet.length())));
            }
            String candidate = text.toString();
            boolean accepted;
            try {
                new NodeId(candidate);
                accepted = true;
            } catch (IllegalArgumentException e) {
                accepted = false;
            }
            assertThat(accepted).as("'%s'", candidate).isEqualTo(NodeId.PATTERN.matcher(candidate).matches());
        }
    }
}
