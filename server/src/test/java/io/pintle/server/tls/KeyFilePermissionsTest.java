package io.pintle.server.tls;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class KeyFilePermissionsTest {
    @TempDir
    Path dir;

    private Path key(String mode) throws IOException {
        Path key = Files.writeString(dir.resolve("localhost.priv"), "-----BEGIN PRIVATE KEY-----");
        Files.setPosixFilePermissions(key, PosixFilePermissions.fromString(mode));
        return key;
    }

    @ParameterizedTest
    @ValueSource(strings = {"rw-------", "rw-r-----", "r--------", "rw-rw----"})
    void ownerAndGroupOnlyKeysAreAccepted(String mode) throws IOException {
        Path key = key(mode);
        assertThatCode(() -> KeyFilePermissions.check(key, false)).doesNotThrowAnyException();
    }

    @ParameterizedTest
    @ValueSource(strings = {"rw-r--r--", "rw----r--", "rwxrwxrwx"})
    void keysOthersCanReadAreRefusedNamingTheFileTheModeAndTheFix(String mode) throws IOException {
        Path key = key(mode);
        assertThatThrownBy(() -> KeyFilePermissions.check(key, false))
                .isInstanceOf(IOException.class)
                .hasMessageContaining(key.toString())
                .hasMessageContaining(mode)
                .hasMessageContaining("chmod o-rwx")
                .hasMessageContaining("allow_world_readable_key");
    }

    @ParameterizedTest
    @ValueSource(strings = {"rw-r--r--", "rw-------"})
    void theCheckCanBeTurnedOff(String mode) throws IOException {
        Path key = key(mode);
        assertThatCode(() -> KeyFilePermissions.check(key, true)).doesNotThrowAnyException();
    }
}
