package io.pintle.server.nodes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pintle.api.KeyPins;
import io.pintle.server.tls.SelfSigned;
import java.security.MessageDigest;
import java.security.PublicKey;
import java.util.Base64;
import java.util.HexFormat;
import java.util.Locale;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.NullSource;
import org.junit.jupiter.params.provider.ValueSource;

class KeyHashTest {
    private static PublicKey key;
    private static byte[] sha256;
    private static byte[] sha512;

    @BeforeAll
    static void generateKey() throws Exception {
        key = SelfSigned.keyPair(SelfSigned.KeyType.EC_P256).getPublic();
        sha256 = MessageDigest.getInstance("SHA-256").digest(key.getEncoded());
        sha512 = MessageDigest.getInstance("SHA-512").digest(key.getEncoded());
    }

    private static String b64(byte[] bytes) {
        return Base64.getEncoder().encodeToString(bytes);
    }

    @Test
    void parsesSha256Pin() {
        assertThat(KeyHash.parse("sha256//" + b64(sha256))).contains(new KeyHash("sha256", b64(sha256)));
    }

    @Test
    void parsesSha512Pin() {
        assertThat(KeyHash.parse("sha512//" + b64(sha512))).contains(new KeyHash("sha512", b64(sha512)));
    }

    @Test
    void algorithmNameIsCaseInsensitive() {
        assertThat(KeyHash.parse("SHA256//" + b64(sha256))).contains(new KeyHash("sha256", b64(sha256)));
    }

    @Test
    void legacyHexFormEqualsTheBase64Form() {
        String hex = HexFormat.of().formatHex(sha256);

        assertThat(KeyHash.parse("sha256:" + hex)).isEqualTo(KeyHash.parse("sha256//" + b64(sha256))).isPresent();
        assertThat(KeyHash.parse("sha256:" + hex.toUpperCase(Locale.ROOT)))
                .isEqualTo(KeyHash.parse("sha256//" + b64(sha256)));
        assertThat(KeyHash.parse("sha512:" + HexFormat.of().formatHex(sha512)))
                .contains(KeyHash.of("sha512", key));
    }

    @ParameterizedTest(name = "[{index}] ''{0}''")
    @NullSource
    @ValueSource(strings = {
        "",
        "garbage",
        "sha256:",
        "sha256//",
        "sha256:zz",
        "sha256:abcd",
        "sha256//not*base64!",
        "md5//1B2M2Y8AsgTpgAmY7PhCfg==",
        "//AAAA",
        ":abcd",
        // a sha256-sized digest labelled sha512
        "sha512//47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=",
    })
    void malformedPinIsIgnored(String text) {
        assertThat(KeyHash.parse(text)).isEmpty();
    }

    @Test
    void constructorRefusesWrongDigestLengthAndUnknownAlgorithm() {
        assertThatThrownBy(() -> new KeyHash("sha256", b64(sha512)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("32 bytes");
        assertThatThrownBy(() -> new KeyHash("md5", b64(new byte[16])))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("md5");
    }

    @Test
    void sha256OfAKeyIsTheRudderAndCurlPin() {
        assertThat(KeyHash.sha256(key).toString()).isEqualTo(KeyPins.sha256(key));
        assertThat(KeyHash.sha256(key).base64()).isEqualTo(b64(sha256));
    }

    @Test
    void sha512OfAKeyUsesSha512() {
        assertThat(KeyHash.of("sha512", key)).isEqualTo(new KeyHash("sha512", b64(sha512)));
        assertThatThrownBy(() -> KeyHash.of("sha1", key)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void textRoundTripsThroughParse() {
        KeyHash sha256Pin = KeyHash.sha256(key);
        KeyHash sha512Pin = KeyHash.of("sha512", key);

        assertThat(KeyHash.parse(sha256Pin.toString())).contains(sha256Pin);
        assertThat(KeyHash.parse(sha512Pin.toString())).contains(sha512Pin);
        assertThat(sha256Pin.toString()).startsWith("sha256//");
    }

    @Test
    void unpaddedBase64DenotesTheSamePin() {
        String unpadded = b64(sha256).replace("=", "");

        assertThat(KeyHash.parse("sha256//" + unpadded)).contains(KeyHash.sha256(key));
    }
}
