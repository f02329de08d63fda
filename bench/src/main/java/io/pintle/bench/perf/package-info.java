/**
 * {@code bench/perf}: Pintle against nginx on the same files and keys on loopback, side by side in one run.
 *
 * <p>The default method (issue 23, {@link io.pintle.bench.perf.PerCoreBench}) pins every server to one CPU and every
 * load generator to the other, uses C generators ({@code ab}, {@code h2load}, the harness's own {@code tlsconn})
 * for every row (the herd too: tlsconn's herd mode), runs each row's contenders in interleaved rounds
 * and says per row whether the generator was the limit. The previous method ({@link io.pintle.bench.perf.PerfBench},
 * issue 9, {@code bench/perf --java-rows}) runs this JVM as the load generator on the servers' cores, with the
 * large-file, idle-connection and cf-serverd rows.
 */
package io.pintle.bench.perf;
