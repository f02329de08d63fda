package io.pintle.server.tls;

import io.pintle.server.config.ServerConfig;
import java.security.KeyStore;
import java.util.List;
import org.eclipse.jetty.util.ssl.SslContextFactory;

/**
 * The listener's TLS configuration, and how reloads change it: new credentials are first tried in a throw-away
 * context, then swapped in with Jetty's {@code SslContextFactory.reload}, which rebuilds the SSL context for new
 * handshakes while open connections keep their sessions.
 */
public final class ServerTls implements TlsUpdater {
    private final SslContextFactory.Server factory;
    private final List<String> protocols;
    private final ServerConfig.TlsProvider provider;

    private ServerTls(SslContextFactory.Server factory, List<String> protocols, ServerConfig.TlsProvider provider) {
        this.factory = factory;
        this.protocols = List.copyOf(protocols);
        this.provider = provider;
    }

    /**
     * @param credentials initial server credentials
     * @param protocols enabled protocols
     * @param provider the TLS implementation
     * @return the listener's TLS configuration
     * @throws java.security.GeneralSecurityException when the credentials are unusable, or the provider is not
     *     available on this machine
     */
    public static ServerTls create(ServerCredentials credentials, List<String> protocols,
            ServerConfig.TlsProvider provider) throws java.security.GeneralSecurityException {
        return new ServerTls(TlsContextFactory.create(credentials, protocols, provider), protocols, provider);
    }

    /** @return the factory to give the TLS connector */
    public SslContextFactory.Server factory() {
        return factory;
    }

    @Override
    public void validate(ServerCredentials credentials) throws Exception {
        SslContextFactory.Server probe = TlsContextFactory.create(credentials, protocols, provider);
        probe.start();
        probe.stop();
    }

    @Override
    public void apply(ServerCredentials credentials) throws Exception {
        KeyStore store = TlsContextFactory.keyStore(credentials);
        factory.reload(next -> next.setKeyStore(store));
    }
}
