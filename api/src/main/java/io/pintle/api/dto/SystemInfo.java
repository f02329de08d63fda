package io.pintle.api.dto;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * The {@code data} of relayd's {@code GET /rudder/relay-api/1/system/info}. relayd's code and its API document
 * disagree on where the Rudder version goes: relayd serializes it at the top of {@code data} ({@code
 * src/api/system.rs}, checked whole by its {@code tests/api_system_info.rs}), its API document under {@code
 * data.rudder} ({@code relay/sources/api-doc/paths/system/info.yml}, both fields required). Both places carry the
 * same value, so a client written against either reads it; both are absent when the Rudder version is not known.
 *
 * @param majorVersion Rudder's {@code X.Y}, as relayd answers it, or null when unknown
 * @param fullVersion Rudder's full version, as relayd answers it, or null when unknown
 * @param rudder the same version, where relayd's API document puts it, or null when unknown
 * @param pintle this server's own version
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record SystemInfo(
        @JsonProperty("major-version") String majorVersion,
        @JsonProperty("full-version") String fullVersion,
        Version rudder,
        Version pintle) {
    /**
     * The Rudder version in relayd's two places, and Pintle's own.
     *
     * @param rudder Rudder's version, or null when it is not known
     * @param pintle this server's version
     * @return the answer
     */
    public static SystemInfo of(Version rudder, String pintle) {
        return new SystemInfo(rudder != null ? rudder.majorVersion() : null,
                rudder != null ? rudder.fullVersion() : null, rudder, new Version(null, pintle));
    }

    /**
     * A version in relayd's shape.
     *
     * @param majorVersion {@code X.Y}, or null when not given
     * @param fullVersion the full version
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Version(
            @JsonProperty("major-version") String majorVersion,
            @JsonProperty("full-version") String fullVersion) {}
}
