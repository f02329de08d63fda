package io.pintle.server.reload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class InputFileTest {
    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private static String sha256(String text) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes(text)));
    }

    @TempDir
    Path dir;

    @Test
    void readGivesTheWholeFileWhateverItsSize() throws Exception {
        Random random = new Random(7);
        for (int size : new int[] {0, 1, 256 * 1024 - 1, 256 * 1024, 256 * 1024 + 1, 3 * 256 * 1024 + 17}) {
            byte[] content = new byte[size];
            random.nextBytes(content);
            Path file = Files.write(dir.resolve("input-" + size), content);

            assertThat(InputFile.read(file)).as("%d bytes", size).isEqualTo(content);
        }
        assertThatThrownBy(() -> InputFile.read(dir.resolve("missing"))).isInstanceOf(NoSuchFileException.class);
    }

    @Test
    void digestIsTheSha256OfTheBytes() throws Exception {
        InputFile input = InputFile.of(bytes("{\"root\": {}}"));

        assertThat(input.sha256()).isEqualTo(sha256("{\"root\": {}}"));
        assertThat(input.sha256()).isSameAs(input.sha256());
        assertThat(input.size()).isEqualTo(12);
    }

    @Test
    void sameContentComparesBytes() {
        assertThat(InputFile.of(bytes("abc")).sameContent(InputFile.of(bytes("abc")))).isTrue();
        assertThat(InputFile.of(bytes("abc")).sameContent(InputFile.of(bytes("abd")))).isFalse();
        assertThat(InputFile.of(bytes("abc")).sameContent(InputFile.of(bytes("abcd")))).isFalse();
        assertThat(InputFile.of(bytes("abc")).sameContent(null)).isFalse();
    }

    @Test
    void aSecretKeepsOnlyItsDigestAndStillCompares() throws Exception {
        InputFile key = InputFile.secret(bytes("-----BEGIN PRIVATE KEY-----"));

        assertThat(key.sha256()).isEqualTo(sha256("-----BEGIN PRIVATE KEY-----"));
        assertThat(key.sameContent(InputFile.secret(bytes("-----BEGIN PRIVATE KEY-----")))).isTrue();
        assertThat(key.sameContent(InputFile.of(bytes("-----BEGIN PRIVATE KEY-----")))).isTrue();
        assertThat(key.sameContent(InputFile.secret(bytes("-----BEGIN PRIVATE KEY----!")))).isFalse();
        assertThat(key).hasToString("InputFile[size=27]");
        // Nothing of the key's bytes is reachable from the object: its only array field is null.
        for (java.lang.reflect.Field field : InputFile.class.getDeclaredFields()) {
            if (field.getType() == byte[].class) {
                field.setAccessible(true);
                assertThat(field.get(key)).isNull();
            }
        }
    }
}
