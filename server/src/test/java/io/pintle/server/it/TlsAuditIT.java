package io.pintle.server.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.pintle.client.ClientTls;
import io.pintle.server.testing.Sandbox;
import io.pintle.server.testing.TestServer;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The TLS audit of issue 8: {@code testssl.sh} (Debian package {@code testssl.sh}, 3.0.8) against the real server,
 * its JSON findings asserted one by one, so that a weaker protocol or cipher suite, renegotiation or TLS compression
 * fails the build. CI installs testssl.sh ({@code .ci/run}); where it is missing the test is skipped, and says so
 * on stderr.
 *
 * <p>Only the checks that answer the issue are run (protocols, cipher categories, forward secrecy, renegotiation,
 * CRIME, Heartbleed), which keeps each run to half a minute or so; the two servers are scanned side by side.
 * testssl.sh runs without a client certificate: the server only requests one, so the handshake audit is the same.
 */
class TlsAuditIT {
    /** Both the Debian name and upstream's. */
    private static final List<String> PROGRAMS = List.of("testssl", "testssl.sh");
    /** A whole run, beyond which the test fails rather than hangs the build. */
    private static final long RUN_TIMEOUT_SECONDS = 300;
    /** ECDHE with an AEAD cipher, by IANA name or by OpenSSL's (which testssl.sh 3.0 uses in its FS list). */
    private static final String STRONG_TLS12 =
            "TLS_ECDHE_(ECDSA|RSA)_WITH_(AES_(128|256)_GCM_SHA(256|384)|CHACHA20_POLY1305_SHA256)"
                    + "|ECDHE-(ECDSA|RSA)-(AES(128|256)-GCM-SHA(256|384)|CHACHA20-POLY1305)";

    static String program;

    @TempDir
    static Path dir;
    private static TestServer tls13OnlyServer;
    private static Scan tls13OnlyScan;
    private static Sandbox withTls12Sandbox;
    private static TestServer withTls12Server;
    private static Scan withTls12Scan;

    /**
     * testssl.sh's client-initiated renegotiation check races on a loaded machine (see
     * {@link #assertRenegotiationRefused}), so its verdict is replaced by our own probe, which runs on every TLS 1.2
     * scan; every other finding must be below MEDIUM.
     */
    private static final String RACY_FINDING = "secure_client_renego";

    private static void findTestssl() {
        program = PROGRAMS.stream().filter(TlsAuditIT::installed).findFirst().orElse(null);
        if (program == null) {
            System.err.println("""

                    ******************************************************************************
                    * TlsAuditIT SKIPPED: testssl.sh is not installed, so the TLS audit did NOT   *
                    * run. Install it (apt-get install testssl.sh; .ci/run does) and run again.   *
                    ******************************************************************************
                    """);
        }
        assumeTrue(program != null, "testssl.sh is not installed: the TLS audit did not run");
    }

    /**
     * Starts both servers and both scans at once. Most of a testssl.sh run is its own start (hundreds of awk and
     * openssl processes before the first probe, about 8 s of CPU here), so two runs side by side take little more
     * than one on two cores; each test then waits for its own scan.
     */
    @BeforeAll
    static void startBothScans() throws Exception {
        findTestssl();
        tls13OnlyServer = TestServer.start(Sandbox.create(directory("tls13-only")));
        tls13OnlyScan = Scan.start(directory("tls13-only-scan"), tls13OnlyServer.port(), "--protocols", "--std",
                "--renegotiation", "--crime", "--heartbleed");
        withTls12Sandbox = Sandbox.create(directory("with-tls12"));
        withTls12Server = TestServer.start(withTls12Sandbox, "protocols = [\"TLSv1.3\", \"TLSv1.2\"]");
        withTls12Scan = Scan.start(directory("with-tls12-scan"), withTls12Server.port(), "--protocols", "--std",
                "--fs", "--renegotiation", "--crime");
    }

