package io.pintle.server.nodes;

import java.util.regex.Pattern;

/**
 * A Rudder node id ({@code root} or a UUID), as Apache accepts it in {@code /policies/{id}/...}: letters, digits,
 * {@code -} and {@code _}, at most 64 characters.
 *
 * @param value the id
 */
public record NodeId(String value) implements Comparable<NodeId> {
    /** Rudder's Apache rule {@code /policies/([a-zA-Z0-9-_]+)/}. */
    public static final Pattern PATTERN = Pattern.compile("[a-zA-Z0-9_-]{1,64}");

    /**
     * @throws IllegalArgumentException when the value does not match {@link #PATTERN}
     */
    public NodeId {
        if (value == null || !PATTERN.matcher(value).matches()) {
            throw new IllegalArgumentException("invalid node id '" + value + "': it must match " + PATTERN.pattern());
        }
    }

    @Override
    public int compareTo(NodeId other) {
        return value.compareTo(other.value);
    }

    @Override
    public String toString() {
        return value;
    }
}
