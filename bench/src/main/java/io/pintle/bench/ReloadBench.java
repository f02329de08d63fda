package io.pintle.bench;

import ch.qos.logback.classic.Level;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.slf4j.LoggerFactory;
import org.slf4j.bridge.SLF4JBridgeHandler;

/**
 * Entry point of {@code bench/reload}: generates a registry of 20,000 nodes, measures snapshot builds and their
 * heap without a server, then reloads the real server 100 times under a steady load on 1,000 keep-alive
 * connections, and prints a Markdown report to stdout (and to {@code --output}). Progress goes to stderr.
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
    /** Exit status when the benchmark could not run. */
    static final int EXIT_FAILURE = 2;
    /**
     * Loggers lowered to WARN, with what they would print at INFO: Jetty's warning that client host names are not
     * verified (on purpose, the server is authenticated by its pin), one line per 403 the probes get while they wait
     * for their node's reload, and one line per reload. Errors still show. The access log (one line per request)
     * is turned off.
     */
    private static final List<String> QUIETED_LOGGERS = List.of(
            "org.eclipse.jetty.util.ssl.SslContextFactory.config",
            "io.pintle.server.http.PolicyResource",
            "io.pintle.server.reload.Reloader",
            PolicyServingBench.ACCESS_LOGGER);

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
        // As Pintle's Main does: Jersey's java.util.logging goes to SLF4J.
        SLF4JBridgeHandler.removeHandlersForRootLogger();
        SLF4JBridgeHandler.install();
        for (String name : QUIETED_LOGGERS) {
            if (LoggerFactory.getLogger(name) instanceof ch.qos.logback.classic.Logger logger) {
                logger.setLevel(name.startsWith("org.eclipse") ? Level.ERROR
                        : name.equals(PolicyServingBench.ACCESS_LOGGER) ? Level.OFF : Level.WARN);
            }
        }
        System.exit(run(args));
    }

    /**
     * @param args the command line
     * @return the exit status
     */
    static int run(String... args) {
        ReloadOptions options;
        try {
            options = ReloadOptions.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println(e.getMessage());
            return EXIT_FAILURE;
        }
        try {
            return new ReloadBench(options, System.err).runAll();
        } catch (Exception e) {
            System.err.println("benchmark failed: " + e);
            e.printStackTrace(System.err);
            return EXIT_FAILURE;
        }
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
            return results.clean() ? EXIT_OK : EXIT_ERRORS;
        } finally {
            registry.delete();
        }
    }

    private void report(String markdown) throws IOException {
        // UTF-8 whatever the locale: the report has a few non-ASCII signs (–, →, ×).
        PrintStream stdout = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        stdout.print(markdown);
        stdout.flush();
        if (options.output() != null) {
            Path parent = options.output().toAbsolutePath().getParent();
            Files.createDirectories(parent);
            Files.writeString(options.output(), markdown);
            progress.println("written to " + options.output());
        }
    }
}
