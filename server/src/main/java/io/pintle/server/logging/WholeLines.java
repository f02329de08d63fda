package io.pintle.server.logging;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.Appender;
import java.util.Iterator;

/**
 * An appender that can take a logger's messages whole, written exactly as its own encoder would write the event
 * of that message (so only an encoder that writes the message alone, {@code %msg%n}, qualifies), without a Logback
 * event, filter chain or pattern layout: {@code cli.AccessLogAppender}.
 */
public interface WholeLines {
    /** @return whether it takes messages whole now: started, a {@code %msg%n} encoder, no filter */
    boolean takesWholeLines();

    /**
     * Queues one message as the encoder would have written its event: the message, the line separator.
     *
     * @param message the line, without its separator
     */
    void appendWhole(String message);

    /**
     * The appender a logger's message may be handed to whole: the logger's only appender, one that {@link
     * #takesWholeLines}, the logger not additive (no ancestor's appender would see the event) and its context
     * without turbo filters. Asked for each line, so that an appender attached, a filter added or a
     * reconfiguration takes effect at once.
     *
     * @param logger a logger
     * @return that appender, or null when the message must go through Logback
     */
    static WholeLines route(org.slf4j.Logger logger) {
        if (!(logger instanceof Logger logback) || logback.isAdditive()
                || !logback.getLoggerContext().getTurboFilterList().isEmpty()) {
            return null;
        }
        Iterator<Appender<ILoggingEvent>> appenders = logback.iteratorForAppenders();
        if (!appenders.hasNext()) {
            return null;
        }
        Appender<ILoggingEvent> only = appenders.next();
        return only instanceof WholeLines whole && !appenders.hasNext() && whole.takesWholeLines() ? whole : null;
    }
}
