package io.pintle.server.http.admin;

import io.pintle.server.delivery.Delivery;
import io.pintle.server.delivery.DeliveryCurve;
import io.pintle.server.delivery.NodeState;
import io.pintle.server.policy.Freeze;
import io.pintle.server.reload.ReloadHistory;
import io.pintle.server.reload.Reloader;
import io.pintle.server.reload.ServerSnapshot;
import io.pintle.server.reload.SnapshotHolder;
import io.pintle.server.remoterun.RemoteRunner;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.Response;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * The status page at {@code /} on the admin listener: generation, reloads, the delivery curve of the last
 * generation, nodes behind and silent, order channels and the freeze, read from the same objects as the JSON
 * resources. Self-contained (inline CSS and SVG), and its Content-Security-Policy forbids loading anything.
 */
@Path("/")
public final class StatusPageResource {
    /** Forbids scripts, frames and any load: the page needs none. */
    static final String POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
            + "frame-ancestors 'none'; form-action 'none'; base-uri 'none'";

    private final SnapshotHolder snapshots;
    private final Reloader reloader;
    private final Delivery delivery;
    private final RemoteRunner remoteRuns;
    private final Clock clock;

    /**
     * @param snapshots the live snapshot
     * @param reloader its reload history
     * @param delivery the delivery state
     * @param remoteRuns the order channels
     * @param clock the clock
     */
    public StatusPageResource(SnapshotHolder snapshots, Reloader reloader, Delivery delivery, RemoteRunner remoteRuns,
            Clock clock) {
        this.snapshots = snapshots;
        this.reloader = reloader;
        this.delivery = delivery;
        this.remoteRuns = remoteRuns;
        this.clock = clock;
    }

    /** @return the page */
    @GET
    @Produces("text/html; charset=utf-8")
    public Response page() {
        Instant now = clock.instant();
        ServerSnapshot snapshot = snapshots.current();
        ReloadHistory history = reloader.history();
        Delivery.Summary summary = delivery.summary();
        Instant generation = delivery.curve().generation();
        List<StatusPage.Point> curve = new ArrayList<>();
        List<DeliveryCurve.Sample> samples = delivery.curve().samples();
        Instant from = generation != null ? generation.minusSeconds(60) : now.minusSeconds(3600);
        for (DeliveryCurve.Sample sample : samples) {
            if (!sample.time().isBefore(from)) {
                curve.add(new StatusPage.Point(sample.time(), sample.nodes(), sample.current()));
            }
        }
        List<StatusPage.Row> rows = new ArrayList<>();
        for (NodeState state : delivery.nodes(snapshot)) {
            if ((state.behind() || state.silent()) && rows.size() < StatusPage.MAX_ROWS) {
                rows.add(new StatusPage.Row(state.node().id().value(), state.node().hostname(), state.behind(),
                        state.silent(), state.frozen(), state.record().policies() != null
                                ? state.record().policies().time() : null,
                        state.record().lastRequest() != null ? state.record().lastRequest().time() : null));
            }
        }
        Freeze freeze = snapshot.freeze();
        StatusPage.Model model = new StatusPage.Model(snapshot.self().value(),
                snapshot.config().general().role().text(), snapshot.generation(), snapshot.loadedAt(),
                history.applied(), history.unchanged(), history.failed(),
                history.lastFailure() == null ? null : new StatusPage.Failure(history.lastFailure().startedAt(),
                        history.lastFailure().trigger(), history.lastFailure().error()),
                summary.nodes(), summary.behind(), summary.silent(), summary.frozen(), generation, curve, rows,
                snapshot.config().remoteRun().enabled() ? new StatusPage.Channels(remoteRuns.channels().parked(),
                        remoteRuns.channels().awaited(), remoteRuns.policyUpdates().pending(),
                        remoteRuns.policyUpdates().released()) : null,
                freeze.active() ? new StatusPage.Frozen(freeze.since(), freeze.nodes().size(), freeze.all(),
                        freeze.rollback(), freeze.reason()) : null);
        return Response.ok(StatusPage.render(model, now))
                .header("Content-Security-Policy", POLICY)
                .header("X-Content-Type-Options", "nosniff")
                .header("Cache-Control", "no-store")
                .build();
    }
}
