/**
 * {@code bench/forwarding}: what verification at the edge ({@code [uploads] verify_signatures}) costs a server per
 * report, and how fast a relay forwards its uploads to the root ({@code UploadForwarder}): a backlog drained after
 * an outage, and the delay from the relay's 201 to the file on the root. The script starts the servers and the load
 * generator; this package makes what they need (keys, node lists, signed reports as {@code report.sh} makes them)
 * and watches directories; it measures nothing the servers do themselves.
 */
package io.pintle.bench.forwarding;
