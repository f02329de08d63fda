package io.pintle.server.systemd;

import io.pintle.server.reload.ReloadListener;
import io.pintle.server.reload.ReloadOutcome;
import java.util.Objects;
import java.util.function.Function;

/**
 * Brackets every reload, whatever its trigger (file watch, SIGHUP, the reload API behind {@code ExecReload}), by
 * {@code RELOADING=1} and {@code READY=1}, so that {@code systemctl} shows "reloading" exactly while one runs and
 * its status line says how the last one ended.
 */
public final class ReloadNotifier implements ReloadListener {
    private final SystemdNotifier notifier;
    private final Function<ReloadOutcome, String> status;

    /**
     * @param notifier where the notifications go
     * @param status the {@code systemctl status} line after an attempt
     */
    public ReloadNotifier(SystemdNotifier notifier, Function<ReloadOutcome, String> status) {
        this.notifier = Objects.requireNonNull(notifier);
        this.status = Objects.requireNonNull(status);
    }

    @Override
    public void attempted(String trigger) {
        notifier.reloading("reloading (" + trigger + ")");
    }

    @Override
    public void finished(ReloadOutcome outcome) {
        notifier.ready(status.apply(outcome));
    }
}
