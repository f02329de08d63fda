package io.pintle.server.cli;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.LoggingEvent;
import io.pintle.server.testing.Await;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class AccessLogAppenderTest {
    private final LoggerContext context = new LoggerContext();

    @Test
    void linesReachTheTargetWithinTheFlushPeriodInOrder() throws Exception {
        ByteArrayOutputStream target = new ByteArrayOutputStream();
        AccessLogAppender appender = appender(target, 16_384, 20);
        for (int i = 0; i < 1000; i++) {
            appender.doAppend(event("line " + i));
        }
        Await.until(Duration.ofSeconds(10), "1000 lines written", () -> text(target).split("\n", -1).length >= 1001);
        String[] lines = text(target).split("\n");
        assertThat(lines).hasSize(1000);
        for (int i = 0; i < 1000; i++) {
            assertThat(lines[i]).isEqualTo("line " + i);
        }
        appender.stop();
    }

    /** A full queue drops lines instead of making the caller wait, and says how many it dropped. */
    @Test
    void aFullQueueDropsAndCountsAndStopWritesWhatIsQueued() throws Exception {
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        ByteArrayOutputStream written = new ByteArrayOutputStream();
        // A target that blocks until released: the writer thread is stuck on it, as on a stalled journald.
        java.io.OutputStream stuck = new java.io.OutputStream() {
            @Override
            public void write(int b) {
                written.write(b);
            }

            @Override
            public void write(byte[] bytes, int offset, int length) {
                entered.countDown();
                await(release);
                written.write(bytes, offset, length);
            }
        };
        AccessLogAppender appender = appender(stuck, 16, 10);
        appender.doAppend(event("first"));
        // The writer takes "first" and blocks on the target.
        assertThat(entered.await(30, TimeUnit.SECONDS)).isTrue();
        long start = System.nanoTime();
        for (int i = 0; i < 100; i++) {
            appender.doAppend(event("queued " + i));
        }
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
        release.countDown();
        appender.stop();
        String text = text(written);
        assertThat(text).startsWith("first\nqueued 0\n").contains("queued 15\n").doesNotContain("queued 16\n")
                .contains("pintle: 84 access log lines dropped, the access log queue was full (16 lines)");
    }

    private AccessLogAppender appender(java.io.OutputStream target, int queueSize, long flushMillis) {
        PatternLayoutEncoder encoder = new PatternLayoutEncoder();
        encoder.setContext(context);
        encoder.setPattern("%msg%n");
        encoder.start();
        AccessLogAppender appender = new AccessLogAppender(target);
        appender.setContext(context);
        appender.setEncoder(encoder);
        appender.setQueueSize(queueSize);
        appender.setFlushMillis(flushMillis);
        appender.start();
        assertThat(appender.isStarted()).isTrue();
        return appender;
    }

    private LoggingEvent event(String message) {
        return new LoggingEvent("test", context.getLogger("io.pintle.access"), Level.INFO, message, null, null);
    }

    private static String text(ByteArrayOutputStream target) {
        synchronized (target) {
            return target.toString(StandardCharsets.UTF_8);
        }
    }

    /** Waits for the latch; a wait that times out or is interrupted fails the test where it happens. */
    private static void await(CountDownLatch latch) {
        try {
            if (!latch.await(30, TimeUnit.SECONDS)) {
                throw new AssertionError("latch not released within 30 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while waiting", e);
        }
    }
}
