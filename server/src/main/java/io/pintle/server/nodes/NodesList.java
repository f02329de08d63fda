package io.pintle.server.nodes;

import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * The entries of one {@code nodeslist.json}, and where each lies in the bytes it was read from, so that the next
 * reload reuses every entry whose bytes did not change instead of parsing twenty thousand again (see
 * {@link NodesListLoader#parse(byte[], java.nio.file.Path, NodesList)}). Immutable; it keeps the file's bytes
 * (about its size in heap) for that comparison.
 */
public final class NodesList {
    /** A list of nothing, to start from. */
    public static final NodesList EMPTY = new NodesList(new byte[0], new int[0], new int[0], new Node[0]);

    private final byte[] source;
    private final int[] starts;
    private final int[] ends;
    private final Node[] entries;
    private final List<Node> nodes;

    /**
     * @param source the file's bytes; kept, not copied, and never modified
     * @param starts offset of each entry (the opening quote of its node id)
     * @param ends offset just after each entry's closing brace
     * @param entries each entry's node
     */
    NodesList(byte[] source, int[] starts, int[] ends, Node[] entries) {
        this(source, starts, ends, entries, entries);
    }

    private NodesList(byte[] source, int[] starts, int[] ends, Node[] entries, Node[] all) {
        if (starts.length != ends.length || starts.length != entries.length) {
            throw new IllegalArgumentException("one start, end and node per entry");
        }
        this.source = Objects.requireNonNull(source);
        this.starts = starts;
        this.ends = ends;
        this.entries = entries;
        this.nodes = Collections.unmodifiableList(Arrays.asList(all));
    }

    /** @return a list of these entries that reuses none of them next time (its size for reuse is 0) */
    static NodesList unranged(Node[] entries) {
        return new NodesList(new byte[0], new int[0], new int[0], new Node[0], entries);
    }

    /** @return the entries, in file order */
    public List<Node> nodes() {
        return nodes;
    }

    /** @return the number of entries that can be reused */
    int size() {
        return entries.length;
    }

    int length(int entry) {
        return ends[entry] - starts[entry];
    }

    Node node(int entry) {
        return entries[entry];
    }

    /** @return whether {@code content} holds, from {@code at}, exactly the bytes of this list's entry */
    boolean sameEntry(int entry, byte[] content, int at) {
        int length = length(entry);
        return at + length <= content.length
                && Arrays.equals(source, starts[entry], ends[entry], content, at, at + length);
    }
}
