package io.pintle.server.remoterun;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.function.Consumer;

/**
 * Splits bytes into lines as they come, in any chunks: each line without its end of line (a {@code \r} before the
 * {@code \n} dropped too), a line longer than {@link AgentLauncher#MAX_LINE_BYTES} split there, and a last line
 * without end of line kept. Not thread-safe: one producer.
 */
final class LineSplitter {
    private final ByteArrayOutputStream line = new ByteArrayOutputStream(256);
    private final Consumer<String> lines;

    /** @param lines receives each line */
    LineSplitter(Consumer<String> lines) {
        this.lines = lines;
    }

    /** @param chunk the next bytes (consumed) */
    void feed(ByteBuffer chunk) {
        while (chunk.hasRemaining()) {
            byte b = chunk.get();
            if (b == '\n' || line.size() >= AgentLauncher.MAX_LINE_BYTES) {
                emit();
                if (b == '\n') {
                    continue;
                }
            }
            line.write(b);
        }
    }

    /** The end: hands on a last line without end of line. */
    void finish() {
        if (line.size() > 0) {
            emit();
        }
    }

    private void emit() {
        int length = line.size();
        byte[] bytes = line.toByteArray();
        if (length > 0 && bytes[length - 1] == '\r') {
            length--;
        }
        lines.accept(new String(bytes, 0, length, StandardCharsets.UTF_8));
        line.reset();
    }
}
