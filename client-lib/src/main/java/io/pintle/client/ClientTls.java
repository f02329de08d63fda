package io.pintle.client;

import io.pintle.api.KeyPins;
import java.io.IOException;
import java.net.Socket;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.Set;
import javax.net.ssl.KeyManager;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * TLS material of a Pintle client: the node's key and certificate, presented as client certificate, and the set
 * of server key pins it accepts. Server authentication is by pin only, like Rudder's
 * {@code curl --pinnedpubkey ... --insecure}: the certificate's issuer and host name are not checked, its public
 * key must match one pin.
 */
public final class ClientTls {
    private static final char[] IN_MEMORY_PASSWORD = "pintle".toCharArray();

    private ClientTls() {}

    /**
     * Builds an {@link SSLContext} for mutual TLS with a pinned server key.
     *
     * @param certificate PEM certificate (chain) to present, or null for none
     * @param key PEM private key matching {@code certificate}, or null for none
     * @param serverPins accepted server key pins ({@code sha256//<base64>}); must not be empty
     * @return a TLS context
     * @throws IOException if a file cannot be read
     * @throws GeneralSecurityException if the material is unusable
     */
    public static SSLContext context(Path certificate, Path key, Set<String> serverPins)
            throws IOException, GeneralSecurityException {
        KeyManager[] keyManagers = null;
        if (certificate != null && key != null) {
            keyManagers = keyManagers(Pem.readCertificates(certificate), Pem.readPrivateKey(key));
        }
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(keyManagers, new TrustManager[] {new PinningTrustManager(serverPins)}, null);
        return context;
    }

    /**
     * Builds an {@link SSLContext} for mutual TLS with a pinned server key, from key managers already built (a
     * server calling many peers with one identity builds them once).
     *
     * @param keyManagers what to present (see {@link #keyManagers})
     * @param serverPins accepted server key pins ({@code sha256//<base64>}); must not be empty
     * @return a TLS context
     * @throws GeneralSecurityException if the material is unusable
     */
    public static SSLContext context(KeyManager[] keyManagers, Set<String> serverPins)
            throws GeneralSecurityException {
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(keyManagers, new TrustManager[] {new PinningTrustManager(serverPins)}, null);
        return context;
    }

    /**
     * Key managers presenting one certificate chain.
     *
     * @param chain the chain, leaf first
     * @param key the leaf's private key
     * @return key managers for {@link SSLContext#init}
     * @throws GeneralSecurityException if the key store refuses the material
     */
    public static KeyManager[] keyManagers(List<X509Certificate> chain, PrivateKey key)
            throws GeneralSecurityException {
        try {
            KeyStore store = KeyStore.getInstance("PKCS12");
            store.load(null, null);
            store.setKeyEntry("client", key, IN_MEMORY_PASSWORD, chain.toArray(new X509Certificate[0]));
            KeyManagerFactory factory = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            factory.init(store, IN_MEMORY_PASSWORD);
            return factory.getKeyManagers();
        } catch (IOException e) {
            throw new GeneralSecurityException("cannot build an in-memory key store", e);
        }
    }

    /** Accepts a server whose leaf certificate's public key matches one of the pins; nothing else is checked. */
    static final class PinningTrustManager extends X509ExtendedTrustManager {
        private final Set<String> pins;

        PinningTrustManager(Set<String> pins) {
            if (pins.isEmpty()) {
                throw new IllegalArgumentException("at least one server key pin (sha256//...) is required");
            }
            this.pins = Set.copyOf(pins);
        }

        private void check(X509Certificate[] chain) throws CertificateException {
            if (chain == null || chain.length == 0) {
                throw new CertificateException("server presented no certificate");
            }
            String pin = KeyPins.sha256(chain[0].getPublicKey());
            if (!pins.contains(pin)) {
                throw new CertificateException("server key " + pin + " does not match the pinned keys " + pins);
            }
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            check(chain);
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
                throws CertificateException {
            check(chain);
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
                throws CertificateException {
            check(chain);
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            throw new CertificateException("a client does not authenticate clients");
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
                throws CertificateException {
            throw new CertificateException("a client does not authenticate clients");
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
                throws CertificateException {
            throw new CertificateException("a client does not authenticate clients");
        }

        @Override
        public X509Certificate[] getAcceptedIssuers() {
            return new X509Certificate[0];
        }
    }
}