    @AfterAll
    static void stopScansAndServers() {
        for (Scan scan : new Scan[] {tls13OnlyScan, withTls12Scan}) {
            if (scan != null) {
                scan.kill();
            }
        }
        for (TestServer server : new TestServer[] {tls13OnlyServer, withTls12Server}) {
            if (server != null) {
                server.close();
            }
        }
    }

    @Test
    void defaultServerOffersTls13OnlyWithStrongSuitesNoRenegotiationNoCompression() throws Exception {
        Map<String, String> findings = tls13OnlyScan.findings();

        assertTls13AndStrongSuitesOnly(findings, "not offered");
        assertThat(findings.get("secure_renego")).isEqualTo("TLS 1.3 only server");
        assertThat(findings.get("secure_client_renego")).startsWith("not vulnerable");
        assertThat(findings.get("CRIME_TLS")).isEqualTo("TLS 1.3 only server");
        assertThat(findings.get("heartbleed")).startsWith("not vulnerable");
    }

    @Test
    void withTls12EnabledOnlyEcdheAeadSuitesAreOffered() throws Exception {
        Map<String, String> findings = withTls12Scan.findings();

        assertTls13AndStrongSuitesOnly(findings, "offered");
        // Every suite with forward secrecy, by IANA name; with the categories above (no NULL, anonymous,
        // export, LOW, 3DES or CBC) and Jetty's exclusion of static RSA, this is everything TLS 1.2 offers.
        // The id is PFS_ciphers in testssl.sh 3.0, FS_ciphers from 3.1.
        String forwardSecret = findings.getOrDefault("FS_ciphers", findings.getOrDefault("PFS_ciphers", ""));
        List<String> tls12 = new ArrayList<>();
        for (String suite : forwardSecret.split("\\s+")) {
            if (!suite.isEmpty() && !suite.matches("TLS_AES_.*|TLS_CHACHA20_.*")) {
                tls12.add(suite);
            }
        }
        assertThat(tls12).as(forwardSecret).isNotEmpty().allMatch(suite -> suite.matches(STRONG_TLS12));
        // Secure renegotiation (RFC 5746) is the JDK's; Pintle refuses renegotiation itself.
        assertThat(findings.get("secure_renego")).isIn("supported", "not vulnerable");
        // Client-initiated renegotiation is checked by our own probe below, not by testssl.sh's finding: its
        // check decides by whether "echo R | openssl s_client" exits before the server's close arrives, which
        // on a loaded machine it sometimes does, so a server that closes the connection is then reported
        // "VULNERABLE" (seen twice with 4 other JVMs busy on 2 cores).
        assertRenegotiationRefused(withTls12Server, withTls12Sandbox.serverPin());
        assertThat(findings.get("CRIME_TLS")).startsWith("not vulnerable");
    }

    private static Path directory(String name) throws IOException {
        return Files.createDirectories(dir.resolve(name));
    }

