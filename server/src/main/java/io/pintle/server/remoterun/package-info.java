/**
 * Remote run: a fixed set of agent commands ({@link io.pintle.server.remoterun.AgentCommand}), validated
 * conditions, routing down the relay tree from {@code nodeslist.json}'s policy-server links ({@link
 * io.pintle.server.remoterun.RemoteRunPlanner}), calls to the next servers over pinned mutual TLS and local agent
 * runs from an argv list ({@link io.pintle.server.remoterun.AgentLauncher}), all bounded by one concurrency limit
 * ({@link io.pintle.server.remoterun.RemoteRunner}). Plain Java: no web stack here.
 */
package io.pintle.server.remoterun;
