package io.pintle.server.reload;

/**
 * Counts and the most recent outcomes of reload attempts. Immutable; the reloader replaces it after each attempt.
 *
 * @param last the most recent attempt, or null
 * @param lastFailure the most recent failed attempt, or null
 * @param applied attempts that published a snapshot
 * @param unchanged attempts that found nothing new
 * @param failed attempts rejected
 */
public record ReloadHistory(ReloadOutcome last, ReloadOutcome lastFailure, long applied, long unchanged, long failed) {
    /** Before any reload. */
    public static final ReloadHistory NONE = new ReloadHistory(null, null, 0, 0, 0);

    /**
     * @param outcome a new attempt
     * @return the history including it
     */
    public ReloadHistory with(ReloadOutcome outcome) {
        return switch (outcome.result()) {
            case APPLIED -> new ReloadHistory(outcome, lastFailure, applied + 1, unchanged, failed);
            case UNCHANGED -> new ReloadHistory(outcome, lastFailure, applied, unchanged + 1, failed);
            case FAILED -> new ReloadHistory(outcome, outcome, applied, unchanged, failed + 1);
        };
    }
}
