package io.pintle.server.nodes;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Items parsed from a file, each with the byte range it was parsed from, so that the next version of the file can
 * reuse every item whose bytes did not change: a root's nodes list and certificate bundle hold the whole fleet and
 * change by one entry when a node is accepted. Reuse is decided by comparing bytes, never by a digest. Immutable;
 * it keeps the file's bytes (about the file's size in heap) for that comparison.
 *
 * @param <T> what each range was parsed into
 */
final class Spans<T> {
    /** Previous spans tried after the expected one, and misses before all of them are indexed by key. */
    static final int LOOK_AHEAD = 8;

    private static final Spans<Object> EMPTY = new Spans<>(new byte[0], new int[0], new int[0], List.of());

    private final byte[] source;
    private final int[] starts;
    private final int[] ends;
    private final List<T> items;

    /**
     * @param source the file's bytes; kept, not copied, and never modified
     * @param starts offset of each item's first byte
     * @param ends offset just after each item's last byte
     * @param items what each range was parsed into (null allowed)
     */
    Spans(byte[] source, int[] starts, int[] ends, List<T> items) {
        if (starts.length != ends.length || starts.length != items.size()) {
            throw new IllegalArgumentException("one start, end and item per span");
        }
        this.source = Objects.requireNonNull(source);
        this.starts = starts;
        this.ends = ends;
        this.items = Collections.unmodifiableList(items);
    }

    /** @return no spans: nothing to reuse */
    @SuppressWarnings("unchecked")
    static <T> Spans<T> empty() {
        return (Spans<T>) EMPTY;
    }

    int size() {
        return starts.length;
    }

    T item(int span) {
        return items.get(span);
    }

    /** @return every item, in file order */
    List<T> items() {
        return items;
    }

    int length(int span) {
        return ends[span] - starts[span];
    }

    /** @return whether {@code content} holds, from {@code at}, exactly the bytes of this span */
    boolean sameBytes(int span, byte[] content, int at) {
        int length = length(span);
        return at + length <= content.length
                && Arrays.equals(source, starts[span], ends[span], content, at, at + length);
    }

    /**
     * A key of the bytes of an item, to find a moved item among the previous ones; equal keys are then confirmed
     * by comparing the bytes.
     *
     * @param <K> the key type
     */
    interface Key<K> {
        /**
         * @param bytes a file's bytes
         * @param start where the item starts
         * @param end just after where it ends, or -1 for an item of the new version, not scanned yet
         * @return its key, or null when it has none (it is then never looked up)
         */
        K of(byte[] bytes, int start, int end);
    }

    /**
     * Walks a new version of the file, finding for each item the previous span with the same bytes: first the one
     * after the last found (the file keeps its order), then the {@link #LOOK_AHEAD} after it (spans removed), then,
     * once that many have been missed, any span by key (spans moved). One per parse.
     *
     * @param <T> the items
     * @param <K> the key of a span's bytes
     */
    static final class Matcher<T, K> {
        private final Spans<T> previous;
        private final Key<K> key;
        private Map<K, Integer> byKey;
        private int expected;
        private int misses;

        /**
         * @param previous the spans of the previous version
         * @param key the key that finds moved spans
         */
        Matcher(Spans<T> previous, Key<K> key) {
            this.previous = previous;
            this.key = key;
        }

        /**
         * @param content the new version
         * @param at where one of its items starts
         * @return the previous span with exactly the bytes found at {@code at}, or -1
         */
        int find(byte[] content, int at) {
            int size = previous.size();
            if (expected < size && previous.sameBytes(expected, content, at)) {
                return found(expected);
            }
            for (int ahead = expected + 1; ahead <= expected + LOOK_AHEAD && ahead < size; ahead++) {
                if (previous.sameBytes(ahead, content, at)) {
                    return found(ahead);
                }
            }
            if (++misses > LOOK_AHEAD) {
                K wanted = key.of(content, at, -1);
                if (wanted != null) {
                    Integer candidate = index().get(wanted);
                    if (candidate != null && previous.sameBytes(candidate, content, at)) {
                        return found(candidate);
                    }
                }
            }
            return -1;
        }

        private int found(int span) {
            expected = span + 1;
            return span;
        }

        private Map<K, Integer> index() {
            if (byKey == null) {
                byKey = new HashMap<>(previous.size() * 2);
                for (int span = 0; span < previous.size(); span++) {
                    K spanKey = key.of(previous.source, previous.starts[span], previous.ends[span]);
                    if (spanKey != null) {
                        byKey.putIfAbsent(spanKey, span);
                    }
                }
            }
            return byKey;
        }
    }

    /**
     * Collects spans in file order.
     *
     * @param <T> the items
     */
    static final class Builder<T> {
        private int[] starts;
        private int[] ends;
        private final List<T> items;

        /**
         * @param capacity expected number of spans
         */
        Builder(int capacity) {
            starts = new int[Math.max(1, capacity)];
            ends = new int[starts.length];
            items = new ArrayList<>(starts.length);
        }

        void add(int start, int end, T item) {
            int count = items.size();
            if (count == starts.length) {
                starts = Arrays.copyOf(starts, count * 2);
                ends = Arrays.copyOf(ends, count * 2);
            }
            starts[count] = start;
            ends[count] = end;
            items.add(item);
        }

        /** @return what was added, without the ranges */
        List<T> items() {
            return items;
        }

        Spans<T> build(byte[] source) {
            int count = items.size();
            return new Spans<>(source, Arrays.copyOf(starts, count), Arrays.copyOf(ends, count), items);
        }
    }
}
