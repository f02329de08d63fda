package io.pintle.server.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.pintle.client.ClientTls;
import io.pintle.server.testing.Await;
import io.pintle.server.testing.LogCapture;
import io.pintle.server.testing.NodeKeys;
import io.pintle.server.testing.RawHttp;
import io.pintle.server.testing.Sandbox;
import io.pintle.server.testing.TestServer;
import io.pintle.server.tls.SelfSigned;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The TLS listener behind a load balancer that speaks the PROXY protocol ({@code [general] proxy_protocol_from}):
 * 127.0.0.2 plays the listed proxy, 127.0.0.1 any other client. The header's source address is the one the network
 * rules (only 192.0.2.0/24 and 2001:db8::/64 allowed), the per-address limits and the access log see.
 */
class ProxyProtocolIT {
    private static final String PROXY = "127.0.0.2";
    private static final String DIRECT = "127.0.0.1";
    private static final byte[] V2_SIGNATURE =
            {0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A};
    private static final Pattern ETAG = Pattern.compile("(?im)^ETag: (\\S+)\\r?$");

    @TempDir
    static Path dir;

    static Sandbox sandbox;
    static TestServer server;
    static NodeKeys node;
    static ListAppender<ILoggingEvent> accessLog;
    static ListAppender<ILoggingEvent> logs;

