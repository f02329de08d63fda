package io.pintle.server.nodes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pintle.server.tls.SelfSigned;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class PolicyServerPinLoaderTest {
    @TempDir
    Path dir;

    @Test
    void thePinIsTheKeyOfTheFirstCertificate() throws IOException {
        SelfSigned.Identity policyServer = SelfSigned.generate(SelfSigned.KeyType.RSA_2048, "root");
        SelfSigned.Identity other = SelfSigned.generate(SelfSigned.KeyType.EC_P256, "other");
        Path file = dir.resolve("policy_server.pem");
        SelfSigned.writeCertificates(file, policyServer.certificate(), other.certificate());
        assertThat(PolicyServerPinLoader.parse(Files.readAllBytes(file), file))
                .isEqualTo(KeyHash.sha256(policyServer.certificate().getPublicKey()));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "not a certificate\n",
        "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n"})
    void aFileWithoutAReadableCertificateIsRefusedNamingIt(String content) {
        Path file = dir.resolve("policy_server.pem");
        assertThatThrownBy(() -> PolicyServerPinLoader.parse(content.getBytes(StandardCharsets.US_ASCII), file))
                .isInstanceOf(IOException.class)
                .hasMessageStartingWith(file + ": ")
                .hasMessageContaining("upstream.certificate");
    }
    @ParameterizedTest
    @ValueSource(strings = {"not a certificate\n", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
        "-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n"})
    void aDamagedCertificateIsDescribedByItsFormNotByTheJdksWording(String content) {
        Path file = dir.resolve("policy_server.pem");
        assertThatThrownBy(() -> PolicyServerPinLoader.parse(content.getBytes(StandardCharsets.US_ASCII), file))
                .isInstanceOf(IOException.class)
                .hasMessage(file + ": not a PEM certificate (upstream.certificate): expected the policy server's "
                        + "certificate as '-----BEGIN CERTIFICATE-----', base64 lines and '-----END CERTIFICATE-----' "
                        + "(damaged or cut short?)");
    }
}
