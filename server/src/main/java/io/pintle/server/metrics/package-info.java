/**
 * What Pintle counts, for Prometheus: one {@link io.pintle.server.metrics.ServerMetrics} per server instance,
 * owning its own registry (never the client's static default one, so two servers can share a JVM). Labels come
 * from small fixed sets ({@link io.pintle.server.metrics.RouteClass}, status codes, reason codes): never a node
 * id or a raw path. Recording a request costs a few adder increments; everything else is computed when scraped.
 */
package io.pintle.server.metrics;
