/**
 * Where a request goes and whether it may: {@link io.pintle.server.access.Route} classifies a request once, at the
 * edge (listener, who answers it, metric and work class, the {@link io.pintle.server.access.Rule} that decides
 * it), and {@link io.pintle.server.access.Access#decide} is the one access function every door asks: the file
 * pipeline, the order channel, the webapp proxy, every Jersey resource and {@code pintle explain}. Plain Java: it
 * reads a snapshot and a caller, and knows nothing of Jetty or Jersey.
 */
package io.pintle.server.access;
