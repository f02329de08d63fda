package io.pintle.server.testing;

import java.time.Duration;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * Waits for a condition instead of for time. A test that sleeps and then asserts either waits longer than it needs
 * or flakes on a loaded machine; these poll what the test is waiting for, with a deadline that only tells a hang
 * from slowness, so a deadline can be generous at no cost to a healthy run.
 *
 * <p>Polling starts at {@value #FIRST_PAUSE_MILLIS} ms between checks and doubles up to
 * {@value #LONGEST_PAUSE_MILLIS} ms: quick when the condition is nearly met, never a busy spin. The check always
 * runs once more at the deadline, so a condition met during the last pause is not reported as missed.
 */
public final class Await {
    /** The first pause between two checks. */
    static final long FIRST_PAUSE_MILLIS = 2;
    /** The longest pause between two checks: the latency a waiting test adds at worst. */
    static final long LONGEST_PAUSE_MILLIS = 50;

    private Await() {}

    /** A condition to poll; it may throw, and what it throws ends the wait at once. */
    @FunctionalInterface
    public interface Condition<E extends Exception> {
        boolean holds() throws E;
    }

    /** Assertions to retry; an {@link AssertionError} means "not yet", anything else ends the wait at once. */
    @FunctionalInterface
    public interface Check<E extends Exception> {
        void run() throws E;
    }

    /**
     * Returns once {@code condition} holds.
     *
     * @throws AssertionError if it still does not hold after {@code timeout}
     */
    public static <E extends Exception> void until(Duration timeout, Condition<E> condition)
            throws E, InterruptedException {
        until(timeout, () -> "a condition", condition);
    }

    /**
     * Returns once {@code condition} holds.
     *
     * @param what what the test waits for, as the failure message should say it ("node-a's archive served")
     * @throws AssertionError if it still does not hold after {@code timeout}
     */
    public static <E extends Exception> void until(Duration timeout, String what, Condition<E> condition)
            throws E, InterruptedException {
        Objects.requireNonNull(what);
        until(timeout, () -> what, condition);
    }

    /**
     * Returns once {@code condition} holds.
     *
     * @param what what the test waits for, computed only on failure (a log to show, the value last seen)
     * @throws AssertionError if it still does not hold after {@code timeout}
     */
    public static <E extends Exception> void until(Duration timeout, Supplier<String> what, Condition<E> condition)
            throws E, InterruptedException {
        Poll poll = new Poll(timeout);
        int checks = 0;
        do {
            checks++;
            if (condition.holds()) {
                return;
            }
        } while (poll.pause());
        throw new AssertionError("not within " + timeout + " (" + checks + " checks): " + what.get());
    }

    /**
     * Runs {@code check} until it passes: for AssertJ assertions on state that settles later (a log line written
     * after the response, a metric updated after the request). On timeout, the last {@link AssertionError} is
     * rethrown, so the failure shows what was last seen.
     */
    public static <E extends Exception> void asserted(Duration timeout, Check<E> check) throws E, InterruptedException {
        Poll poll = new Poll(timeout);
        int checks = 0;
        while (true) {
            checks++;
            try {
                check.run();
                return;
            } catch (AssertionError e) {
                if (!poll.pause()) {
                    e.addSuppressed(new AssertionError("still failing after " + timeout + " (" + checks + " checks)"));
                    throw e;
                }
            }
        }
    }

    /**
     * Checks that nothing happens for {@code period}: {@code check} is run over and over for the whole period and
     * the first {@link AssertionError} fails the test at once. Since it can only prove "not within this period",
     * the period says how long the thing under test had to misbehave; choose it long enough to have caught the
     * bug this guards against.
     */
    public static <E extends Exception> void quietFor(Duration period, Check<E> check)
            throws E, InterruptedException {
        Poll poll = new Poll(period);
        do {
            check.run();
        } while (poll.pause());
    }

    /**
     * Checks that {@code happened} stays false for {@code period}, polled over the whole period.
     *
     * @param what what must not happen, as the failure message should say it ("a second run started")
     * @throws AssertionError as soon as it happens
     */
    public static <E extends Exception> void quietFor(Duration period, String what, Condition<E> happened)
            throws E, InterruptedException {
        Objects.requireNonNull(what);
        Poll poll = new Poll(period);
        long start = System.nanoTime();
        do {
            if (happened.holds()) {
                throw new AssertionError("happened after " + Duration.ofNanos(System.nanoTime() - start)
                        + ", should not within " + period + ": " + what);
            }
        } while (poll.pause());
    }

    /** A deadline and the backoff towards it. */
    private static final class Poll {
        private final long deadline;
        private long pauseMillis = FIRST_PAUSE_MILLIS;
        private boolean last;

        Poll(Duration timeout) {
            if (timeout.isNegative()) {
                throw new IllegalArgumentException("a negative timeout: " + timeout);
            }
            deadline = System.nanoTime() + timeout.toNanos();
        }

        /** Pauses before the next check; false once the check at (or after) the deadline has run. */
        boolean pause() throws InterruptedException {
            if (last) {
                return false;
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            long pause = Math.min(pauseMillis * 1_000_000, left);
            if (pause == left) {
                last = true;
            }
            Thread.sleep(pause / 1_000_000, (int) (pause % 1_000_000)); // the one sleep: the poll's own pace
            pauseMillis = Math.min(pauseMillis * 2, LONGEST_PAUSE_MILLIS);
            return true;
        }
    }
}
