package io.pintle.api.dto;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * The body of {@code /health} ({@code live}) and of a successful {@code /ready} ({@code ready}, with the live
 * snapshot generation).
 *
 * @param status {@code live} or {@code ready}
 * @param generation the live snapshot generation ({@code /ready} only), or null
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Health(String status, Long generation) {}
