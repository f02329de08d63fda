/**
 * {@code bench/perf} (issue 9): Pintle against nginx (TLS 1.3, client certificates required and pinned) and
 * cf-serverd on the same files on loopback, side by side in one run: keep-alive small-file rates, TLS handshake
 * rates by server key type, large-file throughput and CPU per GB, 10,000 idle connections, and a herd of agent
 * updates. Each server runs in processes of its own; this JVM is the load generator, and the report says how
 * much CPU it and every other process took in each window.
 */
package io.pintle.bench.perf;
