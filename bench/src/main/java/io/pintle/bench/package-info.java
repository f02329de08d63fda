/**
 * Pintle's benchmarks, two harnesses in one module built with the Maven profile {@code bench}.
 *
 * <p>The policy-serving benchmark ({@code bench/run}): starts the real Pintle server in-process on a demo layout,
 * and next to it a minimal Jetty {@code ResourceHandler} server with the same TLS setup as the baseline; drives
 * both with Jetty's {@code HttpClient} (HTTP/1.1 and HTTP/2, mutual TLS with the demo node's certificate) in closed
 * loops of N in-flight requests, and prints a Markdown table of throughput, latency, errors and the load
 * generator's CPU share. {@link io.pintle.bench.PolicyServingBench} is the entry point and holds the plan of rows;
 * {@link io.pintle.bench.ClosedLoop} runs one row against one server; {@link io.pintle.bench.MarkdownReport} formats
 * the results.
 *
 * <p>The reload benchmark ({@code bench/reload}): generates a Rudder-like registry of 20,000 nodes
 * ({@link io.pintle.bench.LargeRegistry}), measures snapshot builds and their heap without a server
 * ({@link io.pintle.bench.SnapshotCosts}), then reloads the real server under a steady load on 1,000 keep-alive
 * connections ({@link io.pintle.bench.ReloadUnderLoad}, {@link io.pintle.bench.SteadyLoad}) and reports
 * trigger-to-effective latencies, failed requests and closed connections ({@link io.pintle.bench.ReloadReport}).
 * {@link io.pintle.bench.ReloadBench} is the entry point.
 *
 * <p>Everything stays on 127.0.0.1, every run is bounded in time and request count, and the servers are stopped
 * and the temporary files deleted before the program exits.
 */
package io.pintle.bench;
