package io.pintle.server.cli;

import ch.qos.logback.classic.LoggerContext;
import org.slf4j.LoggerFactory;

/** The end of logging, at exit: the access log is asynchronous, and what it still holds must be written. */
final class Logging {
    private Logging() {}

    /**
     * Stops Logback, which writes out what its asynchronous appenders hold. Called last by the shutdown hooks,
     * after the server's own "stopped" line (a Logback shutdown hook of its own could run before ours and lose it).
     */
    static void flush() {
        if (LoggerFactory.getILoggerFactory() instanceof LoggerContext context) {
            context.stop();
        }
    }
}
