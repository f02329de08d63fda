package io.pintle.server.tls;

import io.pintle.server.config.ServerConfig;
import java.io.IOException;
import java.net.Socket;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.NoSuchAlgorithmException;
import java.security.Provider;
import java.security.cert.CRL;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.Collection;
import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509ExtendedTrustManager;
import org.eclipse.jetty.util.ssl.SslContextFactory;

/** Builds Jetty's server TLS configuration from {@link ServerCredentials}. */
public final class TlsContextFactory {
    private static final String IN_MEMORY_PASSWORD = "pintle-in-memory";

    /**
     * The only cipher suites enabled (Jetty include patterns, in order of preference): TLS 1.3's, and for TLS 1.2,
     * when configured, ECDHE with an AEAD cipher only. Jetty's default exclusions still leave TLS 1.2's CBC suites
     * (SHA-256/384 MACs) and finite-field DHE enabled; testssl.sh reported both (TlsAuditIT).
     */
    static final List<String> CIPHER_SUITES = List.of(
            "TLS_AES_256_GCM_SHA384",
            "TLS_CHACHA20_POLY1305_SHA256",
            "TLS_AES_128_GCM_SHA256",
            "TLS_ECDHE_(ECDSA|RSA)_WITH_AES_256_GCM_SHA384",
            "TLS_ECDHE_(ECDSA|RSA)_WITH_CHACHA20_POLY1305_SHA256",
            "TLS_ECDHE_(ECDSA|RSA)_WITH_AES_128_GCM_SHA256");

    private TlsContextFactory() {}

    /**
     * @param credentials the server certificate and key
     * @param protocols enabled protocols ({@code TLSv1.3}, {@code TLSv1.2})
     * @return a server TLS factory that requests, but does not require, a client certificate
     * @throws GeneralSecurityException if the key store refuses the material
     */
    public static SslContextFactory.Server create(ServerCredentials credentials, List<String> protocols)
            throws GeneralSecurityException {
        return create(credentials, protocols, ServerConfig.TlsProvider.JDK);
    }

    /**
     * @param credentials the server certificate and key
     * @param protocols enabled protocols ({@code TLSv1.3}, {@code TLSv1.2})
     * @param provider the TLS implementation
     * @return a server TLS factory that requests, but does not require, a client certificate
     * @throws GeneralSecurityException if the key store refuses the material, or the provider is not available
     */
    public static SslContextFactory.Server create(ServerCredentials credentials, List<String> protocols,
            ServerConfig.TlsProvider provider) throws GeneralSecurityException {
        Provider implementation = resolve(provider) == ServerConfig.TlsProvider.CONSCRYPT
                ? NativeTls.provider() : null;
        SslContextFactory.Server factory = new SslContextFactory.Server() {
            @Override
            protected TrustManager[] getTrustManagers(KeyStore trustStore, Collection<? extends CRL> crls) {
                return new TrustManager[] {new AnyClientCertificate()};
            }

            @Override
            public void customize(SSLEngine engine) {
                super.customize(engine);
                if (implementation != null) {
                    // TLS 1.3 resumes only from tickets, which Conscrypt leaves off unless asked: without them
                    // every reconnection is a full handshake (measured: 69 against 240 connections/s).
                    NativeTls.enableSessionTickets(engine);
                }
            }

            @Override
            protected SSLContext getSSLContextInstance() throws NoSuchAlgorithmException {
                // The provider object itself, not a name looked up in the JVM-wide list.
                return implementation != null
                        ? SSLContext.getInstance("TLS", implementation)
                        : super.getSSLContextInstance();
            }
        };
        factory.setKeyStore(keyStore(credentials));
        factory.setKeyStorePassword(IN_MEMORY_PASSWORD);
        factory.setKeyManagerPassword(IN_MEMORY_PASSWORD);
        factory.setIncludeProtocols(protocols.toArray(new String[0]));
        factory.setIncludeCipherSuites(CIPHER_SUITES.toArray(new String[0]));
        // Requested, not required: a node without a certificate still reaches /common and /v1/whoami, and gets a
        // 403 with a reason on /policies rather than an opaque handshake failure.
        factory.setWantClientAuth(true);
        factory.setNeedClientAuth(false);
        // Agents pin the server key and connect by IP or by any name, so endpoint identification is not ours
        // to enforce; and a session ticket must never stand in for the per-request check (see package doc).
        factory.setEndpointIdentificationAlgorithm(null);
        factory.setRenegotiationAllowed(false);
        return factory;
    }

