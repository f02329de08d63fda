package io.pintle.server.tls;

import java.security.cert.X509Certificate;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.server.Request;

/**
 * What the TLS layer knows of the peer of a Jetty request. {@code SecureRequestCustomizer} puts the session data
 * on each request, for HTTP/1.1 and HTTP/2 alike.
 *
 * @param leaf the client's leaf certificate, or null when it sent none
 * @param protocol the negotiated protocol, or null on a plain connection
 */
public record PeerCertificates(X509Certificate leaf, String protocol) {

    /**
     * @param request a Jetty request
     * @return the peer's certificate and TLS protocol
     */
    public static PeerCertificates of(Request request) {
        Object attribute = request.getAttribute(EndPoint.SslSessionData.ATTRIBUTE);
        if (!(attribute instanceof EndPoint.SslSessionData ssl)) {
            return new PeerCertificates(null, null);
        }
        X509Certificate[] chain = ssl.peerCertificates();
        String protocol = ssl.sslSession() != null ? ssl.sslSession().getProtocol() : null;
        return new PeerCertificates(chain != null && chain.length > 0 ? chain[0] : null, protocol);
    }
}
