package io.pintle.server.sharedfiles;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.security.KeyPairGenerator;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Base64;
import org.bouncycastle.asn1.x509.SubjectPublicKeyInfo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SharedFileStoreTest {
    @Test
    void ttlAcceptsRelaydsForms() throws Exception {
        assertThat(SharedFileStore.ttl("9136")).isEqualTo(Duration.ofSeconds(9136));
        assertThat(SharedFileStore.ttl("1h 7s")).isEqualTo(Duration.ofSeconds(3607));
        assertThat(SharedFileStore.ttl("1hour 2minutes")).isEqualTo(Duration.ofSeconds(3720));
        assertThat(SharedFileStore.ttl("1d 7seconds")).isEqualTo(Duration.ofSeconds(86407));
        assertThat(SharedFileStore.ttl("3 hours")).isEqualTo(Duration.ofHours(3));
        assertThat(SharedFileStore.ttl("2w")).isEqualTo(Duration.ofDays(14));
        for (String bad : new String[] {"913j", "913b83", "913h 89j", "", "1 2", "-5", "h", "99999d"}) {
            assertThatThrownBy(() -> SharedFileStore.ttl(bad)).as(bad)
                    .isInstanceOf(SharedFileStore.RejectedException.class);
        }
    }

    @Test
    void idsCannotLeaveTheirDirectory() {
        for (String bad : new String[] {".", "..", "a/b", "a b", "", "a\u0000b", "\u00e9"}) {
            assertThatThrownBy(() -> new SharedFileId("t", "s", bad)).as(bad).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> new SharedFileId(bad, "s", "f")).as(bad).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> new SharedFileId("t", bad, "f")).as(bad).isInstanceOf(IllegalArgumentException.class);
        }
        assertThat(new SharedFileId("t", "s", "my.file-1_x").file(Path.of("/r")))
                .isEqualTo(Path.of("/r/t/files/s/my.file-1_x"));
    }

    @Test
    void cleanupRemovesExpiredFilesAndAbandonedUploadsOnly(@TempDir Path root) throws Exception {
        Instant now = Instant.parse("2026-12-02T16:00:00Z");
        SharedFileStore store = new SharedFileStore(Clock.fixed(now, ZoneOffset.UTC), 1024);
        Path dir = Files.createDirectories(root.resolve("target/files/source"));
        write(dir, "old", now.minusSeconds(1));
        write(dir, "fresh", now.plusSeconds(60));
        Path abandoned = Files.writeString(dir.resolve(".x.1234.part"), "half");
        Files.setLastModifiedTime(abandoned, FileTime.from(now.minus(Duration.ofHours(2))));
        Path uploading = Files.writeString(dir.resolve(".y.5678.part"), "in flight");
        Files.setLastModifiedTime(uploading, FileTime.from(now.minusSeconds(5)));

        assertThat(store.removeExpired(root)).isEqualTo(2);
        assertThat(dir.resolve("old")).doesNotExist();
        assertThat(dir.resolve("old.metadata")).doesNotExist();
        assertThat(abandoned).doesNotExist();
        assertThat(dir.resolve("fresh")).exists();
        assertThat(dir.resolve("fresh.metadata")).exists();
        assertThat(uploading).exists();
        assertThat(store.current(root, new SharedFileId("target", "source", "fresh"))).isPresent();
        assertThat(store.current(root, new SharedFileId("target", "source", "old"))).isEmpty();
    }

    private static void write(Path dir, String name, Instant expires) throws Exception {
        Files.writeString(dir.resolve(name), "content");
        // The metadata only parses with a real key: a 2048-bit RSA key in PKCS#1.
        KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
        generator.initialize(2048);
        String key = Base64.getEncoder().encodeToString(SubjectPublicKeyInfo
                .getInstance(generator.generateKeyPair().getPublic().getEncoded()).parsePublicKey().getEncoded());
        Files.writeString(dir.resolve(name + ".metadata"), String.join("\n", "header=rudder-signature-v1",
                "algorithm=sha256", "digest=00", "hash_value=" + "a".repeat(64), "short_pubkey=" + key, "hostname=h",
                "keydate=d", "keyid=k", "expires=" + expires.getEpochSecond(), ""));
    }
}
