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
            if (b == '\n') {
                emit(true);
                continue;
            }
            if (line.size() >= AgentLauncher.MAX_LINE_BYTES) {
                emit(false);
            }
            line.write(b);
        }
    }

    /** The end: hands on a last line without end of line. */
    void finish() {
        if (line.size() > 0) {
            emit(true);
        }
    }

    /**
     * @param ended whether the line ended (its {@code \r} is dropped); otherwise it is split at its length limit,
     *     never inside a UTF-8 sequence (the sequence's first bytes go with the next piece)
     */
    private void emit(boolean ended) {
        byte[] bytes = line.toByteArray();
        int length = bytes.length;
        int carried = 0;
        if (ended) {
            if (length > 0 && bytes[length - 1] == '\r') {
                length--;
            }
        } else {
            carried = incompleteSequence(bytes);
            length -= carried;
        }
        lines.accept(new String(bytes, 0, length, StandardCharsets.UTF_8));
        line.reset();
        line.write(bytes, bytes.length - carried, carried);
    }

    /** @return how many bytes at the end of {@code bytes} begin a UTF-8 sequence that is not complete yet */
    static int incompleteSequence(byte[] bytes) {
        for (int back = 1; back <= Math.min(3, bytes.length); back++) {
            int b = bytes[bytes.length - back] & 0xff;
            if ((b & 0xc0) == 0x80) {
                continue;
            }
            int needed = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
            return needed > back ? back : 0;
        }
        return 0;
    }
}
