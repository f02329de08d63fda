package io.pintle.bench.handshakes;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The server's own count of what it answered, from {@code /metrics} on its admin listener: requests by status on
 * the node-facing routes (the scrape itself left out), and completed TLS 1.3 handshakes.
 *
 * @param byStatus requests answered, by status code
 * @param tls13 completed TLS 1.3 handshakes
 */
record ServerCounters(Map<Integer, Long> byStatus, long tls13) {
    private static final Pattern REQUESTS = Pattern.compile("^pintle_requests_total\\{([^}]*)\\} (\\S+)$");
    private static final Pattern STATUS = Pattern.compile("status=\"(\\d+)\"");
    private static final Pattern ADMIN_ROUTE = Pattern.compile("route=\"(metrics|status|health|system)\"");
    private static final Pattern TLS13 = Pattern.compile("^pintle_tls_handshakes_total\\{protocol=\"TLSv1\\.3\"\\} (\\S+)$");

    static ServerCounters read(HttpClient http, int adminPort) throws IOException, InterruptedException {
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + adminPort + "/metrics")).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200) {
            throw new IOException("/metrics answered " + response.statusCode());
        }
        Map<Integer, Long> byStatus = new TreeMap<>();
        long tls13 = 0;
        for (String line : response.body().split("\n")) {
            Matcher requests = REQUESTS.matcher(line);
            if (requests.matches()) {
                if (ADMIN_ROUTE.matcher(requests.group(1)).find()) {
                    continue;
                }
                Matcher status = STATUS.matcher(requests.group(1));
                if (status.find()) {
                    byStatus.merge(Integer.parseInt(status.group(1)), (long) Double.parseDouble(requests.group(2)),
                            Long::sum);
                }
                continue;
            }
            Matcher tls = TLS13.matcher(line);
            if (tls.matches()) {
                tls13 = (long) Double.parseDouble(tls.group(1));
            }
        }
        return new ServerCounters(byStatus, tls13);
    }

    /** @return 200 answers since {@code earlier} */
    long okSince(ServerCounters earlier) {
        return byStatus.getOrDefault(200, 0L) - earlier.byStatus.getOrDefault(200, 0L);
    }

    /** @return answers of any other status since {@code earlier}, by status */
    Map<Integer, Long> othersSince(ServerCounters earlier) {
        Map<Integer, Long> others = new TreeMap<>();
        byStatus.forEach((status, count) -> {
            long delta = count - earlier.byStatus.getOrDefault(status, 0L);
            if (status != 200 && delta > 0) {
                others.put(status, delta);
            }
        });
        return others;
    }
}
