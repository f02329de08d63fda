package io.pintle.server.http.admin;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class StatusPageTest {
    private static final Instant NOW = Instant.parse("2026-12-06T12:00:00Z");

    @Test
    void hostileTextFromFilesAndOperatorsIsEscaped() {
        String html = StatusPage.render(new StatusPage.Model("root", "root", 7, NOW.minusSeconds(60), 3, 1, 1,
                new StatusPage.Failure(NOW, "file watch", "<script>alert(1)</script> in nodeslist.json"), 1, 1, 0, 1,
                null, List.of(), List.of(new StatusPage.Row("node-1", "<img src=x onerror=alert(2)>", true, false,
                        true, null, NOW)), null,
                new StatusPage.Frozen(NOW.minusSeconds(7200), 1, false, true, "\"><svg onload=alert(3)>")), NOW);
        assertThat(html).doesNotContain("<script>", "<img", "<svg onload")
                .contains("&lt;script&gt;alert(1)&lt;/script&gt;", "&lt;img src=x onerror=alert(2)&gt;",
                        "&quot;&gt;&lt;svg onload=alert(3)&gt;")
                .contains("held on their previous generation", "2 h)", "never", "(frozen)", "Remote run is off.");
    }

    @Test
    void anEmptyCurveSaysItIsCollectingAndNoNodesIsSaid() {
        String html = StatusPage.render(new StatusPage.Model("relay-1", "relay", 1, NOW, 0, 0, 0, null, 0, 0, 0, 0,
                null, List.of(new StatusPage.Point(NOW, 0, 0)), List.of(), new StatusPage.Channels(2, 0, 0, 5), null),
                NOW);
        assertThat(html).contains("collecting samples", "Every served node holds its current policies",
                "Nothing frozen.", "2 node(s) holding a channel").doesNotContain("<polyline");
    }

    @Test
    void theCurveIsALineFromTheFirstSampleToTheLastWithTheGenerationMarked() {
        List<StatusPage.Point> curve = List.of(new StatusPage.Point(NOW.minusSeconds(30), 4, 4),
                new StatusPage.Point(NOW.minusSeconds(20), 4, 0), new StatusPage.Point(NOW.minusSeconds(10), 4, 2),
                new StatusPage.Point(NOW, 4, 4));
        String html = StatusPage.render(new StatusPage.Model("root", "root", 2, NOW, 1, 0, 0, null, 4, 0, 0, 0,
                NOW.minusSeconds(20), curve, List.of(), null, null), NOW);
        assertThat(html).contains("<polyline", "points=\"48.0,12.0 321.3,192.0 594.7,102.0 868.0,12.0\"",
                ">generation</text>", "11:59:30", "12:00:00 UTC");
    }
}
