package io.pintle.bench.hostile;

import java.util.Map;

/**
 * What one attack did: to the victim and to the server's gauges.
 *
 * @param kind the attack
 * @param description what the attacker sent
 * @param delivered how much of it, how fast
 * @param seen what the attacker got back, by status or way of failing
 * @param startNanos the attacker's first action
 * @param endNanos its last new action (what it holds may go on)
 * @param observedUntilNanos when the harness stopped watching: every gauge back, or the watch's bound
 * @param victim the victim's downloads started from {@code startNanos} to {@code observedUntilNanos}
 * @param gauges each gauge's change
 * @param harnessCpu the load generator's (this JVM's) CPU over the launch, as a share of the CPUs it may use
 * @param serverCpu the server's CPU over the whole window, in cores
 * @param boundSeconds how soon after the attacker's last new action every gauge must be back: the idle timeout,
 *     or for waits the server cannot see abandoned, their {@code wait}
 */
record AttackRun(HostileOptions.Kind kind, String description, String delivered, String seen, long startNanos,
        long endNanos, long observedUntilNanos, Victim.Window victim, Map<Gauge, Change> gauges, double harnessCpu,
        double serverCpu, double boundSeconds) {
    /** A share of its CPUs at or above which the load generator, not the server, set the attack's pace. */
    static final double GENERATOR_BOUND = 0.85;

    /**
     * One gauge over the attack.
     *
     * @param before its reading just before the attack
     * @param peak its highest reading from the attack's start to the end of the watch
     * @param after its last reading of the watch
     * @param threshold the reading it must come down to: before, plus what it moved with the victim alone
     * @param backSeconds from the attack's last action until it was at or below the threshold for good; 0 when it
     *     already was; NaN when it was not back when the watch ended
     */
    record Change(double before, double peak, double after, double threshold, double backSeconds) {
        boolean back() {
            return !Double.isNaN(backSeconds);
        }
    }

    /** @return whether the load generator set the pace of the launch */
    boolean generatorBound() {
        return harnessCpu >= GENERATOR_BOUND;
    }

    /** @return whether every gauge came back */
    boolean allBack() {
        return gauges.values().stream().allMatch(Change::back);
    }

    double windowSeconds() {
        return (observedUntilNanos - startNanos) / 1e9;
    }

    double launchSeconds() {
        return (endNanos - startNanos) / 1e9;
    }
}
