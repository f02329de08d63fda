package io.pintle.bench;

import java.util.Map;

/**
 * The result of one row against one server.
 *
 * @param target the server's name
 * @param sent requests sent during the whole run, warm-up included
 * @param completed successful requests that completed within the measured window
 * @param bytes body bytes of those requests
 * @param seconds the measured window's length
 * @param p50Millis median latency of those requests
 * @param p99Millis 99th percentile latency of those requests
 * @param errors failed requests over the whole run, warm-up included: wrong status, wrong body length, wrong HTTP
 *     version, exception or timeout
 * @param errorKinds failed requests by description
 * @param handshakes TLS handshakes during the whole run, warm-up included
 * @param cpu CPU time split over the measured window
 */
record Measurement(
        String target, long sent, long completed, long bytes, double seconds, double p50Millis, double p99Millis,
        long errors, Map<String, Long> errorKinds, long handshakes, CpuShare cpu) {
    Measurement {
        errorKinds = Map.copyOf(errorKinds);
    }

    /** @return completed requests per second (0 for a warm-up without measured window) */
    double requestsPerSecond() {
        return seconds > 0 ? completed / seconds : 0;
    }

    /**
     * @param unit the row's unit
     * @return throughput in that unit ({@code MB} is 10<sup>6</sup> bytes)
     */
    double throughput(Kind.Unit unit) {
        if (unit != Kind.Unit.MEGABYTES) {
            return requestsPerSecond();
        }
        return seconds > 0 ? bytes / seconds / 1e6 : 0;
    }

    /**
     * The servers' worker threads' CPU time per completed request over the measured window: what a request costs
     * the server, whether or not the load generator was the bottleneck.
     *
     * @return microseconds per request, or NaN without completed requests
     */
    double serverMicrosPerRequest() {
        return completed > 0 ? cpu.serverNanos() / 1e3 / completed : Double.NaN;
    }
}
