package io.pintle.server.reload;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

/**
 * What one reload attempt did.
 *
 * @param trigger what asked for it
 * @param startedAt when it started
 * @param duration how long it took
 * @param result applied, unchanged or failed
 * @param generation the live generation afterwards
 * @param error why it failed (naming the file or key), or null
 */
public record ReloadOutcome(
        String trigger, Instant startedAt, Duration duration, Result result, long generation, String error) {
    public ReloadOutcome {
        Objects.requireNonNull(trigger);
        Objects.requireNonNull(startedAt);
        Objects.requireNonNull(duration);
        Objects.requireNonNull(result);
    }

    /** The three ways a reload ends. */
    public enum Result {
        /** A new snapshot is live. */
        APPLIED,
        /** The inputs had not changed; the live snapshot stays. */
        UNCHANGED,
        /** The new inputs were rejected; the previous snapshot keeps serving. */
        FAILED;

        /** @return lower-case name for JSON and logs */
        public String text() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /** @return whether the live snapshot now reflects the inputs (applied or unchanged) */
    public boolean succeeded() {
        return result != Result.FAILED;
    }
}
