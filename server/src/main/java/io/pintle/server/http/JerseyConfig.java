package io.pintle.server.http;

import io.pintle.server.reload.SnapshotHolder;
import java.time.Clock;
import java.util.List;
import org.glassfish.jersey.jackson.JacksonFeature;
import org.glassfish.jersey.server.ResourceConfig;
import org.glassfish.jersey.server.ServerProperties;

/** The Jersey application: every resource, filter and mapper, registered as instances. */
public final class JerseyConfig {
    private JerseyConfig() {}

    /**
     * @param snapshots the live snapshot
     * @param clock the clock for certificate validity
     * @return the application
     */
    public static ResourceConfig create(SnapshotHolder snapshots, Clock clock) {
        ResourceConfig config = new ResourceConfig();
        config.setApplicationName("pintle");
        config.property(ServerProperties.WADL_FEATURE_DISABLE, true);
        config.property(ServerProperties.BV_FEATURE_DISABLE, true);
        // Unknown routes must be problem+json too, not Jersey's HTML/plain 404.
        config.property(ServerProperties.RESPONSE_SET_STATUS_OVER_SEND_ERROR, true);
        config.register(JacksonFeature.withoutExceptionMappers());
        config.register(new PeerIdentityFilter(snapshots, clock));
        config.register(new ProblemExceptionMapper());
        config.registerInstances(resources().toArray());
        return config;
    }

    /** @return the resource instances: every route the server has (the OpenAPI contract test reads these) */
    static List<Object> resources() {
        return List.of(new PolicyResource(), new ServerInfoResource());
    }
}
