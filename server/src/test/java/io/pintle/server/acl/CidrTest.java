package io.pintle.server.acl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class CidrTest {

    private static InetAddress ip(String literal) throws UnknownHostException {
        return InetAddress.getByName(literal);
    }

    /** An IPv4-mapped IPv6 address kept as IPv6 (InetAddress.getByName would turn it into IPv4). */
    private static Inet6Address mapped(int a, int b, int c, int d) throws UnknownHostException {
        byte[] bytes = new byte[16];
        bytes[10] = (byte) 0xff;
        bytes[11] = (byte) 0xff;
        bytes[12] = (byte) a;
        bytes[13] = (byte) b;
        bytes[14] = (byte) c;
        bytes[15] = (byte) d;
        return Inet6Address.getByAddress(null, bytes, -1);
    }

    @ParameterizedTest(name = "[{index}] {0} = {1}")
    @CsvSource(delimiter = '|', textBlock = """
            10.1.2.3                    | 10.1.2.3/32
            10.1.2.0/24                 | 10.1.2.0/24
            10.1.2.77/24                | 10.1.2.0/24
            0.0.0.0/0                   | 0.0.0.0/0
            10.1.2.3/255.255.0.0        | 10.1.0.0/16
            192.168.0.0/255.255.255.128 | 192.168.0.0/25
            10.1                        | 10.1.0.0/16
            10                          | 10.0.0.0/8
            192.168.7                   | 192.168.7.0/24
            ::1                         | 0:0:0:0:0:0:0:1/128
            2001:db8::/32               | 2001:db8:0:0:0:0:0:0/32
            2001:db8:ff::1/ffff:ffff::  | 2001:db8:0:0:0:0:0:0/32
            """)
    void parsesApacheRequireIpForms(String text, String expected) {
        assertThat(Cidr.parse(text)).hasToString(expected);
    }

    @ParameterizedTest(name = "[{index}] {0} contains {1}: {2}")
    @CsvSource(delimiter = '|', textBlock = """
            10.1.2.3             | 10.1.2.3        | true
            10.1.2.3             | 10.1.2.4        | false
            10.1.2.0/24          | 10.1.2.255      | true
            10.1.2.0/24          | 10.1.3.0        | false
            0.0.0.0/0            | 203.0.113.9     | true
            0.0.0.0/0            | ::1             | false
            10.1.2.3/255.255.0.0 | 10.1.200.1      | true
            10.1.2.3/255.255.0.0 | 10.2.0.1        | false
            10.1                 | 10.1.255.255    | true
            10.1                 | 10.2.0.0        | false
            ::1                  | ::1             | true
            ::1                  | ::2             | false
            ::1                  | 127.0.0.1       | false
            2001:db8::/32        | 2001:db8:ffff::1 | true
            2001:db8::/32        | 2001:db9::1     | false
            2001:db8::/32        | 32.1.13.184     | false
            """)
    void containsAddressesOfItsFamilyInItsPrefix(String network, String address, boolean expected)
            throws UnknownHostException {
        assertThat(Cidr.parse(network).contains(ip(address))).isEqualTo(expected);
    }

    @Test
    void ipv4NetworkMatchesIpv4MappedIpv6Address() throws UnknownHostException {
        Inet6Address address = mapped(10, 1, 2, 3);

        assertThat(Cidr.parse("10.1.0.0/16").contains(address)).isTrue();
        assertThat(Cidr.parse("10.1.2.3").contains(address)).isTrue();
        assertThat(Cidr.parse("10.2.0.0/16").contains(address)).isFalse();
    }

    @Test
    void ipv4NetworkDoesNotMatchOtherIpv6AddressesWithTheSameLowBytes() throws UnknownHostException {
        // ::10.1.2.3 (IPv4-compatible, not mapped) and 64:ff9b::10.1.2.3 are not the IPv4 address 10.1.2.3.
        assertThat(Cidr.parse("10.1.0.0/16").contains(ip("64:ff9b::a01:203"))).isFalse();
        assertThat(Cidr.parse("0.0.0.0/0").contains(ip("2001:db8::1"))).isFalse();
    }

    @Test
    void networksEqualAfterMasking() {
        assertThat(Cidr.parse("10.1.2.77/24")).isEqualTo(Cidr.parse("10.1.2.0/24"))
                .hasSameHashCodeAs(Cidr.parse("10.1.2.0/24"));
        assertThat(Cidr.parse("10.1")).isEqualTo(Cidr.parse("10.1.0.0/255.255.0.0"));
        assertThat(Cidr.parse("10.1.2.0/24")).isNotEqualTo(Cidr.parse("10.1.2.0/25"));
    }

    @Test
    void networkBytesCannotBeChangedFromOutside() {
        byte[] bytes = {10, 1, 2, 3};
        Cidr cidr = new Cidr(bytes, 32);
        bytes[0] = 99;

        assertThat(cidr).hasToString("10.1.2.3/32");
    }

    @ParameterizedTest(name = "[{index}] ''{0}''")
    @CsvSource(delimiter = '|', quoteCharacter = '"', textBlock = """
            10.0.0.0/33           | out of range
            ::1/129               | out of range
            host.example.com      | not an IP address
            cafe.be               | not an IP address
            10.1.2.3.4            | not an IP address
            10.0.0.0/255.0.255.0  | not contiguous
            300.1.1.1             | octet 300 out of range
            256.1                 | out of range
            ""                    | not an IP address
            10.0.0.0/             | not an IP address
            10.0.0.0/24/8         | not an IP address
            10.0.0.0/ffff::       | families differ
            """)
    void refusesWhatIsNotALiteralNetwork(String text, String reason) {
        assertThatThrownBy(() -> Cidr.parse(text))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(reason);
    }

    @ParameterizedTest
    @CsvSource({"10.1/16", "10.1.2/24", "10.1/255.255.0.0", "167772161"})
    void shorthandAddressWithAMaskIsRefusedAsApacheDoes(String text) {
        assertThatThrownBy(() -> Cidr.parse(text)).isInstanceOf(IllegalArgumentException.class);
    }
}
