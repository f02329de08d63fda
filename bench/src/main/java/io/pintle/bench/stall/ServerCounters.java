package io.pintle.bench.stall;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What the server says it did, from {@code /metrics} on its admin listener: {@code pintle_requests_total} on the
 * node-facing routes, by status, and {@code pintle_tls_handshakes_total} (one per connection the harness opens).
 * The access log would be the other witness, but it drops lines when its queue is full (by design, so that no
 * request waits for it): under this load it is not a count.
 *
 * @param requests requests answered on node-facing routes, by status
 * @param handshakes completed TLS handshakes on the node-facing listener
 */
record ServerCounters(Map<String, Long> requests, long handshakes) {
    /** Route classes of the admin listener: the harness's own scrapes land there. */
    private static final Set<String> ADMIN_ROUTES = Set.of("system", "status", "health", "metrics");
    private static final Pattern REQUESTS = Pattern.compile(
            "^pintle_requests_total\\{(?=[^}]*route=\"([^\"]*)\")(?=[^}]*status=\"([^\"]*)\")[^}]*\\} (\\S+)$");
    private static final Pattern HANDSHAKES = Pattern.compile("^pintle_tls_handshakes_total\\{[^}]*\\} (\\S+)$");

    /**
     * @param http a plain HTTP client
     * @param adminPort the admin listener's port on 127.0.0.1
     * @return the counters now
     */
    static ServerCounters read(HttpClient http, int adminPort) throws IOException, InterruptedException {
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + adminPort + "/metrics")).timeout(Duration.ofSeconds(30))
                .build(), HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200) {
            throw new IOException("/metrics answered " + response.statusCode());
        }
        Map<String, Long> requests = new TreeMap<>();
        long handshakes = 0;
        for (String line : response.body().split("\n")) {
            Matcher request = REQUESTS.matcher(line);
            if (request.matches()) {
                if (!ADMIN_ROUTES.contains(request.group(1))) {
                    requests.merge(request.group(2), Math.round(Double.parseDouble(request.group(3))), Long::sum);
                }
                continue;
            }
            Matcher handshake = HANDSHAKES.matcher(line);
            if (handshake.matches()) {
                handshakes += Math.round(Double.parseDouble(handshake.group(1)));
            }
        }
        return new ServerCounters(Map.copyOf(requests), handshakes);
    }

    /** @param earlier counters read before @return what changed since */
    ServerCounters since(ServerCounters earlier) {
        Map<String, Long> delta = new TreeMap<>();
        requests.forEach((status, count) -> {
            long change = count - earlier.requests.getOrDefault(status, 0L);
            if (change != 0) {
                delta.put(status, change);
            }
        });
        return new ServerCounters(Map.copyOf(delta), handshakes - earlier.handshakes);
    }

    /** @return requests answered, all statuses */
    long total() {
        return requests.values().stream().mapToLong(Long::longValue).sum();
    }
}
