package io.pintle.server.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pintle.server.problem.PintleException;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.time.Duration;
import org.eclipse.jetty.io.content.AsyncContent;
import org.eclipse.jetty.util.Callback;
import org.junit.jupiter.api.Test;

/** A request body read through the rate floor, from Jetty's own asynchronous content source. */
class BodyStreamTest {
    @Test
    void aBodyThatKeepsTheFloorButPausesPastAPeriodIsReadWhole() throws Exception {
        AsyncContent source = new AsyncContent();
        // Floor: one byte per 500 ms period. 10 bytes every 100 ms keep it with 400 ms to spare for a busy machine,
        // and the wait for the next bytes now and then ends with a period, its demand still pending: the next wait
        // must take that demand over, not make a second one (Jetty refuses: "demand pending").
        BodyStream body = new BodyStream(source, 2, Duration.ofMillis(500));
        Thread writer = new Thread(() -> {
            try {
                for (int i = 0; i < 40; i++) {
                    Thread.sleep(100);
                    source.write(i == 39, ByteBuffer.wrap(new byte[10]), Callback.NOOP);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "body-writer");
        writer.start();

        ByteArrayOutputStream read = new ByteArrayOutputStream();
        byte[] buffer = new byte[64];
        for (int n; (n = body.read(buffer, 0, buffer.length)) >= 0; ) {
            read.write(buffer, 0, n);
        }

        writer.join(10_000);
        assertThat(read.size()).isEqualTo(400);
    }

    @Test
    void aBodyBelowTheFloorIsRefusedAsTooSlow() throws Exception {
        AsyncContent source = new AsyncContent();
        BodyStream body = new BodyStream(source, 1000, Duration.ofMillis(200));
        source.write(false, ByteBuffer.wrap(new byte[10]), Callback.NOOP);

        assertThatThrownBy(() -> {
            byte[] buffer = new byte[64];
            while (body.read(buffer, 0, buffer.length) >= 0) {
                // Reads the 10 bytes, then waits in vain for more.
            }
        }).isInstanceOfSatisfying(PintleException.TooSlow.class,
                e -> assertThat(e.reason()).isEqualTo("upload-too-slow"));
        source.close();
    }
}
