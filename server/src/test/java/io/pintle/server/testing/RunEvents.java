package io.pintle.server.testing;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** A remote run's NDJSON answer ({@code RemoteRunEvent}s), read for assertions. */
public final class RunEvents {
    private static final ObjectMapper JSON = new ObjectMapper();

    private RunEvents() {}

    /**
     * @param response a 200 NDJSON answer
     * @return its events, in order (the test fails on another status or an empty answer)
     * @throws IOException on a malformed line
     */
    public static List<JsonNode> of(HttpResponse<String> response) throws IOException {
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        List<JsonNode> events = new ArrayList<>();
        for (String line : response.body().split("\n")) {
            if (!line.isEmpty()) {
                events.add(JSON.readTree(line));
            }
        }
        assertThat(events).isNotEmpty();
        return events;
    }

    /**
     * @param events a run's events
     * @return each node's status, in order (the test fails when a node has two)
     */
    public static Map<String, String> statuses(List<JsonNode> events) {
        Map<String, String> statuses = new LinkedHashMap<>();
        for (JsonNode event : statuses(events, null)) {
            String previous = statuses.put(event.path("node").asText(), event.path("status").asText());
            assertThat(previous).as("one status per node: %s", event).isNull();
        }
        return statuses;
    }

    /**
     * @param events a run's events
     * @param node a node, or null for all
     * @return its status events
     */
    public static List<JsonNode> statuses(List<JsonNode> events, String node) {
        return events.stream().filter(e -> e.path("type").asText().equals("status"))
                .filter(e -> node == null || e.path("node").asText().equals(node)).toList();
    }

    /**
     * @param events a run's events
     * @param node the node
     * @return its one status event (the test fails when it has none or several)
     */
    public static JsonNode status(List<JsonNode> events, String node) {
        List<JsonNode> statuses = statuses(events, node);
        assertThat(statuses).as("one status for %s: %s", node, events).hasSize(1);
        return statuses.get(0);
    }

    /**
     * @param events a run's events
     * @param node a node, or null for all
     * @return its output lines, in order
     */
    public static List<String> outputs(List<JsonNode> events, String node) {
        return events.stream().filter(e -> e.path("type").asText().equals("output"))
                .filter(e -> node == null || e.path("node").asText().equals(node))
                .map(e -> e.path("line").asText()).toList();
    }
}
