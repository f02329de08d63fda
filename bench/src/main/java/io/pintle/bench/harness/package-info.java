/**
 * What every benchmark harness's {@code main} shares and nothing else: reading a command line of {@code --option
 * value} pairs against a usage line, setting log levels, and mapping the outcome to an exit status (0 or 1 from
 * the harness's own verdict, 2 when the options are wrong or the harness could not run). Each harness keeps its
 * options, its defaults and its messages; this package only keeps them from drifting apart.
 */
package io.pintle.bench.harness;
