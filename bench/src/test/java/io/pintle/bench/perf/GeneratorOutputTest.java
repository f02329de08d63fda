package io.pintle.bench.perf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The generators' summaries as they printed them (captured against nginx 1.22 on loopback). */
class GeneratorOutputTest {
    @Test
    void abNewConnectionsAnsweredNotModifiedCountAsExpected() throws IOException {
        GeneratorOutput out = GeneratorOutput.ab(captured("ab-304.out"), true);

        assertThat(out.completed()).isEqualTo(2235);
        assertThat(out.expected()).isEqualTo(2235);
        assertThat(out.failed()).isZero();
        assertThat(out.seconds()).isEqualTo(2.0);
        assertThat(out.rate()).isCloseTo(1117.5, within(0.1));
        assertThat(out.firstByteP50Millis()).isNaN();
    }

    @Test
    void abAnswersOutsideTheExpectedClassAreFailures() throws IOException {
        GeneratorOutput notFound = GeneratorOutput.ab(captured("ab-404.out"), false);
        GeneratorOutput okWhenNotModifiedExpected = GeneratorOutput.ab(captured("ab-keepalive.out"), true);

        assertThat(notFound.expected()).isZero();
        assertThat(notFound.failed()).isEqualTo(1104);
        assertThat(notFound.firstError()).isEqualTo("1104 non-2xx");
        assertThat(okWhenNotModifiedExpected.expected()).isZero();
        assertThat(okWhenNotModifiedExpected.failed()).isEqualTo(80087);
    }

    @Test
    void abKeepAliveRate() throws IOException {
        GeneratorOutput out = GeneratorOutput.ab(captured("ab-keepalive.out"), false);

        assertThat(out.expected()).isEqualTo(80087);
        assertThat(out.seconds()).isEqualTo(2.001);
        assertThat(out.failed()).isZero();
    }

    @Test
    void h2loadCountsTwoHundredsOverItsOwnTime() throws IOException {
        GeneratorOutput out = GeneratorOutput.h2load(captured("h2load.out"));

        assertThat(out.completed()).isEqualTo(42995);
        assertThat(out.expected()).isEqualTo(42995);
        assertThat(out.failed()).isZero();
        assertThat(out.seconds()).isEqualTo(2.11);
    }

    @Test
    void h2loadConnectionClosedByTheServerShowsAsFailures() throws IOException {
        // nginx's default keepalive_requests (1,000) closed the one connection; h2load does not reconnect.
        GeneratorOutput out = GeneratorOutput.h2load(captured("h2load-connection-closed.out"));

        assertThat(out.expected()).isEqualTo(1000);
        assertThat(out.failed()).isEqualTo(15);
        assertThat(out.firstError()).isEqualTo("15 failed, 15 errored, 0 timeout");
    }

    @Test
    void tlsconnLine() throws IOException {
        GeneratorOutput out = GeneratorOutput.tlsconn(captured("tlsconn.out"));

        assertThat(out.completed()).isEqualTo(1027);
        assertThat(out.expected()).isEqualTo(1027);
        assertThat(out.seconds()).isEqualTo(1.005);
        assertThat(out.firstByteP50Millis()).isEqualTo(1.379);
        assertThat(out.firstByteP99Millis()).isEqualTo(3.402);
        assertThat(out.firstError()).isEmpty();
    }

    @Test
    void tlsconnWrongStatusIsNotExpected() throws IOException {
        GeneratorOutput out = GeneratorOutput.tlsconn(captured("tlsconn-wrong.out"));

        assertThat(out.expected()).isZero();
        assertThat(out.failed()).isEqualTo(647);
    }

    @Test
    void tlsconnHerdLines() throws IOException {
        String output = captured("tlsconn-herd.out");
        GeneratorOutput.Herd herd = GeneratorOutput.tlsconnHerd(output);

        assertThat(herd.agents()).isEqualTo(2000);
        assertThat(herd.ok()).isEqualTo(1998);
        assertThat(herd.errors()).isEqualTo(2);
        assertThat(herd.completionSeconds()).isEqualTo(21.012);
        assertThat(herd.p50Millis()).isEqualTo(5320.14);
        assertThat(herd.p99Millis()).isEqualTo(15743.002);
        assertThat(herd.maxMillis()).isEqualTo(16788.311);
        assertThat(herd.connectP99Millis()).isEqualTo(11293.417);
        assertThat(herd.connectErrors()).isEqualTo(3);
        // The connections' line beside it: every connection of the herd, the failed ones' first error.
        GeneratorOutput connections = GeneratorOutput.tlsconn(output);
        assertThat(connections.expected()).isEqualTo(3996);
        assertThat(connections.failed()).isEqualTo(2);
        assertThat(connections.firstError()).isEqualTo("handshake");
        assertThatThrownBy(() -> GeneratorOutput.tlsconnHerd(captured("tlsconn.out")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("no herd line");
    }

    @Test
    void outputWithoutSummaryIsRefused() {
        assertThatThrownBy(() -> GeneratorOutput.ab("SSL read failed (5) - closing connection\n", true))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("ab's output");
        assertThatThrownBy(() -> GeneratorOutput.tlsconn("")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void accessLogTurnedOnInTheBlock() {
        assertThat(PerCoreBench.accessLogOn("[log]\naccess = false\n[limits]\nx = 1"))
                .isEqualTo("[log]\naccess = true\n[limits]\nx = 1");
        assertThat(PerCoreBench.accessLogOn("[log]\nlevel = \"info\""))
                .isEqualTo("[log]\naccess = true\nlevel = \"info\"");
        assertThat(PerCoreBench.accessLogOn("[limits]\nx = 1")).isEqualTo("[limits]\nx = 1\n[log]\naccess = true");
    }

    private static String captured(String name) throws IOException {
        try (InputStream in = GeneratorOutputTest.class.getResourceAsStream("generators/" + name)) {
            assertThat(in).as(name).isNotNull();
            return new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
        }
    }
}
