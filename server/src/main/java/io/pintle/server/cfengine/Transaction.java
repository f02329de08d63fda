package io.pintle.server.cfengine;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * CFEngine's framing: after the identification lines, every message but a file's bytes is a transaction, an
 * 8-byte header ({@code "t <length>"} or {@code "m <length>"}, NUL-padded: {@code t} ends the reply, {@code m}
 * says more follow) and a payload of 1 to 4,088 bytes ({@code CF_BUFSIZE} 4,096 less the header).
 */
final class Transaction {
    /** {@code CF_INBAND_OFFSET}. */
    static final int HEADER = 8;
    /** {@code CF_BUFSIZE}. */
    static final int BUFSIZE = 4096;
    /** The largest payload. */
    static final int MAX_PAYLOAD = BUFSIZE - HEADER;
    /** Ends a reply. */
    static final char DONE = 't';
    /** More of the reply follows. */
    static final char MORE = 'm';
    /** Ends a directory listing ({@code CFD_TERMINATOR}). */
    static final String TERMINATOR = "---cfXen/gine/cfXen/gine---";
    /** A refusal, whatever its cause, as cf-serverd words it ({@code CF_FAILEDSTR}). */
    static final String FAILED = "BAD: Unspecified server refusal (see verbose server output)";
    /** A file that changed while it was sent ({@code CF_CHANGEDSTR1 CF_CHANGEDSTR2}). */
    static final String CHANGED = "BAD: File changed while copying";

    private Transaction() {}

    /**
     * @param payload the bytes, 1 to {@link #MAX_PAYLOAD}
     * @param status {@link #DONE} or {@link #MORE}
     * @return header and payload, ready to write
     */
    static ByteBuffer of(byte[] payload, int length, char status) {
        if (length < 1 || length > MAX_PAYLOAD) {
            throw new IllegalArgumentException("transaction payload of " + length + " bytes");
        }
        ByteBuffer buffer = ByteBuffer.allocate(HEADER + length);
        byte[] header = (status + " " + length).getBytes(StandardCharsets.US_ASCII);
        buffer.put(header);
        buffer.position(HEADER);
        buffer.put(payload, 0, length);
        return buffer.flip();
    }

    /**
     * @param text an ASCII reply
     * @return it as one final transaction
     */
    static ByteBuffer done(String text) {
        byte[] payload = text.getBytes(StandardCharsets.UTF_8);
        return of(payload, payload.length, DONE);
    }

    /**
     * Reads a header as cf-serverd does ({@code sscanf "%c %d"}).
     *
     * @param header the 8 header bytes
     * @return the payload length, or -1 when the header is not one (bad status, bad length, out of range)
     */
    static int length(byte[] header) {
        if (header.length != HEADER || (header[0] != DONE && header[0] != MORE) || header[1] != ' ') {
            return -1;
        }
        int length = 0;
        int i = 2;
        while (i < HEADER && header[i] >= '0' && header[i] <= '9') {
            length = length * 10 + (header[i] - '0');
            i++;
        }
        if (i == 2) {
            return -1;
        }
        // The rest is the NUL padding snprintf leaves; anything else is not a header CFEngine writes.
        for (; i < HEADER; i++) {
            if (header[i] != 0) {
                return -1;
            }
        }
        return length >= 1 && length <= MAX_PAYLOAD ? length : -1;
    }
}
