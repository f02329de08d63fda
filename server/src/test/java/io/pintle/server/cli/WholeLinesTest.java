package io.pintle.server.cli;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.joran.JoranConfigurator;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.turbo.TurboFilter;
import ch.qos.logback.core.filter.Filter;
import ch.qos.logback.core.read.ListAppender;
import ch.qos.logback.core.spi.FilterReply;
import io.pintle.server.http.AccessLine;
import io.pintle.server.logging.WholeLines;
import io.pintle.server.testing.Await;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.slf4j.Marker;

/**
 * The access line handed whole to {@link AccessLogAppender} ({@link WholeLines}) is byte for byte what Logback's
 * own path writes, and only the shipped routing (the appender alone, {@code %msg%n}, no filter, not additive) takes
 * that way; any other routing still gets every line through Logback.
 */
class WholeLinesTest {
    private static final long MILLIS = 1_796_000_123_456L;

    @Test
    void wholeLinesAreTheBytesLogbacksPathWrites() throws Exception {
        Route whole = route("%msg%n", false);
        Route logback = route("%msg%n", false);
        logback.appender().addFilter(neutral());
        assertThat(WholeLines.route(whole.logger())).isSameAs(whole.appender());
        assertThat(WholeLines.route(logback.logger())).as("a filter on the appender").isNull();

        for (Route route : List.of(whole, logback)) {
            AccessLine access = new AccessLine(route.logger());
            for (boolean json : new boolean[] {false, true}) {
                access.write(line("/policies/node-1/rules/rudder.tar.bz2", null), MILLIS, 1_234_567, json);
                access.write(line("/uuid", "a=\"quoted\"\u00e9\u0001"), MILLIS + 1_000, 7_000, json);
            }
        }
        String expected = await(logback.target(), 4);
        assertThat(await(whole.target(), 4)).isEqualTo(expected);
        assertThat(expected.split("\n", -1)[0]).isEqualTo("127.0.0.1 - node-1 [30/Nov/2026:00:55:23 +0000] "
                + "\"GET /policies/node-1/rules/rudder.tar.bz2 HTTP/1.1\" 200 1024 1.235ms allowed \"rule\" "
                + "auth=cert_pinning");
        assertThat(expected).contains("?a=\\\"quoted\\\"\u00e9\\x01 ").contains("\"path\":\"/uuid\"");
        whole.stop();
        logback.stop();
    }

    /** The logback.xml in the jar routes the access log the whole way. */
    @Test
    void theShippedConfigurationTakesWholeLines() throws Exception {
        LoggerContext context = new LoggerContext();
        JoranConfigurator configurator = new JoranConfigurator();
        configurator.setContext(context);
        configurator.doConfigure(WholeLinesTest.class.getResource("/logback.xml"));
        try {
            assertThat(WholeLines.route(context.getLogger(AccessLine.LOGGER)))
                    .isInstanceOf(AccessLogAppender.class);
        } finally {
            context.stop();
        }
    }

    @Test
    void anyOtherRoutingGoesThroughLogback() {
        Route prefixed = route("%level %msg%n", false);
        assertThat(WholeLines.route(prefixed.logger())).as("a pattern with more than the message").isNull();

        Route additive = route("%msg%n", true);
        assertThat(WholeLines.route(additive.logger())).as("an additive logger").isNull();

        Route second = route("%msg%n", false);
        ListAppender<ILoggingEvent> list = new ListAppender<>();
        list.setContext(second.logger().getLoggerContext());
        list.start();
        second.logger().addAppender(list);
        assertThat(WholeLines.route(second.logger())).as("a second appender").isNull();
        new AccessLine(second.logger()).write(line("/uuid", null), MILLIS, 1_000, false);
        assertThat(list.list).hasSize(1);
        second.logger().detachAppender(list);
        assertThat(WholeLines.route(second.logger())).as("the second appender taken off").isSameAs(
                second.appender());

        Route turbo = route("%msg%n", false);
        turbo.logger().getLoggerContext().addTurboFilter(new TurboFilter() {
            @Override
            public FilterReply decide(Marker marker, Logger logger, ch.qos.logback.classic.Level level,
                    String format, Object[] params, Throwable t) {
                return FilterReply.NEUTRAL;
            }
        });
        assertThat(WholeLines.route(turbo.logger())).as("a turbo filter").isNull();

        Route stopped = route("%msg%n", false);
        stopped.stop();
        assertThat(WholeLines.route(stopped.logger())).as("a stopped appender").isNull();
        for (Route route : List.of(prefixed, additive, second, turbo)) {
            route.stop();
        }
    }

    private static AccessLine.Line line(String path, String query) {
        return new AccessLine.Line(null, "127.0.0.1", "node-1", "GET", path, query, "HTTP/1.1", 200, 1024, 1.234567,
                "tls", "policies", "allowed", null, "rule", null, "cert_pinning", null, null);
    }

    private static Filter<ILoggingEvent> neutral() {
        Filter<ILoggingEvent> filter = new Filter<>() {
            @Override
            public FilterReply decide(ILoggingEvent event) {
                return FilterReply.NEUTRAL;
            }
        };
        filter.start();
        return filter;
    }

    /** A Logback context of its own with the access logger and one {@link AccessLogAppender} on it. */
    private static Route route(String pattern, boolean additive) {
        LoggerContext context = new LoggerContext();
        PatternLayoutEncoder encoder = new PatternLayoutEncoder();
        encoder.setContext(context);
        encoder.setPattern(pattern);
        encoder.start();
        ByteArrayOutputStream target = new ByteArrayOutputStream();
        AccessLogAppender appender = new AccessLogAppender(target);
        appender.setContext(context);
        appender.setEncoder(encoder);
        appender.setFlushMillis(10);
        appender.start();
        Logger logger = context.getLogger(AccessLine.LOGGER);
        logger.setAdditive(additive);
        logger.addAppender(appender);
        return new Route(logger, appender, target);
    }

    private static String await(ByteArrayOutputStream target, int lines) throws InterruptedException {
        Await.until(Duration.ofSeconds(10), lines + " lines written",
                () -> text(target).split("\n", -1).length > lines);
        return text(target);
    }

    private static String text(ByteArrayOutputStream target) {
        synchronized (target) {
            return target.toString(StandardCharsets.UTF_8);
        }
    }

    private record Route(Logger logger, AccessLogAppender appender, ByteArrayOutputStream target) {
        void stop() {
            appender.stop();
        }
    }
}
