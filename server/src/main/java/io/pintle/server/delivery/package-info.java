/**
 * Policy delivery as the server sees it: what each node last asked for and received ({@link DeliveryLog}, kept
 * across restarts by {@link DeliveryStore}), whether that is what is served now ({@link PolicyEntry}), the share of
 * nodes on the current version over time ({@link DeliveryCurve}), what changed for a node since its last fetch
 * ({@link TreeDiff}, against the copy {@link FetchedTrees} keeps), and freezes ({@link Freeze}, taken and released by
 * {@link Freezer}): frozen nodes are served a hard-linked copy of their directory as it was. Plain Java: the admin
 * resources in {@code http.admin} and the doors that record fetches call it.
 */
package io.pintle.server.delivery;
