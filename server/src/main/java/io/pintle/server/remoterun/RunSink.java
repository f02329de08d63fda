package io.pintle.server.remoterun;

import io.pintle.api.dto.RemoteRunEvent;

/**
 * Where a run's events go: output lines and one status per node. Called from several threads at once (one per
 * node or relay in progress); implementations are thread-safe and may block (that is how a slow reader slows the
 * agents down instead of filling the memory).
 */
public interface RunSink {
    /**
     * @param event an {@code output} or {@code status} event
     */
    void accept(RemoteRunEvent event);
}
