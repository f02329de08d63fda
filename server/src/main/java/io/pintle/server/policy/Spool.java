package io.pintle.server.policy;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Bytes written once, then read back (by several readers at once if need be): in the heap up to {@value
 * #MEMORY_BYTES}, past that in a temporary file removed from its directory as soon as it is open, so that nothing
 * is left on disk whatever becomes of the process, and its space is freed when the spool is closed (or, if a
 * spool is lost without being closed, when the JDK's cleaner closes the channel). Its size is bounded: a write
 * past {@code maxBytes} fails with {@link TooLargeException}.
 *
 * <p>It holds a reference count: one for whoever made it; {@link #retain} takes another, and the file is closed
 * when every holder has {@link #release}d. A change list shared by the requests a change woke (each writes it,
 * each releases it) uses it; a spool with one holder simply releases once.
 */
public final class Spool extends OutputStream {
    /** Kept in the heap below this; a change list of ~5,000 entries (100 Rudder nodes) or a small manifest. */
    static final int MEMORY_BYTES = 1024 * 1024;

    private static final int COPY_BYTES = 64 * 1024;

    private final Path directory;
    private final long maxBytes;
    private final int memoryBytes;
    private final AtomicInteger references = new AtomicInteger(1);
    private byte[] memory = new byte[4096];
    private FileChannel file;
    private long size;
    private boolean written;

    /** Thrown by a write past the spool's bound. */
    public static final class TooLargeException extends IOException {
        private static final long serialVersionUID = 1L;

        TooLargeException(long maxBytes) {
            super("more than " + maxBytes + " bytes");
        }
    }

    /**
     * @param directory where the file goes once the heap part is full (it is removed from there at once)
     * @param maxBytes the most bytes held
     */
    public Spool(Path directory, long maxBytes) {
        this(directory, maxBytes, MEMORY_BYTES);
    }

    Spool(Path directory, long maxBytes, int memoryBytes) {
        this.directory = Objects.requireNonNull(directory);
        this.maxBytes = maxBytes;
        this.memoryBytes = memoryBytes;
    }

    /** A spool whose file goes to {@code java.io.tmpdir} (the unit's private {@code /tmp}). */
    public static Spool temporary(long maxBytes) {
        return new Spool(Path.of(System.getProperty("java.io.tmpdir")), maxBytes);
    }

    @Override
    public void write(int b) throws IOException {
        write(new byte[] {(byte) b}, 0, 1);
    }

    @Override
    public void write(byte[] bytes, int offset, int length) throws IOException {
        Objects.checkFromIndexSize(offset, length, bytes.length);
        if (written) {
            throw new IllegalStateException("spool already read");
        }
        if (size + length > maxBytes) {
            throw new TooLargeException(maxBytes);
        }
        if (file == null && size + length <= memoryBytes) {
            if (size + length > memory.length) {
                memory = Arrays.copyOf(memory, (int) Math.min(memoryBytes, Math.max(size + length,
                        2L * memory.length)));
            }
            System.arraycopy(bytes, offset, memory, (int) size, length);
            size += length;
            return;
        }
        if (file == null) {
            spill();
        }
        ByteBuffer buffer = ByteBuffer.wrap(bytes, offset, length);
        while (buffer.hasRemaining()) {
            file.write(buffer);
        }
        size += length;
    }

    /** Moves what the heap holds to a new, already unlinked file. */
    private void spill() throws IOException {
        Path path = Files.createTempFile(directory, "pintle-spool-", ".tmp"); // owner-only (0600)
        try {
            file = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE);
        } finally {
            Files.deleteIfExists(path);
        }
        ByteBuffer held = ByteBuffer.wrap(memory, 0, (int) size);
        while (held.hasRemaining()) {
            file.write(held);
        }
        memory = null;
    }

    /** @return the bytes written */
    public long size() {
        return size;
    }

    /** @return whether the bytes went to a file */
    boolean spilled() {
        return file != null;
    }

    /** Ends the writing (further writes fail); reading may start. Not closed: {@link #release} frees it. */
    @Override
    public void close() {
        written = true;
    }

    /**
     * Copies everything written to {@code output}; safe from several threads at once.
     *
     * @throws IOException if the output fails or the file cannot be read
     */
    public void writeTo(OutputStream output) throws IOException {
        if (file == null) {
            output.write(memory, 0, (int) size);
            return;
        }
        try (InputStream input = open()) {
            input.transferTo(output);
        }
    }

    /** @return a stream of everything written, from the start; each its own position, so several may be open */
    public InputStream open() {
        close();
        if (file == null) {
            return new java.io.ByteArrayInputStream(memory, 0, (int) size);
        }
        return new InputStream() {
            private final ByteBuffer buffer = ByteBuffer.allocate(COPY_BYTES).flip();
            private long position;

            @Override
            public int read() throws IOException {
                return fill() ? buffer.get() & 0xff : -1;
            }

            @Override
            public int read(byte[] bytes, int offset, int length) throws IOException {
                Objects.checkFromIndexSize(offset, length, bytes.length);
                if (length == 0) {
                    return 0;
                }
                if (!fill()) {
                    return -1;
                }
                int n = Math.min(length, buffer.remaining());
                buffer.get(bytes, offset, n);
                return n;
            }

            private boolean fill() throws IOException {
                if (buffer.hasRemaining()) {
                    return true;
                }
                if (position >= size) {
                    return false;
                }
                buffer.clear();
                buffer.limit((int) Math.min(buffer.capacity(), size - position));
                while (buffer.hasRemaining()) {
                    int n = file.read(buffer, position + buffer.position()); // positional: no shared position
                    if (n < 0) {
                        throw new IOException("spool file shorter than written");
                    }
                }
                buffer.flip();
                position += buffer.remaining();
                return true;
            }
        };
    }

    /**
     * Takes another reference, unless the spool is freed already.
     *
     * @return whether it was taken (false: freed, not to be read)
     */
    public boolean retain() {
        for (;;) {
            int now = references.get();
            if (now == 0) {
                return false;
            }
            if (references.compareAndSet(now, now + 1)) {
                return true;
            }
        }
    }

    /** Gives a reference back; the last one frees the file. */
    public void release() {
        int left = references.decrementAndGet();
        if (left < 0) {
            throw new IllegalStateException("spool released more often than retained");
        }
        if (left == 0 && file != null) {
            try {
                file.close();
            } catch (IOException e) {
                // Nothing to lose: the file is unlinked, its space freed with the descriptor.
            }
        }
    }

    /** @return the references held (for tests) */
    int references() {
        return references.get();
    }
}
