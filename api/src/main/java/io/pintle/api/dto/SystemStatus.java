package io.pintle.api.dto;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * The {@code data} of relayd's {@code GET /rudder/relay-api/1/system/status}, in relayd's shape ({@code
 * src/api/system.rs}: {@code Status} and {@code State}; {@code relay/sources/api-doc/paths/system/status.yml}
 * requires both parts and their {@code status}).
 *
 * @param database the state of the service's database
 * @param configuration the state of the service's configuration
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record SystemStatus(State database, State configuration) {
    /**
     * One part's state.
     *
     * @param status {@link RelayApiResponse#SUCCESS} or {@link RelayApiResponse#ERROR}
     * @param details what is wrong, or what the part is, or null
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record State(String status, String details) {}
}
