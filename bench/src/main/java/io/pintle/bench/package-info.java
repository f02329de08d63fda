/**
 * The policy-serving benchmark ({@code bench/run}): starts the real Pintle server in-process on a demo layout,
 * and next to it a minimal Jetty {@code ResourceHandler} server with the same TLS setup as the baseline; drives
 * both with Jetty's {@code HttpClient} (HTTP/1.1 and HTTP/2, mutual TLS with the demo node's certificate) in closed
 * loops of N in-flight requests, and prints a Markdown table of throughput, latency, errors and the load
 * generator's CPU share. Everything stays on 127.0.0.1, every run is bounded in time and request count, and the
 * servers are stopped before the program exits.
 *
 * <p>{@link io.pintle.bench.PolicyServingBench} is the entry point and holds the plan of rows; {@link
 * io.pintle.bench.ClosedLoop} runs one row against one server; {@link io.pintle.bench.MarkdownReport} formats
 * the results.
 */
package io.pintle.bench;
