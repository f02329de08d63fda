/**
 * Pintle's server: {@link io.pintle.server.Main} parses the command line, {@link io.pintle.server.Bootstrap}
 * builds every collaborator in dependency order (the one composition root), and {@link
 * io.pintle.server.PintleServer} is the running instance. Sub-packages hold one concern each; only {@code http},
 * {@code tls} and {@code cfengine} (CFEngine's protocol, on Jetty's I/O) know the web stack.
 */
package io.pintle.server;
