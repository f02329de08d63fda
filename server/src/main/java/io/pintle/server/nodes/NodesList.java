package io.pintle.server.nodes;

import java.util.Arrays;
import java.util.List;

/**
 * The entries of one {@code nodeslist.json}, and where each lies in the bytes it was read from, so that the next
 * reload reuses every entry whose bytes did not change instead of parsing twenty thousand again (see
 * {@link NodesListLoader#parse(byte[], java.nio.file.Path, NodesList)}). Immutable; it keeps the file's bytes
 * (about its size in heap) for that comparison.
 */
public final class NodesList {
    /** A list of nothing, to start from. */
    public static final NodesList EMPTY = new NodesList(Spans.empty(), List.of());

    private final Spans<Node> spans;
    private final List<Node> nodes;

    /** @param nodes unmodifiable */
    private NodesList(Spans<Node> spans, List<Node> nodes) {
        this.spans = spans;
        this.nodes = nodes;
    }

    /**
     * @param spans each entry's node and range (from the opening quote of its id to just after its closing brace)
     */
    NodesList(Spans<Node> spans) {
        this(spans, spans.items());
    }

    /**
     * @param source the file's bytes; kept, not copied, and never modified
     * @param starts offset of each entry (the opening quote of its node id)
     * @param ends offset just after each entry's closing brace
     * @param entries each entry's node
     */
    NodesList(byte[] source, int[] starts, int[] ends, Node[] entries) {
        this(new Spans<>(source, starts, ends, Arrays.asList(entries)));
    }

    /** @return a list of these entries that reuses none of them next time (it has no spans) */
    static NodesList unranged(List<Node> entries) {
        return new NodesList(Spans.empty(), List.copyOf(entries));
    }

    /** @return the entries, in file order */
    public List<Node> nodes() {
        return nodes;
    }

    /** @return each entry's node and range, for reuse by the next load */
    Spans<Node> spans() {
        return spans;
    }
}
