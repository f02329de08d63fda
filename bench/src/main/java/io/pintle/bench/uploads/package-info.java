/**
 * {@code bench/uploads} (issue 19): the throughput of Rudder agents' report uploads, Pintle against nginx's WebDAV
 * {@code PUT}, side by side in one run. Every upload is what an agent sends: one 5 KB report, HTTP Basic auth from
 * the same htpasswd file on both servers, no client certificate, TLS 1.3 with the same server key, over a new
 * connection. The load generators are external C programs (ApacheBench, curl, shell loops of curl processes),
 * pinned to one CPU with this JVM; the servers are pinned to the other. Each cell reports the rate, latency, the
 * server's and the generator's CPU, and whether every file arrived complete under its final name.
 */
package io.pintle.bench.uploads;
