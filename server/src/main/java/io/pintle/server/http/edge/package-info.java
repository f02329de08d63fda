/**
 * What every request meets before its family: connectors (TLS with pinned or validated client certificates, the
 * admin listener, PROXY protocol from trusted balancers), connection and handshake guards, the {@link
 * io.pintle.server.http.Exchange} made once per request ({@code ExchangeHandler}), the overload gate ({@code
 * OverloadHandler}), the one dispatch step ({@code Dispatch}: a switch on the route's answerer), the worker hand-off
 * for blocking families ({@code WorkerDispatch}), Jetty's own errors as problems, and {@code RequestObserver}, which
 * sees every completed request for the metrics and the access log. {@code HttpServerFactory} assembles the server.
 */
package io.pintle.server.http.edge;
