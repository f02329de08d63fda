/**
 * {@code bench/warmup} (issue 23): how fast a freshly started Pintle reaches its steady rate. The server (its own
 * JVM, pinned to one CPU) is started per measurement; as soon as its port accepts, a C load generator ({@code ab},
 * pinned to another CPU) loads it, and the rate is counted per second since the JVM's spawn. JVM variants (JDK 17,
 * JDK 17 with an AppCDS archive, JDK 25, JDK 25 with its AOT cache) run interleaved, round after round; archives
 * and caches come from a training run of the same workload, stopped with SIGTERM as systemd stops the service.
 */
package io.pintle.bench.warmup;
