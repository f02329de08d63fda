/**
 * {@code bench/fleet} (issue 24): a Rudder fleet of 20,000 to 100,000 simulated nodes on one machine. A root and
 * relays (or root replicas behind HAProxy) as separate Pintle JVMs on their own loopback addresses, the nodes'
 * agents played by one C program (fleetagents) on their real schedule, a scenario (a generation, restarts, a
 * replica killed), and a report with the latency per request kind, the generation's propagation and what each
 * process used.
 *
 * <p>{@code bench/relaysync} ({@link io.pintle.bench.fleet.RelaySyncBench}) uses the same layout and servers
 * without agents: only a generation's way from the root through the relays, with two sets of the relays' JVM
 * options side by side.
 */
package io.pintle.bench.fleet;
