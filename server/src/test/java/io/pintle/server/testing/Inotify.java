package io.pintle.server.testing;

import com.sun.jna.Library;
import com.sun.jna.Native;
import com.sun.jna.NativeLong;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Linux inotify, as relayd watches its incoming directories ({@code CLOSE_WRITE | MOVED_TO}): what a watcher of a
 * directory is told, name by name, in order. Reached through libc by JNA (the JDK's WatchService does not report
 * these two events apart). Non-blocking: {@link #poll} returns what has arrived.
 */
public final class Inotify implements AutoCloseable {
    /** A file opened for writing was closed. */
    public static final int IN_CLOSE_WRITE = 0x8;
    /** A file was moved (renamed) into the directory. */
    public static final int IN_MOVED_TO = 0x80;
    private static final int IN_NONBLOCK = 0x800;
    private static final int IN_CLOEXEC = 0x80000;
    private static final int HEADER = 16;

    private interface LibC extends Library {
        int inotify_init1(int flags);

        int inotify_add_watch(int fd, String path, int mask);

        NativeLong read(int fd, byte[] buffer, NativeLong count);

        int close(int fd);
    }

    private static final LibC LIBC = Native.load("c", LibC.class);

    /**
     * One event.
     *
     * @param mask what happened ({@link #IN_CLOSE_WRITE} or {@link #IN_MOVED_TO})
     * @param name the entry's name in the directory
     */
    public record Event(int mask, String name) {}

    private final int fd;
    private final byte[] buffer = new byte[64 * 1024];

    /**
     * Watches a directory for {@code CLOSE_WRITE | MOVED_TO}, as relayd does.
     *
     * @param directory the directory
     * @throws IOException when inotify refuses
     */
    public Inotify(Path directory) throws IOException {
        fd = LIBC.inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        if (fd < 0) {
            throw new IOException("inotify_init1 failed: errno " + Native.getLastError());
        }
        if (LIBC.inotify_add_watch(fd, directory.toString(), IN_CLOSE_WRITE | IN_MOVED_TO) < 0) {
            LIBC.close(fd);
            throw new IOException("inotify_add_watch " + directory + " failed: errno " + Native.getLastError());
        }
    }

    /** @return the events that arrived since the last call, in order; empty when none */
    public List<Event> poll() {
        List<Event> events = new ArrayList<>();
        while (true) {
            long read = LIBC.read(fd, buffer, new NativeLong(buffer.length)).longValue();
            if (read <= 0) {
                // -1 with EAGAIN: nothing more for now.
                return events;
            }
            ByteBuffer bytes = ByteBuffer.wrap(buffer, 0, (int) read).order(ByteOrder.nativeOrder());
            while (bytes.remaining() >= HEADER) {
                bytes.getInt();
                int mask = bytes.getInt();
                bytes.getInt();
                int length = bytes.getInt();
                byte[] name = new byte[length];
                bytes.get(name);
                int end = 0;
                while (end < length && name[end] != 0) {
                    end++;
                }
                events.add(new Event(mask, new String(name, 0, end, StandardCharsets.UTF_8)));
            }
        }
    }

    @Override
    public void close() {
        LIBC.close(fd);
    }
}
