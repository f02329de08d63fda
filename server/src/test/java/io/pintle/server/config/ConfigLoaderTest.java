package io.pintle.server.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import io.pintle.server.nodes.NodeId;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

class ConfigLoaderTest {
    /** Just enough for the rest to use defaults without reading /opt/rudder/etc/uuid.hive. */
    private static final String ROOT_ID = "[general]\nnode_id = \"root\"\n";

    @TempDir
    Path dir;

    /** Where the configuration text pretends to come from; relative paths resolve against its directory. */
    private Path source;

    @BeforeEach
    void setUp() throws IOException {
        source = Files.createDirectories(dir.resolve("conf")).resolve("pintle.toml");
    }

    private ServerConfig parse(String text) throws ConfigException {
        return ConfigLoader.parse(text, source);
    }

    private void assertRefused(String text, String... fragments) {
        assertThatThrownBy(() -> parse(text))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith(source + ": ")
                .hasMessageContainingAll(fragments);
    }

    @Test
    void fullConfigurationIsReadWithPathsRelativeToItsDirectory() throws Exception {
        Path conf = source.getParent();
        Files.createDirectories(conf.resolve("etc"));
        Files.writeString(conf.resolve("etc/uuid.hive"), "relay-1\n");

        ServerConfig config = parse("""
                [general]
                node_id_file = "etc/uuid.hive"
                role = "relay"
                listen = "192.0.2.10:8443"

                [tls]
                certificate = "ssl/server.cert"
                key = "ssl/server.key"
                protocols = ["TLSv1.3", "TLSv1.2"]

                [nodes]
                list = "lib/nodeslist.json"
                certificates = ["lib/nodescerts.pem", "/var/rudder/lib/ssl/allnodescerts.pem"]

                [networks]
                allowed_file = "etc/rudder-networks-24.conf"
                allowed = ["10.0.0.0/8", "2001:db8::/32"]

                [paths]
                share = "../share"

                [admin]
                listen = "[::1]:5311"
                """);

        assertThat(config.source()).isEqualTo(source);
        assertThat(config.general()).isEqualTo(new ServerConfig.General(
                new NodeId("relay-1"), ServerConfig.Role.RELAY, new ServerConfig.Listen("192.0.2.10", 8443)));
        assertThat(config.tls()).isEqualTo(new ServerConfig.Tls(
                conf.resolve("ssl/server.cert"), conf.resolve("ssl/server.key"), List.of("TLSv1.3", "TLSv1.2")));
        assertThat(config.nodes()).isEqualTo(new ServerConfig.Nodes(conf.resolve("lib/nodeslist.json"),
                List.of(conf.resolve("lib/nodescerts.pem"), Path.of("/var/rudder/lib/ssl/allnodescerts.pem"))));
        assertThat(config.networks()).isEqualTo(new ServerConfig.Networks(
                conf.resolve("etc/rudder-networks-24.conf"), List.of("10.0.0.0/8", "2001:db8::/32"),
                ServerConfig.Networks.DEFAULT_POLICY_SERVER_FILE, false));
        assertThat(config.paths().share()).isEqualTo(dir.resolve("share"));
        assertThat(config.admin().listen()).isEqualTo(new ServerConfig.Listen("::1", 5311));
        assertThat(config.admin().listen()).hasToString("[::1]:5311");
    }

    @Test
    void missingSectionsTakeRuddersDefaults() throws Exception {
        ServerConfig config = parse(ROOT_ID);

        assertThat(config.general().nodeId()).isEqualTo(new NodeId("root"));
        assertThat(config.general().role()).isEqualTo(ServerConfig.Role.ROOT);
        assertThat(config.general().listen()).isEqualTo(new ServerConfig.Listen("0.0.0.0", 443));
        assertThat(config.tls().protocols()).containsExactly("TLSv1.3");
        assertThat(config.nodes().list()).isEqualTo(Path.of("/var/rudder/lib/relay/nodeslist.json"));
        assertThat(config.nodes().certificates()).containsExactly(Path.of("/var/rudder/lib/ssl/nodescerts.pem"));
        assertThat(config.networks().allowedFile()).isEqualTo(Path.of("/opt/rudder/etc/rudder-networks-24.conf"));
        assertThat(config.networks().allowed()).isEmpty();
        assertThat(config.paths().share()).isEqualTo(Path.of("/var/rudder/share"));
        assertThat(config.admin().listen()).isEqualTo(new ServerConfig.Listen("127.0.0.1", 5310));
    }

    @Test
    void defaultServerCertificateIsTheAgentCertificateUnlessADedicatedOneExists() throws Exception {
        boolean dedicated = Files.exists(ServerConfig.Tls.DEDICATED_CERTIFICATE)
                && Files.exists(ServerConfig.Tls.DEDICATED_KEY);

        ServerConfig.Tls tls = parse(ROOT_ID).tls();

        if (dedicated) {
            assertThat(tls.certificate()).isEqualTo(ServerConfig.Tls.DEDICATED_CERTIFICATE);
            assertThat(tls.key()).isEqualTo(ServerConfig.Tls.DEDICATED_KEY);
        } else {
            assertThat(tls.certificate()).isEqualTo(ServerConfig.Tls.DEFAULTS.certificate());
            assertThat(tls.key()).isEqualTo(ServerConfig.Tls.DEFAULTS.key());
        }
    }

