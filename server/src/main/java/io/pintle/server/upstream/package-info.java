/**
 * This server as a client of its own policy server ({@code [upstream]}): mutual TLS with this server's
 * certificate, the policy server's key pinned. Used to forward what is not for this server (shared files for
 * nodes elsewhere in the tree) and, on relays, to sync policies down.
 */
package io.pintle.server.upstream;
