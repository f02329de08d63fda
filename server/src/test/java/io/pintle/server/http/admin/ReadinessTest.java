package io.pintle.server.http.admin;

import static org.assertj.core.api.Assertions.assertThat;

import org.eclipse.jetty.server.Server;
import org.junit.jupiter.api.Test;

/** Readiness follows the server's lifecycle: down before start, up once started, down as soon as stop begins. */
class ReadinessTest {

    @Test
    void upOnlyBetweenStartedAndStopping() throws Exception {
        Server server = new Server();
        Readiness readiness = new Readiness();
        boolean[] upWhileStopping = {true};
        server.addEventListener(readiness);
        server.addEventListener(new org.eclipse.jetty.util.component.LifeCycle.Listener() {
            @Override
            public void lifeCycleStopping(org.eclipse.jetty.util.component.LifeCycle event) {
                upWhileStopping[0] = readiness.up();
            }
        });
        assertThat(readiness.up()).isFalse();
        server.start();
        try {
            assertThat(readiness.up()).isTrue();
        } finally {
            server.stop();
        }
        assertThat(upWhileStopping[0]).as("ready while stopping").isFalse();
        assertThat(readiness.up()).isFalse();
    }
}
