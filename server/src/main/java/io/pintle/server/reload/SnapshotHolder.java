package io.pintle.server.reload;

import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;

/** Owns the only reference to the live snapshot. Readers never block; publishing is one atomic set. */
public final class SnapshotHolder {
    private final AtomicReference<ServerSnapshot> current;

    /**
     * @param initial the first snapshot, already validated
     */
    public SnapshotHolder(ServerSnapshot initial) {
        this.current = new AtomicReference<>(Objects.requireNonNull(initial));
    }

    /** @return the live snapshot; call once per request and keep it for the whole request */
    public ServerSnapshot current() {
        return current.get();
    }

    /**
     * Makes a validated snapshot live. Only the single reload writer calls this.
     *
     * @param next the new snapshot
     */
    public void publish(ServerSnapshot next) {
        current.set(Objects.requireNonNull(next));
    }
}
