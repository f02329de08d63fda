package io.pintle.server.testing;

import com.sun.jna.Library;
import com.sun.jna.Native;
import com.sun.jna.NativeLong;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/**
 * The service manager's side of {@code sd_notify}: an AF_UNIX datagram socket bound to a path, read with libc
 * through JNA (JDK 17 has no AF_UNIX datagram sockets), so tests can check what the server announces.
 */
public final class NotifySocket implements AutoCloseable {
    private static final int AF_UNIX = 1;
    private static final int SOCK_DGRAM = 2;
    private static final int SOL_SOCKET = 1;
    private static final int SO_RCVTIMEO = 20;

    /** libc, LP64 Linux signatures. */
    interface LibC extends Library {
        int socket(int domain, int type, int protocol);

        int bind(int fd, byte[] address, int length);

        int setsockopt(int fd, int level, int name, long[] value, int length);

        NativeLong recv(int fd, byte[] buffer, NativeLong length, int flags);

        int close(int fd);
    }

    private final LibC libc;
    private final Path path;
    private final int fd;

    private NotifySocket(LibC libc, Path path, int fd) {
        this.libc = libc;
        this.path = path;
        this.fd = fd;
    }

    /**
     * @param path where to bind (must not exist; at most 107 bytes)
     * @return a bound socket
     * @throws IOException when a call fails
     */
    public static NotifySocket bind(Path path) throws IOException {
        LibC libc = Native.load("c", LibC.class);
        int fd = libc.socket(AF_UNIX, SOCK_DGRAM, 0);
        if (fd < 0) {
            throw new IOException("socket: errno " + Native.getLastError());
        }
        byte[] name = path.toString().getBytes(StandardCharsets.UTF_8);
        ByteBuffer address = ByteBuffer.allocate(2 + name.length + 1).order(ByteOrder.nativeOrder());
        address.putShort((short) AF_UNIX).put(name).put((byte) 0);
        if (libc.bind(fd, address.array(), address.capacity()) != 0) {
            int errno = Native.getLastError();
            libc.close(fd);
            throw new IOException("bind " + path + ": errno " + errno);
        }
        return new NotifySocket(libc, path, fd);
    }

    /** @return the socket's path, what {@code NOTIFY_SOCKET} would hold */
    public String path() {
        return path.toString();
    }

    /**
     * @param timeout how long to wait
     * @return the next datagram's text, or null on timeout
     * @throws IOException when recv fails otherwise
     */
    public String receive(Duration timeout) throws IOException {
        long[] timeval = {timeout.toSeconds(), timeout.toMillisPart() * 1000L};
        libc.setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, timeval, 16);
        byte[] buffer = new byte[4096];
        long received = libc.recv(fd, buffer, new NativeLong(buffer.length), 0).longValue();
        if (received < 0) {
            int errno = Native.getLastError();
            if (errno == 11 /* EAGAIN: timed out */) {
                return null;
            }
            throw new IOException("recv: errno " + errno);
        }
        return new String(buffer, 0, (int) received, StandardCharsets.UTF_8);
    }

    @Override
    public void close() throws IOException {
        libc.close(fd);
        Files.deleteIfExists(path);
    }
}
