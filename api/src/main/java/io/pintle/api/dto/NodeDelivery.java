package io.pintle.api.dto;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.Map;

/**
 * One node's policy delivery as the server saw it ({@code GET /v1/nodes}, {@code GET /v1/nodes/{id}} on the admin
 * listener). Times are ISO-8601.
 *
 * @param id the node's id
 * @param hostname its hostname in {@code nodeslist.json}
 * @param behind whether it does not hold the policies served to it now: it never fetched them, or it fetched an
 *     older version
 * @param silent whether it sent no request for {@code [delivery] silent_after_seconds}
 * @param frozen whether a freeze holds it
 * @param channel whether it holds an order channel (remote run's pull channel) now
 * @param currentEtag the ETag its policy entry is served with now, or null when there is none
 * @param policies the last fetch of its policies it ended holding a known version of, or null
 * @param lastRequest its last request on any door, or null
 * @param uploads its last upload per route ({@code inventories}, {@code inventory-updates}, {@code reports})
 */
@JsonInclude(JsonInclude.Include.ALWAYS)
public record NodeDelivery(
        String id,
        String hostname,
        boolean behind,
        boolean silent,
        boolean frozen,
        boolean channel,
        @JsonProperty("current_etag") String currentEtag,
        Fetch policies,
        @JsonProperty("last_request") Request lastRequest,
        Map<String, Upload> uploads) {

    /**
     * @param path the entry below the node's directory ({@code rules/rudder.tar.bz2}, {@code rules/dsc/rudder.zip},
     *     {@code rules/cfengine-community/rudder-promises-generated})
     * @param etag what it holds since: the ETag sent (200) or the one it had (304)
     * @param status 200 or 304
     * @param time when
     * @param door {@code https} or {@code cfengine}
     */
    public record Fetch(String path, String etag, int status, String time, String door) {}

    /**
     * @param time when it was answered
     * @param address the client's address
     * @param route the route's class ({@code policies}, {@code orders}, {@code cfengine}, ...)
     * @param status the status answered
     */
    public record Request(String time, String address, String route, int status) {}

    /**
     * @param time when it was stored
     * @param address who sent it
     * @param name the file name
     * @param status the status answered (201 or 204)
     */
    public record Upload(String time, String address, String name, int status) {}
}
