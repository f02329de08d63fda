package io.pintle.server.acl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class NetworksLoaderTest {
    @TempDir
    Path dir;

    private Path write(String content) throws IOException {
        return Files.writeString(dir.resolve("rudder-networks-24.conf"), content);
    }

    private static InetAddress ip(String literal) throws IOException {
        return InetAddress.getByName(literal);
    }

    @Test
    void readsRequireIpLinesWithSeveralNetworks() throws IOException {
        Path file = write("Require ip 192.168.0.0/16 10.0.0.1\n");

        AllowedNetworks networks = NetworksLoader.load(file, List.of(), "networks.allowed");

        assertThat(networks.all()).isFalse();
        assertThat(networks.networks()).containsExactly(Cidr.parse("192.168.0.0/16"), Cidr.parse("10.0.0.1"));
        assertThat(networks.contains(ip("192.168.44.1"))).isTrue();
        assertThat(networks.contains(ip("10.0.0.1"))).isTrue();
        assertThat(networks.contains(ip("10.0.0.2"))).isFalse();
    }

    @Test
    void ignoresCommentsBlankLinesAndIndentation() throws IOException {
        Path file = write("""
                # Rudder: allowed networks

                   # indented comment
                \tRequire ip 10.0.0.0/8\t
                """);

        AllowedNetworks networks = NetworksLoader.load(file, List.of(), "networks.allowed");

        assertThat(networks.networks()).containsExactly(Cidr.parse("10.0.0.0/8"));
    }

    @Test
    void linesAccumulate() throws IOException {
        Path file = write("""
                Require ip 10.0.0.0/8
                Require ip 192.168.1.0/24
                require IP 2001:db8::/32
                """);

        AllowedNetworks networks = NetworksLoader.load(file, List.of(), "networks.allowed");

        assertThat(networks.networks()).containsExactly(
                Cidr.parse("10.0.0.0/8"), Cidr.parse("192.168.1.0/24"), Cidr.parse("2001:db8::/32"));
    }

    @Test
    void requireAllGrantedAllowsEveryAddress() throws IOException {
        Path file = write("Require all granted\n");

        AllowedNetworks networks = NetworksLoader.load(file, List.of(), "networks.allowed");

        assertThat(networks.all()).isTrue();
        assertThat(networks.contains(ip("203.0.113.7"))).isTrue();
        assertThat(networks.contains(ip("2001:db8::7"))).isTrue();
    }

    @Test
    void requireAllDeniedAllowsNothingByItself() throws IOException {
        Path file = write("Require all denied\n");

        AllowedNetworks networks = NetworksLoader.load(file, List.of(), "networks.allowed");

        assertThat(networks.all()).isFalse();
        assertThat(networks.networks()).isEmpty();
        assertThat(networks.contains(ip("127.0.0.1"))).isFalse();
    }

    @Test
    void requireLocalAllowsLoopbackOnly() throws IOException {
        Path file = write("Require local\n");

        AllowedNetworks networks = NetworksLoader.load(file, List.of(), "networks.allowed");

        assertThat(networks.contains(ip("127.0.0.1"))).isTrue();
        assertThat(networks.contains(ip("127.10.0.1"))).isTrue();
        assertThat(networks.contains(ip("::1"))).isTrue();
        assertThat(networks.contains(ip("10.0.0.1"))).isFalse();
    }

    @ParameterizedTest(name = "[{index}] ''{0}''")
    @CsvSource(delimiter = '|', textBlock = """
            Allow from 10.0.0.0/8
            Require host example.com
            Require ip
            Require all
            Require all maybe
            Require local 10.0.0.1
            Require
            """)
    void unknownDirectiveFailsNamingFileAndLine(String directive) throws IOException {
        Path file = write("# allowed networks\nRequire ip 10.0.0.0/8\n" + directive + "\n");

        assertThatThrownBy(() -> NetworksLoader.load(file, List.of(), "networks.allowed"))
                .isInstanceOf(IOException.class)
                .hasMessageContaining(file + ":3")
                .hasMessageContaining(directive);
    }

    @Test
    void badNetworkFailsNamingFileAndLine() throws IOException {
        Path file = write("Require ip 10.0.0.0/8\n\nRequire ip 10.0.0.0/8 10.0.0.0/33\n");

        assertThatThrownBy(() -> NetworksLoader.load(file, List.of(), "networks.allowed"))
                .isInstanceOf(IOException.class)
                .hasMessageContaining(file + ":3: ")
                .hasMessageContaining("/33");
    }

    @Test
    void extraNetworksAreAppendedAfterTheFile() throws IOException {
        Path file = write("Require ip 10.0.0.0/8\n");

        AllowedNetworks networks = NetworksLoader.load(file, List.of("192.0.2.0/24", "2001:db8::1"), "x");

        assertThat(networks.networks()).containsExactly(
                Cidr.parse("10.0.0.0/8"), Cidr.parse("192.0.2.0/24"), Cidr.parse("2001:db8::1"));
    }

    @Test
    void badExtraNetworkIsNamedByWhere() throws IOException {
        Path file = write("Require ip 10.0.0.0/8\n");

        assertThatThrownBy(() -> NetworksLoader.load(file, List.of("192.0.2.0/24", "nope.example"),
                        "/etc/pintle/pintle.toml: networks.allowed"))
                .isInstanceOf(IOException.class)
                .hasMessageStartingWith("/etc/pintle/pintle.toml: networks.allowed: ")
                .hasMessageContaining("nope.example");
    }

    @Test
    void missingFileIsReportedAsSuch() {
        Path missing = dir.resolve("absent.conf");

        assertThatThrownBy(() -> NetworksLoader.load(missing, List.of(), "networks.allowed"))
                .isInstanceOf(IOException.class)
                .hasMessageContaining(missing.toString())
                .hasMessageContaining("no such file");
    }

    @Test
    void withoutFileOnlyExtraNetworksApply() throws IOException {
        AllowedNetworks networks = NetworksLoader.load(null, List.of("10.0.0.0/8"), "networks.allowed");

        assertThat(networks.all()).isFalse();
        assertThat(networks.networks()).containsExactly(Cidr.parse("10.0.0.0/8"));
    }

    @Test
    void withoutFileOrExtrasNobodyIsAllowed() throws IOException {
        AllowedNetworks networks = NetworksLoader.load(null, List.of(), "networks.allowed");

        assertThat(networks).isEqualTo(AllowedNetworks.none());
        assertThat(networks.contains(ip("127.0.0.1"))).isFalse();
    }
}
