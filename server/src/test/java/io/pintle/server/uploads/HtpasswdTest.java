package io.pintle.server.uploads;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** Password files as Apache's htpasswd 2.4 wrote them (the lines below come from it), checked as Apache checks. */
class HtpasswdTest {
    private static final Path FILE = Path.of("/opt/rudder/etc/htpasswd-webdav");
    // htpasswd -cbm, -bB -C 5, -bs, -bd, -b -2, -b -5 (Apache 2.4, Debian 12).
    private static final String WRITTEN_BY_HTPASSWD = String.join("\n",
            "u-md5:$apr1$3Pjzc6M.$O.C3kethyff7BEn9ddfR6.",
            "u-bcrypt:$2y$05$C5EO4L2LKkVFmMcAUZz7nepxt9PY3HYECHoGo0bYKjen38edwsw0q",
            "u-sha:{SHA}G5zynyVKZeHPqXetqic75L7ZkrM=",
            "u-crypt:O.h4hrhQm2BSs",
            "u-sha256:$5$6TJ7Hkp/H3ybgqD5$oFgjeCXS5bSPhuuzV7BoqbO2215j1bg/TzwwiEl9Ei2",
            "u-sha512:$6$20m408IDjBDved8v$atfI/hO9ZxkGLofcDJ684NuSIQopRCyeO.YM/2pG/jCnlNAeXk3nTFmIZMZmfcFMdOAemyF1g3MUfc3gHpFl8.");

    @Test
    void checksEveryFormatHtpasswdWrites() throws IOException {
        Htpasswd users = parse(WRITTEN_BY_HTPASSWD);

        assertThat(users.users()).isEqualTo(6);
        assertThat(users.verify("u-md5", "pw md5:1")).isTrue();
        assertThat(users.verify("u-bcrypt", "pw-bcrypt")).isTrue();
        assertThat(users.verify("u-sha", "pw-sha")).isTrue();
        assertThat(users.verify("u-crypt", "pwcrypt")).isTrue();
        assertThat(users.verify("u-sha256", "pw-256")).isTrue();
        assertThat(users.verify("u-sha512", "pw-512")).isTrue();
    }

    @Test
    void refusesWrongPasswordsAndUnknownUsers() throws IOException {
        Htpasswd users = parse(WRITTEN_BY_HTPASSWD);

        assertThat(users.verify("u-md5", "pw md5:2")).isFalse();
        assertThat(users.verify("u-bcrypt", "pw-bcryp")).isFalse();
        assertThat(users.verify("u-sha", "")).isFalse();
        assertThat(users.verify("u-crypt", "pwcryp")).isFalse();
        assertThat(users.verify("u-sha512", "pw-256")).isFalse();
        assertThat(users.verify("nobody", "pw-sha")).isFalse();
        // bcrypt takes at most 72 bytes: a longer password matches nothing, it does not throw.
        assertThat(users.verify("u-bcrypt", "x".repeat(100))).isFalse();
    }

    /**
     * Hostile testing, issue 34 N5: an unknown user was refused without a hash (69 ms against 5.5 ms with
     * SHA-512-crypt), which told user names apart. Now it costs one hash of the file's costliest kind, as a known
     * user with a wrong password does.
     */
    @Test
    void anUnknownUserCostsOneHashOfTheFilesCostliestKindAsAKnownUserDoes() throws IOException {
        Htpasswd users = parse(WRITTEN_BY_HTPASSWD);
        String sha512 = WRITTEN_BY_HTPASSWD.lines().filter(line -> line.startsWith("u-sha512:")).findFirst()
                .orElseThrow().substring("u-sha512:".length());
        assertThat(users.decoy()).isEqualTo(sha512);

        long before = users.computed();
        assertThat(users.verify("u-sha512", "wrong")).isFalse();
        assertThat(users.computed()).isEqualTo(before + 1);
        assertThat(users.verify("nobody", "wrong")).isFalse();
        assertThat(users.computed()).isEqualTo(before + 2);
        // The decoy's own password does not let an unknown user in.
        assertThat(users.verify("nobody", "pw-512")).isFalse();
        assertThat(users.computed()).isEqualTo(before + 3);
    }

