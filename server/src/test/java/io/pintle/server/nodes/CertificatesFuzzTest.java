package io.pintle.server.nodes;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Fuzzes {@link CertificatesLoader} with PEM bundles. A seed is the previous bundle, a NUL byte, then the new one
 * (see {@code CertificatesFuzzTestInputs/}); without a NUL both are the input.
 */
class CertificatesFuzzTest {
    private static final Path FILE = Path.of("/var/rudder/lib/ssl/nodescerts.pem");

    /**
     * Parsing against the previous bundle's index gives exactly what parsing from scratch gives: the same bindings
     * and warnings, or the same error, which names the file. Nothing else may be thrown.
     */
    @FuzzTest(maxDuration = "2m")
    void incrementalParseEqualsWholeParse(byte[] input) {
        byte[][] parts = NodesListFuzzTest.Seeds.split(input);
        CertificateIndex previous;
        try {
            previous = CertificatesLoader.parse(parts[0], FILE, warning -> {}, CertificateIndex.EMPTY);
        } catch (IOException e) {
            previous = CertificateIndex.EMPTY;
        }
        byte[] content = parts[1];
        Outcome whole = Outcome.of(content, CertificateIndex.EMPTY);
        Outcome incremental = Outcome.of(content, previous);
        assertThat(incremental.bindings()).isEqualTo(whole.bindings());
        assertThat(incremental.error()).isEqualTo(whole.error());
        if (whole.error() != null) {
            assertThat(whole.error()).startsWith(FILE.toString());
        } else {
            // A certificate reused from the previous load is not warned about again only if it was bound; a
            // skipped one is parsed, and warned about, each time: so the warnings are the same too.
            assertThat(incremental.warnings()).isEqualTo(whole.warnings());
            assertThat(whole.blocks()).isGreaterThanOrEqualTo(whole.bindings().size());
        }
    }

    record Outcome(List<CertificateBinding> bindings, List<String> warnings, int blocks, String error) {
        static Outcome of(byte[] content, CertificateIndex previous) {
            List<String> warnings = new ArrayList<>();
            try {
                CertificateIndex index = CertificatesLoader.parse(content, FILE, warnings::add, previous);
                return new Outcome(List.copyOf(index.bindings()), warnings, index.blockCount(), null);
            } catch (IOException e) {
                return new Outcome(null, null, -1, e.getMessage());
            }
        }
    }
}
