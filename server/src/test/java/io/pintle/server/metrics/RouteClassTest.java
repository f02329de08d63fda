package io.pintle.server.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class RouteClassTest {

    @ParameterizedTest(name = "[{index}] admin={0} {1} -> {2}")
    @CsvSource(nullValues = "NULL", textBlock = """
            false, /policies/node-1/rules/rudder.tar.bz2, POLICIES
            false, /common/policies-library-linux.tar.bz2, COMMON
            false, /uuid,                                  UUID
            false, /v1/whoami,                             WHOAMI
            false, /policies,                              OTHER
            false, /policiesX/a,                           OTHER
            false, /metrics,                               OTHER
            false, /v1/status,                             OTHER
            false, NULL,                                   OTHER
            true,  /rudder/relay-api/1/system/reload,      SYSTEM
            true,  /v1/status,                             STATUS
            true,  /health,                                HEALTH
            true,  /ready,                                 HEALTH
            true,  /metrics,                               METRICS
            true,  /policies/node-1/x,                     OTHER
            true,  /uuid,                                  OTHER
            """)
    void pathsFallIntoAFixedSetOfClassesPerListener(boolean admin, String path, RouteClass expected) {
        assertThat(RouteClass.of(admin, path)).isEqualTo(expected);
    }
}
