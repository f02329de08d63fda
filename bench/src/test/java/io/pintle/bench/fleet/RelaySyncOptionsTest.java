package io.pintle.bench.fleet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** bench/relaysync's options: the defaults a run without them gets, and the root's options. */
class RelaySyncOptionsTest {
    private static RelaySyncOptions parse(String... more) {
        List<String> args = new ArrayList<>(List.of("--pintle-jar", "pintle.jar", "--wrapper", "deploy/bin/pintle",
                "--work", "/tmp/work", "--output", "/tmp/out.md"));
        args.addAll(List.of(more));
        return RelaySyncOptions.parse(args.toArray(String[]::new));
    }

    @Test
    void byDefaultThreeWarmUpGenerationsAndTheRootRunsWithAsOptions() {
        RelaySyncOptions options = parse();
        assertThat(options.warmupGenerations()).isEqualTo(3);
        assertThat(options.rootFollowsVariant()).isFalse();
        assertThat(options.b().jvmOptions()).containsAll(options.a().jvmOptions())
                .contains("-Dpintle.bench.relayBatch=false");
    }

    @Test
    void theRootFollowsTheVariantWhenAsked() {
        assertThat(parse("--root-options", "variant").rootFollowsVariant()).isTrue();
        assertThat(parse("--root-options", "a").rootFollowsVariant()).isFalse();
        assertThatThrownBy(() -> parse("--root-options", "b")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("--root-options is a or variant");
        assertThat(parse("--warmup-generations", "0").warmupGenerations()).isZero();
    }

    @Test
    void anotherJarForBComparesTwoBuildsWithTheSameOptions(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        RelaySyncOptions same = parse();
        assertThat(same.b().pintleJar()).isEqualTo(same.a().pintleJar());
        java.nio.file.Path other = java.nio.file.Files.writeString(dir.resolve("before.jar"), "a jar");
        RelaySyncOptions two = parse("--b-pintle-jar", other.toString());
        assertThat(two.a().pintleJar()).isEqualTo(java.nio.file.Path.of("pintle.jar"));
        assertThat(two.b().pintleJar()).isEqualTo(other);
        assertThat(two.b().jvmOptions()).as("the jars are what differs").isEqualTo(two.a().jvmOptions());
        assertThat(parse("--b-pintle-jar", other.toString(), "--b-jvm-options", "-Xmx1g").b().jvmOptions())
                .containsExactly("-Xmx1g");
        assertThatThrownBy(() -> parse("--b-pintle-jar", dir.resolve("missing.jar").toString()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("is no file");
    }

    @Test
    void nodesHoldTheSmallTreeUnlessRuddersShapeIsAsked() {
        assertThat(parse().nodeTree()).isEqualTo(NodeTree.SMALL);
        assertThat(parse("--node-tree", "small").nodeTree()).isEqualTo(NodeTree.SMALL);
        assertThat(parse("--node-tree", "rudder").nodeTree()).isEqualTo(NodeTree.RUDDER);
        assertThatThrownBy(() -> parse("--node-tree", "RUDDER")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("--node-tree is small or rudder, not 'RUDDER'; usage:");
    }

    @Test
    void theRelaysGetCpusOfTheirOwnOnlyWhenAsked() {
        assertThat(parse().relayCpus()).isNull();
        assertThat(parse("--relay-cpus", "0", "--server-cpus", "1")).satisfies(options -> {
            assertThat(options.relayCpus()).isEqualTo("0");
            assertThat(options.serverCpus()).isEqualTo("1");
        });
    }
}
