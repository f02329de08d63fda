package io.pintle.bench;

import ch.qos.logback.classic.Level;
import io.pintle.bench.harness.HarnessMain;
import io.pintle.bench.harness.ReportOutput;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * Entry point of {@code bench/reload}: generates a registry of 20,000 nodes, measures snapshot builds and their
 * heap without a server, then reloads the real server 100 times under a steady load on 1,000 keep-alive
 * connections, and prints a Markdown report to stdout (and to {@code --output}), with a plot of every reload's
 * trigger-to-effective to {@code --plot}. Progress goes to stderr.
 *
 * <p>Exit status: 0 when no request failed, no connection closed and every reload was applied and became
 * effective; 1 otherwise (the report says what); 2 when the benchmark could not run. Latency targets are reported
 * in the table, not enforced by the exit status: they depend on the machine.
 */
public final class ReloadBench {
    /** Exit status when every request, connection and reload behaved. */
    static final int EXIT_OK = 0;
    /** Exit status when the run completed but a request failed, a connection closed or a reload failed. */
    static final int EXIT_ERRORS = 1;
    /**
     * Loggers lowered, with what they would print otherwise: Jetty's warning that client host names are not
     * verified (on purpose, the server is authenticated by its pin), one line per 403 the probes get while they wait
     * for their node's reload, and one line per reload. Errors still show. (The access log is off in every
     * benchmark.)
     */
    private static final Map<String, Level> QUIETED_LOGGERS = Map.of(
            "org.eclipse.jetty.util.ssl.SslContextFactory.config", Level.ERROR,
            "io.pintle.server.http.Exchange", Level.WARN,
            "io.pintle.server.reload.Reloader", Level.WARN);

    private final ReloadOptions options;
    private final PrintStream progress;

    private ReloadBench(ReloadOptions options, PrintStream progress) {
        this.options = options;
        this.progress = progress;
    }

    /**
     * @param args see {@link ReloadOptions#USAGE}
     */
    public static void main(String[] args) {
        HarnessMain.setUpInProcessLogging(QUIETED_LOGGERS);
        System.exit(HarnessMain.run(args, ReloadOptions::parse, "benchmark",
                options -> new ReloadBench(options, System.err).runAll()));
    }

    private int runAll() throws Exception {
        long started = System.nanoTime();
        Environment environment = Environment.current();
        progress.printf("Generating a registry of %,d nodes with %d threads%n", options.nodes(), options.threads());
        LargeRegistry registry = LargeRegistry.generate(options.nodes(), options.threads(), progress);
        long generation = System.nanoTime() - started;
        progress.printf("  generated in %.1f s%n", generation / 1e9);
        try {
            SnapshotCosts.Figures snapshots = SnapshotCosts.measure(registry, options.repetitions(), progress);
            ReloadUnderLoad.Figures underLoad = ReloadUnderLoad.run(registry, options, progress);
            ReloadReport.Results results = new ReloadReport.Results(environment, options, generation, snapshots,
                    underLoad, System.nanoTime() - started);
            report(ReloadReport.render(results));
            ReportOutput.plot(options.plot(), file -> ReloadPlot.write(results, file), progress);
            return results.clean() ? EXIT_OK : EXIT_ERRORS;
        } finally {
            registry.delete();
        }
    }

    private void report(String markdown) throws IOException {
        // UTF-8 whatever the locale: the report has a few non-ASCII signs (–, →, ×).
        ReportOutput.publish(markdown, options.output(), progress);
    }
}