    /**
     * The TLS side of CFEngine's protocol, as cf-serverd sets it up: the server's RSA key in a certificate made
     * for the session (agents check the key against the one they trusted at bootstrap, never the certificate), a
     * client certificate required (the agent's, also made from its key: its key is its identity, checked after the
     * handshake against the snapshot), no endpoint identification.
     *
     * @param key the server's RSA key pair (the agent key, {@code localhost.priv})
     * @param protocols enabled protocols ({@code TLSv1.3}, {@code TLSv1.2})
     * @param provider the TLS implementation
     * @return the factory
     * @throws GeneralSecurityException if the key store refuses the material, or the provider is not available
     */
    public static SslContextFactory.Server cfengine(java.security.KeyPair key, List<String> protocols,
            ServerConfig.TlsProvider provider) throws GeneralSecurityException {
        java.time.Instant now = java.time.Instant.now();
        X509Certificate certificate = SelfSigned.certificate(key, SelfSigned.subject(null),
                now.minus(java.time.Duration.ofMinutes(5)), now.plus(SelfSigned.RUDDER_VALIDITY));
        SslContextFactory.Server factory = create(new ServerCredentials(List.of(certificate), key.getPrivate()),
                protocols, provider);
        factory.setWantClientAuth(true);
        factory.setNeedClientAuth(true);
        return factory;
    }

    /**
     * @param provider a TLS provider
     * @return its name and version, for the start-up log line
     */
    public static String describe(ServerConfig.TlsProvider provider) {
        if (resolve(provider) == ServerConfig.TlsProvider.CONSCRYPT) {
            return "Conscrypt " + NativeTls.version() + " (BoringSSL)";
        }
        return "the JDK (SunJSSE, Java " + Runtime.version().feature() + ")"
                + (provider == ServerConfig.TlsProvider.AUTO
                        ? "; Conscrypt's native library does not load on this machine: " + NativeTls.failure() : "");
    }

    /**
     * @param provider the configured provider
     * @return the one used: {@code auto} is Conscrypt where its native library loads, else the JDK's
     */
    public static ServerConfig.TlsProvider resolve(ServerConfig.TlsProvider provider) {
        if (provider != ServerConfig.TlsProvider.AUTO) {
            return provider;
        }
        return NativeTls.available() ? ServerConfig.TlsProvider.CONSCRYPT : ServerConfig.TlsProvider.JDK;
    }

    static KeyStore keyStore(ServerCredentials credentials) throws GeneralSecurityException {
        try {
            KeyStore store = KeyStore.getInstance("PKCS12");
            store.load(null, null);
            store.setKeyEntry("server", credentials.key(), IN_MEMORY_PASSWORD.toCharArray(),
                    credentials.chain().toArray(new X509Certificate[0]));
            return store;
        } catch (IOException e) {
            throw new GeneralSecurityException("cannot build the in-memory key store", e);
        }
    }

    /**
     * Accepts any client certificate chain at the TLS layer. Authorisation happens per request against the
     * snapshot. {@link #getAcceptedIssuers()} is empty, so the CertificateRequest's CA list stays empty and clients
     * with self-signed certificates still send them.
     */
    static final class AnyClientCertificate extends X509ExtendedTrustManager {
        /**
         * The longest client chain accepted: the JDK's own limit ({@code jdk.tls.maxCertificateChainLength}), kept
         * with Conscrypt too, which has none. Rudder agents send one self-signed certificate.
         */
        static final int MAX_CHAIN_LENGTH = 10;

        private static void present(X509Certificate[] chain) throws CertificateException {
            if (chain == null || chain.length == 0) {
                throw new CertificateException("empty client certificate chain");
            }
            if (chain.length > MAX_CHAIN_LENGTH) {
                throw new CertificateException("client certificate chain of " + chain.length
                        + " certificates, more than " + MAX_CHAIN_LENGTH);
            }
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            present(chain);
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
                throws CertificateException {
            present(chain);
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
                throws CertificateException {
            present(chain);
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            throw new CertificateException("this trust manager only checks clients");
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
                throws CertificateException {
            throw new CertificateException("this trust manager only checks clients");
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
                throws CertificateException {
            throw new CertificateException("this trust manager only checks clients");
        }

        @Override
        public X509Certificate[] getAcceptedIssuers() {
            return new X509Certificate[0];
        }
    }
}
