package io.pintle.server.nodes;

import static org.assertj.core.api.Assertions.assertThat;

import io.pintle.server.tls.SelfSigned;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The deny list matches a key by its sha256 or its sha512 pin; sha512 is hashed only when the list has one. */
class RevocationsDenyListTest {
    private static final SelfSigned.Identity NODE = SelfSigned.generate(SelfSigned.KeyType.EC_P256, "node-1");
    private static final SelfSigned.Identity OTHER = SelfSigned.generate(SelfSigned.KeyType.EC_P256, "node-2");

    @Test
    void deniesByEitherPinAndOnlyTheListedKey() {
        ClientCertificate node = ClientCertificate.of(NODE.certificate());
        KeyHash sha256 = KeyHash.sha256(NODE.keyPair().getPublic());
        KeyHash sha512 = KeyHash.of("sha512", NODE.keyPair().getPublic());
        KeyHash other512 = KeyHash.of("sha512", OTHER.keyPair().getPublic());

        assertThat(new Revocations(List.of(), Set.of(sha256), null).deniedKey(node)).contains(sha256.toString());
        assertThat(new Revocations(List.of(), Set.of(other512, sha512), null).deniedKey(node))
                .contains(sha512.toString());
        assertThat(new Revocations(List.of(), Set.of(other512), null).deniedKey(node)).isNull();
        assertThat(new Revocations(List.of(), Set.of(KeyHash.sha256(OTHER.keyPair().getPublic())), null)
                .deniedKey(node)).isNull();
        assertThat(new Revocations(List.of(), Set.of(), null).deniedKey(node)).isNull();
    }
}
