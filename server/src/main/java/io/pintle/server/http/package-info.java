/**
 * The web layer, by family. This package holds what every family shares for one request: its {@link
 * io.pintle.server.http.Exchange} (snapshot, route, caller, decision, incident id, worker release; made once at
 * the edge and handed to every later step), the one problem writer ({@link io.pintle.server.http.Problems}) and
 * the request body reader with its progress floor ({@link io.pintle.server.http.BodyStream}).
 *
 * <ul>
 *   <li>{@code edge}: connectors, TLS and PROXY protocol, connection guards, the exchange, the overload gate, the
 *       access log and metrics ({@code RequestObserver}) and the one {@code Dispatch} step that hands a request to
 *       the family its {@link io.pintle.server.access.Route} names; {@code HttpServerFactory} assembles it all.
 *   <li>{@code files}: the file pipeline (policies, common, shared folder, shared-file downloads, {@code /uuid},
 *       relayd's hash HEAD), on Jetty's core API.
 *   <li>{@code orders}: a node's order channel and its reports on orders.
 *   <li>{@code webapp}: the reverse proxy to Rudder's webapp.
 *   <li>{@code jersey}: the node-facing Jersey application (uploads, shared-file uploads, remote run, relayd's API
 *       alias) and the adapter that runs Jersey on Jetty's core API.
 *   <li>{@code admin}: the admin listener's resources (status, system, health, metrics, server info).
 * </ul>
 *
 * A family imports this package and nothing of another family (the Jersey application builds the admin one, so
 * {@code jersey} imports {@code admin}); only {@code edge} knows them all. Every family decides access by {@link
 * io.pintle.server.access.Access#decide}, through {@link io.pintle.server.http.Exchange#authorize()}. Only {@code
 * http} and {@code tls} import Jetty or Jersey.
 */
package io.pintle.server.http;
