package io.pintle.server.http;

import io.pintle.server.acl.Caller;
import io.pintle.server.reload.ServerSnapshot;
import io.pintle.server.tls.PeerCertificates;
import jakarta.ws.rs.container.ContainerRequestContext;
import java.util.Objects;

/**
 * What a request knows of itself after {@link PeerIdentityFilter}: the snapshot it runs on, the caller, and the
 * TLS facts. Stored as a request property and read by resources.
 *
 * @param snapshot the snapshot read once for this request
 * @param caller address and identification
 * @param peer TLS protocol and client certificate
 */
record RequestState(ServerSnapshot snapshot, Caller caller, PeerCertificates peer) {
    static final String PROPERTY = RequestState.class.getName();

    RequestState {
        Objects.requireNonNull(snapshot);
        Objects.requireNonNull(caller);
        Objects.requireNonNull(peer);
    }

    static RequestState of(ContainerRequestContext request) {
        Object state = request.getProperty(PROPERTY);
        if (!(state instanceof RequestState requestState)) {
            throw new IllegalStateException("PeerIdentityFilter did not run for " + request.getUriInfo().getPath());
        }
        return requestState;
    }
}
