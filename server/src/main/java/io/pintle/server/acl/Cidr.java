package io.pintle.server.acl;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * An IPv4 or IPv6 network. Parses the forms Apache's {@code Require ip} accepts: a full address, {@code a/len},
 * {@code a/netmask} and partial IPv4 addresses ({@code 10.1} means {@code 10.1.0.0/16}). Host names are not
 * accepted: they would need DNS at every request.
 *
 * @param network the network address bytes (4 or 16)
 * @param prefix the prefix length in bits
 */
public record Cidr(byte[] network, int prefix) {
    private static final Pattern PARTIAL_IPV4 = Pattern.compile("\\d{1,3}(\\.\\d{1,3}){0,3}\\.?");
    private static final Pattern IPV4 = Pattern.compile("(\\d{1,3})\\.(\\d{1,3})\\.(\\d{1,3})\\.(\\d{1,3})");
    private static final Pattern IPV6 = Pattern.compile("[0-9a-fA-F:.]*:[0-9a-fA-F:.]*");

    public Cidr {
        network = network.clone();
        if (prefix < 0 || prefix > network.length * 8) {
            throw new IllegalArgumentException("prefix /" + prefix + " out of range");
        }
        network = mask(network, prefix);
    }

    /**
     * @param text an address, CIDR, address/netmask or partial IPv4 address
     * @return the network
     * @throws IllegalArgumentException when the text is none of these
     */
    public static Cidr parse(String text) {
        String address = text;
        String suffix = null;
        int slash = text.indexOf('/');
        if (slash >= 0) {
            address = text.substring(0, slash);
            suffix = text.substring(slash + 1);
        }
        if (suffix == null && !address.contains(":") && PARTIAL_IPV4.matcher(address).matches()) {
            String[] parts = address.split("\\.");
            if (parts.length < 4) {
                byte[] bytes = new byte[4];
                for (int i = 0; i < parts.length; i++) {
                    bytes[i] = octet(parts[i], text);
                }
                return new Cidr(bytes, parts.length * 8);
            }
        }
        byte[] bytes = literal(address, text);
        if (suffix == null) {
            return new Cidr(bytes, bytes.length * 8);
        }
        if (suffix.matches("\\d{1,3}")) {
            int prefix = Integer.parseInt(suffix);
            if (prefix > bytes.length * 8) {
                throw new IllegalArgumentException("'" + text + "': prefix /" + prefix + " out of range");
            }
            return new Cidr(bytes, prefix);
        }
        byte[] mask = literal(suffix, text);
        if (mask.length != bytes.length) {
            throw new IllegalArgumentException("'" + text + "': netmask and address families differ");
        }
        return new Cidr(bytes, prefixOf(mask, text));
    }

    /**
     * @param address an address; IPv4-mapped IPv6 addresses match IPv4 networks
     * @return whether it is in this network
     */
    public boolean contains(InetAddress address) {
        byte[] bytes = address.getAddress();
        if (bytes.length == 16 && network.length == 4 && isIpv4Mapped(bytes)) {
            bytes = Arrays.copyOfRange(bytes, 12, 16);
        }
        if (bytes.length != network.length) {
            return false;
        }
        return Arrays.equals(mask(bytes, prefix), network);
    }

    private static boolean isIpv4Mapped(byte[] bytes) {
        for (int i = 0; i < 10; i++) {
            if (bytes[i] != 0) {
                return false;
            }
        }
        return bytes[10] == (byte) 0xff && bytes[11] == (byte) 0xff;
    }

    private static byte[] mask(byte[] bytes, int prefix) {
        byte[] result = bytes.clone();
        for (int i = 0; i < result.length; i++) {
            int bits = Math.max(0, Math.min(8, prefix - i * 8));
            result[i] &= (byte) (0xff << (8 - bits));
        }
        return result;
    }

    private static byte octet(String part, String text) {
        int value = Integer.parseInt(part);
        if (value > 255) {
            throw new IllegalArgumentException("'" + text + "': octet " + value + " out of range");
        }
        return (byte) value;
    }

    private static byte[] literal(String address, String text) {
        // Strict literals only: InetAddress.getByName would accept BSD shorthand ("10.1" as 10.0.0.1) and look
        // names up in DNS.
        Matcher ipv4 = IPV4.matcher(address);
        if (ipv4.matches()) {
            byte[] bytes = new byte[4];
            for (int i = 0; i < 4; i++) {
                bytes[i] = octet(ipv4.group(i + 1), text);
            }
            return bytes;
        }
        if (IPV6.matcher(address).matches()) {
            try {
                // With a ':' the JDK parses an IPv6 literal and never resolves a name.
                return InetAddress.getByName(address).getAddress();
            } catch (UnknownHostException e) {
                throw new IllegalArgumentException("'" + text + "' is not an IP address or network", e);
            }
        }
        throw new IllegalArgumentException("'" + text + "' is not an IP address or network");
    }

    private static int prefixOf(byte[] mask, String text) {
        int prefix = 0;
        boolean ended = false;
        for (byte b : mask) {
            for (int bit = 7; bit >= 0; bit--) {
                boolean set = (b >> bit & 1) == 1;
                if (set && ended) {
                    throw new IllegalArgumentException("'" + text + "': netmask is not contiguous");
                }
                if (set) {
                    prefix++;
                } else {
                    ended = true;
                }
            }
        }
        return prefix;
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof Cidr that && prefix == that.prefix && Arrays.equals(network, that.network);
    }

    @Override
    public int hashCode() {
        return 31 * Arrays.hashCode(network) + prefix;
    }

    @Override
    public String toString() {
        try {
            return InetAddress.getByAddress(network).getHostAddress() + "/" + prefix;
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }
}
