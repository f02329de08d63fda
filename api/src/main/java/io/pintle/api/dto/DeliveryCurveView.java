package io.pintle.api.dto;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/**
 * {@code GET /v1/delivery}: the share of served nodes on the current version over time (one sample every 10 s, the
 * last day), and the summary of the last sample.
 *
 * @param lastGeneration when the version served to some node last changed since start (ISO-8601), or null
 * @param nodes nodes served
 * @param behind of which behind
 * @param silent of which silent
 * @param frozen of which frozen
 * @param channels of which holding an order channel
 * @param samples the samples, oldest first
 */
public record DeliveryCurveView(
        @JsonProperty("last_generation") String lastGeneration,
        int nodes,
        int behind,
        int silent,
        int frozen,
        int channels,
        List<Sample> samples) {

    /**
     * @param time when (ISO-8601)
     * @param nodes nodes served
     * @param current of which on the version served now
     * @param changed nodes whose served version changed since the previous sample
     */
    public record Sample(String time, int nodes, int current, int changed) {}
}
