/**
 * The sync benchmark ({@code bench/sync}, issue 4): how long it takes an agent to bring a Rudder-like tree up to
 * date from cf-serverd (cf-agent {@code copy_from}), from nginx (one GET per file) and from Pintle (one archive,
 * manifest + changed files, or one GET per file), cold, unchanged and with 10 files changed, on loopback and
 * through a proxy adding 25 ms per round trip.
 *
 * <p>{@link io.pintle.bench.sync.SyncBench} is the entry point; {@link io.pintle.bench.sync.RudderTree} generates
 * the trees; {@link io.pintle.bench.sync.DelayProxy} adds the latency and counts round trips;
 * {@link io.pintle.bench.sync.Contestant} is one way of syncing; {@link io.pintle.bench.sync.TreeCheck} checks
 * every result against the source; {@link io.pintle.bench.sync.SyncReport} formats the tables.
 *
 * <p>Every server is started by the harness on 127.0.0.1 with files under one temporary directory, and stopped
 * by its pid; the run is bounded by {@code bench/sync}'s time limit.
 */
package io.pintle.bench.sync;
