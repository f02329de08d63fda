package io.pintle.server.reload;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.HexFormat;

/**
 * One input file as a snapshot read it, so that the next reload can tell "unchanged" from "changed" by comparing
 * bytes, and status can show exactly which version of each file is live by its SHA-256.
 *
 * <p>The bytes are kept (the nodes list and certificate bundles keep them anyway, to reuse their unchanged
 * entries), except for a private key: of that only the digest is kept. The digest of kept bytes is computed when
 * first asked for, off the reload's path: hashing a root's 40 MB certificate bundle would cost a reload 25 ms.
 */
public final class InputFile {
    /** Bytes read per call: small enough for NIO's reusable per-thread buffer, large enough for few calls. */
    private static final int READ_CHUNK = 256 * 1024;

    private final byte[] content;
    private final long size;
    private volatile String sha256;

    private InputFile(byte[] content, long size, String sha256) {
        this.content = content;
        this.size = size;
        this.sha256 = sha256;
    }

    /**
     * @param content an input file's bytes; kept, not copied, and never modified
     * @return the input
     */
    public static InputFile of(byte[] content) {
        return new InputFile(content, content.length, null);
    }

    /**
     * @param content a secret input file's bytes (a private key); not kept
     * @return the input, with its digest only
     */
    public static InputFile secret(byte[] content) {
        return new InputFile(null, content.length, digest(content));
    }

    /**
     * Reads a whole file in chunks of {@link #READ_CHUNK}. {@code Files.readAllBytes} reads a file in one call,
     * for which NIO allocates a native buffer of the file's size; a root's certificate bundle grows at each node
     * accepted, so each reload got a fresh buffer of tens of MB and paid a page fault per 4 KiB of it (about 45 ms
     * per 11 MB measured on a VM). The chunk's buffer is reused instead.
     *
     * @param file a file
     * @return its bytes
     * @throws IOException when it cannot be read
     */
    public static byte[] read(Path file) throws IOException {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            return read(channel);
        }
    }

    private static byte[] read(FileChannel channel) throws IOException {
        long size = channel.size();
        if (size > Integer.MAX_VALUE - 8) {
            throw new IOException("too large: " + size + " bytes");
        }
        byte[] content = new byte[(int) size];
        int filled = 0;
        while (true) {
            if (filled == content.length) {
                // At the size the file had when opened: done, unless it grew since (an in-place write).
                ByteBuffer probe = ByteBuffer.allocate(1);
                if (channel.read(probe) < 0) {
                    return content;
                }
                content = Arrays.copyOf(content, Math.max(content.length * 2, content.length + READ_CHUNK));
                content[filled++] = probe.get(0);
                continue;
            }
            int read = channel.read(ByteBuffer.wrap(content, filled, Math.min(READ_CHUNK, content.length - filled)));
            if (read < 0) {
                return Arrays.copyOf(content, filled);
            }
            filled += read;
        }
    }

    /** @return the SHA-256 of the file's bytes, hex */
    public String sha256() {
        String digest = sha256;
        if (digest == null) {
            // Racing callers compute the same value; either may publish it.
            digest = digest(content);
            sha256 = digest;
        }
        return digest;
    }

    /** @return the file's size in bytes */
    public long size() {
        return size;
    }

    /**
     * @param other another read of the same file, or null
     * @return whether both hold the same bytes
     */
    public boolean sameContent(InputFile other) {
        if (other == null || other.size != size) {
            return false;
        }
        if (content != null && other.content != null) {
            return Arrays.equals(content, other.content);
        }
        return sha256().equals(other.sha256());
    }

    private static String digest(byte[] content) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(content));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is not available in this JVM", e);
        }
    }

    @Override
    public String toString() {
        return "InputFile[size=" + size + "]";
    }
}
