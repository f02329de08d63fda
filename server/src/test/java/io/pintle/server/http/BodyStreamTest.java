package io.pintle.server.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pintle.server.problem.PintleException;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.io.content.AsyncContent;
import org.eclipse.jetty.util.Callback;
import org.junit.jupiter.api.Test;

/** A request body read through the rate floor, from Jetty's own asynchronous content source. */
class BodyStreamTest {
    @Test
    void aBodyThatKeepsTheFloorButPausesPastAPeriodIsReadWhole() throws Exception {
        AsyncContent source = new AsyncContent();
        // Floor: 100 bytes/s over 200 ms periods (20 bytes a period); 30 bytes every 150 ms keeps it, and a wait
        // for the next bytes regularly ends with a period, its demand still pending.
        BodyStream body = new BodyStream(source, 100, Duration.ofMillis(200));
        CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> {
            try {
                for (int i = 0; i < 8; i++) {
                    Thread.sleep(150);
                    source.write(i == 7, ByteBuffer.wrap(new byte[30]), Callback.NOOP);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });

        ByteArrayOutputStream read = new ByteArrayOutputStream();
        byte[] buffer = new byte[64];
        for (int n; (n = body.read(buffer, 0, buffer.length)) >= 0; ) {
            read.write(buffer, 0, n);
        }

        writer.get(10, TimeUnit.SECONDS);
        assertThat(read.size()).isEqualTo(240);
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
