package io.pintle.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.pintle.server.config.ServerConfig;
import io.pintle.server.demo.DemoLayout;
import org.junit.jupiter.api.Test;

class DescriptorLimitTest {
    @Test
    void conscryptNeedsThreeDescriptorsPerConnection() {
        // bench/perf's machine: a hard limit of 20,000, 10,000 connections.
        assertThat(PintleServer.descriptorShortfall(20_000, 10_000, ServerConfig.TlsProvider.CONSCRYPT))
                .hasValueSatisfying(warning -> assertThat(warning)
                        .contains("(20000)", "max_connections = 10000", "needs (31000", "3 per TLS connection",
                                "Conscrypt", "LimitNOFILE"));
        assertThat(PintleServer.descriptorShortfall(65_536, 10_000, ServerConfig.TlsProvider.CONSCRYPT)).isEmpty();
        assertThat(PintleServer.descriptorShortfall(31_000, 10_000, ServerConfig.TlsProvider.CONSCRYPT)).isEmpty();
        assertThat(PintleServer.descriptorShortfall(30_999, 10_000, ServerConfig.TlsProvider.CONSCRYPT)).isPresent();
    }

    @Test
    void theJdksTlsNeedsOne() {
        assertThat(PintleServer.descriptorShortfall(20_000, 10_000, ServerConfig.TlsProvider.JDK)).isEmpty();
        assertThat(PintleServer.descriptorShortfall(1_024, 10_000, ServerConfig.TlsProvider.JDK))
                .hasValueSatisfying(warning -> assertThat(warning).contains("needs (11000", "1 per TLS connection")
                        .doesNotContain("Conscrypt"));
    }

    @Test
    void theDemoFitsTheSmallestCommonLimitWithConscrypt() {
        assertThat(PintleServer.descriptorShortfall(4_096, DemoLayout.MAX_CONNECTIONS,
                ServerConfig.TlsProvider.CONSCRYPT)).isEmpty();
    }
}
