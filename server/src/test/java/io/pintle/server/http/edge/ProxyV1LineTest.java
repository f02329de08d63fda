package io.pintle.server.http.edge;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ProxyV1LineTest {
    private static ProxyV1Line parse(String line) {
        return ProxyV1Line.parse(line.getBytes(StandardCharsets.ISO_8859_1));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '"', value = {
        "PROXY TCP4 192.0.2.10 10.0.0.1 40000 443 | 192.0.2.10 | 40000 | 10.0.0.1 | 443",
        "PROXY TCP4 0.0.0.0 255.255.255.255 0 65535 | 0.0.0.0 | 0 | 255.255.255.255 | 65535",
        "PROXY TCP6 2001:db8::10 ::1 40000 443 | 2001:db8:0:0:0:0:0:10 | 40000 | 0:0:0:0:0:0:0:1 | 443",
        "PROXY TCP6 ::ffff:192.0.2.10 ::1 1 443 | 192.0.2.10 | 1 | 0:0:0:0:0:0:0:1 | 443",
    })
    void addressesAndPortsAreRead(String line, String source, int sourcePort, String destination,
            int destinationPort) {
        ProxyV1Line parsed = parse(line.strip() + "\r\n");

        assertThat(parsed.unknown()).isFalse();
        assertThat(parsed.source().getAddress().getHostAddress()).isEqualTo(source);
        assertThat(parsed.source().getPort()).isEqualTo(sourcePort);
        assertThat(parsed.destination().getAddress().getHostAddress()).isEqualTo(destination);
        assertThat(parsed.destination().getPort()).isEqualTo(destinationPort);
        // Built from the literal's bytes: no name was resolved, and none is held.
        assertThat(parsed.source().isUnresolved()).isFalse();
        assertThat(parsed.source().getHostString()).isEqualTo(source);
    }

    @Test
    void unknownKeepsTheProxysAddressesAndIgnoresTheRest() {
        assertThat(parse("PROXY UNKNOWN\r\n").unknown()).isTrue();
        assertThat(parse("PROXY UNKNOWN ffff:f...f:ffff ffff:f...f:ffff 65535 65535\r\n").unknown()).isTrue();
    }

    /** Hostile testing, issue 34 N6: {@code localhost} was resolved by Jetty's reader and accepted. */
    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '"', value = {
        "PROXY TCP4 localhost 127.0.0.1 1234 443 | 'localhost' is not an IPv4 address",
        "PROXY TCP6 localhost ::1 1234 443 | 'localhost' is not an IPv6 address",
        "PROXY TCP4 192.0.2.10 localhost 1234 443 | 'localhost' is not an IPv4 address",
        "PROXY TCP4 pintle.invalid 127.0.0.1 1234 443 | 'pintle.invalid' is not an IPv4 address",
        "PROXY TCP6 deadbeef ::1 1234 443 | 'deadbeef' is not an IPv6 address",
        "PROXY TCP6 .:1 ::1 1234 443 | '.:1' is not an IPv6 address",
        "PROXY TCP6 fe80::1%eth0 ::1 1234 443 | 'fe80::1%eth0' is not an IPv6 address",
        "PROXY TCP6 [::1] ::1 1234 443 | '[::1]' is not an IPv6 address",
        "PROXY TCP6 1::2::3 ::1 1234 443 | '1::2::3' is not an IPv6 address",
        "PROXY TCP4 1.2.3 127.0.0.1 1234 443 | '1.2.3' is not an IPv4 address",
        "PROXY TCP4 010.0.0.1 127.0.0.1 1234 443 | '010.0.0.1' is not an IPv4 address",
        "PROXY TCP4 0x7f.0.0.1 127.0.0.1 1234 443 | '0x7f.0.0.1' is not an IPv4 address",
        "PROXY TCP4 256.0.0.1 127.0.0.1 1234 443 | '256.0.0.1' is not an IPv4 address",
        "PROXY TCP4 ::1 127.0.0.1 1234 443 | '::1' is not an IPv4 address",
        "PROXY TCP6 192.0.2.10 ::1 1234 443 | '192.0.2.10' is not an IPv6 address",
        "PROXY TCP4 192.0.2.10 127.0.0.1 65536 443 | '65536' is not a port",
        "PROXY TCP4 192.0.2.10 127.0.0.1 01234 443 | '01234' is not a port",
        "PROXY TCP4 192.0.2.10 127.0.0.1 +1234 443 | '+1234' is not a port",
        "PROXY TCP4 192.0.2.10 127.0.0.1 1234 https | 'https' is not a port",
        "PROXY TCP4 192.0.2.10  127.0.0.1 1234 443 | with single spaces",
        "PROXY TCP4 192.0.2.10 127.0.0.1 1234 443  | with single spaces",
        "PROXY TCP4 192.0.2.10 127.0.0.1 1234 | with single spaces",
        "PROXY tcp4 192.0.2.10 127.0.0.1 1234 443 | protocol 'tcp4' is none of",
        "PROXY UDP4 192.0.2.10 127.0.0.1 1234 443 | protocol 'UDP4' is none of",
        "PROXY | does not start with",
        "PROXYTCP4 192.0.2.10 127.0.0.1 1234 443 | does not start with",
    }, ignoreLeadingAndTrailingWhitespace = false)
    void anythingButLiteralsOfTheFamilyIsRefused(String line, String why) {
        assertThatThrownBy(() -> parse(line.stripLeading().replaceAll(" $", "") + "\r\n"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(why.strip());
    }

    @Test
    void theLineIsBoundedEndedByCrlfAndPrintable() {
        assertThatThrownBy(() -> parse("PROXY TCP4 192.0.2.10 127.0.0.1 1234 443\n"))
                .hasMessageContaining("not ended by CRLF");
        assertThatThrownBy(() -> parse("PROXY TCP4 192.0.2.10 127.0.0.1 1234\t443\r\n"))
                .hasMessageContaining("not printable");
        assertThatThrownBy(() -> parse("PROXY TCP4 192.0.2.10 127.0.0.1 1234 443\r\r\n"))
                .hasMessageContaining("not printable");
        assertThatThrownBy(() -> parse("PROXY UNKNOWN " + "x".repeat(100) + "\r\n"))
                .hasMessageContaining("longer than 107 bytes");
        InetSocketAddress longest = parse("PROXY TCP6 ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff "
                + "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff 65535 65535\r\n").source();
        assertThat(longest.getPort()).isEqualTo(65535);
    }
}
