/**
 * {@code bench/channels} (issue 21): the pull channel at fleet size. The real server runs in a JVM of its own,
 * pinned to one CPU; one load generator on the other CPU holds a long poll for orders per node, each over its own
 * TLS connection with its own client certificate (one NIO selector thread, raw {@code SSLEngine}s). Measured: what
 * the parked channels cost the server while idle, one order fanned to every node, and the "policies changed"
 * update orders released at {@code [remote_run] policy_update_rate}.
 */
package io.pintle.bench.channels;
