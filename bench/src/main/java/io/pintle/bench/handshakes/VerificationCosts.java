package io.pintle.bench.handshakes;

import io.pintle.server.nodes.CaTrust;
import io.pintle.server.nodes.ClientCertificate;
import io.pintle.server.tls.SelfSigned;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.function.Supplier;

/**
 * The per-connection work of each mode, timed in this JVM (one thread, after the servers stopped) on the run's own
 * certificates: what the CA modes add to a handshake, apart from TLS and HTTP. A plain timed loop after a warm-up,
 * not JMH: enough to tell tens of microseconds from milliseconds.
 *
 * <p>PKIX reads every certificate through the JDK's {@code X509Factory}, which keeps the last 750 by encoding, and
 * a certificate object remembers its last signature check: with the bench's one client certificate, the server
 * checks its signatures once, not per connection. {@link #verifyFleetMicros} cycles through more leaves than that
 * cache holds: what a server with a fleet of nodes pays per connection.
 *
 * @param verifySameMicros {@link CaTrust#verify} of leaf + intermediate against the root-only bundle, the same
 *     certificate objects every call, µs per call
 * @param parseMicros parsing leaf + intermediate from DER, µs per call
 * @param verifyFreshMicros parsing them and {@link CaTrust#verify}, new objects every call, µs per call
 * @param readChainMicros {@link ClientCertificate#of} of the CA client's chain, µs per call
 * @param readPinnedMicros {@link ClientCertificate#of} of the pinned client's certificate, µs per call
 * @param verifyFleetMicros parsing and {@link CaTrust#verify} with a different leaf every call ({@link #FLEET}
 *     leaves in turn, more than the JDK's certificate cache holds), each seen before by the bundle (which
 *     remembers valid chains): a fleet's nodes coming back
 * @param verifyFirstMicros the same, each leaf seen for the first time by the bundle: signatures really checked,
 *     what each node costs once (and every node after a change of the CA bundle)
 */
