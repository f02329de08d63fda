package io.pintle.server.acl;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;

/**
 * Fuzzes the allowed-networks parsers: {@link NetworksLoader#parse} (the Apache include) and {@link Cidr#parse}.
 * Seeds: {@code NetworksFuzzTestInputs/<method>/}.
 */
class NetworksFuzzTest {
    private static final Path FILE = Path.of("/opt/rudder/etc/rudder-networks-24.conf");

    /**
     * The include either fails with an IOException naming the file and line, or gives networks whose host bits
     * are clear. The input is the file, then optionally a NUL and extra CIDRs one per line (the config's
     * {@code allowed}).
     */
    @FuzzTest(maxDuration = "2m")
    void includeParsesToMaskedNetworksOrNamesTheLine(byte[] input) {
        String text = new String(input, StandardCharsets.UTF_8);
        int nul = text.indexOf('\0');
        String content = nul < 0 ? text : text.substring(0, nul);
        List<String> extra = nul < 0 ? List.of() : text.substring(nul + 1).lines().toList();
        AllowedNetworks networks;
        try {
            networks = NetworksLoader.parse(content, FILE, extra, "networks.allowed");
        } catch (IOException e) {
            assertThat(e.getMessage()).matches("(?s)(" + FILE + ":\\d+|networks\\.allowed): .+");
            return;
        }
        for (Cidr cidr : networks.networks()) {
            assertMasked(cidr);
        }
    }

    /**
     * A network either is refused with IllegalArgumentException or parses to a masked network that its own text
     * form parses back to, and that contains its network address.
     */
    @FuzzTest(maxDuration = "2m")
    void cidrRoundTrips(byte[] input) throws Exception {
        String text = new String(input, StandardCharsets.UTF_8);
        Cidr cidr;
        try {
            cidr = Cidr.parse(text);
        } catch (IllegalArgumentException refused) {
            return;
        }
        assertMasked(cidr);
        assertThat(Cidr.parse(cidr.toString())).as(text).isEqualTo(cidr);
        assertThat(cidr.contains(InetAddress.getByAddress(cidr.network()))).isTrue();
    }

    private static void assertMasked(Cidr cidr) {
        byte[] network = cidr.network();
        assertThat(network.length).isIn(4, 16);
        assertThat(cidr.prefix()).isBetween(0, network.length * 8);
        for (int bit = cidr.prefix(); bit < network.length * 8; bit++) {
            assertThat(network[bit / 8] >> (7 - bit % 8) & 1).as("host bit %d of %s", bit, cidr).isZero();
        }
    }
}
