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
        if (!valid(value)) {
            throw new IllegalArgumentException("invalid node id '" + value + "': it must match " + PATTERN.pattern());
        }
    }

    /** Same rule as {@link #PATTERN}, without a regex: node ids are checked by the ten thousand at each reload. */
    private static boolean valid(String value) {
        if (value == null || value.isEmpty() || value.length() > 64) {
            return false;
        }
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
            if (!ok) {
                return false;
            }
        }
        return true;
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
