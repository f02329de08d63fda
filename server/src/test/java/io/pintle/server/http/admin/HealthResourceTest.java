package io.pintle.server.http.admin;

import static org.assertj.core.api.Assertions.assertThat;

import io.pintle.api.MediaTypes;
import io.pintle.api.dto.Health;
import io.pintle.api.dto.Problem;
import io.pintle.server.config.ConfigLoader;
import io.pintle.server.reload.SnapshotHolder;
import io.pintle.server.reload.SnapshotLoader;
import io.pintle.server.testing.Sandbox;
import jakarta.ws.rs.core.Response;
import java.nio.file.Path;
import java.time.Clock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class HealthResourceTest {

    @Test
    void readyIs503ProblemUntilTheListenersAreStartedThen200WithTheGeneration(@TempDir Path dir) throws Exception {
        Sandbox sandbox = Sandbox.create(dir);
        SnapshotHolder snapshots = new SnapshotHolder(
                new SnapshotLoader(ConfigLoader.load(sandbox.config("")), Clock.systemUTC()).load(1));
        Readiness readiness = new Readiness();
        HealthResource health = new HealthResource(snapshots, readiness);

        Response notReady = health.ready();
        assertThat(notReady.getStatus()).isEqualTo(503);
        assertThat(notReady.getMediaType().toString()).isEqualTo(MediaTypes.PROBLEM_JSON);
        Problem problem = (Problem) notReady.getEntity();
        assertThat(problem.reason()).isEqualTo("not-ready");
        assertThat(problem.type()).isEqualTo("urn:pintle:problem:not-ready");
        assertThat(problem.incident()).as("a state, not an incident").isNull();
        assertThat(health.health()).isEqualTo(new Health("live", null));

        readiness.lifeCycleStarted(null);
        Response ready = health.ready();
        assertThat(ready.getStatus()).isEqualTo(200);
        assertThat(ready.getEntity()).isEqualTo(new Health("ready", 1L));

        readiness.lifeCycleStopping(null);
        assertThat(health.ready().getStatus()).isEqualTo(503);
    }
}
