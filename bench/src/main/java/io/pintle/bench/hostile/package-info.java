/**
 * {@code bench/hostile} (issue 18): whether a node still gets its policies while one host attacks the server, and
 * whether everything the attack took comes back. The real server runs in a JVM of its own with the systemd unit's
 * options; a victim node downloads a small policy file over a new TLS connection per request (as Rudder's agent
 * does) from 127.0.0.1 before and during each attack, while the attacks of issue 18 come from 127.0.0.2 one after
 * the other: aborted Range downloads, HTTP/2 streams with a zero flow-control window, trickling uploads, and
 * abandoned change waits (HTTP/2 resets; an HTTP/1.1 close, which the server does not see while parked). The
 * server's gauges ({@code /metrics} on the admin listener) are sampled throughout.
 */
package io.pintle.bench.hostile;
