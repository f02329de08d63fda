package io.pintle.bench.sync;

import javax.net.ssl.SSLContext;

/** A fresh client TLS context per sync, so no run resumes a TLS session from the previous one. */
@FunctionalInterface
interface TlsFactory {
    /**
     * @return a new context with the node's certificate and the server's pin
     * @throws Exception if the material cannot be read
     */
    SSLContext create() throws Exception;
}
