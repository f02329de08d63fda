package io.pintle.server.http.edge;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One PROXY protocol v1 line ({@code PROXY TCP4 192.0.2.10 10.0.0.1 40000 443\r\n}), parsed as the protocol
 * writes it and nothing looser: the addresses are IP literals of the line's family, never host names, so reading
 * one never asks DNS (Jetty's own v1 reader makes them with {@code new InetSocketAddress(String, int)}, which
 * resolves a name and accepted {@code localhost}); ports are decimal without leading zeros, fields are separated
 * by single spaces, and the line is at most {@link #MAX_LENGTH} bytes with its CRLF. {@code PROXY UNKNOWN} (a
 * proxy's own connection) carries no address: what follows it is ignored, as the protocol says.
 *
 * @param source the client's address and port, or null for {@code UNKNOWN}
 * @param destination the address and port the client connected to, or null for {@code UNKNOWN}
 */
record ProxyV1Line(InetSocketAddress source, InetSocketAddress destination) {
    /** The protocol's bound: "a 108-byte buffer is always enough to store all the line and a trailing zero". */
    static final int MAX_LENGTH = 107;

    private static final Pattern IPV4 = Pattern.compile(
            "(0|[1-9]\\d{0,2})\\.(0|[1-9]\\d{0,2})\\.(0|[1-9]\\d{0,2})\\.(0|[1-9]\\d{0,2})");
    /**
     * Hex digits, colons and dots, with a colon, starting with a hex digit or a colon: the JDK parses such a text
     * as an IPv6 literal or refuses it, and never looks it up ({@link InetAddress#getByName}: "if a literal IP
     * address is supplied, only the validity of the address format is checked"). No zone ({@code %eth0}).
     */
    private static final Pattern IPV6 = Pattern.compile("(?=[^:]*:)[0-9a-fA-F:][0-9a-fA-F:.]*");
    private static final Pattern PORT = Pattern.compile("0|[1-9]\\d{0,4}");

    /** @return whether the line is {@code PROXY UNKNOWN}: the connection keeps the proxy's own addresses */
    boolean unknown() {
        return source == null;
    }

    /**
     * @param line the line's bytes, up to and including its LF
     * @return the line
     * @throws IllegalArgumentException saying what is wrong with it, in words for the proxy's operator
     */
    static ProxyV1Line parse(byte[] line) {
        if (line.length > MAX_LENGTH) {
            throw new IllegalArgumentException("longer than " + MAX_LENGTH + " bytes");
        }
        if (line.length < 2 || line[line.length - 2] != '\r' || line[line.length - 1] != '\n') {
            throw new IllegalArgumentException("not ended by CRLF");
        }
        for (int i = 0; i < line.length - 2; i++) {
            if (line[i] < 0x20 || line[i] > 0x7e) {
                throw new IllegalArgumentException("byte " + (line[i] & 0xff) + " at " + i + " is not printable "
                        + "ASCII");
            }
        }
        String text = new String(line, 0, line.length - 2, StandardCharsets.US_ASCII);
        String[] fields = text.split(" ", -1);
        if (!fields[0].equals("PROXY") || fields.length < 2) {
            throw new IllegalArgumentException("'" + text + "' does not start with 'PROXY ' and a protocol");
        }
        if (fields[1].equals("UNKNOWN")) {
            return new ProxyV1Line(null, null);
        }
        boolean v4 = fields[1].equals("TCP4");
        if (!v4 && !fields[1].equals("TCP6")) {
            throw new IllegalArgumentException("protocol '" + fields[1] + "' is none of TCP4, TCP6 and UNKNOWN");
        }
        if (fields.length != 6) {
            throw new IllegalArgumentException("'" + text + "' is not 'PROXY " + fields[1]
                    + " <source> <destination> <source port> <destination port>' with single spaces");
        }
        return new ProxyV1Line(new InetSocketAddress(address(fields[2], v4), port(fields[4])),
                new InetSocketAddress(address(fields[3], v4), port(fields[5])));
    }

    private static InetAddress address(String text, boolean v4) {
        String family = v4 ? "an IPv4" : "an IPv6";
        try {
            if (v4) {
                Matcher octets = IPV4.matcher(text);
                if (octets.matches()) {
                    byte[] bytes = new byte[4];
                    for (int i = 0; i < 4; i++) {
                        int octet = Integer.parseInt(octets.group(i + 1));
                        if (octet > 255) {
                            throw new UnknownHostException();
                        }
                        bytes[i] = (byte) octet;
                    }
                    return InetAddress.getByAddress(bytes);
                }
            } else if (IPV6.matcher(text).matches()) {
                return InetAddress.getByName(text);
            }
        } catch (UnknownHostException | IllegalArgumentException e) {
            // Refused below, as any other text that is not a literal of the family.
        }
        throw new IllegalArgumentException("'" + text + "' is not " + family + " address: the header must carry "
                + "the client's address, never a name");
    }

    private static int port(String text) {
        if (PORT.matcher(text).matches()) {
            int port = Integer.parseInt(text);
            if (port <= 65_535) {
                return port;
            }
        }
        throw new IllegalArgumentException("'" + text + "' is not a port (0 to 65535, decimal, no leading zero)");
    }
}
