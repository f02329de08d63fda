package io.pintle.bench;

import java.net.InetAddress;
import java.net.UnknownHostException;

/**
 * Client addresses for a load that stands for many hosts: the {@code index}-th is 127.1.x.y, the scheme of
 * {@code bench/channels} and {@code bench/fleet}'s agents. Linux answers the whole of 127.0.0.0/8 on the loopback
 * interface, so a socket can bind any of them without setup. A fleet's nodes each connect from their own host; the
 * server's per-address shares ({@code [limits.<class>] per_address}) are meant for that, and a load from one
 * address meets them long before it measures anything else.
 */
final class LoopbackHosts {
    /** Hosts per third octet: the fourth runs from 1 to 250, clear of .0 and .255. */
    private static final int PER_BLOCK = 250;
    /** 250 × 256 addresses in 127.1.0.0/16. */
    static final int MAX_HOSTS = PER_BLOCK * 256;

    private LoopbackHosts() {}

    /**
     * @param index from 0 to {@link #MAX_HOSTS} - 1
     * @return 127.1.{index / 250}.{1 + index % 250}
     */
    static InetAddress host(int index) {
        if (index < 0 || index >= MAX_HOSTS) {
            throw new IllegalArgumentException("host index " + index + " is outside 0.." + (MAX_HOSTS - 1));
        }
        try {
            return InetAddress.getByAddress(new byte[] {127, 1, (byte) (index / PER_BLOCK),
                (byte) (1 + index % PER_BLOCK)});
        } catch (UnknownHostException e) {
            throw new AssertionError("four bytes are an IPv4 address", e);
        }
    }
}
