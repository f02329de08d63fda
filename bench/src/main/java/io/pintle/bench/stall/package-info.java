/**
 * {@code bench/stall} (issue 17): whether any request a node makes gets lost over HTTP/2. For each route family a
 * node calls, N requests (2 million by default) over one HTTP/2 connection, 16 streams in flight, with the node's
 * client certificate, against the real server in a process of its own; counts stuck requests (no answer within a
 * timeout), wrong answers, what the server counted, and the {@code NullPointerException}s and WARN/ERROR events in
 * its log. h2load would be the natural client, but it cannot present a client certificate, which every route here
 * needs; this JVM (Jetty's HTTP/2 client) is the load generator instead.
 */
package io.pintle.bench.stall;
