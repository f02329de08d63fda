package io.pintle.server.nodes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class NodesListLoaderTest {
    private static final byte[] DIGEST_1 = digest(1);
    private static final byte[] DIGEST_2 = digest(2);

    @TempDir
    Path dir;

    private static byte[] digest(int seed) {
        byte[] bytes = new byte[32];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = (byte) (seed * 31 + i);
        }
        return bytes;
    }

    private Path write(String json) throws IOException {
        return Files.writeString(dir.resolve("nodeslist.json"), json);
    }

    @Test
    void readsARudderNodesList() throws IOException {
        Path file = write("""
                {
                  "root": {
                    "hostname": "server.rudder.local",
                    "key-hash": "sha256//%s",
                    "policy-server": "root"
                  },
                  "e745a140-40bc-4b86-b6dc-084488fc906b": {
                    "hostname": "node1.rudder.local",
                    "key-hash": "sha256:",
                    "policy-server": "root",
                    "agent": "cfengine-community",
                    "properties": {"datacenter": "paris"}
                  },
                  "a745a140-40bc-4b86-b6dc-084488fc906b": {
                    "hostname": "node2.rudder.local",
                    "key-hash": "sha256:%s",
                    "policy-server": "e745a140-40bc-4b86-b6dc-084488fc906b",
                    "os": "Windows"
                  }
                }
                """.formatted(Base64.getEncoder().encodeToString(DIGEST_1), HexFormat.of().formatHex(DIGEST_2)));

        List<Node> nodes = NodesListLoader.load(file);

        NodeId root = new NodeId("root");
        NodeId relay = new NodeId("e745a140-40bc-4b86-b6dc-084488fc906b");
        assertThat(nodes).containsExactly(
                new Node(root, "server.rudder.local",
                        Optional.of(new KeyHash("sha256", Base64.getEncoder().encodeToString(DIGEST_1))), root),
                new Node(relay, "node1.rudder.local", Optional.empty(), root),
                new Node(new NodeId("a745a140-40bc-4b86-b6dc-084488fc906b"), "node2.rudder.local",
                        Optional.of(new KeyHash("sha256", Base64.getEncoder().encodeToString(DIGEST_2))), relay));
    }

    @Test
    void missingKeyHashIsLoadedWithoutPin() throws IOException {
        Path file = write("""
                {"node-1": {"hostname": "node1", "policy-server": "root"},
                 "node-2": {"hostname": "node2", "policy-server": "root", "key-hash": null},
                 "node-3": {"hostname": "node3", "policy-server": "root", "key-hash": "sha1//AAAA"}}
                """);

        assertThat(NodesListLoader.load(file)).extracting(Node::keyHash)
                .containsExactly(Optional.empty(), Optional.empty(), Optional.empty());
    }

    @Test
    void emptyObjectMeansNoNodes() throws IOException {
        assertThat(NodesListLoader.load(write("{}"))).isEmpty();
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @CsvSource(delimiter = '|', quoteCharacter = '`', textBlock = """
            {"node-1": {"policy-server": "root"}}                        | node 'node-1' | 'hostname'
            {"node-1": {"hostname": "", "policy-server": "root"}}        | node 'node-1' | 'hostname'
            {"node-1": {"hostname": 7, "policy-server": "root"}}         | node 'node-1' | 'hostname'
            {"node-1": {"hostname": "n1"}}                               | node 'node-1' | 'policy-server'
            {"node-1": {"hostname": "n1", "policy-server": "not valid"}} | node 'node-1' | invalid node id 'not valid'
            {"bad id": {"hostname": "n1", "policy-server": "root"}}      | node 'bad id' | invalid node id 'bad id'
            {"node-1": "n1"}                                             | node 'node-1' | expected an object
            {"node-1": null}                                             | node 'node-1' | expected an object
            {"node-1": {"hostname": {"hostname": "n1", "policy-server": "root"}}} | node 'node-1' | 'hostname'
            """)
    void invalidEntryNamesFileAndNode(String json, String node, String problem) throws IOException {
        Path file = write(json);

        assertThatThrownBy(() -> NodesListLoader.load(file))
                .isInstanceOf(IOException.class)
                .hasMessageStartingWith(file + ": ")
                .hasMessageContaining(node)
                .hasMessageContaining(problem);
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @CsvSource(delimiter = '|', quoteCharacter = '`', textBlock = """
            ["root"]                     | expected a JSON object keyed by node id
            "root"                       | expected a JSON object keyed by node id
            {"node-1": {"hostname": "n1" | invalid JSON
            {"a": {"hostname": "n", "policy-server": "root"},} | invalid JSON
            {"a": {"hostname": "n", "policy-server": "root"}} x | invalid JSON
            """)
    void invalidDocumentNamesFile(String json, String problem) throws IOException {
        Path file = write(json);

        assertThatThrownBy(() -> NodesListLoader.load(file))
                .isInstanceOf(IOException.class)
                .hasMessageStartingWith(file + ": ")
                .hasMessageContaining(problem);
    }

    @Test
    void undecodableUtf32NamesFile() throws IOException {
        // Found by NodesListFuzzTest: Jackson takes "{\0\0\0" for UTF-32, and its error did not name the file.
        Path file = write("");
        Files.write(file, Base64.getDecoder().decode(
                "ewAAADMgeyJob3N0bmFtZSI6ICJoIiwgInBvbGljeS1zInsifSwgImEiOiB7ImhvIn19"));

        assertThatThrownBy(() -> NodesListLoader.load(file))
                .isInstanceOf(IOException.class)
                .hasMessageStartingWith(file + ": invalid JSON: ");
    }

    @ParameterizedTest(name = "[{index}] ''{0}''")
    @ValueSource(strings = {"", "  \n"})
    void emptyFileIsAnError(String content) throws IOException {
        Path file = write(content);

        assertThatThrownBy(() -> NodesListLoader.load(file))
                .isInstanceOf(IOException.class)
                .hasMessageStartingWith(file + ": ")
                .hasMessageContaining("empty file");
    }

    @Test
    void missingFileIsNamed() {
        Path missing = dir.resolve("absent.json");

        assertThatThrownBy(() -> NodesListLoader.load(missing))
                .isInstanceOf(IOException.class)
                .hasMessage(missing + ": no such file");
    }
    // --- issue 18: messages in the operator's words ---

    @ParameterizedTest(name = "[{index}] {1}")
    @CsvSource(delimiter = '|', quoteCharacter = '`', textBlock = """
            {"a": {"hostname": NaN}}                    | 'NaN' is not a JSON value (numbers are digits; text goes in double quotes) at line 1, column 23
            {"a": {"hostname": "h", "x": -Infinity}}    | '-Infinity' is not a JSON value (numbers are digits; text goes in double quotes) at line 1, column 39
            {"a": {"hostname": "h", }}                  | unexpected '}': expected a field name in double quotes at line 1, column 25
            {"a" {}}                                    | unexpected '{': expected ':' after a field name at line 1, column 6
            {"a": {"hostname": 'h'}}                    | unexpected single quote (JSON strings take double quotes): expected a value
            {"a": {"hostname": "h"                      | the file ends before the JSON is complete
            """)
    void aSyntaxErrorSaysWhatAndWhereInJsonTerms(String json, String message) throws IOException {
        Path file = write(json);

        assertThatThrownBy(() -> NodesListLoader.load(file))
                .isInstanceOf(IOException.class)
                .hasMessageStartingWith(file + ": invalid JSON: " + message)
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("JsonReadFeature", "ALLOW_", "`",
                        "Source:", "REDACTED", "code 125", "Non-standard token"));
    }

    @Test
    void overlongNamesAndNumbersAreRefusedWithTheLimitNotTheParsersSetting() throws IOException {
        Path longName = Files.writeString(dir.resolve("long-name.json"), "{\"" + "a".repeat(50_001) + "\": {}}");
        Path longNumber = Files.writeString(dir.resolve("long-number.json"),
                "{\"a\": {\"hostname\": \"h\", \"policy-server\": \"root\", \"n\": 1" + "0".repeat(2_000) + "}}");

        assertThatThrownBy(() -> NodesListLoader.load(longName))
                .hasMessage(longName + ": invalid JSON: a node id or field name longer than 50000 characters");
        assertThatThrownBy(() -> NodesListLoader.load(longNumber))
                .hasMessage(longNumber + ": invalid JSON: a number longer than 1000 characters");
    }
}