    /**
     * A TLS 1.2 client renegotiates on an established connection: the server must end the connection (Jetty's
     * {@code renegotiationAllowed = false}) rather than run a second handshake.
     */
    private static void assertRenegotiationRefused(TestServer server, String serverPin) throws Exception {
        SSLContext context = ClientTls.context(null, null, Set.of(serverPin));
        try (SSLSocket socket = (SSLSocket) context.getSocketFactory().createSocket("127.0.0.1", server.port())) {
            socket.setEnabledProtocols(new String[] {"TLSv1.2"});
            socket.setSoTimeout(10_000);
            socket.startHandshake();
            assertThat(socket.getSession().getProtocol()).isEqualTo("TLSv1.2");
            Throwable refused = null;
            try {
                socket.startHandshake();
                OutputStream out = socket.getOutputStream();
                out.write("GET /uuid HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                out.flush();
                int read = socket.getInputStream().read();
                assertThat(read).as("the server answered after a renegotiation").isEqualTo(-1);
            } catch (IOException e) {
                refused = e;
            }
            if (refused != null) {
                assertThat(refused).isNotInstanceOf(java.net.SocketTimeoutException.class);
            }
        }
    }

    /**
     * What both servers share: nothing older than TLS 1.2, TLS 1.2 as {@code tls12} says, TLS 1.3 offered, and of the
     * cipher categories only the strong (AEAD) one.
     */
    private static void assertTls13AndStrongSuitesOnly(Map<String, String> findings, String tls12) {
        assertThat(findings).containsEntry("SSLv2", "not offered").containsEntry("SSLv3", "not offered")
                .containsEntry("TLS1", "not offered").containsEntry("TLS1_1", "not offered")
                .containsEntry("TLS1_2", tls12);
        assertThat(findings.get("TLS1_3")).startsWith("offered");
        // LOW covers 64-bit ciphers, DES, RC2 and RC4.
        for (String category : List.of("NULL", "aNULL", "EXPORT", "LOW", "3DES_IDEA")) {
            assertThat(findings).containsEntry("cipherlist_" + category, "not offered");
        }
        assertThat(findings).containsEntry("cipherlist_AVERAGE", "not offered") // CBC
                .containsEntry("cipherlist_STRONG", "offered"); // AEAD
    }

    /** One testssl.sh run with the given checks against 127.0.0.1:{@code port}, started, not yet waited for. */
    private record Scan(List<String> command, Process process, Path json, Path output, long start) {
        static Scan start(Path dir, int port, String... checks) throws IOException {
            Path json = dir.resolve("testssl.json");
            Path output = dir.resolve("testssl.txt");
            List<String> command = new ArrayList<>(List.of(program, "--quiet", "--color", "0", "--warnings", "off",
                    "--ip", "127.0.0.1", "--nodns", "none", "--connect-timeout", "10", "--openssl-timeout", "10",
                    "--jsonfile", json.toString()));
            command.addAll(List.of(checks));
            command.add("127.0.0.1:" + port);
            long start = System.nanoTime();
            Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile())
                    .start();
            process.getOutputStream().close();
            return new Scan(List.copyOf(command), process, json, output, start);
        }

        /**
         * Waits for the run and reads its findings, each below MEDIUM (but the racy one).
         *
         * @return finding by id (the last one for an id that repeats)
         */
        Map<String, String> findings() throws Exception {
            boolean finished = process.waitFor(RUN_TIMEOUT_SECONDS, TimeUnit.SECONDS);
            if (!finished) {
                kill();
            }
            String text = Files.readString(output, StandardCharsets.UTF_8);
            System.out.printf("TlsAuditIT: %s took %d s%n%s%n", String.join(" ", command),
                    TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start), text);
            assertThat(finished).as("testssl.sh finished within " + RUN_TIMEOUT_SECONDS + " s:\n" + text).isTrue();
            assertThat(process.exitValue()).as(text).isZero();
            Map<String, String> findings = new LinkedHashMap<>();
            for (JsonNode finding : new ObjectMapper().readTree(json.toFile())) {
                String id = finding.path("id").asText();
                String severity = finding.path("severity").asText();
                assertThat(severity).as("testssl.sh scan problem %s: %s\n%s", id, finding.path("finding").asText(),
                        text).isNotIn("WARN", "FATAL");
                if (!id.equals(RACY_FINDING)) {
                    assertThat(severity).as("testssl.sh finding %s: %s", id, finding.path("finding").asText())
                            .isNotIn("MEDIUM", "HIGH", "CRITICAL");
                }
                findings.put(id, finding.path("finding").asText());
            }
            return findings;
        }

        void kill() {
            if (process.isAlive()) {
                process.descendants().forEach(ProcessHandle::destroyForcibly);
                process.destroyForcibly();
            }
        }
    }

    private static boolean installed(String name) {
        try {
            Process process = new ProcessBuilder(name, "--version").redirectErrorStream(true).start();
            process.getInputStream().readAllBytes();
            return process.waitFor(30, TimeUnit.SECONDS) && process.exitValue() == 0;
        } catch (IOException | InterruptedException e) {
            return false;
        }
    }
}