    @BeforeAll
    static void start() throws Exception {
        accessLog = LogCapture.attach("io.pintle.access");
        logs = LogCapture.attach(Logger.ROOT_LOGGER_NAME);
        sandbox = Sandbox.create(dir);
        node = sandbox.addNode("node-1", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        sandbox.shareFile("node-1/rules/promises.cf", "bundle agent main {}".getBytes(StandardCharsets.US_ASCII));
        sandbox.networks("Require ip 192.0.2.0/24 2001:db8::/64\n");
        sandbox.generalConfig("proxy_protocol_from = [\"" + PROXY + "/32\", \"2001:db8:ffff::1\"]");
        server = TestServer.start(sandbox, "[limits]\nmax_waiters_per_address = 1");
    }

    @AfterAll
    static void stop() {
        server.close();
        LogCapture.detach("io.pintle.access", accessLog);
        LogCapture.detach(Logger.ROOT_LOGGER_NAME, logs);
    }

    @Test
    void theHeadersSourceIsTheClientsAddressForNetworkRulesAndTheAccessLog() throws Exception {
        String allowed = get(PROXY, v2("192.0.2.10", 40_001), "/policies/node-1/rules/promises.cf");
        assertThat(RawHttp.status(allowed)).as(allowed).isEqualTo(200);
        assertThat(allowed).endsWith("bundle agent main {}");
        awaitAccessLine(line -> line.startsWith("192.0.2.10 ") && line.contains("/policies/node-1/rules/promises.cf"));

        String refused = get(PROXY, v2("198.51.100.7", 40_002), "/policies/node-1/rules/promises.cf");
        assertThat(RawHttp.status(refused)).as(refused).isEqualTo(403);
        assertThat(refused).contains("198.51.100.7 is not in the allowed networks");

        String whoami = get(PROXY, v2("192.0.2.10", 40_003), "/v1/whoami");
        assertThat(whoami).contains("\"address\":\"192.0.2.10\"").contains("\"allowed_network\":true");
    }

    @Test
    void aHeaderThatArrivesWithTheClientHelloIsReadAndTheHandshakeGoesOn() throws Exception {
        // As a proxy that writes the header and the client's first bytes at once: TLS gets the rest of the read.
        for (int i = 0; i < 20; i++) {
            try (SSLSocket socket = open(PROXY, v2("192.0.2.30", 41_000 + i), node, new Socket[1], true)) {
                write(socket, "/v1/whoami", "");
                assertThat(RawHttp.readUntilClosed(socket)).contains("\"address\":\"192.0.2.30\"");
            }
        }
    }

    @Test
    void anIpv6SourceAndAVersion1LineAreReadToo() throws Exception {
        String v6 = get(PROXY, v2v6("2001:db8::10", 40_004), "/policies/node-1/rules/promises.cf");
        assertThat(RawHttp.status(v6)).as(v6).isEqualTo(200);
        assertThat(get(PROXY, v2v6("2001:db8::10", 40_005), "/v1/whoami")).contains("\"address\":\"2001:db8:");

        byte[] v1 = ("PROXY TCP4 192.0.2.11 127.0.0.1 40006 " + server.port() + "\r\n")
                .getBytes(StandardCharsets.US_ASCII);
        String viaV1 = get(PROXY, v1, "/v1/whoami");
        assertThat(viaV1).contains("\"address\":\"192.0.2.11\"");
    }

    @Test
    void perAddressLimitsCountTheHeadersSourceNotTheProxy() throws Exception {
        String first = get(PROXY, v2("192.0.2.20", 40_010), "/policies/node-1/rules/promises.cf");
        Matcher etag = ETAG.matcher(first);
        assertThat(etag.find()).as(first).isTrue();
        String wait = "/policies/node-1/rules/promises.cf?wait=20";
        String ifNoneMatch = "If-None-Match: " + etag.group(1) + "\r\n";

        // One parked wait from 192.0.2.20 (max_waiters_per_address = 1), through the proxy.
        try (Held parked = hold(PROXY, v2("192.0.2.20", 40_011))) {
            write(parked.tls(), wait, ifNoneMatch);
            awaitMetric("pintle_change_waiters", 1);
            // A second one from the same client address is over its share...
            String second = get(PROXY, v2("192.0.2.20", 40_012), wait, ifNoneMatch);
            assertThat(RawHttp.status(second)).as(second).isEqualTo(503);
            assertThat(second).contains("client-limit");
            // ...but another client behind the same proxy has its own.
            try (Held other = hold(PROXY, v2("192.0.2.21", 40_013))) {
                write(other.tls(), wait, ifNoneMatch);
                awaitMetric("pintle_change_waiters", 2);
            }
        }
    }

    @Test
    void aHeaderFromAnUnlistedAddressIsNotReadAndFailsTheHandshake() throws Exception {
        assertThatThrownBy(() -> open(DIRECT, v2("192.0.2.10", 40_020), node)).isInstanceOf(IOException.class);

        // Without a header the same client is served as itself.
        String direct = get(DIRECT, new byte[0], "/v1/whoami");
        assertThat(direct).contains("\"address\":\"127.0.0.1\"").contains("\"allowed_network\":false");
    }

    @Test
    void aListedAddressWithoutAHeaderIsClosed() throws Exception {
        double before = metricOrZero("pintle_connections_closed_total{reason=\"proxy-header-missing\"}");
        assertThatThrownBy(() -> open(PROXY, new byte[0], node)).isInstanceOf(IOException.class);
        awaitMetric("pintle_connections_closed_total{reason=\"proxy-header-missing\"}", before + 1);
        assertThat(messages()).anyMatch(line -> line.contains("did not start with a PROXY protocol header")
                && line.contains("/127.0.0.2:"));
    }

    @Test
    void aMalformedHeaderIsClosed() throws Exception {
        double before = metricOrZero("pintle_connections_closed_total{reason=\"proxy-header-invalid\"}");
        byte[] badVersion = v2("192.0.2.10", 40_030);
        badVersion[12] = 0x31; // version 3
        assertThatThrownBy(() -> open(PROXY, badVersion, node)).isInstanceOf(IOException.class);
        awaitMetric("pintle_connections_closed_total{reason=\"proxy-header-invalid\"}", before + 1);

        byte[] udp = v2("192.0.2.10", 40_031);
        udp[13] = 0x12; // INET over DGRAM
        assertThatThrownBy(() -> open(PROXY, udp, node)).isInstanceOf(IOException.class);
        awaitMetric("pintle_connections_closed_total{reason=\"proxy-header-invalid\"}", before + 2);

        // Well formed, but the source is a Unix socket path: nothing here could use it as an address.
        byte[] source = new byte[108];
        byte[] path = "/run/agent.sock".getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(path, 0, source, 0, path.length);
        byte[] unix = ByteBuffer.allocate(16 + 216).put(V2_SIGNATURE).put((byte) 0x21).put((byte) 0x31)
                .putShort((short) 216).put(source).put(new byte[108]).array();
        assertThatThrownBy(() -> open(PROXY, unix, node)).isInstanceOf(IOException.class);
        awaitMetric("pintle_connections_closed_total{reason=\"proxy-header-invalid\"}", before + 3);
        assertThat(messages()).anyMatch(line -> line.contains("before a complete PROXY protocol header")
                && line.contains("/127.0.0.2:"));
    }

    /**
     * Hostile testing, issue 34 N6: a v1 line from the listed proxy naming a host instead of an address was
     * resolved (a DNS lookup) and accepted as 127.0.0.1. A name is refused, as is every field PROXY v1 does not
     * write, and nothing is looked up.
     */
    @Test
    void aVersion1LineNamingAHostIsClosedNotResolved() throws Exception {
        String series = "pintle_connections_closed_total{reason=\"proxy-header-invalid\"}";
        double before = metricOrZero(series);
        byte[] named = "PROXY TCP4 localhost 127.0.0.1 1234 443\r\n".getBytes(StandardCharsets.US_ASCII);
        assertThatThrownBy(() -> open(PROXY, named, node)).isInstanceOf(IOException.class);
        awaitMetric(series, before + 1);
        assertThat(messages()).anyMatch(line -> line.contains("PROXY v1 line refused: 'localhost' is not an IPv4 "
                + "address") && line.contains("/127.0.0.2:"));

        int refused = 1;
        for (String line : java.util.List.of(
                "PROXY TCP6 localhost ::1 1234 443",
                "PROXY TCP4 192.0.2.10 localhost 1234 443",
                "PROXY TCP4 192.0.2.10 127.0.0.1 1234 https",
                "PROXY TCP4 192.0.2.10  127.0.0.1 1234 443",
                "PROXY TCP4 1.2.3 127.0.0.1 1234 443",
                "PROXY TCP4 ::1 127.0.0.1 1234 443",
                "PROXY TCP9 192.0.2.10 127.0.0.1 1234 443")) {
            byte[] header = (line + "\r\n").getBytes(StandardCharsets.US_ASCII);
            assertThatThrownBy(() -> open(PROXY, header, node)).as(line).isInstanceOf(IOException.class);
            awaitMetric(series, before + ++refused);
        }
        // A line with no LF in its first 107 bytes is not waited for.
        byte[] endless = ("PROXY TCP4 " + "1".repeat(200)).getBytes(StandardCharsets.US_ASCII);
        assertThatThrownBy(() -> open(PROXY, endless, node)).isInstanceOf(IOException.class);
        awaitMetric(series, before + refused + 1);
        assertStillServedThroughTheProxy();
    }

    @Test
    void aVersion1LineIsReadWhetherItComesAloneInPiecesOrWithTheClientHello() throws Exception {
        byte[] line = ("PROXY TCP4 192.0.2.12 127.0.0.1 40040 " + server.port() + "\r\n")
                .getBytes(StandardCharsets.US_ASCII);
        try (SSLSocket socket = open(PROXY, line, node, new Socket[1], true)) {
            write(socket, "/v1/whoami", "");
            assertThat(RawHttp.readUntilClosed(socket)).contains("\"address\":\"192.0.2.12\"");
        }
        // Two writes: the detector's first bytes, then the rest of the line as a later read.
        try (Socket tcp = new Socket()) {
            tcp.bind(new InetSocketAddress(InetAddress.getByName(PROXY), 0));
            tcp.connect(new InetSocketAddress(DIRECT, server.port()), 10_000);
            tcp.setSoTimeout(30_000);
            OutputStream out = tcp.getOutputStream();
            out.write(line, 0, 8);
            out.flush();
            out.write(line, 8, line.length - 8);
            out.flush();
            SSLSocket tls = (SSLSocket) ClientTls.context(node.certificatePath(), node.keyPath(),
                    Set.of(sandbox.serverPin())).getSocketFactory().createSocket(tcp, DIRECT, server.port(), true);
            write(tls, "/v1/whoami", "");
            assertThat(RawHttp.readUntilClosed(tls)).contains("\"address\":\"192.0.2.12\"");
        }
        byte[] v6 = ("PROXY TCP6 2001:db8::12 ::1 40041 " + server.port() + "\r\n").getBytes(StandardCharsets.US_ASCII);
        assertThat(get(PROXY, v6, "/v1/whoami")).contains("\"address\":\"2001:db8:");
        // UNKNOWN: the proxy's own connection, which keeps the proxy's address.
        byte[] unknown = "PROXY UNKNOWN\r\n".getBytes(StandardCharsets.US_ASCII);
        assertThat(get(PROXY, unknown, "/v1/whoami")).contains("\"address\":\"127.0.0.2\"");
    }

    private static void assertStillServedThroughTheProxy() throws Exception {
        String served = get(PROXY, v2("192.0.2.10", 40_050), "/policies/node-1/rules/promises.cf");
        assertThat(RawHttp.status(served)).as(served).isEqualTo(200);
    }

    @Test
    void theProxyAddressesAreBoundAtStartAndAReloadThatChangesThemIsRefused(@TempDir Path own) throws Exception {
        Sandbox other = Sandbox.create(own);
        other.generalConfig("proxy_protocol_from = [\"127.0.0.2\"]");
        try (TestServer restartOnly = TestServer.start(other, "[reload]\nwatch = false")) {
            Path config = own.resolve("pintle.toml");
            String original = Files.readString(config);
            Files.writeString(config, original.replace("[\"127.0.0.2\"]", "[\"127.0.0.2\", \"10.0.0.0/8\"]"));
            TestServer.AdminResponse changed = restartOnly.admin("POST", "/rudder/relay-api/1/system/reload");
            assertThat(changed.status()).isEqualTo(500);
            assertThat(changed.body().path("errorDetails").asText())
                    .contains("'general.proxy_protocol_from' changed from [127.0.0.2/32] to [127.0.0.2/32, 10.0.0.0/8]")
                    .contains("restart Pintle");

            Files.writeString(config, original.replace("[\"127.0.0.2\"]", "[\"127.0.0.300\"]"));
            TestServer.AdminResponse invalid = restartOnly.admin("POST", "/rudder/relay-api/1/system/reload");
            assertThat(invalid.status()).isEqualTo(500);
            assertThat(invalid.body().path("errorDetails").asText())
                    .contains("'general.proxy_protocol_from[0]': '127.0.0.300' is not an IPv4 or IPv6 address");
        }
    }

    // --- helpers ---

    /** A PROXY v2 header: PROXY command, TCP over IPv4, from {@code source} to the server. */
    static byte[] v2(String source, int sourcePort) throws IOException {
        return v2(0x11, InetAddress.getByName(source).getAddress(), InetAddress.getByName(DIRECT).getAddress(),
                sourcePort);
    }

    /** A PROXY v2 header: PROXY command, TCP over IPv6. */
    static byte[] v2v6(String source, int sourcePort) throws IOException {
        return v2(0x21, InetAddress.getByName(source).getAddress(), InetAddress.getByName("::1").getAddress(),
                sourcePort);
    }

    private static byte[] v2(int familyAndTransport, byte[] source, byte[] destination, int sourcePort) {
        ByteBuffer header = ByteBuffer.allocate(16 + 2 * source.length + 4);
        header.put(V2_SIGNATURE).put((byte) 0x21).put((byte) familyAndTransport)
                .putShort((short) (2 * source.length + 4))
                .put(source).put(destination).putShort((short) sourcePort).putShort((short) server.port());
        return header.array();
    }

    /**
     * A connection whose request stays parked: closed by closing its TCP socket, as closing the TLS socket would
     * wait for the server's close_notify, which comes when the wait ends.
     */
    record Held(Socket tcp, SSLSocket tls) implements AutoCloseable {
        @Override
        public void close() throws IOException {
            tcp.close();
        }
    }

    static Held hold(String from, byte[] header) throws Exception {
        Socket[] tcp = new Socket[1];
        SSLSocket tls = open(from, header, node, tcp, false);
        return new Held(tcp[0], tls);
    }

    /** Connects from {@code from}, writes {@code header} in the clear, then does the TLS handshake as a node. */
    static SSLSocket open(String from, byte[] header, NodeKeys identity) throws Exception {
        return open(from, header, identity, new Socket[1], false);
    }

    /**
     * @param coalesced whether the header goes out with the first TLS bytes, in one write, rather than alone first
     */
    private static SSLSocket open(String from, byte[] header, NodeKeys identity, Socket[] opened, boolean coalesced)
            throws Exception {
        Socket tcp = coalesced ? new HeaderFirstSocket(header) : new Socket();
        opened[0] = tcp;
        try {
            tcp.bind(new InetSocketAddress(InetAddress.getByName(from), 0));
            tcp.connect(new InetSocketAddress(DIRECT, server.port()), 10_000);
            tcp.setSoTimeout(30_000);
            if (!coalesced) {
                OutputStream out = tcp.getOutputStream();
                out.write(header);
                out.flush();
            }
            SSLContext context = ClientTls.context(identity.certificatePath(), identity.keyPath(),
                    Set.of(sandbox.serverPin()));
            SSLSocket tls = (SSLSocket) context.getSocketFactory().createSocket(tcp, DIRECT, server.port(), true);
            tls.startHandshake();
            return tls;
        } catch (Exception e) {
            tcp.close();
            throw e;
        }
    }

    /** A socket whose first write is prefixed with the header: the TLS socket over it writes through it. */
    private static final class HeaderFirstSocket extends Socket {
        private final byte[] header;
        private boolean sent;

        HeaderFirstSocket(byte[] header) {
            this.header = header;
        }

        @Override
        public OutputStream getOutputStream() throws IOException {
            OutputStream out = super.getOutputStream();
            return new OutputStream() {
                @Override
                public void write(int b) throws IOException {
                    write(new byte[] {(byte) b}, 0, 1);
                }

                @Override
                public void write(byte[] bytes, int offset, int length) throws IOException {
                    synchronized (HeaderFirstSocket.this) {
                        if (!sent) {
                            sent = true;
                            byte[] both = new byte[header.length + length];
                            System.arraycopy(header, 0, both, 0, header.length);
                            System.arraycopy(bytes, offset, both, header.length, length);
                            out.write(both);
                            return;
                        }
                    }
                    out.write(bytes, offset, length);
                }

                @Override
                public void flush() throws IOException {
                    out.flush();
                }
            };
        }
    }

    private static void write(SSLSocket socket, String path, String extraHeaders) throws IOException {
        ByteArrayOutputStream request = new ByteArrayOutputStream();
        request.writeBytes(("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" + extraHeaders
                + "Connection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        socket.getOutputStream().write(request.toByteArray());
        socket.getOutputStream().flush();
    }

    static String get(String from, byte[] header, String path) throws Exception {
        return get(from, header, path, "");
    }

    static String get(String from, byte[] header, String path, String extraHeaders) throws Exception {
        try (SSLSocket socket = open(from, header, node)) {
            write(socket, path, extraHeaders);
            return RawHttp.readUntilClosed(socket);
        }
    }

    private static double metricOrZero(String series) throws Exception {
        Double value = server.metric(series);
        return value != null ? value : 0;
    }

    private static void awaitMetric(String series, double atLeast) throws Exception {
        Await.asserted(Duration.ofSeconds(20), () -> assertThat(metricOrZero(series)).as(series)
                .isGreaterThanOrEqualTo(atLeast));
    }

    /** The access log line is written once the response is complete, which may be after the client read it. */
    private static void awaitAccessLine(java.util.function.Predicate<String> wanted) throws InterruptedException {
        Await.asserted(Duration.ofSeconds(20), () -> {
            java.util.List<String> lines;
            synchronized (accessLog) {
                lines = accessLog.list.stream().map(ILoggingEvent::getFormattedMessage).toList();
            }
            assertThat(lines).as("an access log line as wanted").anyMatch(wanted);
        });
    }

    private static java.util.List<String> messages() {
        synchronized (logs) {
            return logs.list.stream().map(ILoggingEvent::getFormattedMessage).toList();
        }
    }
}
