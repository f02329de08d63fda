/**
 * CFEngine's door: the TLS protocol ("tls", "cookie") an unmodified {@code cf-agent} speaks to cf-serverd on port
 * 5309, answered from the same snapshot and the same access function as HTTPS, so that a reload applies to the next
 * request whatever is open. {@link io.pintle.server.cfengine.CfengineListener} builds the listener on Jetty's I/O
 * (address checks, classic protocol refused, TLS with the agent key), {@link
 * io.pintle.server.cfengine.CfengineConnection} speaks the protocol, {@link io.pintle.server.cfengine.CfengineDoor}
 * resolves paths and asks {@link io.pintle.server.access.Access#decide} with the door's rules
 * ({@link io.pintle.server.access.CfengineRoutes}, Rudder's {@code cf-serverd.st}).
 */
package io.pintle.server.cfengine;
