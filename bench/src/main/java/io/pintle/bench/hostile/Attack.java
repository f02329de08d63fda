package io.pintle.bench.hostile;

/**
 * One attack of issue 18. {@link #launch} runs it up to the attacker's last new action (its last request, or the
 * resets that abandon its waits); what it then still holds (HTTP/2 connections kept alive with PINGs, uploads that
 * go on trickling) stays held while the harness watches the server's gauges come back, and is let go by
 * {@link #close}.
 */
interface Attack extends AutoCloseable {
    /** @return the attack, in a few words, with its figures */
    String description();

    /** Runs the attack to its last new action. */
    void launch() throws Exception;

    /** Called a few times a second while the gauges are watched: keeps what the attacker holds alive. */
    default void tick() {}

    /** @return how much of the attack was delivered, and how fast: whether the load generator was the limit */
    String delivered();

    @Override
    void close();
}
