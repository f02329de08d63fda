/**
 * A node's order channel ({@code GET .../remote-run/orders}, a long poll answered with the orders meant for it) and
 * its reports on orders ({@code PUT .../remote-run/orders/<id>}, the agent's output streamed to whoever asked for
 * the run, bounded by the order's deadline).
 */
package io.pintle.server.http.orders;
