package io.pintle.server.access;

import static org.assertj.core.api.Assertions.assertThat;

import io.pintle.server.metrics.RouteClass;
import io.pintle.server.overload.WorkClass;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class RouteTest {

    @ParameterizedTest(name = "[{index}] admin={0} {1} -> {2}")
    @CsvSource(nullValues = "NULL", textBlock = """
            false, /policies/node-1/rules/rudder.tar.bz2, POLICIES
            false, /common/policies-library-linux.tar.bz2, COMMON
            false, /uuid,                                  UUID
            false, /v1/whoami,                             WHOAMI
            false, /rudder/relay-api/shared-folder/a/b,    SHARED_FOLDER
            false, /rudder/relay-api/shared-files/a/b/c,   SHARED_FILES
            false, /rudder/relay-api/remote-run/all,       REMOTE_RUN
            false, /rudder/relay-api/1/shared-folder/a/b,  OTHER
            false, /rudder/relay-api/1/system/reload,      OTHER
            false, /rudder/relay-api,                      OTHER
            false, /rudder/relay-api/no-such-thing,        OTHER
            false, /rudder,                                WEBAPP
            false, /rudder/,                               WEBAPP
            false, /rudder/secure/index.html,              WEBAPP
            false, /rudder/api/latest/nodes,               WEBAPP
            false, /rudder/relay-apis,                     WEBAPP
            false, /rudderX,                               OTHER
            true,  /rudder/secure/index.html,              OTHER
            false, /uuid/x,                                OTHER
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
        assertThat(Route.of(admin, path).metricClass()).isEqualTo(expected);
    }

    @ParameterizedTest(name = "[{index}] {0} {1} -> file pipeline {2}, {3}")
    @CsvSource(textBlock = """
            GET,  /policies/node-1/rules/rudder.tar.bz2,    true,  FILES
            HEAD, /common/x,                                true,  FILES
            PUT,  /common/x,                                false, FILES
            GET,  /uuid,                                    true,  API
            GET,  /v1/whoami,                               false, API
            GET,  /rudder/relay-api/shared-folder/x,        true,  FILES
            HEAD, /rudder/relay-api/shared-folder/x,        true,  FILES
            GET,  /rudder/relay-api/shared-files/a/b/c,     true,  FILES
            HEAD, /rudder/relay-api/shared-files/a/b/c,     false, FILES
            PUT,  /rudder/relay-api/shared-files/a/b/c,     false, UPLOADS
            POST, /rudder/relay-api/remote-run/all,         false, API
            GET,  /rudder/relay-api/1/shared-folder/x,      false, API
            PUT,  /rudder/relay-api/1/shared-files/a/b/c,   false, API
            GET,  /no/such/route,                           false, API
            GET,  /rudder/secure/index.html,                false, WEBAPP
            POST, /rudder/api/latest/nodes,                 false, WEBAPP
            """)
    void eachRouteSaysWhoAnswersItAndWhoseWorkersItUses(String method, String path, boolean files, WorkClass work) {
        Route route = Route.of(false, path);
        assertThat(route.filePipeline(method)).isEqualTo(files);
        assertThat(route.work(method)).isEqualTo(work);
    }

    /**
     * Apache proxies only the unversioned {@code /rudder/relay-api/} and denies the rest of it, relayd's versioned
     * paths included; the admin listener, relayd's own port, takes both.
     */
    @ParameterizedTest(name = "[{index}] admin={0} {1} -> {2}")
    @CsvSource(textBlock = """
            false, /rudder/relay-api/1/shared-folder/a,       RELAY_API_DENIED
            false, /rudder/relay-api/1/shared-files/a/b/c,    RELAY_API_DENIED
            false, /rudder/relay-api/1/remote-run/all,        RELAY_API_DENIED
            false, /rudder/relay-api/1/system/status,         RELAY_API_DENIED
            false, /rudder/relay-api/system/reload,           RELAY_API_DENIED
            false, /rudder/relay-api/shared-foldery/a,        RELAY_API_DENIED
            false, /rudder/relay-api/,                        RELAY_API_DENIED
            false, /rudder/relay-api,                         OTHER
            false, /,                                         ROOT
            false, /elsewhere,                                OTHER
            false, /rudder/relay-api/shared-folder/1/a,       SHARED_FOLDER
            true,  /rudder/relay-api/1/system/reload,         SYSTEM
            true,  /rudder/relay-api/remote-run/nodes,        SYSTEM
            true,  /rudder/relay-api/1/remote-run/nodes,      SYSTEM
            """)
    void theTlsListenerServesRelaydsApiAsApacheExposesIt(boolean admin, String path, Route expected) {
        assertThat(Route.of(admin, path)).isEqualTo(expected);
    }

    @ParameterizedTest(name = "[{index}] {0} below {1}")
    @CsvSource(textBlock = """
            /policies/node-1/rules/a%20b,              node-1/rules/a%20b
            /common/,                                  ''
            /rudder/relay-api/shared-folder/x/y,       x/y
            """)
    void whatFollowsTheRoutesPrefixIsKeptEncoded(String path, String below) {
        assertThat(Route.of(false, path).below(path)).isEqualTo(below);
    }
}
