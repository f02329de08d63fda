package io.pintle.api.dto;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;
import java.util.Map;

/**
 * Pintle's own status ({@code GET /v1/status} on the admin listener): the live snapshot and the reload history.
 *
 * @param nodeId this server's node id
 * @param role root, relay or node
 * @param generation the live snapshot's generation (1 at start, +1 per applied reload)
 * @param loadedAt when the live snapshot was built (ISO-8601)
 * @param nodes nodes in {@code nodeslist.json}
 * @param pinnedKeys distinct pinned client keys
 * @param serverKey the pin of the server key agents see
 * @param inputs every input file of the live snapshot, with its digest
 * @param lastReload the most recent reload attempt, or null when none happened since start
 * @param lastFailure the most recent failed reload, or null
 * @param reloads counts of reload attempts by outcome
 * @param uploads uploads since start by route ({@code inventories}, {@code inventory-updates}, {@code reports}), or
 *     null when this server takes none
 * @param orderChannels the nodes' remote-run order channels (the pull channel), or null when remote run is off
 * @param trust how client certificates are trusted and revoked, as of the live snapshot
 * @param freeze the freeze in force ({@code active: false} when none)
 * @param delivery how many served nodes hold what is served now, as of the last sample (every 10 s)
 * @param forwarding uploads forwarded to the policy server, or null when this server does not forward them
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ServerStatus(
        @JsonProperty("node_id") String nodeId,
        String role,
        long generation,
        @JsonProperty("loaded_at") String loadedAt,
        int nodes,
        @JsonProperty("pinned_keys") int pinnedKeys,
        @JsonProperty("server_key") String serverKey,
        List<Input> inputs,
        @JsonProperty("last_reload") Reload lastReload,
        @JsonProperty("last_failure") Reload lastFailure,
        Counts reloads,
        Map<String, Uploads> uploads,
        @JsonProperty("order_channels") OrderChannels orderChannels,
        Trust trust,
        FreezeState freeze,
        Delivery delivery,
        Forwarding forwarding) {

    /**
     * Uploads forwarded to the policy server (a relay's {@code [upstream] forward}).
     *
     * @param upstream the policy server's URL
     * @param queues per route ({@code inventories}, {@code inventory-updates}, {@code reports}), what waits
     * @param lastSuccess when the policy server last took a file (ISO-8601), or null since start
     * @param lastFailure when forwarding last failed (ISO-8601), or null since start
     * @param lastError what that failure was, or null
     */
    @JsonInclude(JsonInclude.Include.ALWAYS)
    public record Forwarding(
            String upstream,
            Map<String, ForwardQueue> queues,
            @JsonProperty("last_success") String lastSuccess,
            @JsonProperty("last_failure") String lastFailure,
            @JsonProperty("last_error") String lastError) {}

    /**
     * @param files files waiting in the route's directory, as of the forwarder's last look (every 2 s at most)
     * @param bytes their size
     * @param oldestAgeSeconds the oldest one's age in seconds, 0 when none waits
     * @param forwarded files the policy server took since start
     * @param refused files it refused for good since start (moved to {@code failed/} with a {@code .reason})
     */
    public record ForwardQueue(
            int files,
            long bytes,
            @JsonProperty("oldest_age_seconds") long oldestAgeSeconds,
            long forwarded,
            long refused) {}

    /**
     * @param nodes nodes this server serves (whose policy server it is)
     * @param behind of which not holding what is served now
     * @param silent of which silent for {@code [delivery] silent_after_seconds}
     * @param frozen of which frozen
     * @param channels of which holding an order channel
     * @param currentShare the share on what is served now
     * @param lastGeneration when the version served to some node last changed (ISO-8601), or null
     */
    @JsonInclude(JsonInclude.Include.ALWAYS)
    public record Delivery(
            int nodes,
            int behind,
            int silent,
            int frozen,
            int channels,
            @JsonProperty("current_share") double currentShare,
            @JsonProperty("last_generation") String lastGeneration) {}

    /**
     * @param modes Rudder's trust modes on: {@code cert_pinning}, {@code cert_validation}
     * @param caFile the CA bundle of certificate validation, or null when it is off
     * @param crls every CRL in force, one per list (a file may hold several)
     * @param deniedKeys how many key pins the deny list holds
     * @param deniedKeysFile the deny list read, or null when none was
     * @param crlFetch how the fetch of {@code [nodes] crl_url} went; absent when no URL is set
     */
    @JsonInclude(JsonInclude.Include.ALWAYS)
    public record Trust(
            List<String> modes,
            @JsonProperty("ca_file") String caFile,
            List<Crl> crls,
            @JsonProperty("denied_keys") int deniedKeys,
            @JsonProperty("denied_keys_file") String deniedKeysFile,
            @JsonProperty("crl_fetch") @JsonInclude(JsonInclude.Include.NON_NULL) CrlFetch crlFetch) {}

    /**
     * @param file where it was read
     * @param issuer its issuer (RFC 2253)
     * @param thisUpdate when it was issued (ISO-8601)
     * @param nextUpdate when the next one is due (ISO-8601), or null when it does not say
     * @param entries how many certificates it revokes
     * @param ageSeconds seconds since it was issued
     * @param stale whether its next update is past: newer revocations may exist that this server does not know
     */
    @JsonInclude(JsonInclude.Include.ALWAYS)
    public record Crl(
            String file,
            String issuer,
            @JsonProperty("this_update") String thisUpdate,
            @JsonProperty("next_update") String nextUpdate,
            int entries,
            @JsonProperty("age_seconds") long ageSeconds,
            boolean stale) {}

    /**
     * @param url what is fetched
     * @param lastSuccess when a fetch last succeeded (ISO-8601), or null
     * @param lastAttempt when the last attempt ended (ISO-8601), or null before the first
     * @param lastError why the last attempt failed, or null when it succeeded (the last good list stays in force)
     */
    @JsonInclude(JsonInclude.Include.ALWAYS)
    public record CrlFetch(
            String url,
            @JsonProperty("last_success") String lastSuccess,
            @JsonProperty("last_attempt") String lastAttempt,
            @JsonProperty("last_error") String lastError) {}

    /**
     * @param polling nodes whose poll for orders is parked now
     * @param awaited orders given (or waiting for a node's next poll) whose report has not come yet
     * @param updatesPending nodes whose policies changed, waiting for their {@code update} order (rate, splay)
     * @param updatesReleased {@code update} orders sent since start because a node's policies changed
     * @param updatesWatched nodes whose policy archives have been looked at since start
     */
    public record OrderChannels(int polling, int awaited,
            @JsonProperty("updates_pending") int updatesPending,
            @JsonProperty("updates_released") long updatesReleased,
            @JsonProperty("updates_watched") int updatesWatched) {}

    /**
     * @param path the file
     * @param sha256 hex digest of its content
     * @param size size in bytes
     */
    public record Input(String path, String sha256, long size) {}

    /**
     * @param trigger what asked for it ({@code SIGHUP}, {@code api}, {@code file watch: ...})
     * @param at when it started (ISO-8601)
     * @param outcome {@code applied}, {@code unchanged} or {@code failed}
     * @param generation the live generation after it
     * @param durationMs how long it took
     * @param error why it failed, or null
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Reload(
            String trigger,
            String at,
            String outcome,
            long generation,
            @JsonProperty("duration_ms") double durationMs,
            String error) {}

    /**
     * @param applied reloads that published a new snapshot
     * @param unchanged reloads whose inputs had not changed
     * @param failed reloads rejected (the previous snapshot kept serving)
     */
    public record Counts(long applied, long unchanged, long failed) {}

    /**
     * @param bytes bytes stored through the route
     * @param results its uploads by outcome ({@code created}, {@code replaced}, {@code unauthorized}, {@code denied},
     *     {@code invalid}, {@code too-large}, {@code aborted}, {@code no-space}, {@code error}); zero counts left out
     */
    public record Uploads(long bytes, Map<String, Long> results) {}
}
