package io.pintle.bench.handshakes;

import io.pintle.server.nodes.CaTrust;
import io.pintle.server.nodes.ClientCertificate;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.List;
import java.util.function.Supplier;

/**
 * The per-connection work of each mode, timed in this JVM (one thread, after the servers stopped) on the run's own
 * certificates: what the CA modes add to a handshake, apart from TLS and HTTP. A plain timed loop after a warm-up,
 * not JMH: enough to tell tens of microseconds from milliseconds.
 *
 * @param verifyMicros {@link CaTrust#verify} of leaf + intermediate against the root-only bundle, µs per call
 * @param readChainMicros {@link ClientCertificate#of} of the CA client's chain, µs per call
 * @param readPinnedMicros {@link ClientCertificate#of} of the pinned client's certificate, µs per call
 */
record VerificationCosts(double verifyMicros, double readChainMicros, double readPinnedMicros) {
    private static final long WARMUP_NANOS = 3_000_000_000L;
    private static final long MEASURE_NANOS = 3_000_000_000L;

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
        return new VerificationCosts(micros(() -> trust.verify(chain, now)), micros(() -> ClientCertificate.of(chain)),
                micros(() -> ClientCertificate.of(pinned)));
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
