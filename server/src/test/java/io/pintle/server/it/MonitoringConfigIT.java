package io.pintle.server.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.pintle.server.testing.Sandbox;
import io.pintle.server.testing.TestServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Grafana dashboard and the Prometheus alert rules in {@code deploy/} read only metrics a running server exposes:
 * a metric renamed in the server breaks the build, not a dashboard at 3 a.m. (promtool checks the rules' syntax and
 * their unit tests in CI: {@code .ci/run}).
 */
class MonitoringConfigIT {
    private static final Path DEPLOY = Path.of("../deploy");
    private static final Pattern METRIC = Pattern.compile("\\bpintle_[a-z_]+");

    @Test
    void everyMetricTheDashboardAndTheAlertsReadIsExposed(@TempDir Path dir) throws Exception {
        List<String> expressions = new ArrayList<>();
        JsonNode dashboard = new ObjectMapper().readTree(DEPLOY.resolve("grafana/pintle.json").toFile());
        assertThat(dashboard.path("panels")).hasSizeGreaterThanOrEqualTo(10);
        for (JsonNode panel : dashboard.path("panels")) {
            assertThat(panel.path("targets")).as(panel.path("title").asText()).isNotEmpty();
            panel.path("targets").forEach(target -> expressions.add(target.path("expr").asText()));
        }
        for (String line : Files.readAllLines(DEPLOY.resolve("prometheus/pintle-alerts.yml"))) {
            if (line.strip().startsWith("expr:")) {
                expressions.add(line);
            }
        }
        Set<String> used = new TreeSet<>();
        for (String expression : expressions) {
            Matcher matcher = METRIC.matcher(expression);
            while (matcher.find()) {
                used.add(matcher.group());
            }
        }
        assertThat(used).contains("pintle_nodes_behind", "pintle_nodes_silent", "pintle_reloads_total",
                "pintle_overload_rejections_total", "pintle_certificate_expiry_timestamp_seconds");

        try (TestServer server = TestServer.start(Sandbox.create(dir))) {
            server.adminText("/metrics"); // counts a request: the second scrape has pintle_requests_total
            String exposed = server.adminText("/metrics").body();
            for (String metric : used) {
                // A labelled metric with no sample yet (no overload refusal so far) is declared by its TYPE line,
                // which names a counter without _total and a histogram without _bucket.
                String family = metric.replaceAll("_(total|bucket|count|sum)$", "");
                assertThat(exposed).as(metric + " is read by deploy/ but not exposed")
                        .containsPattern("(?m)^(" + metric + "[{ ]|# TYPE " + family + " )");
            }
        }
    }
}
