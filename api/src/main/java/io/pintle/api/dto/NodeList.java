package io.pintle.api.dto;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/**
 * {@code GET /v1/nodes}: the nodes this server serves (those whose policy server it is in {@code nodeslist.json}),
 * filtered as asked.
 *
 * @param generatedAt when it was computed (ISO-8601)
 * @param total nodes served, before filters
 * @param behind of which behind
 * @param currentShare the share of all served nodes on what is served now (1 when none)
 * @param nodes the nodes that pass the filters, in id order
 */
public record NodeList(
        @JsonProperty("generated_at") String generatedAt,
        int total,
        int behind,
        @JsonProperty("current_share") double currentShare,
        List<NodeDelivery> nodes) {}
