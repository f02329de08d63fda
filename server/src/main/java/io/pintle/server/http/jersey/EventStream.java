package io.pintle.server.http.jersey;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.pintle.api.dto.RemoteRunEvent;
import io.pintle.server.remoterun.RemoteRunner;
import io.pintle.server.remoterun.RunSink;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * A run's events on their way to one response: producers (agents, neighbours) put events on a bounded queue, the
 * response's thread writes them as they come — NDJSON, or relayd's plain text — until the {@code done} event. A
 * full queue blocks the producers (a slow reader slows the agents' output down, never fills the memory); a reader
 * gone makes the queue drop everything, so that the run still ends.
 */
final class EventStream implements RunSink {
    /** Events buffered between the run and a slow reader. */
    static final int CAPACITY = 1024;

    private static final ObjectMapper JSON = new ObjectMapper();

    private final BlockingQueue<RemoteRunEvent> queue = new LinkedBlockingQueue<>(CAPACITY);
    private volatile boolean abandoned;

    @Override
    public void accept(RemoteRunEvent event) {
        if (abandoned) {
            return;
        }
        try {
            queue.put(event);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Writes events until {@code done}.
     *
     * @param out the response body
     * @param text null for NDJSON (with keep-alive events on silence), or how to write one event as relayd's text
     *     (null for an event that has no text form)
     * @throws IOException when the reader is gone
     */
    void drain(OutputStream out, Function<RemoteRunEvent, String> text) throws IOException {
        try {
            while (true) {
                RemoteRunEvent event = queue.poll(RemoteRunner.KEEPALIVE.toMillis(), TimeUnit.MILLISECONDS);
                if (event == null) {
                    if (text == null) {
                        write(out, RemoteRunEvent.keepalive(), null);
                        out.flush();
                    }
                    continue;
                }
                write(out, event, text);
                if (RemoteRunEvent.DONE.equals(event.type())) {
                    out.flush();
                    return;
                }
                if (queue.isEmpty()) {
                    out.flush();
                }
            }
        } catch (IOException | RuntimeException e) {
            abandon();
            throw e;
        } catch (InterruptedException e) {
            abandon();
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while streaming a remote run", e);
        }
    }

    private void abandon() {
        abandoned = true;
        queue.clear();
    }

    private static void write(OutputStream out, RemoteRunEvent event, Function<RemoteRunEvent, String> text)
            throws IOException {
        if (text == null) {
            out.write(JSON.writeValueAsBytes(event));
            out.write('\n');
            return;
        }
        String line = text.apply(event);
        if (line != null) {
            out.write(line.getBytes(StandardCharsets.UTF_8));
        }
    }
}
