package io.pintle.server.uploads;

import io.pintle.server.overload.PerAddress;
import io.pintle.server.problem.PintleException;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.time.Duration;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * Slows password guessing on the upload routes: a client address (an IPv6 one by its /64, as {@link PerAddress}
 * counts) whose credentials failed {@code max_failures_per_address} times within {@code failure_window} of its
 * first failure is refused at once (429, {@code too-many-failures}, with the seconds left as Retry-After) until that
 * window ends, whatever it sends: checking its passwords then would still tell a right guess from a wrong one.
 *
 * <p>Only failures count. Rudder's nodes behind one NAT address upload with the right password every run and are
 * never counted; refused attempts do not count either, so the window always ends. What it costs them is the
 * failures of others behind the same address: see docs/SECURITY.md for the arithmetic.
 *
 * <p>Bounded: at most {@link #MAX_ADDRESSES} addresses with failures are remembered, the oldest window forgotten
 * first, so a spray of addresses costs a fixed amount of memory (and each of its addresses gets its own
 * failures, which the password's strength must cover anyway). Outlives reloads; the limits are read from the
 * configuration in force at each check. One per server, made by the composition root.
 */
public final class LoginThrottle {
    /** Addresses remembered at most: about 100 bytes each, so about 1 MB at worst. */
    public static final int MAX_ADDRESSES = 10_000;

    private final int capacity;
    private final LongSupplier nanoTime;
    /** Insertion order is window order: a window that restarts is put again, at the end. Guarded by itself. */
    private final LinkedHashMap<InetAddress, Window> windows;

    /** For the server: {@link #MAX_ADDRESSES}, the system's monotonic clock. */
    public LoginThrottle() {
        this(MAX_ADDRESSES, System::nanoTime);
    }

    /**
     * @param capacity addresses remembered at most
     * @param nanoTime a monotonic clock in nanoseconds
     */
    public LoginThrottle(int capacity, LongSupplier nanoTime) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity " + capacity);
        }
        this.capacity = capacity;
        this.nanoTime = nanoTime;
        this.windows = new LinkedHashMap<>(16, 0.75f, false) {
            private static final long serialVersionUID = 1L;

            @Override
            protected boolean removeEldestEntry(Map.Entry<InetAddress, Window> eldest) {
                return size() > LoginThrottle.this.capacity;
            }
        };
    }

    /**
     * The limits in force: {@code [uploads] max_failures_per_address} and {@code failure_window}.
     *
     * @param maxFailures failures allowed per address and window; 0 for no throttle
     * @param window how long from an address's first failure its failures count
     */
    public record Limits(int maxFailures, Duration window) {
        /** No throttle. */
        public static final Limits OFF = new Limits(0, Duration.ofSeconds(1));

        public Limits {
            if (maxFailures < 0 || window.isNegative() || window.isZero()) {
                throw new IllegalArgumentException("max failures " + maxFailures + ", window " + window);
            }
        }
    }

    /**
     * @param address the client's address
     * @param users the route's password file
     * @param limits the limits in force
     * @param usersFile the file's name, for the refusal's detail
     * @return the route's password check for that client: refused at once (throws) while the address is throttled,
     *     its failures counted otherwise
     */
    public PasswordCheck guard(InetAddress address, PasswordCheck users, Limits limits, String usersFile) {
        if (limits.maxFailures() == 0) {
            return users;
        }
        return (user, password) -> {
            long wait = waitNanos(address, limits);
            if (wait > 0) {
                long seconds = Math.max(1, (wait + 999_999_999L) / 1_000_000_000L);
                throw new PintleException.TooManyRequests("too-many-failures", limits.maxFailures() + " failed "
                        + "logins from " + shown(address) + " within " + limits.window().toSeconds() + " s ([uploads] "
                        + "max_failures_per_address, failure_window): every upload from it is refused for " + seconds
                        + " s more. Check the user and password of the nodes behind this address against " + usersFile
                        + " (the agent's DAVUSER/DAVPASSWORD)", seconds);
            }
            boolean accepted = users.verify(user, password);
            if (!accepted) {
                failed(address, limits);
            }
            return accepted;
        };
    }

    /**
     * @param limits the limits in force
     * @return addresses refused now
     */
    public int throttled(Limits limits) {
        if (limits.maxFailures() == 0) {
            return 0;
        }
        long now = nanoTime.getAsLong();
        int count = 0;
        synchronized (windows) {
            for (Window window : windows.values()) {
                if (window.failures >= limits.maxFailures() && now - window.start < limits.window().toNanos()) {
                    count++;
                }
            }
        }
        return count;
    }

    /** @return addresses with failures remembered now (at most the capacity) */
    public int addresses() {
        synchronized (windows) {
            return windows.size();
        }
    }

    private long waitNanos(InetAddress address, Limits limits) {
        InetAddress key = PerAddress.key(address);
        long now = nanoTime.getAsLong();
        synchronized (windows) {
            Window window = windows.get(key);
            if (window == null) {
                return 0;
            }
            long left = window.start + limits.window().toNanos() - now;
            if (left <= 0) {
                windows.remove(key);
                return 0;
            }
            return window.failures >= limits.maxFailures() ? left : 0;
        }
    }

    private void failed(InetAddress address, Limits limits) {
        InetAddress key = PerAddress.key(address);
        long now = nanoTime.getAsLong();
        synchronized (windows) {
            Window window = windows.get(key);
            if (window != null && now - window.start < limits.window().toNanos()) {
                window.failures++;
                return;
            }
            windows.remove(key);
            expire(now, limits);
            windows.put(key, new Window(now));
        }
    }

    /** Drops the windows that ended, oldest first, which stops at the first one still open. */
    private void expire(long now, Limits limits) {
        Iterator<Window> oldest = windows.values().iterator();
        while (oldest.hasNext() && now - oldest.next().start >= limits.window().toNanos()) {
            oldest.remove();
        }
    }

    private static String shown(InetAddress address) {
        return address instanceof Inet6Address ? PerAddress.key(address).getHostAddress() + "/64"
                : address.getHostAddress();
    }

    /** An address's failures since its window started. Guarded by the map. */
    private static final class Window {
        final long start;
        int failures = 1;

        Window(long start) {
            this.start = start;
        }
    }
}
