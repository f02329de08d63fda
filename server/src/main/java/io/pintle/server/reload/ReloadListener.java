package io.pintle.server.reload;

/**
 * Told of every reload attempt, on the reload lane (one attempt at a time), in the order the composition root
 * registered it with {@link Reloader#addListener}. Each implementation is a named class whose name says its role
 * (the metrics, the systemd notifier, the input watcher), so that the composition root shows who is told. A
 * listener must not block: the next attempt waits for it.
 */
public interface ReloadListener {
    /**
     * An attempt starts; it is always followed by one {@link #finished} call.
     *
     * @param trigger what asked for it, for logs and status
     */
    default void attempted(String trigger) {}

    /**
     * An attempt ended: a new snapshot is live, nothing changed, or it failed and the previous one keeps serving.
     *
     * @param outcome what it did
     */
    default void finished(ReloadOutcome outcome) {}
}
