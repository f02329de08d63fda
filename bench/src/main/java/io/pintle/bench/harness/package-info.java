/**
 * What the benchmark harnesses share around their own work, and nothing of that work: reading a command line of
 * {@code --option value} pairs against a usage line ({@link io.pintle.bench.harness.CommandLine}), log levels and
 * the exit status (0 or 1 from the harness's own verdict, 2 when the options are wrong or it could not run;
 * {@link io.pintle.bench.harness.HarnessMain}), the edits of {@code pintle demo}'s configuration
 * ({@link io.pintle.bench.harness.DemoConfig}) and where the report goes
 * ({@link io.pintle.bench.harness.ReportOutput}). Each harness keeps its options, defaults, checks and messages.
 */
package io.pintle.bench.harness;
