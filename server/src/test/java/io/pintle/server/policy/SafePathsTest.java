package io.pintle.server.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class SafePathsTest {
    @TempDir
    Path temp;

    /** The served tree: {@code temp/root}; {@code temp/outside} is next to it and must never be reachable. */
    private Path root;
    private Path outside;

    @BeforeEach
    void createTree() throws IOException {
        root = Files.createDirectories(temp.resolve("root"));
        outside = Files.createDirectories(temp.resolve("outside"));
        Files.writeString(root.resolve("file.txt"), "file");
        Files.createDirectories(root.resolve("dir"));
        Files.writeString(root.resolve("dir/nested.txt"), "nested");
        Files.writeString(root.resolve("a b.txt"), "space");
        if (utf8FileNames()) {
            Files.writeString(root.resolve("\u00e9.txt"), "e acute");
        }
        Files.writeString(outside.resolve("secret.txt"), "secret");
    }

    private static boolean utf8FileNames() {
        return "UTF-8".equalsIgnoreCase(System.getProperty("sun.jnu.encoding"));
    }

    @ParameterizedTest(name = "[{index}] ''{0}'' -> ''{1}''")
    @CsvSource(delimiter = '|', quoteCharacter = '"', textBlock = """
            file.txt            | file.txt
            dir/nested.txt      | dir/nested.txt
            dir/                | dir
            dir                 | dir
            a%20b.txt           | a b.txt
            %C3%A9.txt          | \u00e9.txt
            %c3%a9.txt          | \u00e9.txt
            ""                  | ""
            """)
    void acceptedPathResolvesToItsRealFile(String encoded, String expectedRelative) throws Exception {
        if (!expectedRelative.chars().allMatch(c -> c < 0x80)) {
            assumeTrue(utf8FileNames(), "the JVM cannot create non-ASCII file names here");
        }
        Path expected = root.toRealPath().resolve(expectedRelative);

        assertThat(SafePaths.resolve(root, encoded)).isEqualTo(expected);
    }

    @ParameterizedTest(name = "[{index}] ''{0}'' refused: {1}")
    @CsvSource(delimiter = '|', quoteCharacter = '"', textBlock = """
            ..                  | '..' path segments are not allowed
            a/../b              | '..' path segments are not allowed
            dir/..              | '..' path segments are not allowed
            ./a                 | '.' path segments are not allowed
            a/./b               | '.' path segments are not allowed
            a//b                | empty path segments
            a//                 | empty path segments
            /abs                | absolute paths are not allowed
            //abs               | absolute paths are not allowed
            %2e%2e/x            | encoded '%2E' is not allowed
            %2E%2e              | encoded '%2E' is not allowed
            file%2etxt          | encoded '%2E' is not allowed
            a%2fb               | encoded '%2F' is not allowed
            a%2Fb               | encoded '%2F' is not allowed
            a%5cb               | encoded '%5C' is not allowed
            a\\b                | backslashes are not allowed
            a%00b               | encoded '%00' is not allowed
            a%0ab               | control characters are not allowed
            a%7fb               | control characters are not allowed
            a%1Bb               | control characters are not allowed
            %2                  | truncated percent-encoding
            a%                  | truncated percent-encoding
            a%4                 | truncated percent-encoding
            %zz                 | invalid percent-encoding '%zz'
            a%g1b               | invalid percent-encoding '%g1'
            %c3%28              | not valid UTF-8
            %ff                 | not valid UTF-8
            %c3                 | not valid UTF-8
            a%C2%85b            | control characters are not allowed
            é.txt          | unencoded non-ASCII characters are not allowed
            """)
    void unsafePathIsRefusedNamingTheRule(String encoded, String rule) {
        assertThatThrownBy(() -> SafePaths.resolve(root, encoded))
                .isInstanceOf(UnsafePathException.class)
                .hasMessageContaining(rule);
    }

    @Test
    void literalControlCharacterIsRefused() {
        assertThatThrownBy(() -> SafePaths.resolve(root, "a\tb"))
                .isInstanceOf(UnsafePathException.class)
                .hasMessageContaining("control characters");
    }

    @Test
    void pathLongerThanTheLimitIsRefused() {
        String tooLong = "a".repeat(SafePaths.MAX_PATH_LENGTH + 1);

        assertThatThrownBy(() -> SafePaths.resolve(root, tooLong))
                .isInstanceOf(UnsafePathException.class)
                .hasMessageContaining("longer than " + SafePaths.MAX_PATH_LENGTH);
    }

    @Test
    void pathOfExactlyTheLimitPassesTheLengthRule() throws Exception {
        String longest = "a/".repeat(SafePaths.MAX_PATH_LENGTH / 2);

        assertThat(SafePaths.decode(longest)).hasSize(SafePaths.MAX_PATH_LENGTH);
    }

    @Test
    void symlinkToAFileInsideTheRootResolvesToTheTarget() throws Exception {
        Files.createSymbolicLink(root.resolve("link.txt"), Path.of("dir/nested.txt"));

        assertThat(SafePaths.resolve(root, "link.txt")).isEqualTo(root.toRealPath().resolve("dir/nested.txt"));
    }

    @Test
    void symlinkToAFileOutsideTheRootLooksMissing() throws Exception {
        Files.createSymbolicLink(root.resolve("escape.txt"), outside.resolve("secret.txt"));

        assertThatThrownBy(() -> SafePaths.resolve(root, "escape.txt"))
                .isInstanceOf(SafePaths.EscapeException.class)
                .isInstanceOf(NoSuchFileException.class)
                .hasMessageContaining("outside");
    }

    @Test
    void fileUnderASymlinkedDirectoryOutsideTheRootLooksMissing() throws Exception {
        Files.createSymbolicLink(root.resolve("elsewhere"), outside);

        assertThatThrownBy(() -> SafePaths.resolve(root, "elsewhere/secret.txt"))
                .isInstanceOf(SafePaths.EscapeException.class);
        assertThatThrownBy(() -> SafePaths.resolve(root, "elsewhere/"))
                .isInstanceOf(SafePaths.EscapeException.class);
    }

    @Test
    void symlinkToASiblingWhoseNameExtendsTheRootNameEscapes() throws Exception {
        // "root-evil" starts with the characters of "root": the containment check must compare whole segments.
        Path sibling = Files.createDirectories(temp.resolve("root-evil"));
        Files.writeString(sibling.resolve("secret.txt"), "secret");
        Files.createSymbolicLink(root.resolve("sneaky"), Path.of("../root-evil"));

        assertThatThrownBy(() -> SafePaths.resolve(root, "sneaky/secret.txt"))
                .isInstanceOf(SafePaths.EscapeException.class);
    }

    @Test
    void trailingSlashOnARegularFileIsNoSuchFile() {
        assertThatThrownBy(() -> SafePaths.resolve(root, "file.txt/"))
                .isInstanceOf(java.nio.file.NoSuchFileException.class)
                .isNotInstanceOf(SafePaths.EscapeException.class);
    }

    @Test
    void missingFileIsNoSuchFileButNotAnEscape() {
        assertThatThrownBy(() -> SafePaths.resolve(root, "dir/missing.txt"))
                .isInstanceOf(NoSuchFileException.class)
                .isNotInstanceOf(SafePaths.EscapeException.class);
    }

    @Test
    void rootReachedThroughASymlinkServesItsFiles() throws Exception {
        Path linkedRoot = Files.createSymbolicLink(temp.resolve("current"), root);

        assertThat(SafePaths.resolve(linkedRoot, "dir/nested.txt"))
                .isEqualTo(root.toRealPath().resolve("dir/nested.txt"));
        assertThat(SafePaths.resolve(linkedRoot, "")).isEqualTo(root.toRealPath());
    }

    @Test
    void lexicalPathAppliesTheSameRulesWithoutFollowingLinks() throws Exception {
        Files.createSymbolicLink(root.resolve("link.txt"), Path.of("dir/nested.txt"));

        assertThat(SafePaths.lexical(root, "link.txt")).isEqualTo(root.resolve("link.txt"));
        assertThat(SafePaths.lexical(root, "a%20b.txt")).isEqualTo(root.resolve("a b.txt"));
        assertThatThrownBy(() -> SafePaths.lexical(root, "dir/../file.txt"))
                .isInstanceOf(UnsafePathException.class).hasMessageContaining("'..'");
        assertThatThrownBy(() -> SafePaths.lexical(root, "dir/")).isInstanceOf(UnsafePathException.class);
        assertThatThrownBy(() -> SafePaths.lexical(root, "")).isInstanceOf(UnsafePathException.class);
        assertThat(SafePaths.real(root, SafePaths.lexical(root, "link.txt")))
                .isEqualTo(root.toRealPath().resolve("dir/nested.txt"));
    }

    @Test
    void linkFreeOnlyWhenNoLinkLiesBetweenTheRootAndTheFile() throws Exception {
        Files.createSymbolicLink(root.resolve("link.txt"), Path.of("dir/nested.txt"));
        Files.createSymbolicLink(root.resolve("alias"), Path.of("dir"));
        Path linkedRoot = Files.createSymbolicLink(temp.resolve("current"), root);

        assertThat(linkFree(root, "dir/nested.txt")).isTrue();
        assertThat(linkFree(root, "link.txt")).isFalse();
        assertThat(linkFree(root, "alias/nested.txt")).isFalse();
        // A link in the root's own path (a linked /var/rudder) does not count.
        assertThat(linkFree(linkedRoot, "dir/nested.txt")).isTrue();
        assertThat(linkFree(linkedRoot, "alias/nested.txt")).isFalse();
    }

    private static boolean linkFree(Path root, String relative) throws Exception {
        Path lexical = SafePaths.lexical(root, relative);
        return SafePaths.linkFree(root, lexical, SafePaths.real(root, lexical));
    }

    @Test
    void rootReachedThroughASymlinkStillRefusesAnEscape() throws Exception {
        // The real path of a link out of the tree is compared with the root's real path, not with the link's
        // name: "current/up/secret.txt" must not pass for being under "current".
        Path linkedRoot = Files.createSymbolicLink(temp.resolve("current"), root);
        Path outside = Files.createDirectories(temp.resolve("current-outside"));
        Files.writeString(outside.resolve("secret.txt"), "secret");
        Files.createSymbolicLink(root.resolve("up"), Path.of("../current-outside"));

        assertThatThrownBy(() -> SafePaths.resolve(linkedRoot, "up/secret.txt"))
                .isInstanceOf(SafePaths.EscapeException.class);
        assertThatThrownBy(() -> SafePaths.resolve(root, "up/secret.txt"))
                .isInstanceOf(SafePaths.EscapeException.class);
    }

    @Test
    void decodingKeepsPercentEncodedUtf8() throws Exception {
        assertThat(SafePaths.decode("caf%C3%A9%20au%20lait")).isEqualTo("caf\u00e9 au lait");
        assertThat(SafePaths.decode("%F0%9F%93%A6")).isEqualTo(new String(
                new byte[] {(byte) 0xF0, (byte) 0x9F, (byte) 0x93, (byte) 0xA6}, StandardCharsets.UTF_8));
    }

    @ParameterizedTest
    @CsvSource({"%-F%8F%BF%BF", "%+1", "a%-1"})
    void signedPercentEncodingIsInvalid(String encoded) {
        assertThatThrownBy(() -> SafePaths.decode(encoded))
                .isInstanceOf(UnsafePathException.class)
                .hasMessageContaining("invalid percent-encoding");
    }
}
