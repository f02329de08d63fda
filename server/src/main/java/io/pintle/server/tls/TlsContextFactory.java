package io.pintle.server.tls;

import java.io.IOException;
import java.net.Socket;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.CRL;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.Collection;
import java.util.List;
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
        SslContextFactory.Server factory = new SslContextFactory.Server() {
            @Override
            protected TrustManager[] getTrustManagers(KeyStore trustStore, Collection<? extends CRL> crls) {
                return new TrustManager[] {new AnyClientCertificate()};
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
        private static void present(X509Certificate[] chain) throws CertificateException {
            if (chain == null || chain.length == 0) {
                throw new CertificateException("empty client certificate chain");
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
