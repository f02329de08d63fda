package io.pintle.server.delivery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TreeCopyTest {
    @Test
    void filesAreLinkedLinksKeptAndDirectoriesKeepTheirModes(@TempDir Path dir) throws Exception {
        Path source = Files.createDirectories(dir.resolve("share/node-1/rules/cfengine-community/certs"));
        Files.writeString(source.resolve("root.pem"), "certificate");
        Files.createSymbolicLink(source.resolve("policy-server.pem"), Path.of("root.pem"));
        Files.createSymbolicLink(source.resolve("outside"), Path.of("/etc/passwd"));
        Files.setPosixFilePermissions(source, PosixFilePermissions.fromString("rwxr-x---"));
        Path copy = dir.resolve("state/freezes/f1/node-1");

        TreeCopy.Outcome outcome = TreeCopy.copy(dir.resolve("share/node-1"), copy);

        Path certs = copy.resolve("rules/cfengine-community/certs");
        assertThat(outcome.files()).isEqualTo(1);
        assertThat(outcome.linked()).isEqualTo(1);
        assertThat(Files.getAttribute(certs.resolve("root.pem"), "unix:ino"))
                .isEqualTo(Files.getAttribute(source.resolve("root.pem"), "unix:ino"));
        assertThat(Files.readSymbolicLink(certs.resolve("policy-server.pem"))).isEqualTo(Path.of("root.pem"));
        assertThat(Files.isSymbolicLink(certs.resolve("outside"))).isTrue();
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(certs))).isEqualTo("rwxr-x---");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(copy.getParent())))
                .isEqualTo("rwx------");

        // Replaced as Rudder replaces files: the copy keeps the old bytes.
        Path next = Files.writeString(source.resolve("root.pem.new"), "new certificate");
        Files.move(next, source.resolve("root.pem"), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        assertThat(certs.resolve("root.pem")).hasContent("certificate");

        TreeCopy.delete(copy);
        assertThat(copy).doesNotExist();
        assertThat(Path.of("/etc/passwd")).exists();
    }

    @Test
    void unlinkableFilesAreStoredOncePerContentAndSweptWhenNoCopyIsLeft(@TempDir Path dir) throws Exception {
        Path state = dir.resolve("state");
        for (String node : new String[] {"node-1", "node-2"}) {
            Path rules = Files.createDirectories(dir.resolve("share/" + node + "/rules"));
            Files.writeString(rules.resolve("common.cf"), "the same in every node\n");
            Files.writeString(rules.resolve("own.cf"), "only " + node + "\n");
        }
        ObjectStore objects = new ObjectStore();
        TreeCopy.Outcome first = TreeCopy.copy(dir.resolve("share/node-1"), state.resolve("f/node-1"), objects, state,
                false);
        TreeCopy.Outcome second = TreeCopy.copy(dir.resolve("share/node-2"), state.resolve("f/node-2"), objects, state,
                false);
        assertThat(first.linked()).isZero();
        assertThat(first.copiedBytes()).isEqualTo(23 + 12);
        assertThat(second.copiedBytes()).isEqualTo(12); // the common file was stored already
        try (var stored = Files.list(state.resolve(ObjectStore.DIRECTORY))) {
            assertThat(stored).hasSize(3);
        }
        assertThat(Files.getAttribute(state.resolve("f/node-1/rules/common.cf"), "unix:ino"))
                .isEqualTo(Files.getAttribute(state.resolve("f/node-2/rules/common.cf"), "unix:ino"));
        assertThat(state.resolve("f/node-2/rules/own.cf")).hasContent("only node-2");

        TreeCopy.delete(state.resolve("f/node-1"));
        assertThat(objects.sweep(state, java.time.Duration.ZERO, java.time.Instant.now())).isEqualTo(1);
        assertThat(state.resolve("f/node-2/rules/common.cf")).hasContent("the same in every node");
        TreeCopy.delete(state.resolve("f/node-2"));
        assertThat(objects.sweep(state, java.time.Duration.ZERO, java.time.Instant.now())).isEqualTo(2);
    }

    @Test
    void aMissingSourceLeavesNothing(@TempDir Path dir) {
        assertThatThrownBy(() -> TreeCopy.copy(dir.resolve("absent"), dir.resolve("copy")))
                .isInstanceOf(java.nio.file.NoSuchFileException.class);
        assertThat(dir.resolve("copy")).doesNotExist();
        assertThat(Files.exists(dir.resolve(".copy.partial"), LinkOption.NOFOLLOW_LINKS)).isFalse();
    }
}
