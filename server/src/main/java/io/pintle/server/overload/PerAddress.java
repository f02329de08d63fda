package io.pintle.server.overload;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * How much of something each client address holds, bounded per address: a handful of hosts never takes a whole
 * class of workers or every change-wait slot. An IPv6 client counts by its /64 (one host usually has a whole
 * /64 to pick addresses from); an IPv4 client by its address.
 *
 * <p>No lock: one counter per address that holds something, made on its first hold and dropped at its last
 * release. A counter that reached 0 is dead and never counts again (a newcomer drops it and makes another), so a
 * release never loses a concurrent hold.
 */
public final class PerAddress {
    private final int limit;
    private final ConcurrentMap<InetAddress, AtomicInteger> held = new ConcurrentHashMap<>();

    /** @param limit what one address may hold at once, at least 1 */
    public PerAddress(int limit) {
        if (limit < 1) {
            throw new IllegalArgumentException("limit " + limit);
        }
        this.limit = limit;
    }

    /**
     * @param address a client's address
     * @return true when it now holds one more (and must {@link #release} it), false when it holds the limit
     */
    public boolean tryAcquire(InetAddress address) {
        InetAddress key = key(address);
        while (true) {
            AtomicInteger count = held.get(key);
            if (count == null) {
                if (held.putIfAbsent(key, new AtomicInteger(1)) == null) {
                    return true;
                }
                continue;
            }
            int holds = count.get();
            if (holds == 0) {
                // Released to nothing and being dropped: help, then make a new one.
                held.remove(key, count);
                continue;
            }
            if (holds >= limit) {
                return false;
            }
            if (count.compareAndSet(holds, holds + 1)) {
                return true;
            }
        }
    }

    /** @param address a client's address that holds one (from {@link #tryAcquire}) */
    public void release(InetAddress address) {
        InetAddress key = key(address);
        AtomicInteger count = held.get(key);
        if (count == null) {
            throw new IllegalStateException("release without a hold");
        }
        if (count.decrementAndGet() == 0) {
            held.remove(key, count);
        }
    }

    /**
     * @param address a client's address
     * @return what it holds now
     */
    public int held(InetAddress address) {
        AtomicInteger count = held.get(key(address));
        return count == null ? 0 : count.get();
    }

    /** @return addresses holding something now */
    public int addresses() {
        return held.size();
    }

    /** @return what one address may hold */
    public int limit() {
        return limit;
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
