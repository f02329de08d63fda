package io.pintle.server.cli;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.joran.JoranConfigurator;
import ch.qos.logback.classic.pattern.LevelConverter;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.turbo.TurboFilter;
import ch.qos.logback.core.CoreConstants;
import ch.qos.logback.core.filter.Filter;
import ch.qos.logback.core.read.ListAppender;
import ch.qos.logback.core.spi.BasicSequenceNumberGenerator;
import ch.qos.logback.core.spi.FilterReply;
import io.pintle.server.http.AccessLine;
import io.pintle.server.logging.WholeLines;
import io.pintle.server.testing.Await;
import java.io.ByteArrayOutputStream;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
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
        for (Charset charset : List.of(StandardCharsets.UTF_8, StandardCharsets.ISO_8859_1)) {
            Route whole = route("%msg%n", false, charset, context -> { });
            Route logback = route("%msg%n", false, charset, context -> { });
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
            String expected = await(logback, 4);
            assertThat(await(whole, 4)).as(charset.name()).isEqualTo(expected);
            synchronized (whole.target()) {
                assertThat(whole.target().toByteArray()).isEqualTo(logback.target().toByteArray());
            }
            assertThat(whole.events()).as("Logback events on the whole way").hasValue(0);
            assertThat(logback.events()).as("Logback events on Logback's way").hasValue(4);
            assertThat(expected.split("\n", -1)[0]).isEqualTo("127.0.0.1 - node-1 [30/Nov/2026:00:55:23 +0000] "
                    + "\"GET /policies/node-1/rules/rudder.tar.bz2 HTTP/1.1\" 200 1024 1.235ms allowed \"rule\" "
                    + "auth=cert_pinning");
            assertThat(expected).contains("?a=\\\"quoted\\\"\u00e9\\x01 ").contains("\"path\":\"/uuid\"");
            whole.stop();
            logback.stop();
        }
    }

    /** The logger's level holds on the whole way as on Logback's. */
    @Test
    void aLevelAboveInfoSilencesWholeLinesToo() throws Exception {
        Route whole = route("%msg%n", false);
        AccessLine access = new AccessLine(whole.logger());
        whole.logger().setLevel(Level.WARN);
        access.write(line("/silenced", null), MILLIS, 1_000, false);
        whole.logger().setLevel(Level.INFO);
        access.write(line("/written", null), MILLIS, 1_000, false);
        assertThat(await(whole, 1)).contains("/written").doesNotContain("/silenced");
        assertThat(whole.events()).hasValue(0);
        whole.stop();
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
    void anyOtherRoutingGoesThroughLogback() throws Exception {
        Route prefixed = route("%level %msg%n", false);
        assertThat(WholeLines.route(prefixed.logger())).as("a pattern with more than the message").isNull();

        Route masked = route("%msg%n", false, StandardCharsets.UTF_8, context -> context.putObject(
                CoreConstants.PATTERN_RULE_REGISTRY, new HashMap<>(Map.of("msg", LevelConverter.class.getName()))));
        assertThat(WholeLines.route(masked.logger())).as("msg redefined by a conversion rule").isNull();
        new AccessLine(masked.logger()).write(line("/uuid", null), MILLIS, 1_000, false);
        assertThat(await(masked, 1)).isEqualTo("INFO\n");

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
            public FilterReply decide(Marker marker, Logger logger, Level level,
                    String format, Object[] params, Throwable t) {
                return FilterReply.NEUTRAL;
            }
        });
        assertThat(WholeLines.route(turbo.logger())).as("a turbo filter").isNull();

        Route stopped = route("%msg%n", false);
        stopped.stop();
        assertThat(WholeLines.route(stopped.logger())).as("a stopped appender").isNull();
        for (Route route : List.of(prefixed, masked, additive, second, turbo)) {
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

    /** A Logback context of its own with the access logger and one {@link AccessLogAppender} on it, in UTF-8. */
    private static Route route(String pattern, boolean additive) {
        return route(pattern, additive, StandardCharsets.UTF_8, context -> { });
    }

    /**
     * @param setUp what the context gets before the encoder starts (a conversion rule, say)
     */
    private static Route route(String pattern, boolean additive, Charset charset,
            java.util.function.Consumer<LoggerContext> setUp) {
        LoggerContext context = new LoggerContext();
        AtomicLong events = new AtomicLong();
        // Logback asks for a sequence number for every event it makes: a count of the lines that took its way.
        BasicSequenceNumberGenerator counter = new BasicSequenceNumberGenerator() {
            @Override
            public long nextSequenceNumber() {
                events.incrementAndGet();
                return super.nextSequenceNumber();
            }
        };
        counter.setContext(context);
        context.setSequenceNumberGenerator(counter);
        setUp.accept(context);
        PatternLayoutEncoder encoder = new PatternLayoutEncoder();
        encoder.setContext(context);
        encoder.setPattern(pattern);
        encoder.setCharset(charset);
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
        return new Route(logger, appender, target, events, charset);
    }

    private static String await(Route route, int lines) throws InterruptedException {
        Await.until(Duration.ofSeconds(10), lines + " lines written",
                () -> text(route).split("\n", -1).length > lines);
        return text(route);
    }

    private static String text(Route route) {
        synchronized (route.target()) {
            return route.target().toString(route.charset());
        }
    }

    private record Route(Logger logger, AccessLogAppender appender, ByteArrayOutputStream target, AtomicLong events,
            Charset charset) {
        void stop() {
            appender.stop();
        }
    }
}
