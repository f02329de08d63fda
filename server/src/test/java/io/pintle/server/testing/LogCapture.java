package io.pintle.server.testing;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import org.slf4j.LoggerFactory;

/** Logback's events of one logger (and its children), kept in memory for a test to read. */
public final class LogCapture {
    private LogCapture() {}

    /**
     * @param logger a logger's name (or {@code ROOT})
     * @return a started appender that keeps what the logger logs from now on
     */
    public static ListAppender<ILoggingEvent> attach(String logger) {
        ListAppender<ILoggingEvent> appender = new ListAppender<>();
        appender.start();
        ((Logger) LoggerFactory.getLogger(logger)).addAppender(appender);
        return appender;
    }

    /** Takes off an appender {@link #attach} put on. */
    public static void detach(String logger, ListAppender<ILoggingEvent> appender) {
        ((Logger) LoggerFactory.getLogger(logger)).detachAppender(appender);
    }
}
