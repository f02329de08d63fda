/**
 * {@code bench/fleet} (issue 24): a Rudder fleet of 20,000 to 100,000 simulated nodes on one machine. A root and
 * relays (or root replicas behind HAProxy) as separate Pintle JVMs on their own loopback addresses, the nodes'
 * agents played by one C program (fleetagents) on their real schedule, a scenario (a generation, restarts, a
 * replica killed), and a report with the latency per request kind, the generation's propagation and what each
 * process used.
 */
package io.pintle.bench.fleet;
