package io.pintle.server.overload;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;

/**
 * How much of something each client address holds, bounded per address: a handful of hosts never takes a whole
 * class of workers or every change-wait slot. An IPv6 client counts by its /64 (one host usually has a whole
 * /64 to pick addresses from); an IPv4 client by its address. The counting is {@link PerKey}'s.
 */
public final class PerAddress {
    private final PerKey<InetAddress> held;

    /** @param limit what one address may hold at once, at least 1 */
    public PerAddress(int limit) {
        this.held = new PerKey<>(limit);
    }

    /**
     * @param address a client's address
     * @return true when it now holds one more (and must {@link #release} it), false when it holds the limit
     */
    public boolean tryAcquire(InetAddress address) {
        return held.tryAcquire(key(address));
    }

    /** @param address a client's address that holds one (from {@link #tryAcquire}) */
    public void release(InetAddress address) {
        held.release(key(address));
    }

    /**
     * @param address a client's address
     * @return what it holds now
     */
    public int held(InetAddress address) {
        return held.held(key(address));
    }

    /** @return addresses holding something now */
    public int addresses() {
        return held.keys();
    }

    /** @return what one address may hold */
    public int limit() {
        return held.limit();
    }

    /**
     * @param address a client address
     * @return what it is counted as: itself, or for IPv6 its /64
     */
    public static InetAddress key(InetAddress address) {
        if (!(address instanceof Inet6Address)) {
            return address;
        }
        byte[] prefix = Arrays.copyOf(address.getAddress(), 16);
        Arrays.fill(prefix, 8, 16, (byte) 0);
        try {
            return InetAddress.getByAddress(prefix);
        } catch (UnknownHostException impossible) {
            throw new IllegalStateException(impossible);
        }
    }
}
