package io.pintle.server.metrics;

import io.pintle.server.PintleVersion;
import io.pintle.server.nodes.Identification;
import io.pintle.server.nodes.Revocations;
import io.pintle.server.overload.Gate;
import io.pintle.server.overload.WorkClass;
import io.pintle.server.policy.ChangeWaits;
import io.pintle.server.policy.DigestCache;
import io.pintle.server.policy.FileCache;
import io.pintle.server.reload.CrlFetch;
import io.pintle.server.reload.ReloadListener;
import io.pintle.server.reload.ReloadOutcome;
import io.pintle.server.reload.ServerSnapshot;
import io.pintle.server.reload.SnapshotHolder;
import io.pintle.server.delivery.Delivery;
import io.pintle.server.policy.Freeze;
import io.pintle.server.policy.PolicyArchives;
import io.pintle.server.remoterun.PolicyUpdates;
import io.pintle.server.remoterun.PullChannels;
import io.pintle.server.uploads.LoginThrottle;
import io.pintle.server.uploads.UploadKind;
import io.pintle.server.uploads.UploadTally;
import io.prometheus.metrics.core.datapoints.CounterDataPoint;
import io.prometheus.metrics.core.datapoints.DistributionDataPoint;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.pintle.server.upstream.UploadForwarder;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.core.metrics.Info;
import io.prometheus.metrics.instrumentation.jvm.JvmMetrics;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.IntSupplier;
import java.util.function.Supplier;

/**
 * Every Pintle metric, in a registry this instance owns. The request path ({@link #request}, {@link #denied},
 * {@link #handshake}) only increments adders through data points resolved in advance or cached on first use;
 * snapshot, connection and JVM figures are read when {@code /metrics} is scraped.
 */
