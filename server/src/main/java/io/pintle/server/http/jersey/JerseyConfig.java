package io.pintle.server.http.jersey;

import io.pintle.server.delivery.Delivery;
import io.pintle.server.delivery.Freezer;
import io.pintle.server.http.admin.DeliveryResource;
import io.pintle.server.http.admin.FreezeResource;
import io.pintle.server.http.admin.NodesResource;
import io.pintle.server.http.admin.StatusPageResource;
import io.pintle.server.http.admin.HealthResource;
import io.pintle.server.http.admin.MetricsResource;
import io.pintle.server.http.admin.Readiness;
import io.pintle.server.http.admin.ServerInfoResource;
import io.pintle.server.http.admin.StatusResource;
import io.pintle.server.http.admin.SystemResource;
import io.pintle.server.access.Route;
import io.pintle.server.metrics.ServerMetrics;
import io.pintle.server.reload.CrlFetch;
import io.pintle.server.reload.Reloader;
import io.pintle.server.reload.SnapshotHolder;
import io.pintle.server.remoterun.RemoteRunner;
import io.pintle.server.sharedfiles.SharedFileStore;
import io.pintle.server.uploads.UploadStore;
import io.pintle.server.uploads.LoginThrottle;
import io.pintle.server.uploads.UploadTally;
import io.pintle.server.upstream.UploadForwarder;
import io.pintle.server.upstream.UpstreamClient;
import java.time.Clock;
import java.util.List;
import org.glassfish.jersey.jackson.JacksonFeature;
import org.glassfish.jersey.server.ResourceConfig;
import org.glassfish.jersey.server.ServerProperties;

/**
 * The two Jersey applications, every resource, filter and mapper registered as instances: the node-facing one
 * (TLS listener: what is not a file route, see {@link Route}) and the administration one (loopback listener).
 */
public final class JerseyConfig {
    private JerseyConfig() {}

    /**
     * The node-facing application.
     *
     * @param sharedFiles node-to-node shared files
     * @param upstream the policy server (forwarding)
     * @param remoteRuns runs remote runs
     * @param uploads counts uploads
     * @param logins slows password guessing on the upload routes
     * @param delivery told of uploads
     * @param forwarder woken by uploads
     * @return the application
     */
    public static ResourceConfig create(SharedFileStore sharedFiles, UpstreamClient upstream,
            RemoteRunner remoteRuns, UploadTally uploads, LoginThrottle logins, Delivery delivery,
            UploadForwarder forwarder) {
        ResourceConfig config = base("pintle");
        config.registerInstances(resources(sharedFiles, upstream, remoteRuns, uploads, logins, delivery, forwarder)
                .toArray());
        config.register(new UploadsResource.OnlyPut(uploads));
        return config;
    }

    /**
     * The administration application, served on the loopback admin listener only.
     *
     * @param snapshots the live snapshot
     * @param reloader the reload writer
     * @param metrics what {@code /metrics} exposes
     * @param readiness what {@code /ready} reports
     * @param remoteRuns runs remote runs
     * @param uploads upload counts, for {@code /v1/status}
     * @param crlFetch the CRL fetch, for {@code /v1/status}
     * @param delivery the delivery state
     * @param freezer takes and releases freezes
     * @param forwarder the upload forwarding, for {@code /v1/status}
     * @param clock the clock
     * @return the application
     */
    public static ResourceConfig admin(SnapshotHolder snapshots, Reloader reloader, ServerMetrics metrics,
            Readiness readiness, RemoteRunner remoteRuns, UploadTally uploads, CrlFetch crlFetch, Delivery delivery,
            Freezer freezer, UploadForwarder forwarder, Clock clock) {
        ResourceConfig config = base("pintle-admin");
        config.registerInstances(adminResources(snapshots, reloader, metrics, readiness, remoteRuns, uploads, crlFetch,
                delivery, freezer, forwarder, clock).toArray());
        return config;
    }

    /**
     * @param sharedFiles node-to-node shared files (null for the contract test)
     * @param upstream the policy server (null for the contract test)
     * @param remoteRuns runs remote runs (null for the contract test)
     * @param uploads counts uploads (null for the contract test)
     * @param logins slows password guessing on the upload routes (null for the contract test)
     * @param delivery told of uploads (null for the contract test)
     * @param forwarder woken by uploads (null for the contract test)
     * @return the node-facing resource instances (the OpenAPI contract test reads these)
     */
    static List<Object> resources(SharedFileStore sharedFiles, UpstreamClient upstream, RemoteRunner remoteRuns,
            UploadTally uploads, LoginThrottle logins, Delivery delivery, UploadForwarder forwarder) {
        return List.of(new SharedFilesResource(sharedFiles, upstream), new ServerInfoResource(),
                new RemoteRunResource(remoteRuns, false),
                new UploadsResource(new UploadStore(), uploads, logins, delivery, forwarder));
    }

    /**
     * @param snapshots the live snapshot
     * @param reloader the reload writer
     * @param metrics what {@code /metrics} exposes (may be null for the contract test, which only reads routes)
     * @param readiness what {@code /ready} reports
     * @param remoteRuns runs remote runs (null for the contract test)
     * @param uploads upload counts (null for the contract test)
     * @param crlFetch the CRL fetch (null for the contract test)
     * @param delivery the delivery state (null for the contract test)
     * @param freezer takes and releases freezes (null for the contract test)
     * @param forwarder the upload forwarding (null for the contract test)
     * @param clock the clock
     * @return the admin resource instances (the OpenAPI contract test reads these)
     */
    static List<Object> adminResources(SnapshotHolder snapshots, Reloader reloader, ServerMetrics metrics,
            Readiness readiness, RemoteRunner remoteRuns, UploadTally uploads, CrlFetch crlFetch, Delivery delivery,
            Freezer freezer, UploadForwarder forwarder, Clock clock) {
        return List.of(new SystemResource(snapshots, reloader),
                new StatusResource(snapshots, reloader, uploads, remoteRuns, crlFetch, delivery, forwarder),
                new NodesResource(snapshots, delivery, clock),
                new FreezeResource(snapshots, freezer),
                new DeliveryResource(delivery),
                new StatusPageResource(snapshots, reloader, delivery, remoteRuns, clock),
                new HealthResource(snapshots, readiness),
                new MetricsResource(metrics != null ? metrics.registry() : null),
                new RemoteRunResource(remoteRuns, true));
    }

    private static ResourceConfig base(String name) {
        ResourceConfig config = new ResourceConfig();
        config.setApplicationName(name);
        config.property(ServerProperties.WADL_FEATURE_DISABLE, true);
        config.property(ServerProperties.BV_FEATURE_DISABLE, true);
        // Unknown routes must be problem+json too, not Jersey's HTML/plain 404.
        config.property(ServerProperties.RESPONSE_SET_STATUS_OVER_SEND_ERROR, true);
        config.register(JacksonFeature.withoutExceptionMappers());
        config.register(new ExchangeFilter());
        // Apache's ProxyPass and its deny: the TLS listener serves the unversioned prefix only; the admin listener
        // (relayd's port) both, since Rudder's trigger hook posts to /rudder/relay-api/remote-run/ there.
        config.register(new RelayApiAlias());
        config.register(new ProblemExceptionMapper());
        return config;
    }
}
