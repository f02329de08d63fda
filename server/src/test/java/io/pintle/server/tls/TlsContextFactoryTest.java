package io.pintle.server.tls;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.List;
import javax.net.ssl.SSLEngine;
import org.eclipse.jetty.util.ssl.SslContextFactory;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class TlsContextFactoryTest {
    private static final String STRONG =
            "TLS_AES_(128|256)_GCM_SHA(256|384)|TLS_CHACHA20_POLY1305_SHA256"
                    + "|TLS_ECDHE_(ECDSA|RSA)_WITH_(AES_(128|256)_GCM_SHA(256|384)|CHACHA20_POLY1305_SHA256)";

    @ParameterizedTest
    @EnumSource(value = SelfSigned.KeyType.class, names = {"RSA_2048", "EC_P256"})
    void withTls12OnlyEcdheAeadSuitesAreEnabled(SelfSigned.KeyType type) throws Exception {
        SelfSigned.Identity identity = SelfSigned.generate(type, "root");
        SslContextFactory.Server factory = TlsContextFactory.create(
                new ServerCredentials(List.of(identity.certificate()), identity.keyPair().getPrivate()),
                List.of("TLSv1.3", "TLSv1.2"));
        factory.start();
        try {
            SSLEngine engine = factory.newSSLEngine();
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