    @Test
    void emptyConfigurationReadsTheNodeIdFromRuddersFile() {
        assumeFalse(Files.exists(ServerConfig.General.DEFAULT_NODE_ID_FILE), "a Rudder node id file exists here");

        assertRefused("", "'general.node_id_file'", ServerConfig.General.DEFAULT_NODE_ID_FILE.toString(),
                "no such file");
    }

    @Test
    void unknownKeyIsRefusedNamingFileAndKey() {
        assertRefused(ROOT_ID + "colour = 1\n", "unknown key", "general.colour");
    }

    @Test
    void unknownKeyInAnotherSectionIsNamedWithItsSection() {
        assertRefused(ROOT_ID + "[nodes]\ncertificate = \"x.pem\"\n", "unknown key", "nodes.certificate");
    }

    @Test
    void uploadsTakeRuddersDirectoriesAndPasswordFilesByDefaultOnARootOrRelay() throws Exception {
        ServerConfig.Uploads uploads = parse(ROOT_ID).uploads();

        assertThat(uploads).isEqualTo(new ServerConfig.Uploads(true, Path.of("/var/rudder/inventories/incoming"),
                Path.of("/var/rudder/inventories/accepted-nodes-updates"), Path.of("/var/rudder/reports/incoming"),
                Path.of("/opt/rudder/etc/htpasswd-webdav-initial"), Path.of("/opt/rudder/etc/htpasswd-webdav"),
                ServerConfig.Uploads.DEFAULT_MAX_BYTES, new io.pintle.server.uploads.LoginThrottle.Limits(20,
                        java.time.Duration.ofSeconds(60))));
        assertThat(parse("[general]\nnode_id = \"relay1\"\nrole = \"relay\"\n").uploads().enabled()).isTrue();
        assertThat(parse("[general]\nnode_id = \"n1\"\nrole = \"node\"\n").uploads().enabled()).isFalse();
    }

    @Test
    void uploadKeysAreReadRelativeToTheFileAndCheckedWithTheirName() throws Exception {
        ServerConfig.Uploads uploads = parse(ROOT_ID + "[uploads]\nenabled = false\nreports = \"r\"\n"
                + "htpasswd = \"etc/users\"\nmax_bytes = 1000\n").uploads();

        assertThat(uploads.enabled()).isFalse();
        assertThat(uploads.reports()).isEqualTo(source.resolveSibling("r"));
        assertThat(uploads.htpasswd()).isEqualTo(source.resolveSibling("etc/users"));
        assertThat(uploads.maxBytes()).isEqualTo(1000);
        assertRefused(ROOT_ID + "[uploads]\nmax_bytes = 0\n", "'uploads.max_bytes' must be at least 1");
        assertRefused(ROOT_ID + "[uploads]\nreports = \"\"\n", "'uploads.reports' must not be empty");
        assertRefused(ROOT_ID + "[uploads]\ndirectory = \"x\"\n", "directory");
    }

    @Test
    void failedUploadLoginsAreLimitedPerAddressAndWindowOrNotAtAll() throws Exception {
        assertThat(parse(ROOT_ID + "[uploads]\nmax_failures_per_address = 5\nfailure_window = 300\n").uploads()
                .logins()).isEqualTo(new io.pintle.server.uploads.LoginThrottle.Limits(5, java.time.Duration.ofMinutes(5)));
        assertThat(parse(ROOT_ID + "[uploads]\nmax_failures_per_address = 0\n").uploads().logins().maxFailures())
                .isZero();
        assertRefused(ROOT_ID + "[uploads]\nmax_failures_per_address = -1\n",
                "'uploads.max_failures_per_address' must be at least 0");
        assertRefused(ROOT_ID + "[uploads]\nfailure_window = 0\n", "'uploads.failure_window' must be at least 1");
    }

    @Test
    void accessLogIsOnInCommonFormatByDefault() throws Exception {
        assertThat(parse(ROOT_ID).log()).isEqualTo(new ServerConfig.Log(true, ServerConfig.AccessFormat.COMMON));
    }

    @Test
    void accessLogCanBeTurnedOffOrWrittenAsJson() throws Exception {
        assertThat(parse(ROOT_ID + "[log]\naccess = false\naccess_format = \"json\"\n").log())
                .isEqualTo(new ServerConfig.Log(false, ServerConfig.AccessFormat.JSON));
    }

    @Test
    void unknownAccessLogFormatIsRefusedNamingTheKey() {
        assertRefused(ROOT_ID + "[log]\naccess_format = \"combined\"\n", "'log.access_format'", "combined",
                "common or json");
    }

    @Test
    void deliverySamplesEveryTenSecondsUnlessToldAndWithinItsBounds() throws Exception {
        assertThat(parse(ROOT_ID).delivery().sampleEvery()).isEqualTo(Duration.ofSeconds(10));
        assertThat(parse(ROOT_ID + "[delivery]\nsample_seconds = 1\n").delivery().sampleEvery())
                .isEqualTo(Duration.ofSeconds(1));
        assertRefused(ROOT_ID + "[delivery]\nsample_seconds = 0\n", "'delivery.sample_seconds'", "between 1 and 600",
                "got 0");
        assertRefused(ROOT_ID + "[delivery]\nsample_seconds = 601\n", "'delivery.sample_seconds'", "got 601");
    }

