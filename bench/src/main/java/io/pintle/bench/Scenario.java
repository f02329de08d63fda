package io.pintle.bench;

/**
 * One row of the table: a request shape, a protocol and a number of requests kept in flight.
 *
 * @param label what the row shows, as printed
 * @param kind the request shape
 * @param protocol HTTP/1.1 or HTTP/2
 * @param concurrency requests in flight at any time (closed loop)
 * @param path the request path, the same on both servers
 * @param expectedBytes the body length every response must have
 * @param withBaseline whether the row is also run against the plain Jetty baseline
 */
record Scenario(
        String label, Kind kind, Protocol protocol, int concurrency, String path, long expectedBytes,
        boolean withBaseline) {
    Scenario {
        if (concurrency < 1) {
            throw new IllegalArgumentException("concurrency must be at least 1: " + concurrency);
        }
    }
}
