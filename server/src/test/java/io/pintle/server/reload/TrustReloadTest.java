package io.pintle.server.reload;

import static org.assertj.core.api.Assertions.assertThat;

import io.pintle.server.config.ConfigLoader;
import io.pintle.server.config.ServerConfig;
import io.pintle.server.testing.Sandbox;
import io.pintle.server.tls.CertificateAuthority;
import io.pintle.server.tls.SelfSigned;
import java.math.BigInteger;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What a reload keeps of certificate-validation mode's inputs when their bytes did not change. */
class TrustReloadTest {
    @TempDir
    Path dir;

    @Test
    void aReloadKeepsTheCaBundleAndTheCrlsWhoseBytesDidNotChange() throws Exception {
        Sandbox sandbox = Sandbox.create(dir);
        CertificateAuthority root = CertificateAuthority.root(SelfSigned.KeyType.EC_P256, "Root", Duration.ofDays(9));
        SelfSigned.writeCertificates(dir.resolve("lib/ca.pem"), root.certificate());
        CertificateAuthority.writeCrls(dir.resolve("lib/ca.crl"), root.crl(List.of(BigInteger.TEN)));
        sandbox.nodesConfig("authentication = [\"cert_validation\"]\nca_file = \"lib/ca.pem\"\n"
                + "crl_files = [\"lib/ca.crl\"]\ndenied_keys_file = \"\"");
        ServerConfig config = ConfigLoader.load(sandbox.config(""));
        SnapshotLoader loader = new SnapshotLoader(config, Clock.systemUTC());
        ServerSnapshot first = loader.load(1);

        sandbox.listNode("another-node");
        ServerSnapshot second = loader.load(2, first);
        assertThat(second.nodes().nodeCount()).isEqualTo(first.nodes().nodeCount() + 1);
        assertThat(second.trust().ca()).isSameAs(first.trust().ca());
        assertThat(second.trust().revocations().crls().get(0)).isSameAs(first.trust().revocations().crls().get(0));

        CertificateAuthority.writeCrls(dir.resolve("lib/ca.crl"), root.crl(List.of(BigInteger.TEN, BigInteger.TWO)));
        ServerSnapshot third = loader.load(3, second);
        assertThat(third.trust().ca()).isSameAs(first.trust().ca());
        assertThat(third.trust().revocations().crls().get(0).entries()).isEqualTo(2);
    }
}
