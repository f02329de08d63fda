/**
 * The web layer: Jetty connectors and handler tree, Jersey configuration, the filter that establishes who the
 * caller is, thin resources, and the one exception mapper. Only this package and {@code tls} import Jetty or
 * Jersey. Each request reads the snapshot once, in {@link io.pintle.server.http.PeerIdentityFilter} (or, for a
 * plain file download, in {@code DirectFileHandler}, which serves it without Jersey and hands everything else on
 * with the state it established), and every later step uses that same snapshot. {@link
 * io.pintle.server.http.RequestObserver} sees every completed request, Jetty's own refusals included, for the
 * metrics and the access log.
 */
package io.pintle.server.http;
