/**
 * The web layer: Jetty connectors and the handler tree, one route table ({@link io.pintle.server.http.Route}), the
 * file pipeline on Jetty's core API, the Jersey applications for the JSON and streaming APIs, and one problem
 * writer. {@code ExchangeHandler} reads the snapshot once per request and makes the request's {@code Exchange}
 * (snapshot, route, caller, decision, incident id, worker release), which every later step is handed: the overload
 * gate, {@code FileHandler}, Jersey's resources (through their request's properties) and {@link
 * io.pintle.server.http.RequestObserver}, which sees every completed request, Jetty's own refusals included, for
 * the metrics and the access log. Only this package and {@code tls} import Jetty or Jersey.
 */
package io.pintle.server.http;
