package io.pintle.server.tls;

import io.pintle.server.nodes.ClientCertificate;
import java.security.cert.X509Certificate;
import java.util.List;
import javax.net.ssl.SSLSession;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.util.Attributes;

/**
 * What the TLS layer knows of the peer of a Jetty request. {@code SecureRequestCustomizer} puts the session data
 * on each request, for HTTP/1.1 and HTTP/2 alike.
 *
 * @param leaf the client's leaf certificate, or null when it sent none
 * @param protocol the negotiated protocol, or null on a plain connection
 * @param client what identification reads of {@code leaf}, or null when there is none
 */
public record PeerCertificates(X509Certificate leaf, String protocol, ClientCertificate client) {
    /** The connection attribute that keeps {@link ClientCertificate} for the requests of that connection. */
    private static final String CLIENT_CERTIFICATE = ClientCertificate.class.getName();

    /**
     * @param leaf the client's leaf certificate, or null when it sent none
     * @param protocol the negotiated protocol, or null on a plain connection
     */
    public PeerCertificates(X509Certificate leaf, String protocol) {
        this(leaf, protocol, leaf == null ? null : ClientCertificate.of(leaf));
    }

    /**
     * @param request a Jetty request
     * @return the peer's certificate and TLS protocol
     */
    public static PeerCertificates of(Request request) {
        Object attribute = request.getAttribute(EndPoint.SslSessionData.ATTRIBUTE);
        if (!(attribute instanceof EndPoint.SslSessionData ssl)) {
            return new PeerCertificates(null, null, null);
        }
        X509Certificate[] chain = ssl.peerCertificates();
        SSLSession session = ssl.sslSession();
        String protocol = session != null ? session.getProtocol() : null;
        X509Certificate leaf = chain != null && chain.length > 0 ? chain[0] : null;
        return new PeerCertificates(leaf, protocol,
                leaf == null ? null : client(request.getConnectionMetaData(), chain));
    }

    /**
     * A connection's peer certificate never changes (TLS 1.3 has no renegotiation), so what is read of it is kept
     * with the connection, for HTTP/1.1 and HTTP/2 alike (Jetty's connection attributes are thread-safe; the
     * session's values are not with every provider: Conscrypt's are a plain map), checked against the very
     * certificate object before use. So is the chain's verification against the CA bundle ({@link
     * ClientCertificate#verified}).
     */
    private static ClientCertificate client(Attributes connection, X509Certificate[] chain) {
        if (connection.getAttribute(CLIENT_CERTIFICATE) instanceof ClientCertificate cached
                && cached.certificate() == chain[0]) {
            return cached;
        }
        ClientCertificate read = ClientCertificate.of(List.of(chain));
        connection.setAttribute(CLIENT_CERTIFICATE, read);
        return read;
    }
}
