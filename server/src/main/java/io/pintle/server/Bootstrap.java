package io.pintle.server;

import io.pintle.server.config.ServerConfig;
import io.pintle.server.http.HttpServerFactory;
import io.pintle.server.http.JerseyConfig;
import io.pintle.server.reload.ServerSnapshot;
import io.pintle.server.reload.SnapshotException;
import io.pintle.server.reload.SnapshotHolder;
import io.pintle.server.reload.SnapshotLoader;
import io.pintle.server.tls.TlsContextFactory;
import java.security.GeneralSecurityException;
import java.time.Clock;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.util.ssl.SslContextFactory;
import org.glassfish.jersey.server.ResourceConfig;

/** The composition root: builds every collaborator with {@code new}, in dependency order. */
public final class Bootstrap {
    private Bootstrap() {}

    /**
     * Loads the first snapshot and assembles a server around it.
     *
     * @param config the validated configuration
     * @return the server, not started
     * @throws SnapshotException when an input file is missing or invalid
     * @throws GeneralSecurityException when the TLS material is unusable
     */
    public static PintleServer build(ServerConfig config) throws SnapshotException, GeneralSecurityException {
        Clock clock = Clock.systemUTC();
        SnapshotLoader loader = new SnapshotLoader(config, clock);
        ServerSnapshot first = loader.load(1);
        SnapshotHolder snapshots = new SnapshotHolder(first);
        SslContextFactory.Server tls = TlsContextFactory.create(first.credentials(), config.tls().protocols());
        ResourceConfig application = JerseyConfig.create(snapshots, clock);
        Server server = HttpServerFactory.create(config.general().listen(), tls, application);
        return new PintleServer(config, snapshots, server);
    }
}
