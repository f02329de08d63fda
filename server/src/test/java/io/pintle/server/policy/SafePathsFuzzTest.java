package io.pintle.server.policy;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

/**
 * Fuzzes {@link SafePaths#resolve} with URL paths (each input byte one character, as a raw request path) against a
 * tree with links inside and out of the root. Invariant: a path either is refused ({@link UnsafePathException}),
 * looks missing, or resolves to an existing real path inside the root's real path — never elsewhere, and never
 * with an unexpected exception. Seeds: {@code SafePathsFuzzTestInputs/resolveNeverLeavesTheRoot/}.
 */
class SafePathsFuzzTest {
    @TempDir
    static Path dir;

    static Path root;
    static Path realRoot;

    @BeforeAll
    static void tree() throws IOException {
        // dir/share/node-a is the root; dir/share/node-b and dir/secret are outside it.
        root = Files.createDirectories(dir.resolve("share/node-a"));
        Files.createDirectories(root.resolve("rules/cfengine-community"));
        Files.writeString(root.resolve("rules/cfengine-community/promises.cf"), "bundle agent main {}");
        Files.writeString(root.resolve("rules/rudder.tar.bz2"), "archive");
        Files.writeString(root.resolve("é ü.txt"), "non-ASCII name");
        Files.createDirectories(dir.resolve("share/node-b/rules"));
        Files.writeString(dir.resolve("share/node-b/rules/rudder.tar.bz2"), "other node");
        Files.writeString(dir.resolve("secret"), "outside");
        Files.createSymbolicLink(root.resolve("inside"), Path.of("rules"));
        Files.createSymbolicLink(root.resolve("other"), Path.of("../node-b"));
        Files.createSymbolicLink(root.resolve("secret"), dir.resolve("secret"));
        Files.createSymbolicLink(root.resolve("rules/up"), Path.of(".."));
        Files.createSymbolicLink(root.resolve("rules/upup"), Path.of("../.."));
        Files.createSymbolicLink(root.resolve("etc"), Path.of("/etc"));
        Files.createSymbolicLink(root.resolve("loop"), Path.of("loop"));
        Files.createSymbolicLink(root.resolve("dangling"), Path.of("nothing-here"));
        realRoot = root.toRealPath();
    }

    @FuzzTest(maxDuration = "2m")
    void resolveNeverLeavesTheRoot(byte[] input) throws Exception {
        String path = new String(input, StandardCharsets.ISO_8859_1);
        Path resolved;
        try {
            resolved = SafePaths.resolve(root, path);
        } catch (UnsafePathException refused) {
            assertThat(refused.getMessage()).isNotBlank();
            return;
        } catch (FileSystemException missingOrEscaping) {
            // NoSuchFileException (absent, or a link leading out) and the like (name too long, loops).
            return;
        }
        assertThat(resolved).isAbsolute();
        assertThat(resolved.startsWith(realRoot)).as("%s resolved to %s", path, resolved).isTrue();
        assertThat(resolved.toRealPath()).isEqualTo(resolved);
        assertThat(Files.exists(resolved)).isTrue();
        if (path.endsWith("/")) {
            assertThat(Files.isDirectory(resolved)).as(path).isTrue();
        }
        // Nothing in the decoded path may climb: no '.' or '..' segment, no empty segment, no backslash.
        String decoded = SafePaths.decode(path);
        String trimmed = decoded.endsWith("/") ? decoded.substring(0, decoded.length() - 1) : decoded;
        if (!trimmed.isEmpty()) {
            for (String segment : trimmed.split("/", -1)) {
                assertThat(segment).as(path).isNotIn("", ".", "..").doesNotContain("\\", "\0");
            }
        }
    }
}
