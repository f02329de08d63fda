package io.pintle.server.http.jersey;

import io.pintle.server.http.BodyStream;
import io.pintle.server.delivery.Delivery;
import io.pintle.server.http.Exchange;
import io.pintle.server.access.Credentials;
import io.pintle.server.config.ServerConfig;
import io.pintle.server.problem.PintleException;
import io.pintle.server.reload.ServerSnapshot;
import io.pintle.server.uploads.LoginThrottle;
import io.pintle.server.uploads.UploadKind;
import io.pintle.server.uploads.UploadStore;
import io.pintle.server.uploads.UploadTally;
import io.pintle.server.upstream.UploadForwarder;
import jakarta.annotation.Priority;
import jakarta.ws.rs.PUT;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Priorities;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerRequestFilter;
import jakarta.ws.rs.container.PreMatching;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.Response;
import java.io.IOException;
import java.io.InputStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Rudder's WebDAV uploads, as its Apache vhost takes them ({@code DAV on}, {@code <Limit PUT>}):
 * {@code PUT /inventories/<name>}, {@code /inventory-updates/<name>} and {@code /reports/<name>}, each from an allowed
 * network with HTTP Basic credentials of the route's password file (realm {@value
 * io.pintle.server.acl.AclEvaluator#UPLOAD_REALM}), stored by {@link UploadStore} into the directory relayd
 * watches: 201 Created, or 204 when a file of that name was replaced. Any other method on these routes is refused
 * with 403, as Apache's {@code <LimitExcept PUT> Require all denied} ({@link OnlyPut}).
 */
@Path("/")
public final class UploadsResource {
    private static final Logger LOG = LoggerFactory.getLogger(UploadsResource.class);

    private final UploadStore store;
    private final Delivery delivery;
    private final UploadTally tally;
    private final LoginThrottle logins;
    private final UploadForwarder forwarder;

    /**
     * @param store writes uploads
     * @param tally counts them
     * @param logins slows password guessing: an address with too many failed logins is refused for a while
     * @param delivery told of each upload (the node's last uploads)
     * @param forwarder woken by each upload, to forward it at once on a relay (null for the contract test)
     */
    UploadsResource(UploadStore store, UploadTally tally, LoginThrottle logins, Delivery delivery,
            UploadForwarder forwarder) {
        this.forwarder = forwarder;
        this.delivery = delivery;
        this.store = store;
        this.tally = tally;
        this.logins = logins;
    }

    @PUT
    @Path("inventories/{name: .*}")
    public Response inventory(@PathParam("name") String name, @Context ContainerRequestContext context,
            @Context HttpHeaders headers, InputStream body) throws IOException {
        return put(UploadKind.INVENTORIES, name, context, headers, body);
    }

    @PUT
    @Path("inventory-updates/{name: .*}")
    public Response inventoryUpdate(@PathParam("name") String name, @Context ContainerRequestContext context,
            @Context HttpHeaders headers, InputStream body) throws IOException {
        return put(UploadKind.INVENTORY_UPDATES, name, context, headers, body);
    }

    @PUT
    @Path("reports/{name: .*}")
    public Response report(@PathParam("name") String name, @Context ContainerRequestContext context,
            @Context HttpHeaders headers, InputStream body) throws IOException {
        return put(UploadKind.REPORTS, name, context, headers, body);
    }

    private Response put(UploadKind kind, String name, ContainerRequestContext context, HttpHeaders headers,
            InputStream body) throws IOException {
        Exchange state = Exchange.of(context);
        ServerSnapshot snapshot = state.snapshot();
        ServerConfig.Uploads uploads = snapshot.config().uploads();
        UploadTally.Result result = UploadTally.Result.ERROR;
        long kept = 0;
        try {
            state.authorize(new Credentials(headers.getHeaderString(HttpHeaders.AUTHORIZATION), null,
                    (users, usersFile) -> logins.guard(state.clientAddress(), users, uploads.logins(), usersFile)));
            String checked = UploadStore.checkName(name);
            UploadStore.Stored stored = store.store(kind, uploads.directory(kind), checked, body,
                    headers.getLength(), uploads.maxBytes(), UploadChecks.of(kind, checked, uploads.directory(kind),
                            snapshot, state.caller().identification(), tally));
            result = stored.replaced() ? UploadTally.Result.REPLACED : UploadTally.Result.CREATED;
            kept = stored.bytes();
            Response.Status status = stored.replaced() ? Response.Status.NO_CONTENT : Response.Status.CREATED;
            delivery.uploaded(snapshot, kind.label(), name, state.clientAddress().getHostAddress(),
                    status.getStatusCode());
            if (forwarder != null) {
                forwarder.wake();
            }
            return Response.status(status).build();
        } catch (PintleException refusal) {
            result = result(refusal);
            if (!(refusal instanceof PintleException.AccessDenied || refusal instanceof PintleException.Unauthorized)) {
                // Denials are logged by Exchange.authorize; these are the upload's own refusals (a throttled
                // address's included: one line per refused attempt, as per failed one).
                LOG.info("refused upload to {} from {}: {} ({})", kind.prefix(), state.clientAddress().getHostAddress(),
                        refusal.reason(), refusal.detail());
            }
            throw refusal;
        } catch (UploadStore.DiskFailure failure) {
            result = UploadTally.Result.ERROR;
            throw failure;
        } catch (IOException clientGone) {
            result = UploadTally.Result.ABORTED;
            LOG.info("upload to {} from {} cut short: {}; nothing kept", kind.prefix(),
                    state.clientAddress().getHostAddress(), clientGone.toString());
            throw clientGone;
        } finally {
            tally.count(kind, result, kept);
        }
    }

    private static UploadTally.Result result(PintleException refusal) {
        if (refusal instanceof PintleException.Unauthorized) {
            return UploadTally.Result.UNAUTHORIZED;
        } else if (refusal instanceof PintleException.TooManyRequests) {
            return UploadTally.Result.THROTTLED;
        } else if (refusal instanceof PintleException.TooLarge) {
            return UploadTally.Result.TOO_LARGE;
        } else if (refusal instanceof PintleException.InsufficientStorage) {
            return UploadTally.Result.NO_SPACE;
        } else if (refusal instanceof PintleException.TooSlow
                || BodyStream.BODY_INCOMPLETE.equals(refusal.reason())) {
            return UploadTally.Result.ABORTED;
        } else if (refusal instanceof PintleException.InvalidRequest) {
            return UploadTally.Result.INVALID;
        }
        return UploadTally.Result.DENIED;
    }

    /**
     * Apache's {@code <LimitExcept PUT> Require all denied} on the upload routes: any other method (GET, HEAD,
     * DELETE, WebDAV's PROPFIND, MKCOL, MOVE...) is refused with 403 before matching, so none of them can list,
     * read or remove what agents sent.
     */
    @PreMatching
    @Priority(Priorities.AUTHORIZATION)
    static final class OnlyPut implements ContainerRequestFilter {
        private final UploadTally tally;

        /** @param tally counts the refusals */
        OnlyPut(UploadTally tally) {
            this.tally = tally;
        }

        @Override
        public void filter(ContainerRequestContext context) {
            Exchange state = Exchange.of(context);
            UploadKind kind = state.route().upload();
            if (kind == null || "PUT".equals(context.getMethod())) {
                return;
            }
            tally.count(kind, UploadTally.Result.DENIED, 0);
            state.authorize(); // refused: the uploads rule takes PUT only
            throw new IllegalStateException(context.getMethod() + " allowed on " + kind.prefix());
        }
    }
}
