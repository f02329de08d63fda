package io.pintle.bench;

import ch.qos.logback.classic.Level;
import java.util.Map;
import java.util.function.Function;
import org.slf4j.LoggerFactory;
import org.slf4j.bridge.SLF4JBridgeHandler;

/** What every benchmark's {@code main} does around its own work: logging, options, exit status on failure. */
final class BenchMain {
    /** Exit status when a benchmark could not run. */
    static final int EXIT_FAILURE = 2;
    /** Pintle's access log (on by default): off in benchmarks, where a line per request would measure stderr. */
    private static final String ACCESS_LOGGER = "io.pintle.access";

    private BenchMain() {}

    /**
     * Sends Jersey's java.util.logging to SLF4J, as Pintle's Main does, turns the access log off and sets the
     * given loggers' levels.
     *
     * @param levels level by logger name
     */
    static void setUpLogging(Map<String, Level> levels) {
        SLF4JBridgeHandler.removeHandlersForRootLogger();
        SLF4JBridgeHandler.install();
        level(ACCESS_LOGGER, Level.OFF);
        levels.forEach(BenchMain::level);
    }

    private static void level(String name, Level level) {
        if (LoggerFactory.getLogger(name) instanceof ch.qos.logback.classic.Logger logger) {
            logger.setLevel(level);
        }
    }

    /**
     * A benchmark's work.
     *
     * @param <O> its options
     */
    interface Work<O> {
        /**
         * @param options the parsed options
         * @return the exit status
         * @throws Exception when it cannot run
         */
        int run(O options) throws Exception;
    }

    /**
     * @param args the command line
     * @param parse parses it, throwing {@link IllegalArgumentException} with the usage on bad options
     * @param work the benchmark
     * @return its exit status, or {@link #EXIT_FAILURE} when the options are wrong or it could not run
     */
    static <O> int run(String[] args, Function<String[], O> parse, Work<O> work) {
        O options;
        try {
            options = parse.apply(args);
        } catch (IllegalArgumentException e) {
            System.err.println(e.getMessage());
            return EXIT_FAILURE;
        }
        try {
            return work.run(options);
        } catch (Exception e) {
            System.err.println("benchmark failed: " + e);
            e.printStackTrace(System.err);
            return EXIT_FAILURE;
        }
    }
}
