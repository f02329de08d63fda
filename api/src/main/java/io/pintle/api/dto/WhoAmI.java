package io.pintle.api.dto;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * How the server sees the caller of {@code GET /v1/whoami}.
 *
 * @param serverNodeId the server's own node id
 * @param address the caller's IP address as the server sees it
 * @param allowedNetwork whether that address is in the allowed networks
 * @param tlsProtocol the negotiated TLS protocol, for example {@code TLSv1.3}
 * @param certificate the client certificate, or null when none was presented
 * @param nodeId the node the certificate authenticates, or null when it authenticates none
 * @param known whether the certificate authenticates a node known to this server
 * @param reason when {@code known} is false, why
 * @param snapshotGeneration the generation of the server state that answered
 * @param authenticatedBy which trust mode authenticated the node ({@code cert_pinning} or {@code
 *     cert_validation}), or null when none did
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record WhoAmI(
        @JsonProperty("server_node_id") String serverNodeId,
        String address,
        @JsonProperty("allowed_network") boolean allowedNetwork,
        @JsonProperty("tls_protocol") String tlsProtocol,
        Certificate certificate,
        @JsonProperty("node_id") String nodeId,
        boolean known,
        String reason,
        @JsonProperty("snapshot_generation") long snapshotGeneration,
        @JsonProperty("authenticated_by") String authenticatedBy) {

    /**
     * The client certificate as presented.
     *
     * @param subject the subject distinguished name (RFC 2253)
     * @param uid the subject's {@code UID} attribute, or null
     * @param keyHash the pin of its public key, {@code sha256//<base64>}
     * @param notBefore start of validity, ISO-8601
     * @param notAfter end of validity, ISO-8601
     */
    public record Certificate(
            String subject,
            String uid,
            @JsonProperty("key_hash") String keyHash,
            @JsonProperty("not_before") String notBefore,
            @JsonProperty("not_after") String notAfter) {}
}
