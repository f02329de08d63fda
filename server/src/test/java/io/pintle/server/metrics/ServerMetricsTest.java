package io.pintle.server.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.pintle.server.config.ConfigLoader;
import io.pintle.server.reload.ReloadOutcome;
import io.pintle.server.reload.SnapshotHolder;
import io.pintle.server.reload.SnapshotLoader;
import io.pintle.server.testing.Sandbox;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ServerMetricsTest {

    @Test
    void countsRequestsDenialsHandshakesAndReloadsUnderFixedLabels(@TempDir Path dir) throws Exception {
        Sandbox sandbox = Sandbox.create(dir);
        SnapshotHolder snapshots = new SnapshotHolder(
                new SnapshotLoader(ConfigLoader.load(sandbox.config("")), Clock.systemUTC()).load(1));
        ServerMetrics metrics = new ServerMetrics(snapshots);
        metrics.connections(() -> Map.of("tls", 7L));
        metrics.handshakeGate(() -> 3, () -> 2, () -> 5L);

        metrics.request(RouteClass.POLICIES, 200, 1000, 2_000_000);
        metrics.request(RouteClass.POLICIES, 200, 500, 3_000_000);
        metrics.request(RouteClass.COMMON, 304, 0, 1_000_000);
        metrics.request(RouteClass.OTHER, 0, 0, 1_000);
        metrics.denied("uid-mismatch");
        metrics.denied("some-new-reason");
        metrics.handshake(true, "TLSv1.3");
        metrics.handshake(false, null);
        metrics.finished(new ReloadOutcome("api", Instant.now(), Duration.ofMillis(12), ReloadOutcome.Result.FAILED,
                1, "broken"));

        String text = scrape(metrics);
        assertThat(text)
                .contains("pintle_requests_total{route=\"policies\",status=\"200\"} 2.0")
                .contains("pintle_requests_total{route=\"common\",status=\"304\"} 1.0")
                .contains("pintle_requests_total{route=\"other\",status=\"other\"} 1.0")
                .contains("pintle_response_bytes_total{route=\"policies\"} 1500.0")
                .contains("pintle_request_duration_seconds_bucket{route=\"policies\",le=\"0.0025\"} 1")
                .contains("pintle_request_duration_seconds_count{route=\"policies\"} 2")
                .contains("pintle_denials_total{reason=\"uid-mismatch\"} 1.0")
                .contains("pintle_denials_total{reason=\"unknown-key\"} 0.0")
                .contains("pintle_denials_total{reason=\"some-new-reason\"} 1.0")
                .contains("pintle_tls_handshakes_total{protocol=\"TLSv1.3\"} 1.0")
                .contains("pintle_tls_handshake_failures_total 1.0")
                .contains("pintle_reloads_total{result=\"failed\"} 1.0")
                .contains("pintle_reloads_total{result=\"applied\"} 0.0")
                .contains("pintle_reload_duration_seconds_count 1")
                .contains("pintle_connections{listener=\"tls\"} 7.0")
                .contains("pintle_tls_handshakes_waiting 3.0")
                .contains("pintle_tls_handshake_steps_running 2.0")
                .contains("pintle_tls_handshakes_returning_total 5.0")
                .contains("pintle_snapshot_generation 1.0")
                .contains("pintle_build_info{version=");
    }

    private static String scrape(ServerMetrics metrics) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PrometheusTextFormatWriter.create().write(out, metrics.registry().scrape());
        return out.toString(StandardCharsets.UTF_8);
    }
}
