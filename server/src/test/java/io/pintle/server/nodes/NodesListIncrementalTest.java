package io.pintle.server.nodes;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.RepetitionInfo;
import org.junit.jupiter.api.Test;

/**
 * {@link NodesListLoader#parse(byte[], Path, NodesList)} given a previous load: it must give exactly what a parse
 * from scratch gives (or fail with the same message), and it must really reuse the unchanged entries.
 */
class NodesListIncrementalTest {
    private static final Path FILE = Path.of("nodeslist.json");

    private static String entry(String id, String hostname, int key) {
        byte[] digest = new byte[32];
        new Random(key).nextBytes(digest);
        return "\"" + id + "\": {\"hostname\": \"" + hostname + "\", \"key-hash\": \"sha256//"
                + Base64.getEncoder().encodeToString(digest) + "\", \"policy-server\": \"root\"}";
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private static NodesList load(String text) throws IOException {
        return NodesListLoader.parse(bytes(text), FILE, NodesList.EMPTY);
    }

    /** A previous load whose entries are the given nodes in place of what the file says, at the file's offsets. */
    private static NodesList planted(String text, List<String> ids, Node... nodes) {
        int[] starts = new int[ids.size()];
        int[] ends = new int[ids.size()];
        for (int i = 0; i < ids.size(); i++) {
            starts[i] = text.indexOf("\"" + ids.get(i) + "\"");
            ends[i] = text.indexOf('}', starts[i]) + 1;
        }
        return new NodesList(bytes(text), starts, ends, nodes);
    }

    private static Node node(String id) {
        return new Node(new NodeId(id), "planted-" + id, Optional.empty(), new NodeId("root"));
    }

    @Test
    void unchangedEntriesAreReusedAndNewOnesParsed() throws IOException {
        String before = "{" + entry("a", "a.local", 1) + ", " + entry("b", "b.local", 2) + "}";
        NodesList previous = planted(before, List.of("a", "b"), node("a"), node("b"));

        // A node accepted between a and b, one more at the end.
        String after = "{" + entry("a", "a.local", 1) + ", " + entry("n", "n.local", 3) + ", "
                + entry("b", "b.local", 2) + ",\n" + entry("m", "m.local", 4) + "}";
        NodesList parsed = NodesListLoader.parse(bytes(after), FILE, previous);

        // The planted nodes prove that a and b were taken from the previous load, not parsed.
        assertThat(parsed.nodes()).extracting(Node::hostname)
                .containsExactly("planted-a", "n.local", "planted-b", "m.local");
    }

    @Test
    void entriesRemovedMovedOrChangedAreFoundOrParsed() throws IOException {
        List<String> ids = new ArrayList<>();
        List<Node> nodes = new ArrayList<>();
        StringBuilder before = new StringBuilder("{");
        for (int i = 0; i < 40; i++) {
            ids.add("n" + i);
            nodes.add(node("n" + i));
            before.append(i == 0 ? "" : ",").append(entry("n" + i, "n" + i + ".local", i));
        }
        before.append('}');
        NodesList previous = planted(before.toString(), ids, nodes.toArray(Node[]::new));

        // Reversed (every entry moved), n3 removed, n7's host name changed.
        StringBuilder after = new StringBuilder("{");
        for (int i = 39; i >= 0; i--) {
            if (i != 3) {
                after.append(i == 39 ? "" : ",").append(entry("n" + i, i == 7 ? "renamed" : "n" + i + ".local", i));
            }
        }
        after.append('}');
        NodesList parsed = NodesListLoader.parse(bytes(after.toString()), FILE, previous);

        assertThat(parsed.nodes()).extracting(n -> n.id().value())
                .isEqualTo(load(after.toString()).nodes().stream().map(n -> n.id().value()).toList());
        assertThat(parsed.nodes()).filteredOn(n -> n.id().value().equals("n7")).singleElement()
                .extracting(Node::hostname).isEqualTo("renamed");
        // The first few misses are parsed; once misses pile up, the rest are found by id among the previous ones.
        assertThat(parsed.nodes()).filteredOn(n -> n.hostname().startsWith("planted-")).hasSizeGreaterThan(25);
        assertThat(parsed.nodes()).filteredOn(n -> !n.hostname().startsWith("planted-"))
                .allSatisfy(n -> assertThat(n.hostname()).isIn(n.id().value() + ".local", "renamed"));
    }

    @Test
    void theResultCanBeReusedInTurn() throws IOException {
        String first = "{" + entry("a", "a.local", 1) + "}";
        String second = "{" + entry("a", "a.local", 1) + "," + entry("b", "b.local", 2) + "}";
        String third = "{" + entry("a", "a.local", 1) + "," + entry("b", "b.local", 2) + "," + entry("c", "c", 3) + "}";
        NodesList one = load(first);
        NodesList two = NodesListLoader.parse(bytes(second), FILE, one);
        NodesList three = NodesListLoader.parse(bytes(third), FILE, two);

        assertThat(three.nodes()).isEqualTo(load(third).nodes());
        assertThat(three.nodes().get(0)).isSameAs(one.nodes().get(0));
        assertThat(three.nodes().get(1)).isSameAs(two.nodes().get(1));
    }

    /**
     * Random edits of a random list, valid or not: whatever the previous load, the result equals a parse from
     * scratch, or both fail with the same message.
     */
    @RepeatedTest(300)
    void anyEditGivesWhatAWholeParseGives(RepetitionInfo repetition) throws IOException {
        Random random = new Random(repetition.getCurrentRepetition());
        List<String> entries = new ArrayList<>();
        int count = random.nextInt(30);
        for (int i = 0; i < count; i++) {
            entries.add(entry("node-" + random.nextInt(40), "host-" + random.nextInt(5), random.nextInt(40)));
        }
        String before = render(entries, random);
        NodesList previous;
        try {
            previous = load(before);
        } catch (IOException e) {
            previous = NodesList.EMPTY;
        }

        List<String> edited = new ArrayList<>(entries);
        int edits = 1 + random.nextInt(4);
        for (int e = 0; e < edits; e++) {
            int at = edited.isEmpty() ? 0 : random.nextInt(edited.size());
            switch (random.nextInt(6)) {
                case 0 -> edited.add(at, entry("new-" + random.nextInt(10), "h", random.nextInt(40)));
                case 1 -> {
                    if (!edited.isEmpty()) {
                        edited.remove(at);
                    }
                }
                case 2 -> {
                    if (!edited.isEmpty()) {
                        edited.add(random.nextInt(edited.size()), edited.remove(at));
                    }
                }
                case 3 -> {
                    if (!edited.isEmpty()) {
                        edited.set(at, edited.get(at).replace("host-", "other-"));
                    }
                }
                case 4 -> edited.add(at, edited.isEmpty() ? entry("x", "h", 1) : edited.get(at));
                default -> edited.add(at, INVALID[random.nextInt(INVALID.length)]);
            }
        }
        String rendered = render(edited, random);
        String after = random.nextInt(10) == 0 ? rendered.substring(0, random.nextInt(rendered.length() + 1)) : rendered;

        Object expected = outcome(() -> load(after).nodes());
        NodesList from = previous;
        Object actual = outcome(() -> NodesListLoader.parse(bytes(after), FILE, from).nodes());
        assertThat(actual).as("incremental parse of %s after %s", after, before).isEqualTo(expected);
    }

    /** Entries that are not valid, or not what the incremental path expects. */
    private static final String[] INVALID = {
        "\"bad id!\": {\"hostname\": \"h\", \"policy-server\": \"root\"}",
        "\"no-host\": {\"policy-server\": \"root\"}",
        "\"not-object\": 3",
        "\"esc\\u0061ped\": {\"hostname\": \"h\", \"policy-server\": \"root\"}",
        "\"extra\": {\"hostname\": \"h\", \"policy-server\": \"root\", \"more\": {\"a\": [1, {\"b\": \"}\"}]}}",
        "\"trailing\": {\"hostname\": \"h\", \"policy-server\": \"root\"},",
        "garbage",
        "\"unterminated\": {\"hostname\": \"h\"",
    };

    private static String render(List<String> entries, Random random) {
        String[] spaces = {"", " ", "\n  ", "\t", "\r\n"};
        StringBuilder text = new StringBuilder(spaces[random.nextInt(spaces.length)]).append('{');
        for (int i = 0; i < entries.size(); i++) {
            text.append(i == 0 ? "" : ",").append(spaces[random.nextInt(spaces.length)]).append(entries.get(i));
        }
        return text.append(spaces[random.nextInt(spaces.length)]).append('}')
                .append(spaces[random.nextInt(spaces.length)]).toString();
    }

    private interface Parse {
        List<Node> run() throws IOException;
    }

    /** @return the nodes, or the failure's class and message */
    private static Object outcome(Parse parse) {
        try {
            return parse.run();
        } catch (IOException e) {
            return e.getClass().getName() + ": " + e.getMessage();
        }
    }
}
