package io.pintle.server.it;

import static io.pintle.server.it.DeliveryIT.fetch;
import static io.pintle.server.it.DeliveryIT.generation;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.pintle.server.testing.Await;
import io.pintle.server.testing.NodeKeys;
import io.pintle.server.testing.Sandbox;
import io.pintle.server.testing.TestServer;
import io.pintle.server.tls.SelfSigned;
import java.awt.image.BufferedImage;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The status page in a real headless browser (Debian's chromium): after a generation that some nodes fetched, the
 * rendered page shows the generation, the nodes behind, the freeze and a drawn curve; its screenshot is kept in
 * {@code target/status-page.png} for a reviewer.
 */
class StatusPageIT {
    @Test
    void theRenderedPageShowsTheGenerationTheCurveTheNodesBehindAndTheFreeze(@TempDir Path dir) throws Exception {
        assumeTrue(CurlIT.available("curl") && CurlIT.available("chromium"), "curl or chromium is not installed");
        Sandbox sandbox = Sandbox.create(dir);
        List<NodeKeys> nodes = new ArrayList<>();
        for (String id : List.of("node-1", "node-2", "node-3", "node-4")) {
            nodes.add(sandbox.addNode(id, SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH));
            generation(sandbox.share(), id, 1, null);
        }
        // A sample a second, not the default 10 s: the curve needs three.
        try (TestServer server = TestServer.start(sandbox, "[delivery]\nsample_seconds = 1")) {
            for (NodeKeys node : nodes) {
                fetch(sandbox, server, node, dir);
            }
            for (String id : List.of("node-1", "node-2", "node-3", "node-4")) {
                generation(sandbox.share(), id, 2, null);
            }
            fetch(sandbox, server, nodes.get(0), dir);
            fetch(sandbox, server, nodes.get(1), dir);
            assertThat(server.admin("POST", "/v1/freeze", "{\"nodes\": [\"node-4\"], \"reason\": \"canary\"}")
                    .status()).isEqualTo(200);
            // Wait for a sample that saw the generation and one after it.
            Await.until(Duration.ofSeconds(40), () -> server.admin("GET", "/v1/delivery").body()
                    .path("last_generation").isTextual() && server.admin("GET", "/v1/delivery").body()
                    .path("samples").size() >= 3);

            String url = server.server().adminUri().resolve("/").toString();
            HttpResponse<String> page = server.adminText("/");
            assertThat(page.statusCode()).isEqualTo(200);
            assertThat(page.headers().firstValue("content-type")).hasValueSatisfying(type ->
                    assertThat(type).startsWith("text/html"));
            assertThat(page.headers().firstValue("content-security-policy")).hasValueSatisfying(policy ->
                    assertThat(policy).contains("default-src 'none'"));

            String dom = chromium(dir, "--dump-dom", url);
            assertThat(dom).contains("generation " + server.admin("GET", "/v1/status").body().path("generation"))
                    .contains("Delivery of the last generation").contains("Generation seen at")
                    .contains("node-3").contains("behind").contains("canary").contains("1 node(s) held on their policies")
                    .contains("<svg id=\"curve\"").contains("<polyline").doesNotContain("collecting samples");
            String points = dom.replaceAll("(?s).*<polyline[^>]*points=\"([^\"]+)\".*", "$1");
            Set<String> distinct = new HashSet<>(List.of(points.split(" ")));
            assertThat(distinct).hasSizeGreaterThan(1);

            Path screenshot = Path.of("target/status-page.png").toAbsolutePath();
            Files.deleteIfExists(screenshot);
            chromium(dir, "--screenshot=" + screenshot, "--window-size=1100,1300", "--hide-scrollbars", url);
            BufferedImage image = ImageIO.read(screenshot.toFile());
            assertThat(image.getWidth()).isEqualTo(1100);
            assertThat(image.getHeight()).isEqualTo(1300);
            Set<Integer> colours = new HashSet<>();
            for (int x = 0; x < image.getWidth(); x += 7) {
                for (int y = 0; y < image.getHeight(); y += 7) {
                    colours.add(image.getRGB(x, y));
                }
            }
            assertThat(colours).as("a page, not a blank").hasSizeGreaterThan(20);
        }
    }

    private static String chromium(Path dir, String... arguments) throws Exception {
        List<String> command = new ArrayList<>(List.of("chromium", "--headless=new", "--no-sandbox", "--disable-gpu",
                "--no-first-run", "--user-data-dir=" + dir.resolve("chromium-profile")));
        command.addAll(List.of(arguments));
        Process process = new ProcessBuilder(command).redirectError(dir.resolve("chromium.log").toFile()).start();
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(90, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).as(Files.readString(dir.resolve("chromium.log"))).isZero();
        return out;
    }
}
