package io.pintle.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.sun.jna.Platform;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TreeSwapTest {
    @TempDir
    Path dir;

    @Test
    void onLinuxTheTwoTreesAreExchangedInOneCall() throws Exception {
        assumeTrue(Platform.isLinux());
        Path target = Files.createDirectory(dir.resolve("inputs"));
        Files.writeString(target.resolve("f"), "old");
        Path staging = Files.createDirectory(dir.resolve(".inputs.pintle-staging-x"));
        Files.writeString(staging.resolve("f"), "new");
        TreeSwap swap = TreeSwap.atomic();

        Path old = swap.swap(staging, target, new SecureRandom());

        assertThat(swap.exchangeAvailable()).as("renameat2(RENAME_EXCHANGE) through JNA").isTrue();
        assertThat(old).isEqualTo(staging);
        assertThat(Files.readString(target.resolve("f"))).isEqualTo("new");
        assertThat(Files.readString(old.resolve("f"))).isEqualTo("old");
    }

    @Test
    void theFallbackRenamesTheOldTreeAside() throws Exception {
        Path target = Files.createDirectory(dir.resolve("inputs"));
        Files.writeString(target.resolve("f"), "old");
        Path staging = Files.createDirectory(dir.resolve(".inputs.pintle-staging-x"));
        Files.writeString(staging.resolve("f"), "new");

        Path old = TreeSwap.renameAside().swap(staging, target, new SecureRandom());

        assertThat(old.getFileName().toString()).startsWith(".inputs.pintle-old-");
        assertThat(Files.readString(target.resolve("f"))).isEqualTo("new");
        assertThat(Files.readString(old.resolve("f"))).isEqualTo("old");
        assertThat(staging).doesNotExist();
    }

    @Test
    void aMissingTargetIsARename() throws Exception {
        Path staging = Files.createDirectory(dir.resolve(".inputs.pintle-staging-x"));

        Path old = TreeSwap.atomic().swap(staging, dir.resolve("inputs"), new SecureRandom());

        assertThat(old).isNull();
        assertThat(dir.resolve("inputs")).isDirectory();
        assertThat(staging).doesNotExist();
    }
}
