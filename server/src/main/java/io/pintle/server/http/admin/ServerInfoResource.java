package io.pintle.server.http.admin;

import io.pintle.server.http.Exchange;
import io.pintle.api.Routes;
import io.pintle.api.dto.WhoAmI;
import io.pintle.server.acl.Caller;
import io.pintle.server.nodes.CertificateSubjects;
import io.pintle.server.nodes.Identification;
import io.pintle.server.nodes.KeyHash;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.MediaType;
import java.security.cert.X509Certificate;

/** {@code /v1/whoami}: Pintle's debugging entry point. Open to any caller. */
@Path("/")
public final class ServerInfoResource {

    @GET
    @Path(Routes.WHOAMI)
    @Produces(MediaType.APPLICATION_JSON)
    public WhoAmI whoami(@Context ContainerRequestContext context) {
        Exchange state = Exchange.of(context);
        Caller caller = state.caller();
        X509Certificate leaf = state.peer().leaf();
        WhoAmI.Certificate certificate = leaf == null ? null : new WhoAmI.Certificate(
                leaf.getSubjectX500Principal().getName(),
                uid(leaf),
                KeyHash.sha256(leaf.getPublicKey()).toString(),
                leaf.getNotBefore().toInstant().toString(),
                leaf.getNotAfter().toInstant().toString());
        String nodeId = null;
        String reason = null;
        String via = null;
        if (caller.identification() instanceof Identification.Authenticated authenticated) {
            nodeId = authenticated.node().value();
            via = authenticated.via().text();
        } else {
            Identification.Anonymous anonymous = (Identification.Anonymous) caller.identification();
            reason = anonymous.reason().code() + ": " + anonymous.detail();
        }
        return new WhoAmI(
                state.snapshot().self().value(),
                caller.address().getHostAddress(),
                state.snapshot().acl().inAllowedNetworks(caller),
                state.peer().protocol(),
                certificate,
                nodeId,
                nodeId != null,
                reason,
                state.snapshot().generation(),
                via);
    }

    /** @return the certificate's UID, or null when it has none or it cannot be decoded (whoami reports the reason) */
    private static String uid(X509Certificate leaf) {
        try {
            return CertificateSubjects.uid(leaf).orElse(null);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }
}
