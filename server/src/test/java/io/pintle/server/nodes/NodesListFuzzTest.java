package io.pintle.server.nodes;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

/**
 * Fuzzes {@link NodesListLoader} with {@code nodeslist.json} bytes. Seeds:
 * {@code NodesListFuzzTestInputs/<method>/}; for the incremental target a seed is the previous file, a NUL byte,
 * then the new file.
 */
class NodesListFuzzTest {
    private static final Path FILE = Path.of("/var/rudder/lib/relay/nodeslist.json");

    /** A whole parse either fails with an IOException naming the file, or gives complete, valid entries. */
    @FuzzTest(maxDuration = "2m")
    void parseGivesValidEntriesOrNamesTheFile(byte[] content) {
        Outcome outcome = Outcome.of(() -> NodesListLoader.parse(content, FILE));
        if (outcome.nodes() == null) {
            assertThat(outcome.error()).startsWith(FILE.toString());
            return;
        }
        for (Node node : outcome.nodes()) {
            assertThat(node.id()).isNotNull();
            assertThat(node.hostname()).isNotEmpty();
            assertThat(node.keyHash()).isNotNull();
            assertThat(node.policyServer()).isNotNull();
        }
        assertThat(Outcome.of(() -> NodesListLoader.parse(content, FILE))).isEqualTo(outcome);
    }

    /**
     * The incremental parse, given the previous load of any file, gives exactly what a parse from scratch gives:
     * the same entries, or the same error.
     */
    @FuzzTest(maxDuration = "2m")
    void incrementalParseEqualsWholeParse(byte[] input) {
        byte[][] parts = Seeds.split(input);
        NodesList previous;
        try {
            previous = NodesListLoader.parse(parts[0], FILE, NodesList.EMPTY);
        } catch (IOException e) {
            previous = NodesList.EMPTY;
        }
        NodesList before = previous;
        byte[] content = parts[1];
        Outcome whole = Outcome.of(() -> NodesListLoader.parse(content, FILE));
        Outcome incremental = Outcome.of(() -> NodesListLoader.parse(content, FILE, before).nodes());
        assertThat(incremental).isEqualTo(whole);
        // The result is reusable in turn: parsing the same bytes again against it changes nothing.
        if (whole.nodes() != null) {
            Outcome again = Outcome.of(() -> NodesListLoader.parse(content.clone(), FILE,
                    NodesListLoader.parse(content, FILE, before)).nodes());
            assertThat(again).isEqualTo(whole);
        }
    }

    /** The nodes, or the error message. */
    record Outcome(List<Node> nodes, String error) {
        interface Parse {
            List<Node> run() throws IOException;
        }

        static Outcome of(Parse parse) {
            try {
                return new Outcome(List.copyOf(parse.run()), null);
            } catch (IOException e) {
                return new Outcome(null, e.getMessage());
            }
        }
    }

    /** Splits a fuzz input into the previous file and the new one at its first NUL byte. */
    static final class Seeds {
        private Seeds() {}

        static byte[][] split(byte[] input) {
            for (int i = 0; i < input.length; i++) {
                if (input[i] == 0) {
                    return new byte[][] {Arrays.copyOf(input, i), Arrays.copyOfRange(input, i + 1, input.length)};
                }
            }
            return new byte[][] {input, input};
        }
    }
}
