package io.pintle.server.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** {@code [nodes] crl_url}, {@code crl_fetch_file} and {@code crl_refresh_seconds}. */
class CrlFetchConfigTest {
    private static final String CA_MODE = "[general]\nnode_id = \"root\"\n[nodes]\n"
            + "authentication = [\"cert_validation\"]\n";

    @TempDir
    Path dir;

    private Path source;

    @BeforeEach
    void setUp() throws IOException {
        source = Files.createDirectories(dir.resolve("conf")).resolve("pintle.toml");
    }

    private ServerConfig.Nodes parse(String text) throws ConfigException {
        return ConfigLoader.parse(text, source).nodes();
    }

    private void assertRefused(String text, String... fragments) {
        assertThatThrownBy(() -> parse(text))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith(source + ": ")
                .hasMessageContainingAll(fragments);
    }

    @Test
    void noUrlMeansNoFetchWithTheDefaultsInPlace() throws Exception {
        ServerConfig.Nodes nodes = parse("[general]\nnode_id = \"root\"\n");
        assertThat(nodes.crlUrl()).isNull();
        assertThat(nodes.crlFetchFile()).isEqualTo(Path.of("/var/lib/pintle/fetched.crl"));
        assertThat(nodes.crlRefresh()).isEqualTo(Duration.ofHours(1));
        assertThat(parse(CA_MODE + "crl_url = \"\"\n").crlUrl()).isNull();
        // The two-argument constructor (pinning, nothing fetched) stays equal to what the defaults parse to.
        assertThat(new ServerConfig.Nodes(nodes.list(), nodes.certificates())).isEqualTo(nodes);
    }

    @ParameterizedTest
    @CsvSource({
            "http://ca.example.org/root.crl,              http://ca.example.org/root.crl",
            "https://ca.example.org:8443/crl?issuer=root, https://ca.example.org:8443/crl?issuer=root",
            "HTTP://127.0.0.1/ca.crl,                     HTTP://127.0.0.1/ca.crl"})
    void anHttpOrHttpsUrlIsFetchedEveryRefreshIntoTheFetchFile(String url, String expected) throws Exception {
        ServerConfig.Nodes nodes = parse(CA_MODE + "crl_url = \"" + url + "\"\ncrl_fetch_file = \"state/ca.crl\"\n"
                + "crl_refresh_seconds = 60\n");
        assertThat(nodes.crlUrl()).isEqualTo(URI.create(expected));
        assertThat(nodes.crlFetchFile()).isEqualTo(source.getParent().resolve("state/ca.crl"));
        assertThat(nodes.crlRefresh()).isEqualTo(Duration.ofSeconds(60));
    }

    @ParameterizedTest
    @ValueSource(strings = {"ftp://ca.example.org/root.crl", "file:///etc/ca.crl", "ca.example.org/root.crl",
            "/var/lib/ca.crl", "http://", "http://ca example/root.crl"})
    void aUrlThatIsNotHttpOrHttpsIsRefused(String url) {
        assertRefused(CA_MODE + "crl_url = \"" + url + "\"\n", "'nodes.crl_url'", "http:// or https://");
    }

    @Test
    void credentialsOrAFragmentInTheUrlAreRefusedSinceStatusShowsIt() {
        assertRefused(CA_MODE + "crl_url = \"http://user:secret@ca.example.org/root.crl\"\n", "'nodes.crl_url'",
                "no user:password@", "/v1/status");
        assertRefused(CA_MODE + "crl_url = \"http://ca.example.org/root.crl#x\"\n", "'nodes.crl_url'", "#fragment");
    }

    @Test
    void aUrlWithoutCertificateValidationIsRefusedWithTheFix() throws Exception {
        assertRefused("[general]\nnode_id = \"root\"\n[nodes]\ncrl_url = \"http://ca.example.org/root.crl\"\n",
                "'nodes.crl_url'", "add \"cert_validation\" to 'nodes.authentication'");
        // Both modes, during a migration: validated certificates can be revoked.
        assertThat(parse("[general]\nnode_id = \"root\"\n[nodes]\nauthentication = [\"cert_pinning\", "
                + "\"cert_validation\"]\ncrl_url = \"http://ca.example.org/root.crl\"\n").crlUrl()).isNotNull();
    }

    @ParameterizedTest
    @ValueSource(ints = {59, 1, 0, -3600})
    void aRefreshUnderAMinuteIsRefused(int seconds) {
        assertRefused(CA_MODE + "crl_refresh_seconds = " + seconds + "\n", "'nodes.crl_refresh_seconds'",
                "at least 60", "not " + seconds);
    }

    @Test
    void wrongTypesAreRefusedNamingTheKey() {
        assertRefused(CA_MODE + "crl_refresh_seconds = \"3600\"\n", "'nodes.crl_refresh_seconds'");
        assertRefused(CA_MODE + "crl_refresh_seconds = 90.5\n", "'nodes.crl_refresh_seconds'");
        assertRefused(CA_MODE + "crl_url = 80\n", "'nodes.crl_url'");
        assertRefused(CA_MODE + "crl_fetch_file = \"\"\n", "'nodes.crl_fetch_file'", "must not be empty");
        assertRefused(CA_MODE + "crl_urls = \"http://ca.example.org/root.crl\"\n", "unknown key", "nodes.crl_urls");
    }

    @Test
    void theFetchFileCannotAlsoBeAnOperatorsCrlFile() {
        assertRefused(CA_MODE + "crl_url = \"http://ca.example.org/root.crl\"\ncrl_fetch_file = \"ca.crl\"\n"
                + "crl_files = [\"ca.crl\"]\n", "'nodes.crl_fetch_file'", "also in 'nodes.crl_files'");
    }

    @Test
    void aShorterRefreshIsForTestsOnlyThroughTheRecord() {
        ServerConfig.Nodes nodes = new ServerConfig.Nodes(Path.of("/n.json"), java.util.List.of());
        ServerConfig.Nodes fast = new ServerConfig.Nodes(nodes.list(), nodes.certificates(), nodes.authentication(),
                nodes.caFile(), nodes.caMaxDepth(), nodes.idRules(), nodes.crlFiles(), nodes.deniedKeysFile(),
                nodes.deniedKeysFileRequired(), URI.create("http://127.0.0.1/ca.crl"), nodes.crlFetchFile(),
                Duration.ofMillis(200));
        assertThat(fast.crlRefresh()).isEqualTo(Duration.ofMillis(200));
        assertThatThrownBy(() -> new ServerConfig.Nodes(nodes.list(), nodes.certificates(), nodes.authentication(),
                nodes.caFile(), nodes.caMaxDepth(), nodes.idRules(), nodes.crlFiles(), nodes.deniedKeysFile(),
                nodes.deniedKeysFileRequired(), null, nodes.crlFetchFile(), Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
