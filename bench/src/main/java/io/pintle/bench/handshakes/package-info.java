/**
 * {@code bench/handshakes}: full TLS 1.3 handshakes per second (a new connection and one small GET each) against
 * the real server, in its own JVM pinned to one CPU, for each way a node's certificate is trusted: a pinned
 * self-signed certificate (Rudder's default), a chain to an organisation CA (certificate-validation mode), and
 * both modes on. The load generator is OpenSSL's {@code s_time} on the other CPU; rows run interleaved, round
 * after round, and every window's answers are checked against the server's own request counters.
 */
package io.pintle.bench.handshakes;
