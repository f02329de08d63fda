package io.pintle.bench.harness;

import ch.qos.logback.classic.Level;
import java.util.Map;
import java.util.function.Function;
import org.slf4j.LoggerFactory;
import org.slf4j.bridge.SLF4JBridgeHandler;

/** What every benchmark's {@code main} does around its own work: logging, options, exit status on failure. */
public final class HarnessMain {
    /** Exit status when a benchmark could not run, or was given wrong options. */
    public static final int EXIT_CANNOT_RUN = 2;
    /** Pintle's access log (on by default): off in benchmarks, where a line per request would measure stderr. */
    private static final String ACCESS_LOGGER = "io.pintle.access";
    /** Where Jetty warns that the client verifies no host name, which the harnesses' clients do not on purpose. */
    private static final String HOST_NAME_WARNING_LOGGER = "org.eclipse.jetty.util.ssl.SslContextFactory.config";

    private HarnessMain() {}

    /**
     * Sends Jersey's java.util.logging to SLF4J, as Pintle's Main does, turns the access log off and sets the
     * given loggers' levels: for the harnesses that run Pintle in their own JVM.
     *
     * @param levels level by logger name
     */
    public static void setUpInProcessLogging(Map<String, Level> levels) {
        SLF4JBridgeHandler.removeHandlersForRootLogger();
        SLF4JBridgeHandler.install();
        setLevel(ACCESS_LOGGER, Level.OFF);
        setLevels(levels);
    }

    /**
     * Sets the given loggers' levels (logback's), leaving everything else as it is.
     *
     * @param levels level by logger name ({@code Logger.ROOT_LOGGER_NAME} for the root)
     */
    public static void setLevels(Map<String, Level> levels) {
        levels.forEach(HarnessMain::setLevel);
    }

    /**
     * The log levels of a harness whose Pintle runs in a process of its own: the Jetty client's and the JDK's
     * logging at WARN, and Jetty's warning that host names are not verified (on purpose: the server is
     * authenticated by its key pin, as Rudder agents do) at ERROR.
     */
    public static void quietClientLogging() {
        setLevel(org.slf4j.Logger.ROOT_LOGGER_NAME, Level.WARN);
        setLevel(HOST_NAME_WARNING_LOGGER, Level.ERROR);
    }

    private static void setLevel(String name, Level level) {
        if (LoggerFactory.getLogger(name) instanceof ch.qos.logback.classic.Logger logger) {
            logger.setLevel(level);
        }
    }

    /**
     * A benchmark's work.
     *
     * @param <O> its options
     */
    public interface Work<O> {
        /**
         * @param options the parsed options
         * @return the exit status
         * @throws Exception when it cannot run
         */
        int run(O options) throws Exception;
    }

    /**
     * Parses the options and runs the benchmark. A parse failure prints only its message (the usage, or what was
     * wrong); a failure of the work prints "{@code name} failed: " with the exception and its stack trace.
     *
     * @param args the command line
     * @param parse parses it, throwing a {@link RuntimeException} whose message is the usage or the problem
     * @param name what the failure message calls the benchmark ("benchmark", "hostile harness", ...)
     * @param work the benchmark
     * @param <O> its options
     * @return its exit status, or {@link #EXIT_CANNOT_RUN} when the options are wrong or it could not run
     */
    public static <O> int run(String[] args, Function<String[], O> parse, String name, Work<O> work) {
        O options;
        try {
            options = parse.apply(args);
        } catch (RuntimeException e) {
            System.err.println(e.getMessage());
            return EXIT_CANNOT_RUN;
        }
        try {
            return work.run(options);
        } catch (Exception e) {
            System.err.println(name + " failed: " + e);
            e.printStackTrace(System.err);
            return EXIT_CANNOT_RUN;
        }
    }
}