record VerificationCosts(double verifySameMicros, double parseMicros, double verifyFreshMicros,
        double readChainMicros, double readPinnedMicros, double verifyFleetMicros, double verifyFirstMicros) {
    /**
     * Distinct leaves of the fleet figure: more than the 750 certificates the JDK's {@code X509Factory} keeps by
     * encoding (PKIX re-reads every certificate through it, and a cached one keeps its signature check).
     */
    static final int FLEET = 2000;
    private static final long WARMUP_NANOS = 3_000_000_000L;
    private static final long MEASURE_NANOS = 3_000_000_000L;

    /**
     * Times the verification alone, on certificates it generates: {@code java -cp pintle-bench.jar
     * io.pintle.bench.handshakes.VerificationCosts [ec|rsa2048]}.
     *
     * @param args the client and CA key type (default ec)
     */
    public static void main(String[] args) throws Exception {
        SelfSigned.KeyType type = SelfSigned.KeyType.parse(args.length > 0 ? args[0] : "ec");
        Path directory = Files.createTempDirectory("pintle-verification-");
        try {
            VerificationCosts costs = measure(HandshakesLayout.create(directory, type, List.of()));
            System.out.printf(Locale.ROOT, "%s client and CA keys, Java %s%n%s", HandshakesLayout.title(type),
                    Runtime.version(), costs.table());
        } finally {
            try (var files = Files.walk(directory)) {
                files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    static VerificationCosts measure(HandshakesLayout layout) throws IOException, GeneralSecurityException {
        Path ca = layout.caDirectory();
        X509Certificate leaf = read(ca.resolve("agent-http.cert"));
        X509Certificate intermediate = read(ca.resolve("intermediate.pem"));
        X509Certificate pinned = read(layout.pinnedHome().resolve("agent.cert"));
        CaTrust trust = CaTrust.parse(Files.readAllBytes(ca.resolve("root.pem")), ca.resolve("root.pem"),
                CaTrust.DEFAULT_MAX_DEPTH);
        List<X509Certificate> chain = List.of(leaf, intermediate);
        Instant now = Instant.now();
        if (!(trust.verify(chain, now) instanceof CaTrust.Valid)) {
            throw new IllegalStateException("the bench chain does not verify: " + trust.verify(chain, now));
        }
        byte[] leafDer = leaf.getEncoded();
        byte[] intermediateDer = intermediate.getEncoded();
        CertificateFactory factory = CertificateFactory.getInstance("X.509");
        Supplier<List<X509Certificate>> fresh = () -> List.of(parse(factory, leafDer),
                parse(factory, intermediateDer));
        // The fleet: its own root and intermediate (the layout keeps no CA private key), FLEET leaves.
        io.pintle.server.tls.CertificateAuthority fleetRoot = io.pintle.server.tls.CertificateAuthority.root(
                layout.clientKey(), "Pintle bench fleet root", java.time.Duration.ofDays(30));
        io.pintle.server.tls.CertificateAuthority fleetCa = fleetRoot.intermediate(layout.clientKey(),
                "Pintle bench fleet intermediate");
        java.security.PublicKey leafKey = leaf.getPublicKey();
        byte[][] leaves = new byte[FLEET][];
        for (int i = 0; i < FLEET; i++) {
            leaves[i] = fleetCa.issue(leafKey, io.pintle.server.tls.CertificateAuthority.subject(
                    java.util.UUID.randomUUID().toString(), null), List.of()).getEncoded();
        }
        byte[] fleetIntermediate = fleetCa.certificate().getEncoded();
        CaTrust fleetTrust = CaTrust.parse(pemOf(fleetRoot.certificate()), ca.resolve("fleet-root.pem"),
                CaTrust.DEFAULT_MAX_DEPTH);
        int[] next = {0};
        Supplier<Object> fleet = () -> {
            CaTrust.Verdict verdict = fleetTrust.verify(List.of(parse(factory, leaves[next[0]++ % FLEET]),
                    parse(factory, fleetIntermediate)), now);
            if (!(verdict instanceof CaTrust.Valid)) {
                throw new IllegalStateException("a fleet leaf does not verify: " + verdict);
            }
            return verdict;
        };
        return new VerificationCosts(micros(() -> trust.verify(chain, now)), micros(fresh::get),
                micros(() -> trust.verify(fresh.get(), now)), micros(() -> ClientCertificate.of(chain)),
                micros(() -> ClientCertificate.of(pinned)), micros(fleet),
                firstSight(fleetRoot, factory, leaves, fleetIntermediate, now, ca));
    }

    /**
     * Each leaf verified once by a bundle that never saw it: a first pass on one bundle object warms the JIT, the
     * timed pass runs on another (same bytes, nothing remembered).
     */
    private static double firstSight(io.pintle.server.tls.CertificateAuthority root, CertificateFactory factory,
            byte[][] leaves, byte[] intermediate, Instant now, Path ca) throws IOException {
        double micros = 0;
        for (int pass = 0; pass < 2; pass++) {
            CaTrust unseen = CaTrust.parse(pemOf(root.certificate()), ca.resolve("fleet-root.pem"),
                    CaTrust.DEFAULT_MAX_DEPTH);
            long start = System.nanoTime();
            for (byte[] leaf : leaves) {
                if (!(unseen.verify(List.of(parse(factory, leaf), parse(factory, intermediate)), now)
                        instanceof CaTrust.Valid)) {
                    throw new IllegalStateException("a fleet leaf does not verify");
                }
            }
            micros = (System.nanoTime() - start) / 1000.0 / leaves.length;
        }
        return micros;
    }

    /** @return the Markdown table */
    String table() {
        return String.format(Locale.ROOT, "| work, once per connection | µs per call |%n|---|---:|%n"
                        + "| `CaTrust.verify` (leaf + intermediate, root-only bundle; the JDK's PKIX `CertPathBuilder`),"
                        + " the bench's one leaf, parsed from its bytes every call as each connection has it (the JDK"
                        + " hands back its cached certificate, signature check remembered: what the server sees in"
                        + " this bench) | **%.0f** |%n"
                        + "| parsing leaf + intermediate alone (in the line above) | %.0f |%n"
                        + "| `CaTrust.verify`, the same objects every call | %.0f |%n"
                        + "| `CaTrust.verify` with a different leaf every call (" + FLEET + " in turn, parsing"
                        + " included), each seen before: a fleet's nodes coming back (valid chains remembered) |"
                        + " **%.0f** |%n"
                        + "| the same, each leaf seen for the first time: signatures really checked, once per node"
                        + " (and after a change of the CA bundle) | **%.0f** |%n"
                        + "| `ClientCertificate.of` (CA client's chain) | %.0f |%n"
                        + "| `ClientCertificate.of` (pinned client's certificate) | %.0f |%n",
                verifyFreshMicros, parseMicros, verifySameMicros, verifyFleetMicros, verifyFirstMicros,
                readChainMicros, readPinnedMicros);
    }

    private static byte[] pemOf(X509Certificate certificate) {
        return io.pintle.bench.harness.Pem.certificate(certificate);
    }

    private static X509Certificate parse(CertificateFactory factory, byte[] der) {
        try {
            return (X509Certificate) factory.generateCertificate(new ByteArrayInputStream(der));
        } catch (CertificateException e) {
            throw new IllegalStateException(e);
        }
    }

    private static double micros(Supplier<Object> work) {
        long end = System.nanoTime() + WARMUP_NANOS;
        Object sink = null;
        while (System.nanoTime() < end) {
            sink = work.get();
        }
        long calls = 0;
        long start = System.nanoTime();
        end = start + MEASURE_NANOS;
        long now;
        do {
            sink = work.get();
            calls++;
            now = System.nanoTime();
        } while (now < end);
        if (sink == null) {
            throw new IllegalStateException("no result");
        }
        return (now - start) / 1e3 / calls;
    }

    private static X509Certificate read(Path file) throws IOException, GeneralSecurityException {
        try (InputStream in = Files.newInputStream(file)) {
            return (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
        }
    }
}
