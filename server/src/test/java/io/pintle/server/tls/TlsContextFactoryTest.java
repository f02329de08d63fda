package io.pintle.server.tls;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.pintle.server.config.ServerConfig;
import java.util.Arrays;
import java.util.List;
import javax.net.ssl.SSLEngine;
import org.eclipse.jetty.util.ssl.SslContextFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

class TlsContextFactoryTest {
    @ParameterizedTest
    @EnumSource(ServerConfig.TlsProvider.class)
    void tls13OnlyByDefaultWithEitherProvider(ServerConfig.TlsProvider provider) throws Exception {
        SelfSigned.Identity identity = SelfSigned.generate(SelfSigned.KeyType.RSA_4096, "root");
        SslContextFactory.Server factory = TlsContextFactory.create(
                new ServerCredentials(List.of(identity.certificate()), identity.keyPair().getPrivate()),
                List.of("TLSv1.3"), provider);
        factory.start();
        try {
            SSLEngine engine = factory.newSSLEngine();
            assertThat(engine.getEnabledProtocols()).containsExactly("TLSv1.3");
            assertThat(engine.getWantClientAuth()).isTrue();
            assertThat(engine.getNeedClientAuth()).isFalse();
            ServerConfig.TlsProvider used = TlsContextFactory.resolve(provider);
            assertThat(engine.getClass().getName().startsWith("org.conscrypt."))
                    .as(engine.getClass().getName())
                    .isEqualTo(used == ServerConfig.TlsProvider.CONSCRYPT);
            assertThat(TlsContextFactory.describe(provider)).contains(
                    used == ServerConfig.TlsProvider.CONSCRYPT ? "Conscrypt 2." : "SunJSSE");
        } finally {
            factory.stop();
        }
    }

    private static final String STRONG =
            "TLS_AES_(128|256)_GCM_SHA(256|384)|TLS_CHACHA20_POLY1305_SHA256"
                    + "|TLS_ECDHE_(ECDSA|RSA)_WITH_(AES_(128|256)_GCM_SHA(256|384)|CHACHA20_POLY1305_SHA256)";

    @Test
    void autoIsConscryptWhereItsNativeLibraryShips() {
        // Conscrypt's jar carries Linux x86-64 and AArch64 libraries (and Windows x86-64): Rudder's servers.
        String arch = System.getProperty("os.arch");
        assumeTrue(System.getProperty("os.name").equals("Linux") && List.of("amd64", "aarch64").contains(arch),
                "no Conscrypt library for " + System.getProperty("os.name") + " " + arch);
        assertThat(TlsContextFactory.resolve(ServerConfig.TlsProvider.AUTO))
                .isEqualTo(ServerConfig.TlsProvider.CONSCRYPT);
        assertThat(TlsContextFactory.resolve(ServerConfig.TlsProvider.JDK)).isEqualTo(ServerConfig.TlsProvider.JDK);
    }

    @ParameterizedTest
    @CsvSource({"RSA_2048, JDK", "EC_P256, JDK", "RSA_2048, CONSCRYPT", "EC_P256, CONSCRYPT"})
    void withTls12OnlyEcdheAeadSuitesAreEnabled(SelfSigned.KeyType type, ServerConfig.TlsProvider provider)
            throws Exception {
        SelfSigned.Identity identity = SelfSigned.generate(type, "root");
        SslContextFactory.Server factory = TlsContextFactory.create(
                new ServerCredentials(List.of(identity.certificate()), identity.keyPair().getPrivate()),
                List.of("TLSv1.3", "TLSv1.2"), provider);
        factory.start();
        try {
            SSLEngine engine = factory.newSSLEngine();
            // The engine is the named provider's: Conscrypt's classes live in org.conscrypt.
            assertThat(engine.getClass().getName().startsWith("org.conscrypt."))
                    .as(engine.getClass().getName())
                    .isEqualTo(provider == ServerConfig.TlsProvider.CONSCRYPT);
            assertThat(engine.getEnabledProtocols()).containsExactlyInAnyOrder("TLSv1.3", "TLSv1.2");
            assertThat(engine.getEnabledCipherSuites())
                    .as(Arrays.toString(engine.getEnabledCipherSuites()))
                    .isNotEmpty()
                    .allMatch(suite -> suite.matches(STRONG))
                    .contains("TLS_AES_128_GCM_SHA256")
                    .anyMatch(suite -> suite.startsWith("TLS_ECDHE_"));
        } finally {
            factory.stop();
        }
    }
}