public final class ServerMetrics implements ReloadListener {
    /** Closed: from a listed PROXY protocol address, the connection did not start with a header. */
    public static final String PROXY_HEADER_MISSING = "proxy-header-missing";
    /** Closed: from a listed PROXY protocol address, a malformed or incomplete header. */
    public static final String PROXY_HEADER_INVALID = "proxy-header-invalid";
    /** Request durations: from a cached 304 (about a millisecond) to a large archive on a slow link. */
    static final double[] REQUEST_SECONDS =
            {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300};
    /** Reload durations: a few nodes take milliseconds, 20,000 nodes well under a second. */
    static final double[] RELOAD_SECONDS = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};
    /** Status codes are cached per route in an array indexed by code; anything outside is counted as "other". */
    private static final int MAX_STATUS = 600;
    /**
     * The reasons a request is denied, created at zero so that a rate over them works before the first denial:
     * the identification codes, and those of {@code AclEvaluator} and the path check.
     */
    static final List<String> KNOWN_DENIALS = knownDenials();

    private final PrometheusRegistry registry = new PrometheusRegistry();
    private final Counter requests;
    private final Counter denials;
    private final RouteSeries[] routes;
    private final Map<String, CounterDataPoint> knownDenials;
    private final Counter handshakes;
    private final Map<String, CounterDataPoint> handshakesByProtocol;
    private final CounterDataPoint handshakeFailures;
    private final Map<ReloadOutcome.Result, CounterDataPoint> reloads;
    private final DistributionDataPoint reloadSeconds;
    private final Map<String, CounterDataPoint> overloadRejections;
    private final Counter connectionsClosed;
    private final Counter remoteRunNodes;
    private final Counter cfengineRequests;
    private final CounterDataPoint cfengineBytes;
    private final Counter cfengineRefused;

    /**
     * @param snapshots the live snapshot, read at scrape time for the snapshot gauges
     */
    public ServerMetrics(SnapshotHolder snapshots) {
        requests = Counter.builder()
                .name("pintle_requests_total")
                .help("Requests answered, by route class and status code (Jetty-level rejections included)")
                .labelNames("route", "status")
                .withoutExemplars()
                .register(registry);
        Counter bytes = Counter.builder()
                .name("pintle_response_bytes_total")
                .help("Response body bytes sent (after compression), by route class")
                .labelNames("route")
                .withoutExemplars()
                .register(registry);
        Histogram durations = Histogram.builder()
                .name("pintle_request_duration_seconds")
                .help("Time from the request headers to the end of the response, by route class")
                .labelNames("route")
                .classicOnly()
                .classicUpperBounds(REQUEST_SECONDS)
                .withoutExemplars()
                .register(registry);
        RouteClass[] classes = RouteClass.values();
        routes = new RouteSeries[classes.length];
        for (RouteClass route : classes) {
            routes[route.ordinal()] = new RouteSeries(route.label(), bytes.labelValues(route.label()),
                    durations.labelValues(route.label()));
        }

        denials = Counter.builder()
                .name("pintle_denials_total")
                .help("Requests refused by the access rules or the path check, by reason code")
                .labelNames("reason")
                .withoutExemplars()
                .register(registry);
        Map<String, CounterDataPoint> known = new HashMap<>();
        for (String reason : KNOWN_DENIALS) {
            known.put(reason, denials.labelValues(reason));
        }
        knownDenials = Map.copyOf(known);

        handshakes = Counter.builder()
                .name("pintle_tls_handshakes_total")
                .help("Completed TLS handshakes on the node-facing listener, by protocol")
                .labelNames("protocol")
                .withoutExemplars()
                .register(registry);
        handshakesByProtocol = Map.of("TLSv1.3", handshakes.labelValues("TLSv1.3"),
                "TLSv1.2", handshakes.labelValues("TLSv1.2"));
        handshakeFailures = Counter.builder()
                .name("pintle_tls_handshake_failures_total")
                .help("Failed TLS handshakes on the node-facing listener")
                .withoutExemplars()
                .register(registry);

        Counter reloadCounter = Counter.builder()
                .name("pintle_reloads_total")
                .help("Reload attempts, by result: applied, unchanged or failed")
                .labelNames("result")
                .withoutExemplars()
                .register(registry);
        Map<ReloadOutcome.Result, CounterDataPoint> byResult = new HashMap<>();
        for (ReloadOutcome.Result result : ReloadOutcome.Result.values()) {
            byResult.put(result, reloadCounter.labelValues(result.text()));
        }
        reloads = Map.copyOf(byResult);
        reloadSeconds = Histogram.builder()
                .name("pintle_reload_duration_seconds")
                .help("Time a reload attempt took, whatever its result")
                .classicOnly()
                .classicUpperBounds(RELOAD_SECONDS)
                .withoutExemplars()
                .register(registry);

        Counter rejections = Counter.builder()
                .name("pintle_overload_rejections_total")
                .help("Requests answered 503 by overload control, by work class and reason: overloaded (the "
                        + "workers and queue of their class were full), queue-timeout (they waited past the queue "
                        + "timeout), client-limit (their client address had its per_address share running or waiting), "
                        + "node-busy (their node had max_requests_per_node in flight)")
                .labelNames("class", "reason")
                .withoutExemplars()
                .register(registry);
        Map<String, CounterDataPoint> byClass = new HashMap<>();
        for (WorkClass work : WorkClass.values()) {
            for (String reason : OVERLOAD_REASONS) {
                byClass.put(work.label() + "/" + reason, rejections.labelValues(work.label(), reason));
            }
        }
        overloadRejections = Map.copyOf(byClass);
        remoteRunNodes = Counter.builder()
                .name("pintle_remote_run_nodes_total")
                .help("Remote-run targets this server reported an outcome for (its own agent, or nodes it called "
                        + "or passed the run to), by status: success, failed, timeout, unreachable, refused, "
                        + "unknown, unroutable, error")
                .labelNames("status")
                .withoutExemplars()
                .register(registry);
        cfengineRequests = Counter.builder()
                .name("pintle_cfengine_requests_total")
                .help("Requests on the CFEngine listener, by command (STAT, OPENDIR, GET, MD5, VERSION, EXEC, "
                        + "OTHER) and outcome: ok, denied (access rules or path check), missing (no such file), "
                        + "bad (malformed), failed (read error, file changed while sent)")
                .labelNames("command", "outcome")
                .withoutExemplars()
                .register(registry);
        cfengineBytes = Counter.builder()
                .name("pintle_cfengine_file_bytes_total")
                .help("File bytes sent by GET on the CFEngine listener")
                .withoutExemplars()
                .register(registry)
                .labelValues();
        cfengineRefused = Counter.builder()
                .name("pintle_cfengine_connections_refused_total")
                .help("Connections the CFEngine listener closed before any request, by reason: classic-protocol "
                        + "(pre-TLS CFEngine, as allowlegacyconnects => {}), network-not-allowed (allowconnects), "
                        + "too-many-from-address, untrusted-key (an unknown key from outside trustkeysfrom), "
                        + "not-rsa (a certificate whose key is not RSA), identification (a malformed version or "
                        + "IDENTITY line), handshake (TLS failed or timed out)")
                .labelNames("reason")
                .withoutExemplars()
                .register(registry);
        connectionsClosed = Counter.builder()
                .name("pintle_connections_closed_total")
                .help("Connections the TLS listener closed to protect itself, by reason: header-timeout (no "
                        + "complete request header in time), slow-client (reading a response too slowly), "
                        + "proxy-header-missing / proxy-header-invalid (from an address of "
                        + "general.proxy_protocol_from: no PROXY protocol header / a malformed or incomplete one)")
                .labelNames("reason")
                .withoutExemplars()
                .register(registry);
        connectionsClosed.labelValues("header-timeout");
        connectionsClosed.labelValues("slow-client");
        connectionsClosed.labelValues(PROXY_HEADER_MISSING);
        connectionsClosed.labelValues(PROXY_HEADER_INVALID);

        snapshotGauge(snapshots, "pintle_snapshot_generation", "Generation of the live snapshot",
                ServerSnapshot::generation);
        snapshotGauge(snapshots, "pintle_snapshot_nodes", "Nodes in the live snapshot",
                snapshot -> snapshot.nodes().nodeCount());
        snapshotGauge(snapshots, "pintle_snapshot_pinned_keys", "Pinned node keys in the live snapshot",
                snapshot -> snapshot.nodes().pinCount());
        GaugeWithCallback.builder()
                .name("pintle_snapshot_loaded_timestamp_seconds")
                .help("When the live snapshot was built, in seconds since the epoch")
                .callback(callback -> callback.call(snapshots.current().loadedAt().toEpochMilli() / 1000.0))
                .register(registry);
        GaugeWithCallback.builder()
                .name("pintle_crl_age_seconds")
                .help("Seconds since the oldest CRL in force was issued (its thisUpdate); absent without CRLs. "
                        + "Compare with the CA's publication period: a CRL older than that misses revocations")
                .callback(callback -> {
                    Instant oldest = null;
                    for (Revocations.Crl crl : snapshots.current().trust().revocations().crls()) {
                        oldest = oldest == null || crl.thisUpdate().isBefore(oldest) ? crl.thisUpdate() : oldest;
                    }
                    if (oldest != null) {
                        callback.call(Duration.between(oldest, Instant.now()).toMillis() / 1000.0);
                    }
                })
                .register(registry);
        Info.builder()
                .name("pintle_build_info")
                .help("Pintle version")
                .labelNames("version")
                .register(registry)
                .setLabelValues(PintleVersion.current());
        JvmMetrics.builder().register(registry);
    }

    /** @return the registry {@code /metrics} exposes */
    public PrometheusRegistry registry() {
        return registry;
    }

    /**
     * Counts one remote-run target's outcome.
     *
     * @param status its status ({@code success}, {@code failed}...: a fixed set)
     */
    public void remoteRunEnded(String status) {
        remoteRunNodes.labelValues(status).inc();
    }

    /**
     * Registers the open-connections gauge; called once, when the listeners exist.
     *
     * @param listeners listener name to its current number of open connections
     */
    public void connections(java.util.function.Supplier<Map<String, Long>> listeners) {
        GaugeWithCallback.builder()
                .name("pintle_connections")
                .help("Open connections, by listener")
                .labelNames("listener")
                .callback(callback -> listeners.get().forEach((name, count) -> callback.call(count, name)))
                .register(registry);
    }

    /**
     * Registers the handshake gate's gauge; called once, when the TLS listener exists with a gate.
     *
     * @param waiting handshaking connections waiting for their next step
     * @param running handshake steps running
     * @param returning new handshakes that went before the other new ones so far, or null when none can
     */
    public void handshakeGate(IntSupplier waiting, IntSupplier running, java.util.function.LongSupplier returning) {
        GaugeWithCallback.builder()
                .name("pintle_tls_handshakes_waiting")
                .help("Handshaking connections waiting for a core (one handshake step per core at a time): above 0"
                        + " for long, agents connect faster than the server signs")
                .callback(callback -> callback.call(waiting.getAsInt()))
                .register(registry);
        GaugeWithCallback.builder()
                .name("pintle_tls_handshake_steps_running")
                .help("Handshake steps computing now, at most one per core")
                .callback(callback -> callback.call(running.getAsInt()))
                .register(registry);
        if (returning != null) {
            CounterWithCallback.builder()
                    .name("pintle_tls_handshakes_returning")
                    .help("New TLS handshakes run before the other new ones because their address had just finished"
                            + " one (an agent's next request during a herd)")
                    .callback(callback -> callback.call(returning.getAsLong()))
                    .register(registry);
        }
    }

    /**
     * Registers the per-class worker gauges; called once, when the gates exist.
     *
     * @param gates each work class's gate
     */
    public void gates(Map<WorkClass, Gate<?>> gates) {
        Map<WorkClass, Gate<?>> copy = Map.copyOf(gates);
        GaugeWithCallback.builder()
                .name("pintle_inflight_requests")
                .help("Node-facing requests being handled, by work class")
                .labelNames("class")
                .callback(callback -> copy.forEach((work, gate) -> callback.call(gate.active(), work.label())))
                .register(registry);
        GaugeWithCallback.builder()
                .name("pintle_queued_requests")
                .help("Node-facing requests waiting for a worker, by work class")
                .labelNames("class")
                .callback(callback -> copy.forEach((work, gate) -> callback.call(gate.waiting(), work.label())))
                .register(registry);
    }

    /**
     * Exposes the Linux policy archives Pintle built where Rudder's hook had not written one.
     *
     * @param archives the builder
     */
    public void archives(PolicyArchives archives) {
        CounterWithCallback.builder()
                .name("pintle_archives_built")
                .help("Linux policy archives built from a node's tree because Rudder's hook had not written one yet")
                .callback(callback -> callback.call(archives.built()))
                .register(registry);
        CounterWithCallback.builder()
                .name("pintle_archive_build_seconds")
                .help("Time spent building policy archives")
                .callback(callback -> callback.call(archives.buildSeconds()))
                .register(registry);
    }

    /**
     * Exposes the forwarding of uploads to the policy server (a relay's): per route what waits, what went and what
     * was refused for good, and when it last worked and failed. The gauges read the forwarder's last look at the
     * directories (every 2 s at most); all are 0 on a server that does not forward.
     *
     * @param forwarder the forwarder
     * @param snapshots the live snapshot, whose configuration says whether it forwards
     */
    public void forwarding(UploadForwarder forwarder, SnapshotHolder snapshots) {
        GaugeWithCallback.builder()
                .name("pintle_forward_queue_files")
                .help("Uploads waiting to be forwarded to the policy server, by route")
                .labelNames("route")
                .callback(callback -> forwarder.status().queue()
                        .forEach((kind, queue) -> callback.call(queue.files(), kind.label())))
                .register(registry);
        GaugeWithCallback.builder()
                .name("pintle_forward_queue_bytes")
                .help("Size of the uploads waiting to be forwarded, by route")
                .labelNames("route")
                .callback(callback -> forwarder.status().queue()
                        .forEach((kind, queue) -> callback.call(queue.bytes(), kind.label())))
                .register(registry);
        GaugeWithCallback.builder()
                .name("pintle_forward_queue_oldest_timestamp_seconds")
                .help("When the oldest upload waiting to be forwarded was written (Unix time), by route; 0 when none "
                        + "waits")
                .labelNames("route")
                .callback(callback -> forwarder.status().queue().forEach((kind, queue) -> callback.call(
                        queue.oldest() == null ? 0 : queue.oldest().toEpochMilli() / 1000.0, kind.label())))
                .register(registry);
        CounterWithCallback.builder()
                .name("pintle_forwarded")
                .help("Uploads the policy server took (and this server then removed), by route")
                .labelNames("route")
                .callback(callback -> forwarder.status().forwarded()
                        .forEach((kind, count) -> callback.call(count, kind.label())))
                .register(registry);
        CounterWithCallback.builder()
                .name("pintle_forward_refused")
                .help("Uploads the policy server refused for good (moved to failed/ with a .reason file), by route")
                .labelNames("route")
                .callback(callback -> forwarder.status().refused()
                        .forEach((kind, count) -> callback.call(count, kind.label())))
                .register(registry);
        GaugeWithCallback.builder()
                .name("pintle_forward_last_success_timestamp_seconds")
                .help("When the policy server last took a forwarded upload (Unix time); 0 before the first")
                .callback(callback -> callback.call(seconds(forwarder.status().lastSuccess())))
                .register(registry);
        GaugeWithCallback.builder()
                .name("pintle_forward_last_failure_timestamp_seconds")
                .help("When forwarding an upload last failed (Unix time); 0 before the first failure")
                .callback(callback -> {
                    UploadForwarder.Failure failure = forwarder.status().lastFailure();
                    callback.call(failure == null ? 0 : seconds(failure.at()));
                })
                .register(registry);
    }

    private static double seconds(java.time.Instant at) {
        return at == null ? 0 : at.toEpochMilli() / 1000.0;
    }

    /**
     * Exposes policy delivery: the served nodes behind, silent and frozen as of the last sample (every 10 s), and
     * the freeze in force.
     *
     * @param delivery the delivery state
     * @param snapshots the live snapshot, whose freeze is read at scrape time
     */
    public void delivery(Delivery delivery, SnapshotHolder snapshots) {
        GaugeWithCallback.builder()
                .name("pintle_nodes_served")
                .help("Nodes this server serves (nodeslist.json names it their policy server)")
                .callback(callback -> callback.call(delivery.summary().nodes()))
                .register(registry);
        GaugeWithCallback.builder()
                .name("pintle_nodes_behind")
                .help("Served nodes that do not hold the policies served to them now (never fetched, or an older "
                        + "version)")
                .callback(callback -> callback.call(delivery.summary().behind()))
                .register(registry);
        GaugeWithCallback.builder()
                .name("pintle_nodes_silent")
                .help("Served nodes with no request for [delivery] silent_after_seconds")
                .callback(callback -> callback.call(delivery.summary().silent()))
                .register(registry);
        GaugeWithCallback.builder()
                .name("pintle_nodes_current_ratio")
                .help("Share of served nodes that hold the policies served to them now (1 when none is served)")
                .callback(callback -> callback.call(delivery.summary().currentShare()))
                .register(registry);
        GaugeWithCallback.builder()
                .name("pintle_nodes_frozen")
                .help("Served nodes held by a freeze")
                .callback(callback -> callback.call(delivery.summary().frozen()))
                .register(registry);
        GaugeWithCallback.builder()
                .name("pintle_certificate_expiry_timestamp_seconds")
                .help("When a certificate of this server stops being valid (Unix time); certificate=\"server\": the "
                        + "TLS certificate agents see (read from the live snapshot, so a renewal shows at reload)")
                .labelNames("certificate")
                .callback(callback -> {
                    ServerSnapshot live = snapshots.current();
                    callback.call(live.credentials().chain().get(0).getNotAfter().getTime() / 1000.0, "server");
                })
                .register(registry);
        GaugeWithCallback.builder()
                .name("pintle_freeze_active")
                .help("1 while a freeze holds nodes on frozen policies, else 0")
                .callback(callback -> callback.call(snapshots.current().freeze().active() ? 1 : 0))
                .register(registry);
        GaugeWithCallback.builder()
                .name("pintle_freeze_since_timestamp_seconds")
                .help("When the freeze in force was taken (Unix time), 0 when none")
                .callback(callback -> {
                    Freeze freeze = snapshots.current().freeze();
                    callback.call(freeze.active() ? freeze.since().toEpochMilli() / 1000.0 : 0);
                })
                .register(registry);
    }

    /**
     * Exposes the pull channel's figures.
     *
     * @param channels the nodes' order channels
     * @param updates the policy updates sent over them
     */
    public void orderChannels(PullChannels channels, PolicyUpdates updates) {
        GaugeWithCallback.builder()
                .name("pintle_remote_run_order_polls")
                .help("Nodes whose poll for remote-run orders (the pull channel) is parked now")
                .callback(callback -> callback.call(channels.parked()))
                .register(registry);
        GaugeWithCallback.builder()
                .name("pintle_remote_run_orders_awaited")
                .help("Orders given over order channels whose report has not come yet")
                .callback(callback -> callback.call(channels.awaited()))
                .register(registry);
        CounterWithCallback.builder()
                .name("pintle_policy_update_orders")
                .help("Update orders sent over order channels because a node's policy archive changed")
                .callback(callback -> callback.call(updates.released()))
                .register(registry);
    }

    /**
     * Exposes the change-wait and digest-cache figures.
     *
     * @param waits the parked {@code ?wait} requests
     * @param digests the file digest cache
     */
    public void trees(ChangeWaits waits, DigestCache digests) {
        GaugeWithCallback.builder()
                .name("pintle_change_waiters")
                .help("Requests parked by ?wait until their ETag changes")
                .callback(callback -> callback.call(waits.waiting()))
                .register(registry);
        CounterWithCallback.builder()
                .name("pintle_digests_computed")
                .help("File SHA-256 digests computed for manifests (each reads the whole file)")
                .callback(callback -> callback.call(digests.computed()))
                .register(registry);
        CounterWithCallback.builder()
                .name("pintle_digest_cache_hits")
                .help("File SHA-256 digests answered from the cache")
                .callback(callback -> callback.call(digests.hits()))
                .register(registry);
        CounterWithCallback.builder()
                .name("pintle_digest_bytes")
                .help("Bytes read to compute file digests")
                .callback(callback -> callback.call(digests.bytesHashed()))
                .register(registry);
    }

    /**
     * Exposes the download cache's figures.
     *
     * @param files the download cache
     */
    public void downloads(FileCache files) {
        CounterWithCallback.builder()
                .name("pintle_file_cache_hits")
                .help("Downloads answered from the file cache after one stat")
                .callback(callback -> callback.call(files.hits()))
                .register(registry);
        CounterWithCallback.builder()
                .name("pintle_file_cache_misses")
                .help("Downloads that found no entry in the file cache, or a stale one")
                .callback(callback -> callback.call(files.misses()))
                .register(registry);
        GaugeWithCallback.builder()
                .name("pintle_file_cache_bytes")
                .help("Memory held by the file cache: file bytes plus a fixed overhead per entry")
                .callback(callback -> callback.call(files.size()))
                .register(registry);
    }

    /**
     * Exposes how the CRL fetch goes.
     *
     * @param crlFetch the fetch of {@code [nodes] crl_url}
     */
    public void crlFetch(CrlFetch crlFetch) {
        CounterWithCallback.builder()
                .name("pintle_crl_fetch_failures")
                .help("Failed fetches of [nodes] crl_url since start (the last good CRL stays in force; "
                        + "/v1/status says why)")
                .callback(callback -> callback.call(crlFetch.failures()))
                .register(registry);
    }

    /**
     * Exposes the upload counts.
     *
     * @param uploads the counts since start
     */
    public void uploads(UploadTally uploads) {
        CounterWithCallback.builder()
                .name("pintle_uploads")
                .help("Uploads (PUT /inventories/, /inventory-updates/, /reports/) by kind and result: created, "
                        + "replaced, unauthorized, throttled, denied, invalid, too-large, aborted, no-space, error")
                .labelNames("kind", "result")
                .callback(callback -> {
                    for (UploadKind kind : UploadKind.values()) {
                        for (UploadTally.Result result : UploadTally.Result.values()) {
                            callback.call(uploads.count(kind, result), kind.label(), result.label());
                        }
                    }
                })
                .register(registry);
        CounterWithCallback.builder()
                .name("pintle_upload_signatures")
                .help("Reports and inventory pairs checked at the edge ([uploads] verify_signatures), by kind and "
                        + "outcome: verified, refused, unverifiable (no key of the node on this server)")
                .labelNames("kind", "outcome")
                .callback(callback -> {
                    for (UploadKind kind : UploadKind.values()) {
                        for (UploadTally.Verification outcome : UploadTally.Verification.values()) {
                            callback.call(uploads.verifications(kind, outcome), kind.label(), outcome.label());
                        }
                    }
                })
                .register(registry);
        CounterWithCallback.builder()
                .name("pintle_upload_bytes")
                .help("Bytes of uploads stored under their final name, by kind")
                .labelNames("kind")
                .callback(callback -> {
                    for (UploadKind kind : UploadKind.values()) {
                        callback.call(uploads.bytes(kind), kind.label());
                    }
                })
                .register(registry);
    }

    /**
     * Exposes the upload login throttle (its refusals are counted by {@link #uploads}, result {@code throttled}).
     *
     * @param logins the throttle
     * @param limits the limits in force, read at scrape time
     */
    public void loginThrottle(LoginThrottle logins, Supplier<LoginThrottle.Limits> limits) {
        GaugeWithCallback.builder()
                .name("pintle_upload_throttled_addresses")
                .help("Client addresses (IPv6: /64s) whose uploads are refused now after too many failed logins "
                        + "([uploads] max_failures_per_address within failure_window)")
                .callback(callback -> callback.call(logins.throttled(limits.get())))
                .register(registry);
    }

    /** Why overload control refuses a request: the {@code reason} label of its counter. */
    public static final List<String> OVERLOAD_REASONS = List.of("overloaded", "queue-timeout", "client-limit",
            "node-busy");

    /**
     * Counts one request refused with a 503 by overload control.
     *
     * @param work its work class
     * @param reason one of {@link #OVERLOAD_REASONS}
     */
    public void overloaded(WorkClass work, String reason) {
        CounterDataPoint counter = overloadRejections.get(work.label() + "/" + reason);
        if (counter == null) {
            throw new IllegalArgumentException("not an overload reason: " + reason);
        }
        counter.inc();
    }

    /**
     * Counts one connection closed by the TLS listener's guard.
     *
     * @param reason {@code header-timeout}, {@code slow-client}, {@link #PROXY_HEADER_MISSING} or {@link
     *     #PROXY_HEADER_INVALID}
     */
    public void connectionClosed(String reason) {
        connectionsClosed.labelValues(reason).inc();
    }

    /**
     * Counts one request on the CFEngine listener.
     *
     * @param command its command ({@code STAT}, {@code GET}, ...)
     * @param outcome ok, denied, missing, bad or failed
     * @param fileBytes file bytes a {@code GET} sent
     */
    public void cfengineRequest(String command, String outcome, long fileBytes) {
        cfengineRequests.labelValues(command, outcome).inc();
        if (fileBytes > 0) {
            cfengineBytes.inc(fileBytes);
        }
    }

    /**
     * Counts a connection the CFEngine listener closed before serving it.
     *
     * @param reason why (see the metric's help)
     */
    public void cfengineRefused(String reason) {
        cfengineRefused.labelValues(reason).inc();
    }

    /**
     * Counts one answered request.
     *
     * @param route its route class
     * @param status the status code sent
     * @param bytes response body bytes written
     * @param nanos how long it took
     */
    public void request(RouteClass route, int status, long bytes, long nanos) {
        RouteSeries series = routes[route.ordinal()];
        series.status(status).inc();
        if (bytes > 0) {
            series.bytes.inc(bytes);
        }
        series.seconds.observe(nanos / 1e9);
    }

    /**
     * Counts one denial.
     *
     * @param reason its reason code ({@code unknown-key}, {@code network-not-allowed}, ...)
     */
    public void denied(String reason) {
        CounterDataPoint known = knownDenials.get(reason);
        // Reason codes are constants in code, so the label stays bounded even on this path.
        (known != null ? known : denials.labelValues(reason)).inc();
    }

    /**
     * Counts one TLS handshake.
     *
     * @param succeeded whether it completed
     * @param protocol the negotiated protocol (when it succeeded)
     */
    public void handshake(boolean succeeded, String protocol) {
        if (succeeded) {
            CounterDataPoint known = protocol != null ? handshakesByProtocol.get(protocol) : null;
            (known != null ? known : handshakes.labelValues(protocol != null ? protocol : "unknown")).inc();
        } else {
            handshakeFailures.inc();
        }
    }

    /**
     * Counts one reload attempt, by result, and its duration.
     *
     * @param outcome what it did
     */
    @Override
    public void finished(ReloadOutcome outcome) {
        reloads.get(outcome.result()).inc();
        reloadSeconds.observe(outcome.duration().toNanos() / 1e9);
    }

    private void snapshotGauge(SnapshotHolder snapshots, String name, String help,
            java.util.function.ToLongFunction<ServerSnapshot> value) {
        GaugeWithCallback.builder()
                .name(name)
                .help(help)
                .callback(callback -> callback.call(value.applyAsLong(snapshots.current())))
                .register(registry);
    }

    private static List<String> knownDenials() {
        List<String> reasons = new ArrayList<>();
        for (Identification.Reason reason : Identification.Reason.values()) {
            reasons.add(reason.code());
        }
        reasons.add("network-not-allowed");
        reasons.add("uid-mismatch");
        reasons.add("key-mismatch");
        reasons.add("path-rejected");
        return List.copyOf(reasons);
    }

    /** The series of one route class; request counters by status are created on first use, then cached. */
    private final class RouteSeries {
        private final String route;
        private final CounterDataPoint bytes;
        private final DistributionDataPoint seconds;
        private final AtomicReferenceArray<CounterDataPoint> byStatus = new AtomicReferenceArray<>(MAX_STATUS + 1);

        RouteSeries(String route, CounterDataPoint bytes, DistributionDataPoint seconds) {
            this.route = route;
            this.bytes = bytes;
            this.seconds = seconds;
        }

        CounterDataPoint status(int status) {
            int index = status >= 100 && status < MAX_STATUS ? status : MAX_STATUS;
            CounterDataPoint point = byStatus.get(index);
            if (point == null) {
                // A race here resolves the same data point twice: labelValues is idempotent.
                point = requests.labelValues(route, index == MAX_STATUS ? "other" : Integer.toString(status));
                byStatus.set(index, point);
            }
            return point;
        }
    }
}
