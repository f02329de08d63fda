package io.pintle.api.dto;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * The envelope of Rudder relayd's API ({@code /rudder/relay-api/1/...}), kept byte-compatible for the Rudder
 * webapp and hooks: {@code {"result": "success", "action": "...", "data": {...}}} or
 * {@code {"result": "error", "action": "...", "errorDetails": "..."}}.
 *
 * @param result {@code success} or {@code error}
 * @param action the name of the API call, for example {@code reloadConfiguration}
 * @param data the payload on success, or null
 * @param errorDetails the reason on error, or null
 * @param <T> the payload type
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record RelayApiResponse<T>(
        String result, String action, T data, @JsonProperty("errorDetails") String errorDetails) {
    /** {@code result} of a successful call. */
    public static final String SUCCESS = "success";
    /** {@code result} of a failed call. */
    public static final String ERROR = "error";

    /**
     * @param action the call
     * @param data the payload, or null
     * @param <T> the payload type
     * @return a success envelope
     */
    public static <T> RelayApiResponse<T> success(String action, T data) {
        return new RelayApiResponse<>(SUCCESS, action, data, null);
    }

    /**
     * @param action the call
     * @param details the reason
     * @param <T> the payload type
     * @return an error envelope
     */
    public static <T> RelayApiResponse<T> error(String action, String details) {
        return new RelayApiResponse<>(ERROR, action, null, details);
    }
}