    @Test
    void theDecoyIsTheCostliestHashOfTheFile() throws IOException {
        String cost5 = "$2y$05$C5EO4L2LKkVFmMcAUZz7nepxt9PY3HYECHoGo0bYKjen38edwsw0q";
        String cost10 = "$2y$10$" + cost5.substring(7);
        assertThat(parse("a:" + cost5 + "\nb:" + cost10 + "\nc:{SHA}G5zynyVKZeHPqXetqic75L7ZkrM=\n").decoy())
                .isEqualTo(cost10);
        String manyRounds = "$5$rounds=80000$6TJ7Hkp/H3ybgqD5$oFgjeCXS5bSPhuuzV7BoqbO2215j1bg/TzwwiEl9Ei2";
        assertThat(parse("a:" + cost5 + "\nb:" + manyRounds + "\n").decoy()).isEqualTo(manyRounds);
        assertThat(parse("a:$apr1$3Pjzc6M.$O.C3kethyff7BEn9ddfR6.\nb:O.h4hrhQm2BSs\n").decoy())
                .isEqualTo("$apr1$3Pjzc6M.$O.C3kethyff7BEn9ddfR6.");
        Htpasswd nobody = parse("# no users\n");
        assertThat(nobody.decoy()).isNull();
        assertThat(nobody.verify("anyone", "x")).isFalse();
        assertThat(nobody.computed()).isZero();
    }

    @Test
    void aVerifiedPasswordIsRememberedOnlyForThatPassword() throws IOException {
        Htpasswd users = parse(WRITTEN_BY_HTPASSWD);

        assertThat(users.verify("u-bcrypt", "pw-bcrypt")).isTrue();
        assertThat(users.verify("u-bcrypt", "pw-bcrypt")).isTrue();
        assertThat(users.verify("u-bcrypt", "pw-bcrypt ")).isFalse();
        assertThat(users.verify("u-md5", "pw-bcrypt")).isFalse();
    }

    @Test
    void skipsCommentsAndEmptyLinesAndKeepsAUsersFirstLine() throws IOException {
        Htpasswd users = parse("# written by hand\n\nu-sha:{SHA}G5zynyVKZeHPqXetqic75L7ZkrM=\r\n"
                + "u-sha:$apr1$3Pjzc6M.$O.C3kethyff7BEn9ddfR6.\n");

        assertThat(users.users()).isEqualTo(1);
        assertThat(users.verify("u-sha", "pw-sha")).isTrue();
        assertThat(users.verify("u-sha", "pw md5:1")).isFalse();
    }

    @Test
    void refusesAFileWithALineItCannotCheckNamingTheLineNotTheHash() {
        // htpasswd -p writes the password in clear; Apache on Linux never accepts it.
        assertThatThrownBy(() -> parse("u-md5:$apr1$3Pjzc6M.$O.C3kethyff7BEn9ddfR6.\nu-plain:secret-in-clear\n"))
                .isInstanceOf(IOException.class)
                .hasMessageContaining(FILE + ": line 2")
                .hasMessageContaining("u-plain")
                .hasMessageNotContaining("secret-in-clear");
        assertThatThrownBy(() -> parse("no colon here\n"))
                .hasMessageContaining("line 1 is not 'user:hash'");
        assertThatThrownBy(() -> parse(":{SHA}G5zynyVKZeHPqXetqic75L7ZkrM=\n"))
                .hasMessageContaining("line 1 is not 'user:hash'");
    }

    @Test
    void writesLinesItReadsBack() throws IOException {
        Htpasswd users = parse(Htpasswd.apr1Line("rudder", "s3cret") + "\n");

        assertThat(users.verify("rudder", "s3cret")).isTrue();
        assertThat(users.verify("rudder", "s3cre")).isFalse();
    }

    private static Htpasswd parse(String text) throws IOException {
        return Htpasswd.parse(text.getBytes(StandardCharsets.UTF_8), FILE);
    }
}
