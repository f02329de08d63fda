package io.pintle.server.http.jersey;

import io.pintle.server.http.Exchange;
import io.pintle.api.Routes;
import io.pintle.client.PintleClient;
import io.pintle.server.nodes.NodeId;
import io.pintle.server.problem.PintleException;
import io.pintle.server.reload.ServerSnapshot;
import io.pintle.server.sharedfiles.SharedFileId;
import io.pintle.server.sharedfiles.SharedFileStore;
import io.pintle.server.upstream.UpstreamClient;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HEAD;
import jakarta.ws.rs.PUT;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.Response;
import java.io.IOException;
import java.io.InputStream;
import java.net.URLEncoder;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * relayd's node-to-node shared files on the TLS listener, under Apache's {@code /rudder/relay-api/shared-files/}
 * (written under relayd's versioned path, which {@link RelayApiAlias} maps it to; the versioned path itself is
 * refused on this listener, as Apache refuses it):
 *
 * <ul>
 *   <li>{@code PUT {target}/{source}/{fileId}?ttl=}: body = metadata lines, an empty line, the file; checked
 *       (source known, its key pinned, signature valid) and stored for the target; 411 without a length, 413
 *       past {@code [limits] max_shared_file_bytes}. From an allowed network, as Rudder's Apache.
 *   <li>{@code HEAD ...?hash=}: 200 when stored with that hash, 404 otherwise (what ncf's caller expects).
 *   <li>{@code GET ...}: the file, only to the target node's own certificate — HTTPS's replacement for
 *       {@code sharedfile_from_node}; a file route, answered by {@link io.pintle.server.http.files.FileHandler}.
 * </ul>
 *
 * A target that is not below this server is forwarded to the policy server ({@code [upstream]}), as relayd does.
 */
@Path("/")
public final class SharedFilesResource {
    private static final Logger LOG = LoggerFactory.getLogger(SharedFilesResource.class);
    private static final String ID = "/{target}/{source}/{fileId}";
    /** What a stored {@code hash_value} can be: the hex digest of sha256 or sha512. */
    private static final Pattern HEX_HASH = Pattern.compile("[0-9a-fA-F]{1,128}");

    private final SharedFileStore store;
    private final UpstreamClient upstream;

    /**
     * @param store where shared files are kept
     * @param upstream the policy server, for targets elsewhere in the tree
     */
    SharedFilesResource(SharedFileStore store, UpstreamClient upstream) {
        this.store = store;
        this.upstream = upstream;
    }

    @PUT
    @Path(Routes.RELAY_API + Routes.SHARED_FILES + ID)
    public Response put(
            @PathParam("target") String target,
            @PathParam("source") String source,
            @PathParam("fileId") String fileId,
            @QueryParam(Routes.TTL) String ttl,
            @Context ContainerRequestContext context,
            @Context HttpHeaders headers,
            InputStream body) {
        Exchange state = Exchange.of(context);
        state.authorize();
        SharedFileId id = id(target, source, fileId);
        Duration duration = rejected(() -> SharedFileStore.ttl(ttl));
        long length = headers.getLength();
        if (length < 0) {
            throw new PintleException.LengthRequired("length-required",
                    "a shared file upload needs a Content-Length (at most " + store.maxBytes() + " bytes)");
        }
        if (length > store.maxBytes()) {
            throw new PintleException.TooLarge("too-large", "the upload is " + length + " bytes; at most "
                    + store.maxBytes() + " are accepted ([limits] max_shared_file_bytes)");
        }
        if (!local(state.snapshot(), id)) {
            return forward("PUT", id, Routes.TTL + "=" + URLEncoder.encode(ttl, StandardCharsets.UTF_8), body, length,
                    state.snapshot());
        }
        java.nio.file.Path root = state.snapshot().config().paths().sharedFiles();
        rejected(() -> store.put(root, id, duration, body, state.snapshot().nodes()));
        LOG.info("shared file {} stored for {} from {} ({} bytes, ttl {})", id.fileId(), id.target(), id.source(),
                length, duration);
        return Response.ok().build();
    }

    @HEAD
    @Path(Routes.RELAY_API + Routes.SHARED_FILES + ID)
    public Response head(
            @PathParam("target") String target,
            @PathParam("source") String source,
            @PathParam("fileId") String fileId,
            @QueryParam(Routes.HASH) String hash,
            @Context ContainerRequestContext context) {
        Exchange state = Exchange.of(context);
        state.authorize();
        SharedFileId id = id(target, source, fileId);
        if (hash == null) {
            throw new PintleException.InvalidRequest("bad-hash", "hash (hexadecimal) is required");
        }
        if (!HEX_HASH.matcher(hash).matches()) {
            // relayd compares the string with the stored hash_value: an empty or malformed hash is never stored,
            // so "not there" (404), which sharedfile_to_node reads as "upload it" (tests/shared_files.rs).
            return Response.status(404).build();
        }
        if (!local(state.snapshot(), id)) {
            return forward("HEAD", id, Routes.HASH + "=" + hash, null, 0, state.snapshot());
        }
        java.nio.file.Path root = state.snapshot().config().paths().sharedFiles();
        boolean present = rejected(() -> store.present(root, id, hash));
        return Response.status(present ? 200 : 404).build();
    }

    /** Whether the target is this server or a node below it (in its {@code nodeslist.json}). */
    private static boolean local(ServerSnapshot snapshot, SharedFileId id) {
        if (id.target().equals(snapshot.self().value())) {
            return true;
        }
        try {
            return snapshot.nodes().node(new NodeId(id.target())).isPresent();
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    /** Sends the request on to the policy server and answers what it answered. */
    private Response forward(String method, SharedFileId id, String query, InputStream body, long length,
            ServerSnapshot snapshot) {
        if (!snapshot.config().upstream().configured()) {
            throw new PintleException.NotFound("unknown-target", "the target node " + id.target()
                    + " is not known to this server, and it has no policy server to forward to");
        }
        try {
            PintleClient client = upstream.client(snapshot);
            // Apache's path: a Rudder root (Apache + relayd) and Pintle both serve it.
            HttpRequest.Builder request = HttpRequest.newBuilder(
                            client.uri(Routes.RELAY_API_ALIAS + Routes.SHARED_FILES + "/" + id.url() + "?" + query))
                    .timeout(Duration.ofMinutes(2));
            if (body != null) {
                request.method(method, HttpRequest.BodyPublishers.fromPublisher(
                        HttpRequest.BodyPublishers.ofInputStream(() -> body), length));
            } else {
                request.method(method, HttpRequest.BodyPublishers.noBody());
            }
            HttpResponse<byte[]> answer = client.httpClient().send(request.build(),
                    HttpResponse.BodyHandlers.ofByteArray());
            LOG.info("shared file {} for {} from {} forwarded upstream ({}): {}", id.fileId(), id.target(),
                    id.source(), method, answer.statusCode());
            Response.ResponseBuilder response = Response.status(answer.statusCode());
            answer.headers().firstValue("content-type").ifPresent(type -> response.type(type));
            return body != null && answer.body().length > 0 ? response.entity(answer.body()).build() : response.build();
        } catch (IOException | GeneralSecurityException e) {
            LOG.warn("cannot forward shared file {} for {} upstream: {}", id.fileId(), id.target(), e.toString());
            throw new PintleException.UpstreamFailed("upstream-unreachable", "the target node " + id.target()
                    + " is not below this server, and its policy server cannot be reached: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new PintleException.UpstreamFailed("upstream-unreachable", "interrupted while forwarding");
        }
    }

    private static SharedFileId id(String target, String source, String fileId) {
        try {
            return new SharedFileId(target, source, fileId);
        } catch (IllegalArgumentException e) {
            throw new PintleException.InvalidRequest("bad-id", e.getMessage());
        }
    }

    /** Runs a store step, turning its refusals into problem answers. */
    private static <T> T rejected(StoreStep<T> step) {
        try {
            return step.run();
        } catch (SharedFileStore.RejectedException e) {
            LOG.warn("shared file refused ({}): {}", e.reason(), e.getMessage());
            throw e.refusal();
        } catch (IOException e) {
            throw new IllegalStateException("shared files: " + e.getMessage(), e);
        }
    }

    @FunctionalInterface
    private interface StoreStep<T> {
        T run() throws IOException;
    }
}