    @Test
    void unknownKeyInTheLogSectionIsRefused() {
        assertRefused(ROOT_ID + "[log]\nlevel = \"debug\"\n", "unknown key", "log.level");
    }

    @Test
    void unknownSectionIsRefused() {
        assertRefused(ROOT_ID + "[colour]\nred = true\n", "unknown key", "colour");
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @CsvSource(delimiter = '|', quoteCharacter = '`', textBlock = """
            listen = 5                                    | general.listen
            listen = ["127.0.0.1:443"]                    | general.listen
            role = true                                   | general.role
            node_id_file = 12345                          | general.node_id_file
            [tls]\\nprotocols = "TLSv1.3"                 | tls.protocols
            [nodes]\\ncertificates = ["a.pem", {x = 1}]   | nodes.certificates[1]
            [paths]\\nshare = {dir = "x"}                 | paths.share
            """)
    void valueOfTheWrongTypeIsRefusedNamingTheKey(String toml, String key) {
        assertRefused(ROOT_ID + toml.replace("\\n", "\n") + "\n", key);
    }

    @Test
    void invalidTomlIsRefusedNamingTheFile() {
        assertRefused("[general\nnode_id = \"root\"\n", "invalid TOML");
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @CsvSource(delimiter = '|', quoteCharacter = '`', textBlock = """
            0.0.0.0:443           | 0.0.0.0         | 443
            127.0.0.1:0           | 127.0.0.1       | 0
            [::1]:8443            | ::1             | 8443
            [2001:db8::1]:65535   | 2001:db8::1     | 65535
            server.example.com:80 | server.example.com | 80
            """)
    void listenAddressIsHostAndPort(String listen, String host, int port) throws Exception {
        ServerConfig config = parse(ROOT_ID + "listen = \"" + listen + "\"\n");

        assertThat(config.general().listen()).isEqualTo(new ServerConfig.Listen(host, port));
        assertThat(config.general().listen()).hasToString(listen);
    }

    @ParameterizedTest(name = "[{index}] ''{0}''")
    @CsvSource(delimiter = '|', quoteCharacter = '`', textBlock = """
            nohost                | expected HOST:PORT
            :443                  | expected HOST:PORT
            ``                    | expected HOST:PORT
            127.0.0.1:70000       | port 70000 out of range
            127.0.0.1:-1          | port -1 out of range
            127.0.0.1:https       | invalid port
            127.0.0.1:            | invalid port
            ::1:8443              | write IPv6 addresses as [ADDRESS]:PORT
            2001:db8::1:443       | write IPv6 addresses as [ADDRESS]:PORT
            """)
    void invalidListenAddressIsRefusedNamingTheKey(String listen, String reason) {
        assertRefused(ROOT_ID + "listen = \"" + listen + "\"\n", "'general.listen'", reason);
    }

    @Test
    void nodeIdAndNodeIdFileAreExclusive() throws IOException {
        Files.writeString(source.resolveSibling("uuid.hive"), "root");

        assertRefused("[general]\nnode_id = \"root\"\nnode_id_file = \"uuid.hive\"\n",
                "'general.node_id'", "'general.node_id_file'", "not both");
    }

    @Test
    void nodeIdFileIsReadAndStripped() throws Exception {
        Files.writeString(source.resolveSibling("uuid.hive"), "  2bf1afdc-6725-4d3d-96b8-0d9a0dcc2cc4 \n\n");

        ServerConfig config = parse("[general]\nnode_id_file = \"uuid.hive\"\n");

        assertThat(config.general().nodeId()).isEqualTo(new NodeId("2bf1afdc-6725-4d3d-96b8-0d9a0dcc2cc4"));
    }

    @Test
    void missingNodeIdFileIsNamed() {
        assertRefused("[general]\nnode_id_file = \"absent.hive\"\n",
                "'general.node_id_file'", source.resolveSibling("absent.hive").toString(), "no such file");
    }

    @Test
    void invalidNodeIdInTheFileIsNamed() throws IOException {
        Files.writeString(source.resolveSibling("uuid.hive"), "not a node id\n");

        assertRefused("[general]\nnode_id_file = \"uuid.hive\"\n", "'general.node_id_file'", "invalid node id");
    }

    @Test
    void invalidNodeIdIsNamed() {
        assertRefused("[general]\nnode_id = \"../root\"\n", "'general.node_id'", "invalid node id '../root'");
    }

    @ParameterizedTest
    @CsvSource({"root, ROOT", "relay, RELAY", "node, NODE", "Relay, RELAY"})
    void roleIsRootRelayOrNode(String text, ServerConfig.Role role) throws Exception {
        assertThat(parse(ROOT_ID + "role = \"" + text + "\"\n").general().role()).isEqualTo(role);
    }

    @Test
    void invalidRoleIsRefused() {
        assertRefused(ROOT_ID + "role = \"leaf\"\n", "'general.role'", "'leaf'");
    }

    @Test
    void certificateWithoutKeyIsRefused() {
        assertRefused(ROOT_ID + "[tls]\ncertificate = \"server.cert\"\n", "'tls.certificate' and 'tls.key'");
    }

    @Test
    void keyWithoutCertificateIsRefused() {
        assertRefused(ROOT_ID + "[tls]\nkey = \"server.key\"\n", "'tls.certificate' and 'tls.key'");
    }

    @Test
    void worldReadableKeysAreRefusedUnlessAllowed() throws Exception {
        assertThat(parse(ROOT_ID).tls().allowWorldReadableKey()).isFalse();
        assertThat(parse(ROOT_ID + "[tls]\nallow_world_readable_key = true\n").tls().allowWorldReadableKey()).isTrue();
    }

    @Test
    void tlsVersionOnePointTwoAloneIsAccepted() throws Exception {
        assertThat(parse(ROOT_ID + "[tls]\nprotocols = [\"TLSv1.2\"]\n").tls().protocols()).containsExactly("TLSv1.2");
    }

    @ParameterizedTest
    @CsvSource({"SSLv3", "TLSv1.1", "tlsv1.3"})
    void unsupportedProtocolIsRefused(String protocol) {
        assertRefused(ROOT_ID + "[tls]\nprotocols = [\"TLSv1.3\", \"" + protocol + "\"]\n",
                "'tls.protocols'", "unsupported protocol '" + protocol + "'");
    }

    @Test
    void tlsProviderIsTheJdksUnlessConscryptIsNamed() throws ConfigException {
        assertThat(parse(ROOT_ID).tls().provider()).isEqualTo(ServerConfig.Tls.DEFAULTS.provider());
        assertThat(parse(ROOT_ID + "[tls]\nprovider = \"conscrypt\"\n").tls().provider())
                .isEqualTo(ServerConfig.TlsProvider.CONSCRYPT);
        assertThat(parse(ROOT_ID + "[tls]\nprovider = \"jdk\"\n").tls().provider())
                .isEqualTo(ServerConfig.TlsProvider.JDK);
        assertRefused(ROOT_ID + "[tls]\nprovider = \"openssl\"\n", "'tls.provider'", "unknown provider 'openssl'",
                "jdk, conscrypt");
        assertRefused(ROOT_ID + "[tls]\nprovider = \"Conscrypt\"\n", "'tls.provider'", "'Conscrypt'");
    }

    @Test
    void emptyProtocolListIsRefused() {
        assertRefused(ROOT_ID + "[tls]\nprotocols = []\n", "'tls.protocols'", "at least one");
    }

    @ParameterizedTest
    @CsvSource({"127.0.0.1:5310", "127.0.0.2:5310", "[::1]:5310", "localhost:5310"})
    void adminListensOnLoopback(String listen) throws Exception {
        assertThat(parse(ROOT_ID + "[admin]\nlisten = \"" + listen + "\"\n").admin().listen().port())
                .isEqualTo(5310);
    }

    @ParameterizedTest
    @CsvSource({"0.0.0.0:5310", "192.0.2.1:5310", "[::]:5310"})
    void adminOnANonLoopbackAddressIsRefused(String listen) {
        assertRefused(ROOT_ID + "[admin]\nlisten = \"" + listen + "\"\n", "'admin.listen'", "loopback");
    }

    @Test
    void emptyAllowedFileMeansNoNetworksFile() throws Exception {
        ServerConfig config = parse(ROOT_ID + "[networks]\nallowed_file = \"\"\nallowed = [\"10.0.0.0/8\"]\n");

        assertThat(config.networks().allowedFile()).isNull();
        assertThat(config.networks().allowed()).containsExactly("10.0.0.0/8");
    }

    @Test
    void emptyCertificateListIsAllowed() throws Exception {
        assertThat(parse(ROOT_ID + "[nodes]\ncertificates = []\n").nodes().certificates()).isEmpty();
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
            [nodes]\\nlist = ""              | 'nodes.list' must not be empty
            [paths]\\nshare = ""             | 'paths.share' must not be empty
            [nodes]\\ncertificates = [""]    | 'nodes.certificates[0]' must not be empty
            [paths]\\nshare = "a\\u0000b"    | 'paths.share' contains a NUL
            """)
    void emptyOrNulPathIsRefused(String section, String reason) {
        assertRefused(ROOT_ID + section.replace("\\n", "\n") + "\n", reason);
    }

    @Test
    void loadReadsTheFileAndResolvesAgainstItsDirectory() throws Exception {
        Files.writeString(source, ROOT_ID + "[paths]\nshare = \"share\"\n");

        ServerConfig config = ConfigLoader.load(source);

        assertThat(config.source()).isEqualTo(source);
        assertThat(config.paths().share()).isEqualTo(source.resolveSibling("share"));
    }

    @Test
    void loadOfAMissingFileSaysSo() {
        Path missing = dir.resolve("absent.toml");

        assertThatThrownBy(() -> ConfigLoader.load(missing))
                .isInstanceOf(ConfigException.class)
                .hasMessage(missing + ": no such file");
    }

    /**
     * The periods read in whole seconds between two bounds ({@code ConfigException.requireSeconds}): section, key,
     * default, a value set, the most it may be, and how the configuration gives it back.
     */
    static Stream<Arguments> periodsInSeconds() {
        return Stream.of(
                // the rate floors are checked over 10 s unless said otherwise
                Arguments.of("limits", "rate_check_seconds", 10, 3, 600,
                        (Function<ServerConfig, Duration>) config -> config.limits().rateCheck()),
                // a report has 30 s after the run's timeout
                Arguments.of("remote_run", "report_grace", 30, 120, 3600,
                        (Function<ServerConfig, Duration>) config -> config.remoteRun().reportGrace()),
                // a node between two polls counts as connected for 10 s
                Arguments.of("remote_run", "reconnect_grace", 10, 3, 600,
                        (Function<ServerConfig, Duration>) config -> config.remoteRun().reconnectGrace()),
                // policy archives are looked at every 5 s
                Arguments.of("remote_run", "policy_update_scan", 5, 1, 600,
                        (Function<ServerConfig, Duration>) config -> config.remoteRun().policyUpdates().scan()));
    }

    @ParameterizedTest(name = "[{index}] {0}.{1}")
    @MethodSource("periodsInSeconds")
    void aPeriodInSecondsHasItsDefaultTakesAValueAndRefusesZeroAndPastItsMaximum(String section, String key,
            int defaultSeconds, int value, int maximum, Function<ServerConfig, Duration> read) throws Exception {
        assertThat(read.apply(parse(ROOT_ID))).isEqualTo(Duration.ofSeconds(defaultSeconds));
        String set = ROOT_ID + "[" + section + "]\n" + key + " = ";
        assertThat(read.apply(parse(set + value + "\n"))).isEqualTo(Duration.ofSeconds(value));
        assertRefused(set + "0\n", section + "." + key);
        assertRefused(set + (maximum + 1) + "\n", section + "." + key, String.valueOf(maximum));
    }

    @Test
    void limitsHaveDefaultsAndCanBeSetPerWorkClass() throws ConfigException {
        ServerConfig.Limits defaults = parse(ROOT_ID).limits();
        assertThat(defaults.maxConnections()).isEqualTo(10_000);
        assertThat(defaults.idleTimeout()).hasSeconds(30);
        assertThat(defaults.headerTimeout()).hasSeconds(60);
        assertThat(defaults.minResponseBytesPerSecond()).isEqualTo(1024);
        assertThat(defaults.queueTimeout()).hasSeconds(30);
        assertThat(defaults.retryAfter()).hasSeconds(60);
        assertThat(defaults.retryAfterJitter()).hasSeconds(30);
        assertThat(defaults.files()).isEqualTo(new ServerConfig.Pool(100, 1000, 25));
        assertThat(defaults.api()).isEqualTo(new ServerConfig.Pool(50, 500, 12));
        assertThat(defaults.uploads()).isEqualTo(new ServerConfig.Pool(20, 200, 5));
        assertThat(defaults.minRequestBytesPerSecond()).isEqualTo(1024);
        assertThat(defaults.maxWaitersPerAddress()).isEqualTo(100);
        assertThat(defaults.maxRequestsPerNode()).isEqualTo(16);
        assertThat(defaults.fileCacheBytes()).isEqualTo(32L * 1024 * 1024);

        ServerConfig.Limits set = parse(ROOT_ID + "[limits]\nmax_connections = 5\nmin_response_bytes_per_second = 0\n"
                + "file_cache_bytes = 0\nmin_request_bytes_per_second = 0\nmax_waiters_per_address = 3\n"
                + "[limits.files]\nconcurrency = 2\n[limits.uploads]\nconcurrency = 8\nper_address = 5\n").limits();
        assertThat(set.maxConnections()).isEqualTo(5);
        assertThat(set.fileCacheBytes()).isZero();
        assertThat(set.minResponseBytesPerSecond()).isZero();
        assertThat(set.minRequestBytesPerSecond()).isZero();
        assertThat(set.maxWaitersPerAddress()).isEqualTo(3);
        assertThat(parse(ROOT_ID + "[limits]\nmax_requests_per_node = 1\n").limits().maxRequestsPerNode()).isEqualTo(1);
        // 0 is the default, as absent.
        assertThat(parse(ROOT_ID + "[limits]\nmax_requests_per_node = 0\n").limits().maxRequestsPerNode()).isEqualTo(16);
        // Unset, an address's share is a quarter of the class (at least one).
        assertThat(set.files()).isEqualTo(new ServerConfig.Pool(2, 1000, 1));
        assertThat(set.api()).isEqualTo(new ServerConfig.Pool(50, 500, 12));
        assertThat(set.uploads()).isEqualTo(new ServerConfig.Pool(8, 200, 5));
        // The webapp's share is half (a browser loads a page's assets at once), whether the table is there or not.
        assertThat(parse(ROOT_ID + "[limits.webapp]\nconcurrency = 20\n").limits().webapp())
                .isEqualTo(new ServerConfig.Pool(20, 512, 10));
        assertThat(parse(ROOT_ID + "[limits.webapp]\nqueue = 100\n").limits().webapp())
                .isEqualTo(new ServerConfig.Pool(64, 100, 32));
    }

    @Test
    void impossibleLimitsAreRefusedByName() {
        assertRefused(ROOT_ID + "[limits]\nmax_connections = 0\n", "'limits.max_connections'", "at least 1");
        assertRefused(ROOT_ID + "[limits.files]\nconcurrency = 0\n", "'limits.files.concurrency'");
        assertRefused(ROOT_ID + "[limits.api]\nqueue = -1\n", "'limits.api.queue'", "at least 0");
        assertRefused(ROOT_ID + "[limits.uploads]\nper_address = 0\n", "'limits.uploads.per_address'", "at least 1");
        assertRefused(ROOT_ID + "[limits]\nmin_request_bytes_per_second = -1\n",
                "'limits.min_request_bytes_per_second'");
        assertRefused(ROOT_ID + "[limits]\nmax_waiters_per_address = 0\n", "'limits.max_waiters_per_address'");
        assertRefused(ROOT_ID + "[limits]\nmax_requests_per_node = -1\n", "'limits.max_requests_per_node'",
                "at least 1");
        assertRefused(ROOT_ID + "[limits]\nretry_after_seconds = 10\nretry_after_jitter_seconds = 10\n",
                "'limits.retry_after_jitter_seconds'");
        assertRefused(ROOT_ID + "[limits]\nidle_timeout_seconds = 0\n", "'limits.idle_timeout_seconds'");
        assertRefused(ROOT_ID + "[limits]\nfile_cache_bytes = -1\n", "'limits.file_cache_bytes'", "0 (off)");
        assertRefused(ROOT_ID + "[limits.downloads]\nqueue = 1\n", "unknown key", "limits.downloads");
    }

    @Test
    void remoteRunDefaultsAreRuddersCommandsOnPort443() throws Exception {
        ServerConfig.RemoteRun remoteRun = parse(ROOT_ID).remoteRun();
        assertThat(remoteRun.enabled()).isTrue();
        assertThat(remoteRun.port()).isEqualTo(443);
        assertThat(remoteRun.run()).containsExactly("/opt/rudder/bin/rudder", "agent", "run", "-uR");
        assertThat(remoteRun.update()).containsExactly("/opt/rudder/bin/rudder", "agent", "update");
        assertThat(remoteRun.inventory()).containsExactly("/opt/rudder/bin/rudder", "agent", "inventory");
        assertThat(remoteRun.timeout()).hasSeconds(300);
        assertThat(remoteRun.maxParallel()).isEqualTo(32);
    }

    @Test
    void remoteRunTakesArgvListsAndLimits() throws Exception {
        ServerConfig.RemoteRun remoteRun = parse(ROOT_ID + """
                [remote_run]
                enabled = false
                port = 8443
                run = ['C:\\Program Files\\Rudder\\bin\\rudder.exe', "agent", "run"]
                timeout = 20
                connect_timeout = 3
                max_parallel = 4
                """).remoteRun();
        assertThat(remoteRun.enabled()).isFalse();
        assertThat(remoteRun.port()).isEqualTo(8443);
        assertThat(remoteRun.run()).containsExactly("C:\\Program Files\\Rudder\\bin\\rudder.exe", "agent", "run");
        assertThat(remoteRun.timeout()).hasSeconds(20);
        assertThat(remoteRun.connectTimeout()).hasSeconds(3);
        assertThat(remoteRun.maxParallel()).isEqualTo(4);
    }

    @Test
    void remoteRunRefusesShellLinesRelativeProgramsAndBadLimits() {
        assertRefused(ROOT_ID + "[remote_run]\nrun = []\n", "remote_run.run", "must name a program");
        assertRefused(ROOT_ID + "[remote_run]\nrun = \"/opt/rudder/bin/rudder agent run\"\n", "remote_run");
        assertRefused(ROOT_ID + "[remote_run]\nupdate = [\"rudder\", \"agent\", \"update\"]\n",
                "remote_run.update", "absolute path");
        assertRefused(ROOT_ID + "[remote_run]\nport = 0\n", "remote_run.port");
        assertRefused(ROOT_ID + "[remote_run]\nmax_parallel = 0\n", "remote_run.max_parallel");
        assertRefused(ROOT_ID + "[remote_run]\ntimeout = 0\n", "remote_run.timeout");
        assertRefused(ROOT_ID + "[remote_run]\ncommand = \"/bin/sh\"\n", "command");
    }

    @Test
    void orderChannelsLeaveConnectionsToDownloadsAndUploads() throws Exception {
        assertThat(parse(ROOT_ID).remoteRun().maxChannels()).as("three quarters of 10000").isEqualTo(7500);
        assertThat(parse(ROOT_ID + "[limits]\nmax_connections = 40000\n").remoteRun().maxChannels())
                .isEqualTo(30000);
        assertThat(parse(ROOT_ID + "[remote_run]\nmax_channels = 9000\n").remoteRun().maxChannels()).isEqualTo(9000);
        assertRefused(ROOT_ID + "[remote_run]\nmax_channels = 9001\n", "remote_run.max_channels",
                "raise [limits] max_connections");
        assertThat(parse(ROOT_ID + "[remote_run]\ntransports = [\"pull\"]\n").remoteRun().transports())
                .containsExactly(ServerConfig.Transport.PULL);
        assertThat(parse(ROOT_ID).remoteRun().transports()).containsExactly(ServerConfig.Transport.PULL,
                ServerConfig.Transport.RUDDER_REMOTE_RUN);
        assertRefused(ROOT_ID + "[remote_run]\ntransports = [\"ssh\"]\n", "remote_run.transports",
                "unknown transport 'ssh'");
        assertRefused(ROOT_ID + "[remote_run]\ntransports = []\n", "remote_run.transports", "at least one");
    }

    @Test
    void theAgentHelpersSocketIsOptionalAndAUnixSocketPath() throws Exception {
        assertThat(parse(ROOT_ID).remoteRun().agentSocket()).as("default: Pintle starts the argv").isNull();
        assertThat(parse(ROOT_ID + "[remote_run]\nagent_socket = \"\"\n").remoteRun().agentSocket()).isNull();
        assertThat(parse(ROOT_ID + "[remote_run]\nagent_socket = \"/run/pintle-agent.sock\"\n").remoteRun()
                .agentSocket()).isEqualTo(Path.of("/run/pintle-agent.sock"));
        assertRefused(ROOT_ID + "[remote_run]\nagent_socket = \"/run/" + "x".repeat(110) + "\"\n",
                "remote_run.agent_socket", "longer than a Unix socket path");
    }
    @Test
    void theWebappIsNotProxiedUnlessConfigured() throws Exception {
        ServerConfig.Webapp webapp = parse(ROOT_ID).webapp();
        assertThat(webapp.enabled()).isFalse();
        assertThat(webapp.proxy()).isNull();
        assertThat(webapp.connectTimeout()).hasSeconds(10);
        // Rudder's vhost: ProxyTimeout 300, "also applied for webapp proxy".
        assertThat(webapp.timeout()).hasSeconds(300);
        assertThat(parse(ROOT_ID).limits().webapp()).isEqualTo(new ServerConfig.Pool(64, 512, 32));
        assertThat(parse(ROOT_ID + "[webapp]\nproxy = \"\"\n").webapp().enabled()).isFalse();
    }

    @ParameterizedTest
    @CsvSource({
            "http://127.0.0.1:8080,  http://127.0.0.1:8080",
            "http://127.0.0.1:8080/, http://127.0.0.1:8080",
            "HTTP://localhost:8080,  http://localhost:8080",
            "'http://[::1]:8080',    'http://[::1]:8080'",
            "http://webapp.internal, http://webapp.internal"})
    void theWebappProxyIsAPlainHttpBaseUrl(String proxy, String expected) throws Exception {
        ServerConfig.Webapp webapp = parse(ROOT_ID + "[webapp]\nproxy = \"" + proxy + "\"\nconnect_timeout = 2\n"
                + "timeout = 60\n[limits.webapp]\nconcurrency = 8\nqueue = 16\nper_address = 8\n").webapp();
        assertThat(webapp.enabled()).isTrue();
        assertThat(webapp.proxy()).hasToString(expected);
        assertThat(webapp.connectTimeout()).hasSeconds(2);
        assertThat(webapp.timeout()).hasSeconds(60);
    }

    @Test
    void aWebappProxyThatIsNotABaseUrlIsRefusedInTheOperatorsWords() {
        assertRefused(ROOT_ID + "[webapp]\nproxy = \"https://127.0.0.1:8443\"\n", "'webapp.proxy'",
                "http://HOST[:PORT]", "plain HTTP");
        assertRefused(ROOT_ID + "[webapp]\nproxy = \"127.0.0.1:8080\"\n", "'webapp.proxy'", "http://127.0.0.1:8080");
        assertRefused(ROOT_ID + "[webapp]\nproxy = \"http://127.0.0.1:8080/rudder\"\n", "'webapp.proxy'",
                "no path");
        assertRefused(ROOT_ID + "[webapp]\nproxy = \"http://user:pw@127.0.0.1:8080\"\n", "'webapp.proxy'");
        assertRefused(ROOT_ID + "[webapp]\nproxy = \"http://127.0.0.1:8080/?a=b\"\n", "'webapp.proxy'");
        assertRefused(ROOT_ID + "[webapp]\nproxy = \"http://127.0.0.1:80 80\"\n", "'webapp.proxy'");
        assertRefused(ROOT_ID + "[webapp]\ntimeout = 0\n", "'webapp.timeout'", "at least 1");
        assertRefused(ROOT_ID + "[webapp]\nconnect_timeout = 0\n", "'webapp.connect_timeout'", "at least 1");
        assertRefused(ROOT_ID + "[webapp]\nproxy = 8080\n", "'webapp.proxy'");
        assertRefused(ROOT_ID + "[webapp]\nurl = \"http://127.0.0.1:8080\"\n", "unknown key", "webapp.url");
        assertRefused(ROOT_ID + "[limits.webapp]\nconcurrency = 0\n", "'limits.webapp.concurrency'");
    }

    // --- issue 18: messages in the operator's words ---

    /** What the parser says of itself, which no operator can act on. */
    private static final List<String> LIBRARY_WORDING = List.of("java.lang", "java.util", "CoercionConfig", "`",
            "JsonToken", "Cannot coerce", "Cannot deserialize", "Cannot construct", "Numeric value", "Source:");

    @ParameterizedTest(name = "[{index}] {0}")
    @CsvSource(delimiter = '|', quoteCharacter = '`', textBlock = """
            [reload]\\nwatch = "off"                 | 'reload.watch': expected true or false, not "off"
            [reload]\\nwatch = 1                     | 'reload.watch': expected true or false, not 1
            [limits]\\nmax_manifest_entries = 1.5    | 'limits.max_manifest_entries': expected a whole number (at most 2147483647), not 1.5
            [limits.files]\\nconcurrency = 2.0       | 'limits.files.concurrency': expected a whole number (at most 2147483647), not 2.0
            [limits]\\nfile_cache_bytes = 0.5        | 'limits.file_cache_bytes': expected a whole number, not 0.5
            [limits]\\nmax_connections = nan        | 'limits.max_connections': expected a whole number (at most 2147483647), not nan
            [limits]\\nmax_connections = "10"       | 'limits.max_connections': expected a whole number (at most 2147483647), not "10"
            [limits]\\nmax_connections = 99999999999 | 'limits.max_connections': expected a whole number (at most 2147483647), not 99999999999
            [limits]\\nmax_connections = true       | 'limits.max_connections': expected a whole number (at most 2147483647), not true
            [nodes]\\ncertificates = "x.pem"         | 'nodes.certificates': expected a list of strings in brackets, not "x.pem"
            [nodes]\\nlist = ["x"]                   | 'nodes.list': expected a string in double quotes, not a list
            [remote_run]\\nrun = [1]                 | 'remote_run.run[0]': expected a string in double quotes, not 1
            """)
    void aValueOfTheWrongTypeIsNamedByKeyWithWhatWasExpected(String section, String message) {
        String text = ROOT_ID + section.replace("\\n", "\n") + "\n";

        assertThatThrownBy(() -> parse(text))
                .isInstanceOf(ConfigException.class)
                .hasMessage(source + ": " + message)
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain(LIBRARY_WORDING));
    }

    @Test
    void aNumberIsNotANodeId() {
        assertThatThrownBy(() -> parse("[general]\nnode_id = 12345\n"))
                .hasMessage(source + ": 'general.node_id': expected a string in double quotes, not 12345");
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @CsvSource(delimiter = '|', quoteCharacter = '`', textBlock = """
            [general]\\nnode_id = "root"\\nfoo bar                 | invalid TOML at line 3, column 4: unexpected text
            [general]\\nnode_id = "root"\\n[general]\\nrole = "relay" | invalid TOML at line 3, column 9: a table is defined twice
            [general]\\nnode_id = "root"\\n[remote_run]\\nrun = ["/a",\\n | invalid TOML at line 5
            """)
    void aSyntaxErrorNamesItsLine(String text, String message) {
        assertThatThrownBy(() -> parse(text.replace("\\n", "\n")))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith(source + ": " + message)
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain(LIBRARY_WORDING));
    }

    @Test
    void policyServerNetworksFileDefaultsToRuddersOnARootOrRelayAndIsNoneOnANode() throws Exception {
        ServerConfig.Networks root = parse(ROOT_ID).networks();
        assertThat(root.policyServerFile()).isEqualTo(ServerConfig.Networks.DEFAULT_POLICY_SERVER_FILE);
        assertThat(root.policyServerFileRequired()).as("the default may be absent").isFalse();

        ServerConfig.Networks set = parse(ROOT_ID + "[networks]\npolicy_server_file = \"etc/ps.conf\"\n").networks();
        assertThat(set.policyServerFile()).isEqualTo(source.getParent().resolve("etc/ps.conf"));
        assertThat(set.policyServerFileRequired()).as("a configured file must exist").isTrue();

        assertThat(parse(ROOT_ID + "[networks]\npolicy_server_file = \"\"\n").networks().policyServerFile())
                .isNull();
        String node = "[general]\nnode_id = \"n\"\nrole = \"node\"\n";
        assertThat(parse(node).networks().policyServerFile()).isNull();
        assertThat(parse(node + "[networks]\npolicy_server_file = \"\"\n").networks().policyServerFile()).isNull();
        assertRefused(node + "[networks]\npolicy_server_file = \"/etc/ps.conf\"\n", "'networks.policy_server_file'",
                "root or a relay");
    }

    @Test
    void proxyProtocolIsOffByDefault() throws Exception {
        assertThat(parse(ROOT_ID).general().proxyProtocolFrom()).isEmpty();
        assertThat(parse(ROOT_ID + "proxy_protocol_from = []\n").general().proxyProtocolFrom()).isEmpty();
    }

    @Test
    void proxyProtocolAddressesAreReadAsNetworks() throws Exception {
        ServerConfig config = parse(ROOT_ID
                + "proxy_protocol_from = [\"10.0.0.5/32\", \"10.0.0.6\", \"192.0.2.0/24\", \"2001:db8::7\", "
                + "\"2001:db8:1::/48\"]\n");

        assertThat(config.general().proxyProtocolFrom()).extracting(Object::toString).containsExactly(
                "10.0.0.5/32", "10.0.0.6/32", "192.0.2.0/24", "2001:db8:0:0:0:0:0:7/128", "2001:db8:1:0:0:0:0:0/48");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "10.0.0.300      | '10.0.0.300' is not an IPv4 or IPv6 address or network",
            "10.0.0.0/33     | '10.0.0.0/33' is not an IPv4 or IPv6 address or network",
            "proxy.example   | 'proxy.example' is not an IPv4 or IPv6 address or network",
            "2001:db8::/129  | '2001:db8::/129' is not an IPv4 or IPv6 address or network",
            "10.0.0.1/x      | '10.0.0.1/x' is not an IPv4 or IPv6 address or network"})
    void badProxyProtocolAddressIsAConfigErrorNamingKeyAndValue(String value, String message) {
        assertRefused(ROOT_ID + "proxy_protocol_from = [\"10.0.0.5\", \"" + value + "\"]\n",
                "'general.proxy_protocol_from[1]'", message);
    }

    @Test
    void emptyProxyProtocolAddressIsAConfigError() {
        assertRefused(ROOT_ID + "proxy_protocol_from = [\"\"]\n", "'general.proxy_protocol_from[0]' is empty");
    }

    @Test
    void proxyProtocolAddressesMustBeAList() {
        assertRefused(ROOT_ID + "proxy_protocol_from = 7\n", "proxy_protocol_from");
    }
}
