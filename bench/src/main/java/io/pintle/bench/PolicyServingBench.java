package io.pintle.bench;

import ch.qos.logback.classic.Level;
import io.pintle.api.Routes;
import io.pintle.bench.harness.HarnessMain;
import io.pintle.bench.harness.ReportOutput;
import io.pintle.server.Bootstrap;
import io.pintle.server.PintleServer;
import io.pintle.server.config.ConfigLoader;
import io.pintle.server.config.ServerConfig;
import io.pintle.server.demo.DemoLayout;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.http.HttpHeader;

/**
 * Entry point of {@code bench/run}: builds the fixture, starts Pintle and the baseline on 127.0.0.1, runs every row
 * of the plan, prints the Markdown report to stdout (and to {@code --output}), and stops both servers.
 *
 * <p>Exit status: 0 when every request succeeded, 1 when any failed (the report says which), 2 when the benchmark
 * could not run.
 */
public final class PolicyServingBench {
    /** Exit status when every request of every cell succeeded. */
    static final int EXIT_OK = 0;
    /** Exit status when the run completed but some requests failed. */
    static final int EXIT_ERRORS = 1;
    /**
     * Unmeasured load before the first row, per request shape (kind and protocol, at the highest concurrency the
     * plan uses it with) and per server, so that the rows measure compiled code rather than the JIT compiler.
     */
    private static final Duration JIT_WARMUP_PER_SHAPE = Duration.ofMillis(2500);
    /** Concurrency levels of the conditional (304) rows. */
    private static final List<Integer> CONDITIONAL_CONCURRENCY = List.of(1, 16, 64);
    /** Concurrency of the small-file rows. */
    private static final int SMALL_FILE_CONCURRENCY = 16;
    /** Concurrency of the large-file download row. */
    private static final int DOWNLOAD_CONCURRENCY = 4;
    /** Concurrency of the new-connection (full handshake) row. */
    private static final int NEW_CONNECTION_CONCURRENCY = 8;
    /**
     * Jetty warns, for every client, that host names are not verified: on purpose, the server is authenticated by
     * its key pin, as Rudder agents do.
     */
    private static final String EXPECTED_WARNING_LOGGER = "org.eclipse.jetty.util.ssl.SslContextFactory.config";
    /** Timeout of the start-up probe requests. */
    private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(10);

    private final Options options;
    private final PrintStream progress;

    private PolicyServingBench(Options options, PrintStream progress) {
        this.options = options;
        this.progress = progress;
    }

    /**
     * @param args {@code [--warmup SECONDS] [--measure SECONDS] [--output FILE]}
     */
    public static void main(String[] args) {
        HarnessMain.setUpInProcessLogging(Map.of(EXPECTED_WARNING_LOGGER, Level.ERROR));
        System.exit(HarnessMain.run(args, Options::parse, "benchmark",
                options -> new PolicyServingBench(options, System.err).runAll()));
    }

    private int runAll() throws Exception {
        Environment environment = Environment.current();
        Fixture fixture = Fixture.create(options.serverKey());
        try {
            ServerConfig config = ConfigLoader.load(fixture.layout().config());
            PintleServer pintle = Bootstrap.build(config);
            try {
                pintle.start();
                BaselineServer baseline = BaselineServer.start(config.tls(), fixture.rules(), fixture.rulesPath());
                try {
                    List<Row> rows = measure(fixture, pintle.uri(), baseline.uri());
                    return report(environment, rows);
                } finally {
                    baseline.stop();
                }
            } finally {
                pintle.close();
            }
        } finally {
            fixture.delete();
        }
    }

    private List<Row> measure(Fixture fixture, URI pintleUri, URI baselineUri) throws Exception {
        SSLContext tls = fixture.nodeTls();
        Target pintle = probe("Pintle", pintleUri, fixture, tls);
        Target baseline = probe("baseline", baselineUri, fixture, tls);
        List<Scenario> plan = selected(plan(fixture));
        CpuSampler cpu = new CpuSampler();
        warmUp(plan, pintle, baseline, tls, cpu);
        List<Row> rows = new ArrayList<>();
        for (Scenario scenario : plan) {
            progress.printf("[%d/%d] %s, HTTP/%s, N=%d%n", rows.size() + 1, plan.size(), scenario.label(),
                    scenario.protocol().label(), scenario.concurrency());
            Measurement onPintle = ClosedLoop.run(scenario, pintle, tls, options.timing(), cpu);
            Optional<Measurement> onBaseline = scenario.withBaseline()
                    ? Optional.of(ClosedLoop.run(scenario, baseline, tls, options.timing(), cpu))
                    : Optional.empty();
            rows.add(new Row(scenario, onPintle, onBaseline));
        }
        return rows;
    }

