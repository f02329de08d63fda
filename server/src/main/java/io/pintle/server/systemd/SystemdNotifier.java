package io.pintle.server.systemd;

import com.sun.jna.Library;
import com.sun.jna.Native;
import com.sun.jna.NativeLong;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sends {@code sd_notify(3)} messages ({@code READY=1}, {@code RELOADING=1}, {@code STOPPING=1}, {@code STATUS=})
 * to the service manager's datagram socket. JDK 17 has stream AF_UNIX sockets only, so the datagram goes through
 * libc by JNA: {@code socket}, {@code sendto}, {@code close}, the same three calls libsystemd makes, without
 * needing libsystemd itself, and with the socket path a constructor argument so a test can receive the messages.
 * The kernel attaches the JVM's own credentials, so the default {@code NotifyAccess=main} accepts them.
 *
 * <p>Notification is best effort: when the native call is unavailable (no JNA dispatch library for this
 * platform) that is logged once at debug and every later call is a no-op; a failed send is logged at debug too.
 */
public final class SystemdNotifier {
    private static final Logger LOG = LoggerFactory.getLogger(SystemdNotifier.class);

    private static final int AF_UNIX = 1;
    private static final int SOCK_DGRAM = 2;
    private static final int SOCK_CLOEXEC = 0x80000;
    private static final int MSG_NOSIGNAL = 0x4000;
    private static final int CLOCK_MONOTONIC = 1;
    /** {@code sizeof(struct sockaddr_un)}: a 2-byte family, then 108 bytes of path. */
    private static final int SUN_PATH_MAX = 108;

    /** The libc calls used, in their LP64 Linux signatures ({@code size_t}/{@code ssize_t} are C longs). */
    interface LibC extends Library {
        int socket(int domain, int type, int protocol);

        NativeLong sendto(int fd, byte[] buffer, NativeLong length, int flags, byte[] address, int addressLength);

        int close(int fd);

        int clock_gettime(int clock, long[] timespec);
    }

    private final String socket;
    private final AtomicBoolean unavailable = new AtomicBoolean();
    private volatile LibC libc;

    /**
     * @param socket the notification socket: a path, or {@code @name} for the abstract namespace; null disables
     */
    public SystemdNotifier(String socket) {
        this.socket = socket == null || socket.isEmpty() ? null : socket;
    }

    /** @return a notifier for {@code $NOTIFY_SOCKET}, disabled when the variable is not set (not under systemd) */
    public static SystemdNotifier fromEnvironment() {
        return new SystemdNotifier(System.getenv("NOTIFY_SOCKET"));
    }

    /** @return a notifier that sends nothing */
    public static SystemdNotifier disabled() {
        return new SystemdNotifier(null);
    }

    /** @return whether a notification socket is configured */
    public boolean enabled() {
        return socket != null;
    }

    /**
     * Startup finished (or a reload did): the listeners accept connections.
     *
     * @param status one line for {@code systemctl status}
     */
    public void ready(String status) {
        send("READY=1\nSTATUS=" + oneLine(status));
    }

    /**
     * A reload started. Carries {@code MONOTONIC_USEC}, which systemd 253+ requires to accept a reload
     * notification under {@code Type=notify-reload} and ignores otherwise.
     *
     * @param status one line for {@code systemctl status}
     */
    public void reloading(String status) {
        LibC c = libc();
        if (c == null) {
            return;
        }
        long[] timespec = new long[2];
        String monotonic = c.clock_gettime(CLOCK_MONOTONIC, timespec) == 0
                ? "\nMONOTONIC_USEC=" + (timespec[0] * 1_000_000L + timespec[1] / 1_000L)
                : "";
        send("RELOADING=1" + monotonic + "\nSTATUS=" + oneLine(status));
    }

    /** The server is stopping: in-flight requests drain, then the process exits. */
    public void stopping() {
        send("STOPPING=1\nSTATUS=stopping: draining in-flight requests");
    }

    /**
     * Sends one raw notification.
     *
     * @param state newline-separated {@code KEY=value} assignments
     * @return whether the service manager's socket took it
     */
    public boolean send(String state) {
        LibC c = libc();
        if (c == null) {
            return false;
        }
        byte[] address = address(socket);
        if (address == null) {
            LOG.debug("NOTIFY_SOCKET '{}' is not a usable AF_UNIX address; not notifying", socket);
            return false;
        }
        int fd = c.socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            LOG.debug("sd_notify: socket() failed, errno {}", Native.getLastError());
            return false;
        }
        try {
            byte[] message = state.getBytes(StandardCharsets.UTF_8);
            long sent = c.sendto(fd, message, new NativeLong(message.length), MSG_NOSIGNAL, address, address.length)
                    .longValue();
            if (sent < 0) {
                LOG.debug("sd_notify to {} failed, errno {}", socket, Native.getLastError());
                return false;
            }
            return true;
        } finally {
            c.close(fd);
        }
    }

    private LibC libc() {
        if (socket == null || unavailable.get()) {
            return null;
        }
        LibC c = libc;
        if (c == null) {
            try {
                c = Native.load("c", LibC.class);
                libc = c;
            } catch (LinkageError | RuntimeException e) {
                if (unavailable.compareAndSet(false, true)) {
                    LOG.debug("sd_notify unavailable (cannot reach libc through JNA: {}); carrying on without it",
                            e.toString());
                }
                return null;
            }
        }
        return c;
    }

    /** {@code struct sockaddr_un}, trimmed to the path as sd_notify does; {@code @} means the abstract namespace. */
    static byte[] address(String socket) {
        byte[] path = socket.getBytes(StandardCharsets.UTF_8);
        boolean abstractName = path.length > 0 && path[0] == '@';
        if (abstractName) {
            path[0] = 0;
        } else if (path.length == 0 || path[0] != '/') {
            return null;
        }
        // A file path is NUL-terminated; an abstract name is exactly its bytes.
        int pathLength = abstractName ? path.length : path.length + 1;
        if (pathLength > SUN_PATH_MAX) {
            return null;
        }
        ByteBuffer address = ByteBuffer.allocate(2 + pathLength).order(ByteOrder.nativeOrder());
        address.putShort((short) AF_UNIX).put(path);
        return address.array();
    }

    private static String oneLine(String status) {
        return status.replace('\n', ' ');
    }

    @Override
    public String toString() {
        return socket == null ? "sd_notify disabled" : "sd_notify to " + socket;
    }
}
