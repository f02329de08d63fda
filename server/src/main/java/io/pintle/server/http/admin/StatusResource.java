package io.pintle.server.http.admin;

import io.pintle.api.dto.ServerStatus;
import io.pintle.server.nodes.NodeTrust;
import io.pintle.server.nodes.Revocations;
import io.pintle.server.reload.CrlFetch;
import io.pintle.server.reload.InputFile;
import io.pintle.server.reload.ReloadHistory;
import io.pintle.server.reload.ReloadOutcome;
import io.pintle.server.delivery.Delivery;
import io.pintle.server.reload.Reloader;
import io.pintle.server.reload.ServerSnapshot;
import io.pintle.server.reload.SnapshotHolder;
import io.pintle.server.remoterun.RemoteRunner;
import io.pintle.server.uploads.UploadKind;
import io.pintle.server.uploads.UploadTally;
import io.pintle.server.upstream.UploadForwarder;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Pintle's status on the admin listener: what is live, from which input files, and how reloads went. */
@Path("/v1/status")
public final class StatusResource {
    private final SnapshotHolder snapshots;
    private final Reloader reloader;
    private final UploadTally uploads;
    private final RemoteRunner remoteRuns;
    private final CrlFetch crlFetch;
    private final Delivery delivery;
    private final UploadForwarder forwarder;

    public StatusResource(SnapshotHolder snapshots, Reloader reloader, UploadTally uploads, RemoteRunner remoteRuns,
            CrlFetch crlFetch, Delivery delivery, UploadForwarder forwarder) {
        this.forwarder = forwarder;
        this.delivery = delivery;
        this.snapshots = snapshots;
        this.reloader = reloader;
        this.uploads = uploads;
        this.remoteRuns = remoteRuns;
        this.crlFetch = crlFetch;
    }

    @GET
    @Produces(MediaType.APPLICATION_JSON)
    public ServerStatus status() {
        ServerSnapshot snapshot = snapshots.current();
        ReloadHistory history = reloader.history();
        List<ServerStatus.Input> inputs = new ArrayList<>();
        for (Map.Entry<java.nio.file.Path, InputFile> input : snapshot.inputs().entrySet()) {
            inputs.add(new ServerStatus.Input(input.getKey().toString(), input.getValue().sha256(),
                    input.getValue().size()));
        }
        return new ServerStatus(
                snapshot.self().value(),
                snapshot.config().general().role().text(),
                snapshot.generation(),
                snapshot.loadedAt().toString(),
                snapshot.nodes().nodeCount(),
                snapshot.nodes().pinCount(),
                snapshot.credentials().keyHash().toString(),
                inputs,
                view(history.last()),
                view(history.lastFailure()),
                new ServerStatus.Counts(history.applied(), history.unchanged(), history.failed()),
                uploads(snapshot),
                snapshot.config().remoteRun().enabled()
                        ? new ServerStatus.OrderChannels(remoteRuns.channels().parked(),
                                remoteRuns.channels().awaited(), remoteRuns.policyUpdates().pending(),
                                remoteRuns.policyUpdates().released(), remoteRuns.policyUpdates().watched()) : null,
                trust(snapshot),
                FreezeResource.view(snapshot.freeze(), null, null),
                delivery(),
                forwarding(snapshot));
    }

    private ServerStatus.Forwarding forwarding(ServerSnapshot snapshot) {
        if (!UploadForwarder.wanted(snapshot.config())) {
            return null;
        }
        UploadForwarder.Status status = forwarder.status();
        Instant now = Instant.now();
        Map<String, ServerStatus.ForwardQueue> queues = new LinkedHashMap<>();
        for (UploadKind kind : UploadKind.values()) {
            UploadForwarder.QueueView queue = status.queue().get(kind);
            queues.put(kind.label(), new ServerStatus.ForwardQueue(queue.files(), queue.bytes(),
                    queue.oldest() == null ? 0 : Math.max(0, Duration.between(queue.oldest(), now).toSeconds()),
                    status.forwarded().get(kind), status.refused().get(kind)));
        }
        UploadForwarder.Failure failure = status.lastFailure();
        return new ServerStatus.Forwarding(snapshot.config().upstream().url().toString(), queues,
                text(status.lastSuccess()), failure != null ? failure.at().toString() : null,
                failure != null ? failure.message() : null);
    }

    private ServerStatus.Delivery delivery() {
        Delivery.Summary summary = delivery.summary();
        java.time.Instant generation = delivery.curve().generation();
        return new ServerStatus.Delivery(summary.nodes(), summary.behind(), summary.silent(), summary.frozen(),
                summary.channels(), summary.currentShare(), generation != null ? generation.toString() : null);
    }

    private ServerStatus.Trust trust(ServerSnapshot snapshot) {
        NodeTrust trust = snapshot.trust();
        Revocations revocations = trust.revocations();
        Instant now = Instant.now();
        List<ServerStatus.Crl> crls = new ArrayList<>();
        for (Revocations.Crl crl : revocations.crls()) {
            Instant next = crl.nextUpdate();
            crls.add(new ServerStatus.Crl(crl.file().toString(), crl.issuer(), crl.thisUpdate().toString(),
                    next != null ? next.toString() : null, crl.entries(),
                    Duration.between(crl.thisUpdate(), now).toSeconds(), next != null && now.isAfter(next)));
        }
        CrlFetch.Status fetch = crlFetch.status();
        return new ServerStatus.Trust(trust.modes().stream().map(NodeTrust.Mode::text).toList(),
                trust.ca() != null ? trust.ca().file().toString() : null, crls, revocations.denied().size(),
                revocations.deniedFile() != null ? revocations.deniedFile().toString() : null,
                fetch == null ? null : new ServerStatus.CrlFetch(fetch.url().toString(), text(fetch.lastSuccess()),
                        text(fetch.lastAttempt()), fetch.lastError()));
    }

    private static String text(Instant instant) {
        return instant != null ? instant.toString() : null;
    }

    private Map<String, ServerStatus.Uploads> uploads(ServerSnapshot snapshot) {
        if (!snapshot.config().uploads().enabled()) {
            return null;
        }
        Map<String, ServerStatus.Uploads> view = new LinkedHashMap<>();
        for (UploadKind kind : UploadKind.values()) {
            view.put(kind.label(), new ServerStatus.Uploads(uploads.bytes(kind), uploads.results(kind)));
        }
        return view;
    }

    private static ServerStatus.Reload view(ReloadOutcome outcome) {
        if (outcome == null) {
            return null;
        }
        return new ServerStatus.Reload(outcome.trigger(), outcome.startedAt().toString(), outcome.result().text(),
                outcome.generation(), outcome.duration().toNanos() / 1e6, outcome.error());
    }
}
