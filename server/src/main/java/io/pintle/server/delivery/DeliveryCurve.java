package io.pintle.server.delivery;

import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

/**
 * The share of nodes on the current version over time: one sample per tick, the last {@link #CAPACITY} kept, and
 * when the last generation appeared (a tick where the version served to some nodes changed). A simple lock: one
 * writer every few seconds, rare readers.
 */
public final class DeliveryCurve {
    /** Samples kept: a day at one every 10 s ({@code [delivery] sample_seconds}'s default). */
    public static final int CAPACITY = 8640;

    /**
     * One tick.
     *
     * @param time when
     * @param nodes nodes served here
     * @param current of which on the version served now
     * @param changed nodes whose served version changed since the previous tick
     */
    public record Sample(Instant time, int nodes, int current, int changed) {}

    private final Deque<Sample> samples = new ArrayDeque<>();
    private Instant generation;

    /**
     * @param sample a tick's counts
     */
    public synchronized void add(Sample sample) {
        if (samples.size() == CAPACITY) {
            samples.removeFirst();
        }
        samples.addLast(sample);
        if (sample.changed() > 0) {
            generation = sample.time();
        }
    }

    /** @return the samples, oldest first */
    public synchronized List<Sample> samples() {
        return new ArrayList<>(samples);
    }

    /** @return when the served version last changed for some node since start, or null */
    public synchronized Instant generation() {
        return generation;
    }

    /** @return the last sample, or null before the first tick */
    public synchronized Sample last() {
        return samples.peekLast();
    }
}
