package io.pintle.server.tls;

/**
 * Where new server credentials go: the TLS layer checks them without touching the live listener, then switches
 * new handshakes to them. Open connections keep the session they negotiated.
 */
public interface TlsUpdater {
    /**
     * Builds a complete TLS context from the credentials and discards it.
     *
     * @param credentials candidate credentials
     * @throws Exception when the TLS layer would refuse them
     */
    void validate(ServerCredentials credentials) throws Exception;

    /**
     * Makes new handshakes use the credentials.
     *
     * @param credentials validated credentials
     * @throws Exception when the switch fails (the previous credentials stay in use)
     */
    void apply(ServerCredentials credentials) throws Exception;
}