    /** @return the rows {@code --rows} names, or all of them */
    private List<Scenario> selected(List<Scenario> plan) {
        if (options.rows().isEmpty()) {
            return plan;
        }
        List<Scenario> selected = new ArrayList<>();
        for (int i = 0; i < plan.size(); i++) {
            if (options.rows().contains(i + 1)) {
                selected.add(plan.get(i));
            }
        }
        return selected;
    }

    /** The rows, in table order. */
    private static List<Scenario> plan(Fixture fixture) throws IOException {
        List<Scenario> plan = new ArrayList<>();
        for (Protocol protocol : Protocol.values()) {
            for (int concurrency : CONDITIONAL_CONCURRENCY) {
                plan.add(new Scenario("304, If-None-Match, " + Fixture.ARCHIVE, Kind.CONDITIONAL, protocol,
                        concurrency, fixture.archivePath(), 0, true));
            }
        }
        for (Protocol protocol : Protocol.values()) {
            plan.add(new Scenario("200, 1 KiB file", Kind.FULL_GET, protocol, SMALL_FILE_CONCURRENCY,
                    fixture.pathOf(fixture.small()), Files.size(fixture.small()), true));
        }
        plan.add(new Scenario("200, 10 MiB file", Kind.DOWNLOAD, Protocol.HTTP_1_1, DOWNLOAD_CONCURRENCY,
                fixture.pathOf(fixture.large()), Files.size(fixture.large()), false));
        plan.add(new Scenario("new TLS connection (full handshake, client cert), " + Routes.UUID,
                Kind.NEW_CONNECTION, Protocol.HTTP_1_1, NEW_CONNECTION_CONCURRENCY, Routes.UUID,
                DemoLayout.SERVER_ID.getBytes(StandardCharsets.UTF_8).length, false));
        return plan;
    }

    /** Unmeasured load on both servers, so that the rows find the JIT mostly done; errors here fail the run. */
    private void warmUp(List<Scenario> plan, Target pintle, Target baseline, SSLContext tls, CpuSampler cpu)
            throws Exception {
        for (Scenario shape : shapes(plan)) {
            warmUp(shape, pintle, tls, cpu);
            if (shape.withBaseline()) {
                warmUp(shape, baseline, tls, cpu);
            }
        }
    }

    private void warmUp(Scenario shape, Target target, SSLContext tls, CpuSampler cpu) throws Exception {
        progress.printf("JIT warm-up on %s: %s, HTTP/%s, N=%d%n", target.name(), shape.label(),
                shape.protocol().label(), shape.concurrency());
        ClosedLoop.Timing timing = new ClosedLoop.Timing(JIT_WARMUP_PER_SHAPE, Duration.ZERO);
        Measurement warmup = ClosedLoop.run(shape, target, tls, timing, cpu);
        if (warmup.errors() > 0) {
            throw new IllegalStateException("errors during the warm-up on " + target.name() + ": "
                    + warmup.errorKinds());
        }
    }

    /** @return one row per kind and protocol, the one with the highest concurrency, in plan order */
    private static Collection<Scenario> shapes(List<Scenario> plan) {
        Map<List<Enum<?>>, Scenario> shapes = new LinkedHashMap<>();
        for (Scenario scenario : plan) {
            shapes.merge(List.of(scenario.kind(), scenario.protocol()), scenario,
                    (kept, other) -> other.concurrency() > kept.concurrency() ? other : kept);
        }
        return shapes.values();
    }

    /**
     * Checks a server answers the node, and reads the ETag the conditional rows send.
     *
     * @return the server as a target
     */
    private Target probe(String name, URI base, Fixture fixture, SSLContext tls) throws Exception {
        LoadClient client = LoadClient.start(Protocol.HTTP_1_1, tls, 1);
        try {
            String path = fixture.archivePath();
            ContentResponse response = client.http().newRequest(base.resolve(path))
                    .timeout(PROBE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
                    .send();
            String etag = response.getHeaders().get(HttpHeader.ETAG);
            if (response.getStatus() != 200 || etag == null) {
                throw new IllegalStateException(name + " answered " + response.getStatus() + " with ETag " + etag
                        + " for " + path + ": " + response.getContentAsString());
            }
            progress.printf("%s on %s: %s has ETag %s%n", name, base, path, etag);
            return new Target(name, base, Map.of(path, etag));
        } finally {
            client.stop();
        }
    }

    private int report(Environment environment, List<Row> rows) throws IOException {
        String markdown = MarkdownReport.render(environment, options, rows);
        // UTF-8 whatever the locale: the table has a few non-ASCII signs (–, ×, µ).
        ReportOutput.publish(markdown, options.output(), progress);
        return rows.stream().anyMatch(row -> row.errors() > 0) ? EXIT_ERRORS : EXIT_OK;
    }
}
